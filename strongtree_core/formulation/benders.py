"""BendersOCT: the master problem (4) / (EC.3) and the path-following separation
of Algorithms 1 (balanced trees) and 2 (imbalanced trees).

The master keeps the tree variables and one ``g[i] in [0, 1]`` per pattern;
the flow subproblem of each pattern is replaced by cut-set inequalities

    g[i] <= sum_{(n1, n2) in C(S)} c^i_{n1, n2}(b, w)                 (4b)

added lazily at integral master solutions.  :func:`benders_cuts` is a pure,
vectorized function of (incumbent, data): it follows each misclassified
pattern's path from the root (the source set S of Algorithms 1-2) and returns
the facet-defining cut (Theorem 2) of each, as sparse rows.

The paper: Sina Aghaei, Andrés Gómez and Phebe Vayanos, *Strong Optimal Classification Trees*,
arXiv:2103.15965 (Operations Research).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

from strongtree_core.encoding.patterns import PatternData
from strongtree_core.formulation.arrays import ColumnAllocator, ModelArrays, RowBuilder
from strongtree_core.formulation.decode import decode_tree
from strongtree_core.formulation.spec import TreeSpec
from strongtree_core.formulation.tree_rows import (
    add_balanced_tree_rows,
    add_feature_count_columns,
    add_feature_count_rows,
    add_imbalanced_tree_rows,
    add_single_class_subtree_rows,
    add_sparsity_rows,
    add_tree_columns,
)
from strongtree_core.structure import LEAF, TreeGraph, TreeStructure

#: g above this counts as "classified correct" by the master.
G_TOLERANCE = 1e-6


def build_benders_master(
    data: PatternData, spec: TreeSpec, *, balanced: bool, single_class_rows: bool = True
) -> ModelArrays:
    """The master problem: tree rows of (1) or (7), columns ``g`` (P,), objective
    (1 - lambda) sum_i weight_i g[i] - lambda sum b, and the separator.

    ``single_class_rows``: add the symmetry-breaking rows of
    :func:`add_single_class_subtree_rows` to a balanced master without a
    feature-count bound (ignored otherwise).
    """
    if spec.needs_all_datapoints:
        raise ValueError(
            "Benders' decomposition applies only to constraints that do not couple datapoints "
            "(paper, Section 4.4); use the flow formulation"
        )
    if balanced and (spec.lambda_ > 0 or spec.max_branching is not None):
        raise ValueError("a balanced tree branches at every node: use the imbalanced master")
    graph = TreeGraph(spec.depth)
    cols = ColumnAllocator()
    add_tree_columns(cols, graph, data.n_features, data.n_classes, balanced=balanced)
    g = cols.add("g", (data.n_patterns,), integer=False)
    if spec.max_features_used is not None:
        add_feature_count_columns(cols, data.n_features)
    idx = dict(cols.index)
    rows = RowBuilder()
    if balanced:
        add_balanced_tree_rows(idx, rows)
        if single_class_rows and spec.max_features_used is None:
            add_single_class_subtree_rows(idx, rows, graph)
    else:
        add_imbalanced_tree_rows(idx, rows, graph)
        if spec.max_branching is not None:
            add_sparsity_rows(idx, rows, spec.max_branching)
    if spec.max_features_used is not None:
        add_feature_count_rows(idx, rows, spec.max_features_used)
    c = np.zeros(cols.n_cols)
    c[g] = (1.0 - spec.lambda_) * data.weight
    if spec.lambda_ > 0:
        c[idx["b"].ravel()] = -spec.lambda_
    A, row_lower, row_upper = rows.matrix(cols.n_cols)
    col_lower, col_upper, integrality = cols.bounds()
    n_cols = cols.n_cols

    def separator(x: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
        tree = decode_tree(idx, x, spec.depth, balanced=balanced)
        return benders_cuts(tree, data, idx, x[g], n_cols, balanced=balanced)

    locks = {"g": "up", "b": "down", "w": "down"}
    return ModelArrays(
        sense="max",
        c=c,
        A=A,
        row_lower=row_lower,
        row_upper=row_upper,
        col_lower=col_lower,
        col_upper=col_upper,
        integrality=integrality,
        index=idx,
        name="BendersOCT master (4)" if balanced else "BendersOCT master (EC.3)",
        separator=separator,
        lazy_locks=locks,
    )


def benders_cuts(
    tree: TreeStructure,
    data: PatternData,
    idx: dict,
    g_values: np.ndarray,
    n_cols: int,
    *,
    balanced: bool,
) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Algorithms 1 and 2, vectorized over patterns.

    For every pattern i with g[i] > 0 whose path ends at a leaf predicting
    another class, the source set S is the path s, n_0 = 1, ..., n_m (the leaf),
    and the cut is

        g[i] <= sum_{j < m} sum_{f: x_if != x_i,f(n_j)} b[n_j, f]   (arc to the child not taken)
              + [imbalanced] sum_{j < m} w[n_j, y_i]                  (arcs (n_j, t))
              + w[n_m, y_i]                                           (arc (n_m, t))
              + [n_m in B] sum_f b[n_m, f]                            (arcs to both children)

    Returns (A_cut, lower, upper) with rows ``g[i] - rhs <= 0``.
    """
    import scipy.sparse as sp  # here: a process that never separates a cut never loads it

    graph = TreeGraph(tree.depth)
    leaf = tree.apply(data.X)
    wrong = tree.prediction[leaf - 1] != data.y
    violated = np.flatnonzero(wrong & (g_values > G_TOLERANCE))
    if violated.size == 0:
        return sp.csr_matrix((0, n_cols)), np.zeros(0), np.zeros(0)
    X = data.X[violated]
    y = data.y[violated]
    b = idx["b"]
    w = idx["w"]
    m = violated.size
    rows_i: list[np.ndarray] = [np.arange(m)]
    cols_i: list[np.ndarray] = [idx["g"][violated]]
    vals_i: list[np.ndarray] = [np.ones(m)]

    def w_col(rows: np.ndarray) -> np.ndarray:
        # Column of w[n, y_i] at the current node of these rows; balanced masters
        # index w by leaf position, imbalanced ones by node.
        pos = node[rows] - 1 - (graph.n_branching if balanced else 0)
        return w[pos, y[rows]]

    node = np.ones(m, dtype=np.int64)
    active = np.ones(m, dtype=bool)
    for _ in range(tree.depth + 1):
        f = tree.feature[node - 1]
        at_leaf = active & (f == LEAF)
        branching = active & (f >= 0)
        if not branching.any() and not at_leaf.any():
            break
        # Leaf reached: arc (n_m, t) and, for n_m in B, both child arcs.
        sel = np.flatnonzero(at_leaf)
        if sel.size:
            rows_i.append(sel)
            cols_i.append(w_col(sel))
            vals_i.append(-np.ones(sel.size))
            inner = sel[node[sel] <= graph.n_branching]
            if inner.size:
                F = b.shape[1]
                rows_i.append(np.repeat(inner, F))
                cols_i.append(b[node[inner] - 1].ravel())
                vals_i.append(-np.ones(inner.size * F))
        active &= ~at_leaf
        sel = np.flatnonzero(branching)
        if sel.size == 0:
            break
        step = X[sel, f[sel]].astype(np.int64)  # 1 = went right
        # Child not taken: capacity sum_{f: x_if = 1 - step} b[n, f].
        other = X[sel] != step[:, None]  # (s, F)
        r, ff = np.nonzero(other)
        rows_i.append(sel[r])
        cols_i.append(b[node[sel][r] - 1, ff])
        vals_i.append(-np.ones(r.size))
        if not balanced:
            rows_i.append(sel)
            cols_i.append(w_col(sel))
            vals_i.append(-np.ones(sel.size))
        node[sel] = 2 * node[sel] + step
    A = sp.csr_matrix(
        (np.concatenate(vals_i), (np.concatenate(rows_i), np.concatenate(cols_i))),
        shape=(m, n_cols),
    )
    A.sum_duplicates()
    return A, np.full(m, -np.inf), np.zeros(m)


