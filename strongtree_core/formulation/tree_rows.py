"""Rows on the tree variables (b, p, w) shared by every formulation.

Each function adds one constraint family, vectorized over nodes; the paper's
equation is written above it.

The paper: Sina Aghaei, Andrés Gómez and Phebe Vayanos, *Strong Optimal Classification Trees*,
arXiv:2103.15965 (Operations Research).
"""

from __future__ import annotations

import numpy as np

from strongtree_core.formulation.arrays import ColumnAllocator, RowBuilder
from strongtree_core.structure import TreeGraph


def add_tree_columns(cols: ColumnAllocator, graph: TreeGraph, n_features: int, n_classes: int, *, balanced: bool) -> None:
    """b[n, f] for n in B; w[n, k] for n in L (balanced) or B u T; p[n] for n in B u T (imbalanced)."""
    cols.add("b", (graph.n_branching, n_features), integer=True)
    if balanced:
        cols.add("w", (graph.n_terminal, n_classes), integer=True)
    else:
        cols.add("p", (graph.n_nodes,), integer=True)
        cols.add("w", (graph.n_nodes, n_classes), integer=True)


def add_balanced_tree_rows(idx, rows: RowBuilder) -> None:
    """Balanced trees, eq. (1b) and (1i).

    sum_f b[n, f] = 1           for all n in B      (1b)
    sum_k w[n, k] = 1           for all n in L      (1i)
    """
    rows.add("branch_one_feature (1b)", idx["b"], 1.0, 1.0, 1.0)
    rows.add("leaf_one_class (1i)", idx["w"], 1.0, 1.0, 1.0)


def add_imbalanced_tree_rows(idx, rows: RowBuilder, graph: TreeGraph) -> None:
    """Imbalanced trees, eq. (7b), (7c) and (7j).

    sum_f b[n, f] + p[n] + sum_{m in P(n)} p[m] = 1    for all n in B     (7b)
    p[n] + sum_{m in P(n)} p[m] = 1                    for all n in T     (7c)
    sum_k w[n, k] = p[n]                               for all n in B u T (7j)
    """
    n_b = graph.n_branching
    on_path = graph.ancestors_matrix() | np.eye(graph.n_nodes, dtype=bool)  # P(n) u {n}
    p_cols = np.broadcast_to(idx["p"], on_path.shape)
    b_part = idx["b"]
    rows.add(
        "branch_or_predict (7b)",
        np.hstack([b_part, p_cols[:n_b]]),
        np.hstack([np.ones(b_part.shape), on_path[:n_b]]),
        1.0,
        1.0,
    )
    rows.add("terminal_leaf (7c)", p_cols[n_b:], on_path[n_b:].astype(float), 1.0, 1.0)
    w = idx["w"]
    rows.add(
        "leaf_prediction (7j)",
        np.hstack([w, idx["p"][:, None]]),
        np.hstack([np.ones(w.shape), -np.ones((w.shape[0], 1))]),
        0.0,
        0.0,
    )


def add_single_class_subtree_rows(idx, rows: RowBuilder, graph: TreeGraph) -> None:
    """Balanced trees: a subtree whose leaves all predict one class splits on feature 0.

    sum_{l in L(n)} w[l, k] - b[n, 0] <= |L(n)| - 1      for all n in B, k in K

    with L(n) the leaves below n.  When every leaf below n predicts k, the
    splits inside that subtree change no prediction, so every tree has an
    equivalent one meeting these rows (``decode.canonical_splits``): they only
    remove copies of the same classifier from the search.  Not valid with the
    feature-count bound (9), which the moved splits could exceed.
    """
    w, b = idx["w"], idx["b"]  # (|L|, K), (|B|, F)
    K = w.shape[1]
    for level in range(graph.depth):
        nodes = np.arange(2**level, 2 ** (level + 1))
        width = 2 ** (graph.depth - level)
        leaf_pos = nodes[:, None] * width - graph.n_terminal + np.arange(width)  # (m, width)
        leaf_w = np.transpose(w[leaf_pos], (0, 2, 1))  # (m, K, width)
        split = np.broadcast_to(b[nodes - 1, 0][:, None, None], (nodes.size, K, 1))
        cols = np.concatenate([leaf_w, split], axis=2).reshape(nodes.size * K, width + 1)
        coefs = np.append(np.ones(width), -1.0)
        rows.add("single_class_subtree", cols, coefs, -np.inf, width - 1.0)


def add_sparsity_rows(idx, rows: RowBuilder, max_branching: int) -> None:
    """Sparsity, eq. (8): sum_{n in B} sum_f b[n, f] <= C."""
    rows.add("max_branching_nodes (8)", idx["b"].reshape(1, -1), 1.0, -np.inf, float(max_branching))


def add_feature_count_columns(cols: ColumnAllocator, n_features: int) -> None:
    """u[f] = 1 when feature f is used; continuous, as the paper notes after eq. (9)."""
    cols.add("u", (n_features,), integer=False)


def add_feature_count_rows(idx, rows: RowBuilder, max_features_used: int) -> None:
    """Feature count, eq. (9).

    b[n, f] <= u[f]      for all n in B, f in F
    sum_f u[f] <= C
    """
    b = idx["b"]
    u = np.broadcast_to(idx["u"], b.shape)
    rows.add(
        "feature_used (9)",
        np.stack([b, u], axis=-1).reshape(-1, 2),
        np.array([1.0, -1.0]),
        -np.inf,
        0.0,
    )
    rows.add("max_features_used (9)", idx["u"].reshape(1, -1), 1.0, -np.inf, float(max_features_used))


def add_left_right_capacity_rows(rows: RowBuilder, graph: TreeGraph, X: np.ndarray, z_in: np.ndarray, b: np.ndarray, tag: str) -> None:
    """Branching capacities, eq. (1f)-(1g) / (7g)-(7h) / (11g)-(11h).

    z[i, a(l(n)) -> l(n)] <= sum_{f: x_if = 0} b[n, f]     for all n in B, i    (left)
    z[i, a(r(n)) -> r(n)] <= sum_{f: x_if = 1} b[n, f]     for all n in B, i    (right)

    ``z_in[i, n-1]`` is the column of the flow on the arc into node n.
    """
    n_pat = X.shape[0]
    B = graph.branching_nodes
    if B.size == 0:
        return
    Xf = X.astype(float)
    for side, coef in (("left", 1.0 - Xf), ("right", Xf)):
        child = 2 * B + (1 if side == "right" else 0)  # node numbers
        z_child = z_in[:, child - 1]  # (P, |B|)
        b_rows = np.broadcast_to(b[None, :, :], (n_pat,) + b.shape)  # (P, |B|, F)
        cols = np.concatenate([z_child[:, :, None], b_rows], axis=2)
        coefs = np.concatenate(
            [np.ones((n_pat, B.size, 1)), -np.broadcast_to(coef[:, None, :], (n_pat, B.size, X.shape[1]))], axis=2
        )
        rows.add(f"{side}_capacity ({tag})", cols.reshape(n_pat * B.size, -1), coefs.reshape(n_pat * B.size, -1), -np.inf, 0.0)
