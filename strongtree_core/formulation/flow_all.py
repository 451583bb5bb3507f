"""Formulation (11): every datapoint flows to the sink of its predicted class.

Sink ``t_k`` collects every datapoint predicted ``k``, correct or not, so
counts such as true positives or a group's positive predictions are linear in
the flow: ``yhat[i, k] = sum_{n in B u T} z[i, n, t_k]`` is 1 exactly when
pattern ``i`` is predicted ``k``.  Objectives and side constraints (quality,
fairness) are written on these sums.  Flows are continuous: with integral
b, p, w each datapoint has a single path (eq. 11f forces one unit of flow),
so the flow is integral.

The paper: Sina Aghaei, Andrés Gómez and Phebe Vayanos, *Strong Optimal Classification Trees*,
arXiv:2103.15965 (Operations Research).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strongtree_core.encoding.patterns import PatternData
from strongtree_core.formulation.arrays import ColumnAllocator, ModelArrays, RowBuilder
from strongtree_core.formulation.objectives import (
    add_objective_columns,
    objective_vector,
)
from strongtree_core.formulation.spec import TreeSpec
from strongtree_core.formulation.tree_rows import (
    add_feature_count_columns,
    add_feature_count_rows,
    add_imbalanced_tree_rows,
    add_left_right_capacity_rows,
    add_sparsity_rows,
    add_tree_columns,
)
from strongtree_core.structure import TreeGraph


@dataclass(frozen=True)
class FlowAllColumns:
    """What side constraints and objectives need to write their rows.

    Attributes
    ----------
    data : PatternData
    graph : TreeGraph
    index : dict of str to ndarray
        Column maps (``b``, ``p``, ``w``, ``z`` (P, N), ``zs`` (P, N, K), ...).
    pos_label : int or None
    """

    data: PatternData
    graph: TreeGraph
    index: dict
    pos_label: int | None

    def predicted(self, k: int) -> np.ndarray:
        """Columns ``zs[i, :, k]``, shape (P, N): their sum over nodes is yhat[i, k]."""
        return self.index["zs"][:, :, k]

    def linear_count(self, k: int, mask: np.ndarray, *, use_weight: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(cols, coefs) of ``sum_{i in mask} count_i * yhat[i, k]`` as one flat row.

        With ``use_weight`` the sample weight replaces the row count.
        """
        mult = self.data.weight if use_weight else self.data.count.astype(float)
        sel = np.flatnonzero(mask)
        c = self.predicted(k)[sel]  # (m, N)
        coef = np.broadcast_to(mult[sel, None], c.shape)
        return c.ravel(), coef.ravel()


def build_flow_all(data: PatternData, spec: TreeSpec) -> ModelArrays:
    """Build formulation (11) with the objective and constraints in ``spec``.

    Columns: ``b``, ``p``, ``w`` as in (7); ``z`` (P, |B|+|T|) flow into each
    node; ``zs`` (P, |B|+|T|, K) flow from a node to sink ``t_k``; ``u`` when the
    feature count is bounded; objective helpers may add their own (for example
    ``m`` for the worst-case accuracy).
    """
    graph = TreeGraph(spec.depth)
    P, F, K = data.n_patterns, data.n_features, data.n_classes
    cols = ColumnAllocator()
    add_tree_columns(cols, graph, F, K, balanced=False)
    z = cols.add("z", (P, graph.n_nodes), integer=False)
    zs = cols.add("zs", (P, graph.n_nodes, K), integer=False)
    if spec.max_features_used is not None:
        add_feature_count_columns(cols, F)
    add_objective_columns(cols, spec)
    idx = cols.index
    rows = RowBuilder()
    B = graph.branching_nodes
    T = graph.terminal_nodes

    add_imbalanced_tree_rows(idx, rows, graph)
    # (11d) z[i, a(n), n] = z[i, n, l(n)] + z[i, n, r(n)] + sum_k z[i, n, t_k]    n in B
    cons_b = np.concatenate([z[:, B - 1, None], z[:, 2 * B - 1, None], z[:, 2 * B, None], zs[:, B - 1, :]], axis=2)
    coef_b = np.array([1.0, -1.0, -1.0] + [-1.0] * K)
    rows.add("flow_conservation (11d)", cons_b.reshape(-1, 3 + K), coef_b, 0.0, 0.0)
    # (11e) z[i, a(n), n] = sum_k z[i, n, t_k]     n in T
    cons_t = np.concatenate([z[:, T - 1, None], zs[:, T - 1, :]], axis=2)
    rows.add("flow_conservation (11e)", cons_t.reshape(-1, 1 + K), np.array([1.0] + [-1.0] * K), 0.0, 0.0)
    add_left_right_capacity_rows(rows, graph, data.X, z, idx["b"], "11g-11h")
    # (11i) z[i, n, t_k] <= w[n, k]     n in B u T, k in K, i in I
    w_b = np.broadcast_to(idx["w"][None, :, :], zs.shape)
    rows.add("sink_capacity (11i)", np.stack([zs, w_b], axis=-1).reshape(-1, 2), np.array([1.0, -1.0]), -np.inf, 0.0)
    if spec.max_branching is not None:
        add_sparsity_rows(idx, rows, spec.max_branching)
    if spec.max_features_used is not None:
        add_feature_count_rows(idx, rows, spec.max_features_used)
    if spec.min_leaf > 0:
        add_min_leaf_rows(idx, rows, data, spec.min_leaf)

    context = FlowAllColumns(data=data, graph=graph, index=dict(idx), pos_label=spec.pos_label)
    for constraint in spec.side_constraints:
        constraint.add_rows(context, rows)
    c = objective_vector(context, rows, cols.n_cols, spec)

    A, row_lower, row_upper = rows.matrix(cols.n_cols)
    col_lower, col_upper, integrality = cols.bounds()
    # (11f) z[i, s, 1] = 1: every datapoint enters the graph.
    col_lower[z[:, 0]] = 1.0
    return ModelArrays(
        sense="max",
        c=c,
        A=A,
        row_lower=row_lower,
        row_upper=row_upper,
        col_lower=col_lower,
        col_upper=col_upper,
        integrality=integrality,
        index=dict(idx),
        name="FlowOCT, all datapoints (eq. 11)",
    )


def add_min_leaf_rows(idx, rows: RowBuilder, data: PatternData, min_leaf: int) -> None:
    """Minimum leaf size, eq. (10), on formulation (11) where z counts every row.

    sum_i count_i z[i, a(n), n] >= N_min p[n]     n in B u T

    (On formulation (7) the same row would count only correctly classified
    rows, since misclassified ones carry no flow there.)
    """
    z = idx["z"]  # (P, N)
    n_nodes = z.shape[1]
    cols = np.concatenate([z.T, idx["p"][:, None]], axis=1)  # (N, P + 1)
    coefs = np.concatenate(
        [np.broadcast_to(data.count.astype(float)[None, :], (n_nodes, z.shape[0])), np.full((n_nodes, 1), -float(min_leaf))],
        axis=1,
    )
    rows.add("min_leaf (10)", cols, coefs, 0.0, np.inf)
