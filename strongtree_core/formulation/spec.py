"""What the user asks of the tree, independent of how it is solved."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from strongtree_core.formulation.arrays import RowBuilder
    from strongtree_core.formulation.flow_all import FlowAllColumns

Objective = Literal["accuracy", "balanced_accuracy", "worst_case_accuracy", "sensitivity"]


class SideConstraint(Protocol):
    """A constraint on the all-datapoints formulation (eq. 11).

    ``couples_datapoints`` is true for constraints that mix rows of several
    datapoints (fairness, recall, precision, ...): those rule out Benders'
    decomposition (paper, Section 4.4).
    """

    name: str
    couples_datapoints: bool

    def add_rows(self, cols: "FlowAllColumns", rows: "RowBuilder") -> None: ...

    def skipped_reasons(self, data, positive: int | None = None) -> list[str]:
        """Why part of the constraint is not applied on ``data`` (a rate undefined there)."""
        ...

    def describe(self) -> str: ...


@dataclass(frozen=True)
class TreeSpec:
    """The optimization problem over trees of maximum depth ``depth``.

    Parameters
    ----------
    depth : int
    lambda_ : float in [0, 1)
        Weight of the branching penalty in eq. (7): maximize
        ``(1 - lambda) * correct - lambda * branchings``.
    max_branching : int or None
        Sparsity bound (eq. 8) on the number of branching nodes.
    max_features_used : int or None
        Bound (eq. 9) on the number of distinct features the tree splits on.
    min_leaf : int
        Minimum number of training rows in every leaf (eq. 10, counted over all
        rows through formulation (11)).
    objective : {"accuracy", "balanced_accuracy", "worst_case_accuracy", "sensitivity"}
    pos_label : int or None
        Class index treated as positive by recall/precision/fairness constraints.
    side_constraints : tuple of SideConstraint

    Examples
    --------
    >>> from strongtree_core.formulation import TreeSpec
    >>> spec = TreeSpec(depth=2, lambda_=0.01, min_leaf=1)
    >>> spec.depth, spec.objective
    (2, 'accuracy')
    """

    depth: int
    lambda_: float = 0.0
    max_branching: int | None = None
    max_features_used: int | None = None
    min_leaf: int = 0
    objective: Objective = "accuracy"
    pos_label: int | None = None
    side_constraints: tuple = field(default_factory=tuple)

    @property
    def needs_all_datapoints(self) -> bool:
        """Formulation (11) is needed: objectives or constraints that see every datapoint."""
        return self.min_leaf > 0 or self.objective != "accuracy" or bool(self.side_constraints)

    @property
    def needs_imbalanced(self) -> bool:
        """Formulation (7) is needed: trees that may stop before full depth matter."""
        return self.lambda_ > 0 or self.max_branching is not None or self.needs_all_datapoints

    @property
    def couples_datapoints(self) -> bool:
        """Benders' decomposition does not apply (paper, Section 4.4)."""
        return self.needs_all_datapoints
