"""Plain-language definitions shown next to the settings, and the texts that explain the pages."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Notion:
    """A fairness notion: its name, a definition and a one-line example (δ = 0.05)."""

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
            "If 40 % of men are predicted *hired*, between 35 % and 45 % of women must be.",
        ),
        Notion(
            "conditional_statistical_parity",
            "Conditional statistical parity",
            "Within each level of the legitimate factor, groups receive the positive prediction at rates that "
            "differ by at most δ; differences explained by the legitimate factor are allowed.",
            "Among applicants with a master's degree, the hiring rates of men and women differ by at most 5 points.",
        ),
        Notion(
            "predictive_equality",
            "Predictive equality",
            "Among people whose true outcome is negative, the share wrongly predicted positive (false-positive "
            "rate) differs by at most δ between groups.",
            "Of applicants who were not hired, men and women are wrongly predicted *hired* at rates within 5 points.",
        ),
        Notion(
            "equal_opportunity",
            "Equal opportunity",
            "Among people whose true outcome is positive, the share correctly predicted positive (true-positive "
            "rate) differs by at most δ between groups.",
            "Of applicants who were hired, men and women are recognised as *hired* at rates within 5 points.",
        ),
        Notion(
            "equalized_odds",
            "Equalized odds",
            "Both the true-positive and the false-positive rates differ by at most δ between groups.",
            "Equal opportunity and predictive equality at once.",
        ),
    )
}

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

OWNERSHIP_HELP = (
    "Runs are private to the browser session that solved them: another tab, another person, or this page "
    "after a reload cannot see them. To keep runs across reloads or to work on them together, type a "
    "workspace name: new runs go into it, and anyone who types the same name sees them, so pick one others "
    "will not guess. **Share** lets every session open a run; only its own session or workspace can delete "
    "it or stop sharing it."
)
MSG_LEGACY_HISTORY = (
    "Runs of earlier versions are in {path}; set STRONGTREE_RUNS_DB to that file to see them here."
)
MSG_NO_RUNS = "No runs yet: each finished solve of this session or workspace is stored here."
MSG_NOT_YOURS = "Only runs of this session or workspace can be shared, moved or deleted; the selection has others."

#: Shown when a solve ended without a result but its last reported tree was kept.
MSG_LAST_TREE_KEPT = (
    "The last tree the solver reported before it ended is kept{stored}: it is not proven optimal. "
    "It is on the Tree and Fairness pages."
)
