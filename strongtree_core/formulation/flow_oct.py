"""FlowOCT: the flow formulations (1) (balanced trees) and (7) (imbalanced, regularized).

Flow variables are continuous in [0, 1]: once b, w (and p) are integral the
flow problem of each datapoint is a max-flow with 0/1 capacities, whose optimum
is integral (paper, Section 3), so only the tree variables need to be integer.
The flow on the arc (a(n), n) of a terminal node equals its flow to the sink
(eq. 1d / 7e), so one column carries both.

The paper: Sina Aghaei, Andrés Gómez and Phebe Vayanos, *Strong Optimal Classification Trees*,
arXiv:2103.15965 (Operations Research).
"""

from __future__ import annotations

import numpy as np

from strongtree_core.encoding.patterns import PatternData
from strongtree_core.formulation.arrays import ColumnAllocator, ModelArrays, RowBuilder
from strongtree_core.formulation.spec import TreeSpec
from strongtree_core.formulation.tree_rows import (
    add_balanced_tree_rows,
    add_feature_count_columns,
    add_feature_count_rows,
    add_imbalanced_tree_rows,
    add_left_right_capacity_rows,
    add_single_class_subtree_rows,
    add_sparsity_rows,
    add_tree_columns,
)
from strongtree_core.structure import TreeGraph


def build_flow_oct(
    data: PatternData, spec: TreeSpec, *, balanced: bool, single_class_rows: bool = False
) -> ModelArrays:
    """Build FlowOCT, eq. (1) when ``balanced`` else eq. (7), with eqs. (8)-(9) as asked.

    ``single_class_rows``: add the symmetry-breaking rows of
    :func:`add_single_class_subtree_rows` to a balanced model without a
    feature-count bound (off by default: no gain measured on FlowOCT).

    Columns: ``b`` (|B|, F), ``w`` (|L|, K) or (|B|+|T|, K), ``p`` (|B|+|T|,) when
    imbalanced, ``z`` (P, |B|+|T|) the flow into each node, ``zt`` (P, |B|) the
    flow from a branching node to the sink (imbalanced only), ``u`` (F,) when
    the feature count is bounded.
    """
    if balanced and (spec.lambda_ > 0 or spec.max_branching is not None):
        raise ValueError("a balanced tree branches at every node: use the imbalanced formulation (7)")
    graph = TreeGraph(spec.depth)
    P, F, K = data.n_patterns, data.n_features, data.n_classes
    cols = ColumnAllocator()
    add_tree_columns(cols, graph, F, K, balanced=balanced)
    z = cols.add("z", (P, graph.n_nodes), integer=False)
    if not balanced:
        zt = cols.add("zt", (P, graph.n_branching), integer=False)
    if spec.max_features_used is not None:
        add_feature_count_columns(cols, F)
    idx = cols.index
    rows = RowBuilder()
    B = graph.branching_nodes
    T = graph.terminal_nodes
    y = data.y

    if balanced:
        add_balanced_tree_rows(idx, rows)
        if single_class_rows and spec.max_features_used is None:
            add_single_class_subtree_rows(idx, rows, graph)
        # (1c) z[i, a(n), n] = z[i, n, l(n)] + z[i, n, r(n)]     n in B, i in I
        cons = np.stack([z[:, B - 1], z[:, 2 * B - 1], z[:, 2 * B]], axis=-1)
        rows.add("flow_conservation (1c)", cons.reshape(-1, 3), np.array([1.0, -1.0, -1.0]), 0.0, 0.0)
        add_left_right_capacity_rows(rows, graph, data.X, z, idx["b"], "1f-1g")
        # (1h) z[i, n, t] <= w[n, y_i]     n in L, i in I  (z[i, n, t] = z[i, a(n), n] by 1d)
        w_y = idx["w"][:, y].T  # (P, |L|): column of w[n, y_i]
        sink = np.stack([z[:, T - 1], w_y], axis=-1)
        rows.add("sink_capacity (1h)", sink.reshape(-1, 2), np.array([1.0, -1.0]), -np.inf, 0.0)
    else:
        add_imbalanced_tree_rows(idx, rows, graph)
        # (7d) z[i, a(n), n] = z[i, n, l(n)] + z[i, n, r(n)] + z[i, n, t]     n in B
        cons = np.stack([z[:, B - 1], z[:, 2 * B - 1], z[:, 2 * B], zt], axis=-1)
        rows.add("flow_conservation (7d)", cons.reshape(-1, 4), np.array([1.0, -1.0, -1.0, -1.0]), 0.0, 0.0)
        add_left_right_capacity_rows(rows, graph, data.X, z, idx["b"], "7g-7h")
        # (7i) z[i, n, t] <= w[n, y_i]     n in B u T
        w_y = idx["w"][:, y].T  # (P, |B|+|T|)
        sink_b = np.stack([zt, w_y[:, B - 1]], axis=-1)
        sink_t = np.stack([z[:, T - 1], w_y[:, T - 1]], axis=-1)
        rows.add("sink_capacity (7i)", np.concatenate([sink_b.reshape(-1, 2), sink_t.reshape(-1, 2)]), np.array([1.0, -1.0]), -np.inf, 0.0)
        if spec.max_branching is not None:
            add_sparsity_rows(idx, rows, spec.max_branching)
    if spec.max_features_used is not None:
        add_feature_count_rows(idx, rows, spec.max_features_used)

    # Objective (1a) / (7a): (1 - lambda) sum_i weight_i z[i, s, 1] - lambda sum b.
    # The flow out of the source equals the flow into the sink, so z[i, s, 1] counts
    # a correctly classified pattern.
    c = np.zeros(cols.n_cols)
    c[z[:, 0]] = (1.0 - spec.lambda_) * data.weight
    if spec.lambda_ > 0:
        c[idx["b"].ravel()] = -spec.lambda_
    A, row_lower, row_upper = rows.matrix(cols.n_cols)
    col_lower, col_upper, integrality = cols.bounds()
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
        name="FlowOCT (eq. 1)" if balanced else "FlowOCT (eq. 7)",
    )
