"""The Learn page's presets: settings on built-in tables, each named for what the
comparison then shows, with the run time measured for it (``benchmarks/learn_presets.py``,
benchmarks/RESULTS.md section 18).  The first is the page's default."""

from __future__ import annotations

from dataclasses import dataclass

from strongtree_studio.learn.comparison_view import LearnChoice

BALANCE = "Balance scale (generated, as in the paper)"
HIRING = "Hiring (teaching data with planted bias)"
IRIS = "Iris (scikit-learn)"


@dataclass(frozen=True)
class LearnPreset:
    """A named choice of the Learn page.

    Attributes
    ----------
    key : str
        Names its button (``learn.preset.<key>``).
    label : str
        Its button's words (short enough for five buttons in a row at 1280 px).
    title : str
        What it shows, in a sentence's title.
    choice : LearnChoice
        The table, rows, depth, time per run and λ it sets.
    shows : str
        One sentence under the buttons once chosen: what to look at.
    seconds : float
        The comparison's wall-clock time measured on a loaded 2-core machine (RESULTS section 18), rounded up.
    """

    key: str
    label: str
    title: str
    choice: LearnChoice
    shows: str
    seconds: float


PRESETS: tuple[LearnPreset, ...] = (
    LearnPreset(
        "tighter", "Tighter LP", "FlowOCT's relaxation is tighter",
        LearnChoice(),
        "The paper's balance-scale table at depth 2: OCT's and BinOCT's LP bounds are trivial (all 200 rows "
        "correct), FlowOCT's is 22.5 rows lower (Theorem 1); BendersOCT's, with every cut, is FlowOCT's. OCT "
        "ends at its time limit with its bound still at 200.",
        30.0,
    ),
    LearnPreset(
        "bigm", "Big-M, nodes", "Same root bound, OCT's big-M needs more nodes",
        LearnChoice(table=IRIS, rows=100, depth=2, time_limit=10.0, regularization=0.0),
        "Iris at depth 2: every relaxation is trivial at the root (all 100 rows correct), yet OCT explores about "
        "ten times FlowOCT's nodes: deeper in the search its big-M rows still hold loosely where the flows do not.",
        10.0,
    ),
    LearnPreset(
        "cuts", "Benders cuts", "Benders cuts: a small model, cut by cut",
        LearnChoice(table=HIRING, rows=200, depth=2, time_limit=10.0, regularization=0.0),
        "BendersOCT's model has a few hundred variables and about a dozen rows against FlowOCT's thousands: "
        "the cut-set inequalities (4b) come in as the solver needs them (the Benders cuts column).",
        45.0,
    ),
    LearnPreset(
        "penalty", "Split penalty λ", "A split penalty λ",
        LearnChoice(table=IRIS, rows=100, depth=2, time_limit=10.0, regularization=0.1),
        "With λ = 0.1 each split costs a tenth of a row (eq. 7): FlowOCT's bound comes in below OCT's, by "
        "a little; BinOCT cannot take λ and says so in its row.",
        10.0,
    ),
    LearnPreset(
        "deeper", "Depth 3", "Depth 3: a bigger search",
        LearnChoice(table=BALANCE, rows=200, depth=3, time_limit=10.0, regularization=0.0),
        "Balance scale at depth 3: FlowOCT's LP bound is still below the others' (by less than at depth 2, as in "
        "the paper), and no MIO proves the optimum in 10 s; the exact search does at once.",
        60.0,
    ),
)
DEFAULT = PRESETS[0]
BY_KEY = {preset.key: preset for preset in PRESETS}


def preset_of(choice: LearnChoice) -> LearnPreset | None:
    """The preset whose settings are ``choice``, if any."""
    return next((preset for preset in PRESETS if preset.choice == choice), None)
