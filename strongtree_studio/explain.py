"""Plain-language definitions shown next to the settings, and the texts that explain the pages."""

from __future__ import annotations

from dataclasses import dataclass


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
            "If 40% of the {a} rows are predicted {positive}, between 35% and 45% of the {b} rows must be.",
        ),
        Notion(
            "conditional_statistical_parity",
            "Conditional statistical parity",
            "Within each level of the legitimate factor, groups receive the positive prediction at rates that "
            "differ by at most δ; differences explained by the legitimate factor are allowed.",
            "Among rows whose {legit} is {level}, the shares of {a} and {b} predicted {positive} differ by at most "
            "5 percentage points.",
        ),
        Notion(
            "predictive_equality",
            "Predictive equality",
            "Among people whose true outcome is negative, the share wrongly predicted positive (false-positive "
            "rate) differs by at most δ between groups.",
            "Of the rows that are truly not {positive}, {a} and {b} are wrongly predicted {positive} at rates within "
            "5 percentage points.",
        ),
        Notion(
            "equal_opportunity",
            "Equal opportunity",
            "Among people whose true outcome is positive, the share correctly predicted positive (true-positive "
            "rate) differs by at most δ between groups.",
            "Of the rows that are truly {positive}, {a} and {b} are predicted {positive} at rates within 5 percentage "
            "points.",
        ),
        Notion(
            "equalized_odds",
            "Equalized odds",
            "Both the true-positive and the false-positive rates differ by at most δ between groups.",
            "Equal opportunity and predictive equality at once.",
        ),
    )
}

#: Words used in the examples when the table does not say (no table, or no protected attribute yet).
EXAMPLE_DEFAULTS = {"a": "group A", "b": "group B", "positive": "positive", "legit": "the legitimate factor",
                    "level": "one level"}


def example_for(notion: Notion, words: dict[str, str]) -> str:
    """The notion's example in the words of the user's table (``words`` from :func:`example_words`;
    missing words fall back to :data:`EXAMPLE_DEFAULTS`). The words are plain text: escape
    the result for Markdown."""
    return notion.example.format(**{**EXAMPLE_DEFAULTS, **{k: v for k, v in words.items() if v}})


def example_words(frame, protected: tuple, legitimate: tuple, positive) -> dict[str, str]:
    """Two protected groups, the positive class and a legitimate level of ``frame``, as text."""
    words: dict[str, str] = {}
    if positive is not None:
        words["positive"] = str(positive)
    if frame is not None and protected and all(c in frame.columns for c in protected):
        groups = frame[list(protected)].dropna().astype(str).agg(" & ".join, axis=1).value_counts().index[:2]
        if len(groups) == 2:
            words["a"], words["b"] = str(groups[0]), str(groups[1])
    if frame is not None and legitimate and legitimate[0] in frame.columns:
        levels = frame[legitimate[0]].dropna().astype(str).value_counts().index
        if len(levels):
            words["legit"], words["level"] = str(legitimate[0]), str(levels[0])
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
MSG_LEGACY_HISTORY = (
    "Runs of earlier versions are in {path}; set STRONGTREE_RUNS_DB to that file to see them here."
)
MSG_NO_RUNS = "No runs yet: each finished solve of this browser or workspace is stored here."
MSG_NOT_YOURS = "Only runs of this browser or workspace can be shared, moved or deleted; the selection has others."

#: Shown when a solve ended without a result but its last reported tree was kept.
MSG_LAST_TREE_KEPT = (
    "The last tree the solver reported before it ended is kept{stored}: it is not proven optimal. "
    "It is on the Tree and Fairness pages."
)
