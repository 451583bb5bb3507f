"""The Learn page's presets: settings on built-in tables, each named for what the
comparison then shows, with the run time measured for it (``benchmarks/learn_presets.py``,
benchmarks/RESULTS.md section 18).  The first is the page's default."""

from __future__ import annotations

from dataclasses import dataclass

from strongtree_studio.learn_view import LearnChoice

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
    title : str
        What it shows, on its button.
    choice : LearnChoice
        The table, rows, depth, time per run and λ it sets.
    shows : str
        One sentence under the buttons once chosen: what to look at.
    seconds : float
        The comparison's wall-clock time measured on a loaded 2-core machine (RESULTS section 18), rounded up.
    """

    key: str
    title: str
    choice: LearnChoice
    shows: str
    seconds: float


PRESETS: tuple[LearnPreset, ...] = (
    LearnPreset(
        "tighter", "FlowOCT's relaxation is tighter",
        LearnChoice(table=BALANCE, rows=200, depth=2, time_limit=10.0, regularization=0.0),
        "The paper's balance-scale table: OCT's and BinOCT's LP bounds are trivial (every row correct), FlowOCT's "
        "is more than 10 % of the rows lower (Theorem 1); BendersOCT's, with every cut, is the same as FlowOCT's.",
        60.0,
    ),
    LearnPreset(
        "cuts", "Benders cuts: a small model, cut by cut",
        LearnChoice(table=HIRING, rows=200, depth=2, time_limit=10.0, regularization=0.0),
        "BendersOCT's model has a few hundred variables and a handful of rows against FlowOCT's thousands: the "
        "cut-set inequalities (4b) come in one by one as the solver needs them (the Benders cuts column).",
        60.0,
    ),
    LearnPreset(
        "bigm", "Where OCT's big-M stalls",
        LearnChoice(table=BALANCE, rows=200, depth=3, time_limit=10.0, regularization=0.0),
        "Depth 3: OCT's big-M rows leave its relaxation at the trivial bound and it ends at the time limit far "
        "from a proof; FlowOCT's bound starts lower.",
        60.0,
    ),
    LearnPreset(
        "penalty", "A split penalty λ",
        LearnChoice(table=IRIS, rows=100, depth=2, time_limit=10.0, regularization=0.1),
        "With λ = 0.1 each split costs a tenth of a row: FlowOCT's bound comes in below OCT's; BinOCT cannot take "
        "λ and says so in its row.",
        30.0,
    ),
    LearnPreset(
        "trivial", "When every bound is trivial",
        LearnChoice(table=IRIS, rows=100, depth=2, time_limit=10.0, regularization=0.0),
        "Iris at depth 2: every relaxation reaches the trivial bound (all 100 rows correct), so Theorem 1 holds "
        "with equality and says nothing here; the node counts then differ for other reasons.",
        30.0,
    ),
)
DEFAULT = PRESETS[0]
BY_KEY = {preset.key: preset for preset in PRESETS}


def preset_of(choice: LearnChoice) -> LearnPreset | None:
    """The preset whose settings are ``choice``, if any."""
    return next((preset for preset in PRESETS if preset.choice == choice), None)
