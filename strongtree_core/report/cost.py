"""The cost of fairness, and of readability, each in one number.

Four models answer two questions on the same rows:

* **fairness** — the fair tree against the same tree solved without the fairness
  constraint (same depth, objective and data): the points of accuracy the
  constraint costs, and how far it brings the gap down;
* **readability** — the tree without the constraint against a logistic regression
  (no constraint either, but not a tree): the points of accuracy a readable tree
  of this depth gives up.

The two add up to the distance from the fair tree to the logistic regression.  The
majority class is the floor a model must beat.  Costs are measured on the test rows
when there are any (what a new row would see), else on the training rows, and a
negative cost is said as a gain.  Accuracies are the shares of rows each model
predicts right, recomputed from its predictions by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from strongtree_core.report.references import CART_NAME, LOGISTIC_NAME, MAJORITY_NAME
from strongtree_core.words import fmt

#: Names of the compared rows (the run's comparison table), as the dashboard stores them.
THIS_TREE = "StrongTree"
UNCONSTRAINED = "StrongTree without fairness constraints"
COMPARED = (THIS_TREE, UNCONSTRAINED, CART_NAME, LOGISTIC_NAME, MAJORITY_NAME)
SPLIT_WORDS = {"test": "test rows", "train": "training rows"}


def points(difference: float) -> str:
    """A difference of two accuracies (shares) in points: "2.1 points", "0.1 point"."""
    value = abs(100.0 * difference)
    text = f"{value:.1f}"
    return f"{text} point" + ("" if text == "1.0" else "s")


@dataclass(frozen=True)
class CostOfFairness:
    """Accuracies (shares) of the compared models on one part, and the gap of one notion.

    ``unconstrained`` is None when the tree has no fairness constraint (it is then its
    own unconstrained tree) or when that tree is missing.
    """

    split: str
    this: float
    unconstrained: float | None
    logistic: float | None
    majority: float | None
    cart: float | None
    notion_name: str | None
    gap_this: float | None
    gap_unconstrained: float | None
    constrained: bool

    @property
    def fairness(self) -> float | None:
        """Points of accuracy the fairness constraint costs (negative: it gains)."""
        if not self.constrained or self.unconstrained is None:
            return None
        return self.unconstrained - self.this

    @property
    def readable_reference(self) -> float:
        """The tree readability is measured from: the one without the constraint, else this one."""
        return self.unconstrained if self.constrained and self.unconstrained is not None else self.this

    @property
    def readability(self) -> float | None:
        """Points of accuracy a tree gives up against the logistic regression (negative: the tree is better)."""
        return None if self.logistic is None else self.logistic - self.readable_reference

    def headline(self) -> str:
        """The costs in one line: "fairness costs 2.1 points of accuracy against the tree without the constraint;
        readability costs 1.3 points against logistic regression" (on which rows)."""
        parts = []
        if self.fairness is not None:
            if self.fairness > 0.0005:
                parts.append(f"fairness costs {points(self.fairness)} of accuracy against the tree without the "
                             "constraint")
            elif self.fairness < -0.0005:
                parts.append(f"fairness costs nothing: the fair tree is {points(self.fairness)} more accurate than "
                             "the tree without the constraint")
            else:
                parts.append("fairness costs no accuracy against the tree without the constraint")
        if self.readability is not None:
            tree = "the tree without the constraint" if self.fairness is not None else "the tree"
            if self.readability > 0.0005:
                parts.append(f"readability costs {points(self.readability)} against logistic regression")
            else:
                parts.append(f"readability costs nothing: {tree} is {points(self.readability)} more accurate than "
                             "logistic regression" if self.readability < -0.0005 else
                             "readability costs no accuracy against logistic regression")
        text = "; ".join(parts)
        return f"On the {SPLIT_WORDS.get(self.split, self.split)}, {text}." if text else ""

    def sentences(self) -> list[str]:
        """The headline, then the accuracies and gaps behind it."""
        out = [self.headline()] if self.headline() else []
        where = SPLIT_WORDS.get(self.split, self.split)
        facts = [f"this tree {fmt(self.this, 'percent')}"]
        if self.unconstrained is not None and self.constrained:
            facts.append(f"without the constraint {fmt(self.unconstrained, 'percent')}")
        for name, value in (("CART", self.cart), ("logistic regression", self.logistic),
                            ("the majority class", self.majority)):
            if value is not None:
                facts.append(f"{name} {fmt(value, 'percent')}")
        out.append(f"Accuracy on the {where}: " + ", ".join(facts) + ".")
        if self.constrained and self.notion_name and self.gap_this is not None and self.gap_unconstrained is not None:
            out.append(f"The constraint brings the {self.notion_name.lower()} gap from "
                       f"{fmt(self.gap_unconstrained, 'points')} to {fmt(self.gap_this, 'points')} on the {where}.")
        if self.majority is not None:
            out.append(f"Predicting the majority class for every row is right {fmt(self.majority, 'percent')} of "
                       f"the time: this tree adds {points(self.this - self.majority)}"
                       + (" (it does no better)." if self.this - self.majority <= 0.0005 else "."))
        return out


def cost_of_fairness(comparison: Sequence[Mapping[str, Any]], notion: str | None, notion_name: str | None,
                     constrained: bool) -> CostOfFairness | None:
    """The costs from a run's comparison rows (``model``, ``<split>_accuracy``, ``<split>_<notion>``).

    Returns None when this tree's row is missing.
    """
    rows = {r["model"]: r for r in comparison}
    this = rows.get(THIS_TREE)
    if this is None:
        return None
    split = "test" if this.get("test_accuracy") is not None else "train"

    def accuracy(name: str) -> float | None:
        row = rows.get(name)
        return None if row is None else row.get(f"{split}_accuracy")

    def gap(name: str) -> float | None:
        row = rows.get(name)
        return None if row is None or notion is None else row.get(f"{split}_{notion}")

    return CostOfFairness(
        split=split, this=this[f"{split}_accuracy"], unconstrained=accuracy(UNCONSTRAINED),
        logistic=accuracy(LOGISTIC_NAME), majority=accuracy(MAJORITY_NAME), cart=accuracy(CART_NAME),
        notion_name=notion_name, gap_this=gap(THIS_TREE), gap_unconstrained=gap(UNCONSTRAINED),
        constrained=constrained,
    )
