"""Plain-language definitions shown next to the settings, and the texts that explain the pages."""

from __future__ import annotations

from dataclasses import dataclass

from strongtree_core.words import LABEL_LIMIT


@dataclass(frozen=True)
class Notion:
    """A fairness notion: its name, a definition and a one-line example at δ = 5 pp.

    ``example`` is a template over the user's own table: ``{a}`` and ``{b}`` are two
    of its protected groups, ``{positive}`` the positive class, ``{level}`` a level of
    the legitimate factor (see :func:`example_for`).
    """

    key: str
    name: str
    definition: str
    example: str


FAIRNESS_NOTIONS: dict[str, Notion] = {
    n.key: n
    for n in (
        Notion(
            "statistical_parity",
            "Statistical parity",
            "Every group receives the positive prediction at nearly the same rate: the rates differ by at most δ.",
            "If 40% of the {a} rows are predicted {positive}, between 35% and 45% of the {others} must be{each}.",
        ),
        Notion(
            "conditional_statistical_parity",
            "Conditional statistical parity",
            "Within each level of the legitimate factor, groups receive the positive prediction at rates that "
            "differ by at most δ; differences explained by the legitimate factor are allowed.",
            "Among rows with {legit_level}, the shares of {pair} predicted {positive} differ by at most "
            "5 percentage points.",
        ),
        Notion(
            "predictive_equality",
            "Predictive equality",
            "Among people whose true outcome is negative, the share wrongly predicted positive (false-positive "
            "rate) differs by at most δ between groups.",
            "Of the rows that are truly not {positive}, {pair} are wrongly predicted {positive} at rates within "
            "5 percentage points of each other.",
        ),
        Notion(
            "equal_opportunity",
            "Equal opportunity",
            "Among people whose true outcome is positive, the share correctly predicted positive (true-positive "
            "rate) differs by at most δ between groups.",
            "Of the rows that are truly {positive}, {pair} are predicted {positive} at rates within 5 percentage "
            "points of each other.",
        ),
        Notion(
            "equalized_odds",
            "Equalized odds",
            "Both the true-positive and the false-positive rates differ by at most δ between groups.",
            "Equal opportunity and predictive equality at once.",
        ),
    )
}

#: Said on the Model page when conditional statistical parity is not offered.
MSG_CSP_NEEDS_LEGIT = ("Conditional statistical parity is offered once a legitimate factor is chosen on the Data "
                       "page (it compares groups within each level of that factor).")

#: Words used in the examples when the table does not say (no table, or no protected attribute yet).
EXAMPLE_DEFAULTS = {"a": "group A", "others": "group B rows", "each": "", "pair": "group A and group B rows",
                    "positive": "positive", "legit_level": "the same level of the legitimate factor"}
#: Groups named one by one in an example before the rest are counted.
NAMED_GROUPS = 4


def example_for(notion: Notion, words: dict[str, str]) -> str:
    """The notion's example in the words of the user's table (``words`` from :func:`example_words`;
    missing words fall back to :data:`EXAMPLE_DEFAULTS`). The words are plain text: escape
    the result for Markdown."""
    return notion.example.format(**{**EXAMPLE_DEFAULTS, **{k: v for k, v in words.items() if v}})


def _listed(names: list[str]) -> str:
    shown = names[:NAMED_GROUPS]
    rest = len(names) - len(shown)
    items = shown + ([f"{rest} more"] if rest else [])
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def example_words(frame, protected: tuple, legitimate: tuple, positive) -> dict[str, str]:
    """The table's protected groups (the largest first), its positive class and a legitimate level, as the
    words of the examples: two groups are named as a pair; with more, the example speaks of every group."""
    words: dict[str, str] = {}
    if positive is not None:
        words["positive"] = str(positive)
    if frame is not None and protected and all(c in frame.columns for c in protected):
        groups = [str(g) for g in frame[list(protected)].dropna().astype(str).agg(" & ".join, axis=1)
                  .value_counts().index]
        if len(groups) == 2:
            words.update(a=groups[0], others=f"{groups[1]} rows", each="", pair=f"{groups[0]} and {groups[1]} rows")
        elif len(groups) > 2:
            words.update(a=groups[0], others=f"rows of every other group ({_listed(groups[1:])})",
                         each=", and all within 5 percentage points of each other",
                         pair=f"the rows of all {len(groups)} groups ({_listed(groups)})")
    if frame is not None and legitimate and legitimate[0] in frame.columns:
        levels = frame[legitimate[0]].dropna().astype(str).value_counts().index
        if len(levels):
            words["legit_level"] = f"{legitimate[0]} = {levels[0]}"
    return words


OBJECTIVE_HELP = (
    "What the tree maximizes on the training rows. Accuracy counts correct rows; balanced accuracy averages "
    "the recall of each class; worst-class accuracy maximizes the recall of the worst class; sensitivity "
    "maximizes the recall of the positive class."
)
FORMULATION_HELP = (
    "Automatic takes the fastest exact route (a dynamic program where it is exact; at depth 1 or 2 a search "
    "through every possible tree; else BendersOCT or FlowOCT) "
    "and says which it took. FlowOCT solves the paper's flow formulation in one piece; BendersOCT adds its "
    "cuts lazily and is often faster on many rows, but cannot take constraints that couple rows."
)
REGULARIZATION_HELP = (
    "λ trades accuracy for simplicity: the tree maximizes (1 − λ)·correct rows − λ·branching nodes, "
    "so each split must earn its place."
)

MSG_NO_TABLE = (
    "Choose a built-in table or upload one to begin; **Live demo** loads a table and a preset and starts solving "
    "at once."
)
MSG_SOLVE_NO_TABLE = (
    "Choose a table on the Data page first, or start the live demo: it loads a table and a preset and solves at once."
)

OWNERSHIP_HELP = (
    "Runs are private to the browser that solved them: a reload or another tab of it shows them again, another "
    "browser or person cannot see them. To work on runs together, or from another browser, type a workspace "
    "name: new runs go into it, and anyone who types the same name sees them, so pick one others will not "
    "guess. **Share** lets every browser open a run; only its own browser or workspace can delete it or stop "
    "sharing it."
)
MSG_HISTORY_KEPT = "The history is kept on this server, readable by its account only."
MSG_LEGACY_HISTORY = (
    "Runs of earlier versions are kept elsewhere on this server; its operator can set STRONGTREE_RUNS_DB to "
    "that file to show them here (the server's log names it)."
)
MSG_NAMES_CUT = (f"These names are longer than the drawing, the sentences and the rules show them ({LABEL_LIMIT} "
                 "characters); here they are in full. The downloads hold them whole.")
MSG_NO_RUNS = "No runs yet: each finished solve of this browser or workspace is stored here."
MSG_NOT_YOURS = "Only runs of this browser or workspace can be shared, moved or deleted; the selection has others."

#: Shown when a solve ended without a result but its last reported tree was kept.
MSG_LAST_TREE_KEPT = (
    "The last tree the solver reported before it ended is kept{stored}: it is not proven optimal. "
    "It is on the Tree and Fairness pages."
)
