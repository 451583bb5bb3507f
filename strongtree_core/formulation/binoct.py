"""BinOCT: the binary linear program of Verwer and Zhang (2019), a baseline
for Theorem 1.

Verwer and Zhang route every datapoint ``r`` to a leaf ``l`` (``d[r, l]``),
and instead of one routing row per datapoint and node (OCT's big-M rows) they
write one big-M row per node, feature and range of threshold values, summed
over the datapoints in that range; a threshold is chosen through binary
digits ``t[n, i]``.  With binary features every feature has one threshold,
so the digits vanish and only the row for the extreme values remains: at a
node that tests ``f``, rows with ``x_f = 1`` must not reach its left leaves
and rows with ``x_f = 0`` not its right ones, with ``M`` the number of rows.
Their formulation, numbered as here:

    minimize   sum_{l, c} e[l, c]                                               (1)
    subject to sum_f f[n, f] = 1                                  n in B        (2)
               M f[n, f] + sum_{r: x_rf = 1} sum_{l in LL(n)} d[r, l]
                         + sum_{r: x_rf = 0} sum_{l in RL(n)} d[r, l] <= M
                                                                  n in B, f     (3)
               sum_l d[r, l] = 1                                  r             (4)
               sum_c p[l, c] = 1                                  l in L        (5)
               sum_{r: y_r = c} d[r, l] - M_c p[l, c] <= e[l, c]  l in L, c     (6)

with ``f``, ``p`` binary and ``d``, ``e`` continuous (their implementation's
default: once ``f`` is integral each datapoint has a single leaf left).  Trees
are balanced (every node tests a feature; the paper notes that BinOCT's
implementation does not allow imbalanced trees) and the objective counts
misclassified rows: no lambda, minimum leaf size, other objectives or side
constraints.  Datapoints are the weighted patterns: (3) counts rows (M the
number of rows), (6) sums weights (``M_c`` the weight of class ``c``).

The paper: Sina Aghaei, Andrés Gómez and Phebe Vayanos, *Strong Optimal Classification Trees*,
arXiv:2103.15965 (Operations Research).
"""

from __future__ import annotations

import numpy as np

from strongtree_core.encoding.patterns import PatternData
from strongtree_core.formulation.arrays import ColumnAllocator, ModelArrays, RowBuilder
from strongtree_core.formulation.decode import pad_to_balanced
from strongtree_core.formulation.oct import oct_unsupported
from strongtree_core.formulation.spec import TreeSpec
from strongtree_core.structure import LEAF, TreeGraph, TreeStructure

#: BinOCT refuses what its formulation has no rows for; tests assert this text.
BINOCT_REFUSED = (
    "BinOCT (Verwer and Zhang 2019) learns balanced trees that maximize accuracy; it cannot take {names} "
    "(its implementation has no imbalanced trees, as the paper notes). Use formulation='oct', 'flow' or 'auto'."
)


def binoct_unsupported(spec: TreeSpec) -> list[str]:
    """What ``spec`` asks that BinOCT cannot express (empty when it takes it): what OCT
    cannot, and the penalty lambda and the minimum leaf size, which OCT has."""
    names = oct_unsupported(spec)
    if spec.lambda_ > 0:
        names.append(f"the branching penalty lambda = {spec.lambda_:g} (imbalanced trees)")
    if spec.min_leaf > 0:
        names.append(f"min leaf {spec.min_leaf}")
    return names


def leaves_below(graph: TreeGraph, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Leaf positions (0-based among the leaves) of the left and right subtrees of node ``n``."""
    width = 2 ** (graph.depth - int(np.floor(np.log2(n))))
    first = n * width - graph.n_terminal
    half = width // 2
    return np.arange(first, first + half), np.arange(first + half, first + width)


def build_binoct(data: PatternData, spec: TreeSpec) -> ModelArrays:
    """BinOCT for binary features: rows (2)-(6) above, maximizing correct weight.

    Columns: ``f`` (|B|, F) the feature tested at each node, ``p`` (|L|, K)
    the class of each leaf, ``d`` (P, |L|) the leaf of each datapoint, ``e``
    (|L|, K) the weight of class ``c`` misclassified at each leaf.  The
    objective is ``W - sum e`` (W the total weight), in the units of FlowOCT.
    """
    refused = binoct_unsupported(spec)
    if refused:
        raise ValueError(BINOCT_REFUSED.format(names=", ".join(refused)))
    graph = TreeGraph(spec.depth)
    P, F, K = data.n_patterns, data.n_features, data.n_classes
    nB, nL = graph.n_branching, graph.n_terminal
    class_weight = np.bincount(data.y, weights=data.weight, minlength=K)
    cols = ColumnAllocator()
    f = cols.add("f", (nB, F), integer=True)
    p = cols.add("p", (nL, K), integer=True)
    d = cols.add("d", (P, nL), integer=False)
    e = cols.add("e", (nL, K), upper=float(class_weight.max(initial=0.0)), integer=False)
    rows = RowBuilder()

    rows.add("one_feature (2)", f, 1.0, 1.0, 1.0)
    # (3) one row per node and feature: the rows on the wrong side of the test.
    M = float(data.count.sum())
    count = data.count.astype(float)
    for n in range(1, nB + 1):
        left, right = leaves_below(graph, n)
        # Pattern r may not reach LL(n) when x_rf = 1, nor RL(n) when x_rf = 0.
        d_cols = np.concatenate([d[:, left], d[:, right]], axis=1)  # (P, |L(n)|)
        on_left = data.X.astype(bool)  # (P, F): forbidden on the left
        coefs = np.concatenate([
            np.repeat(on_left[:, :, None], left.size, axis=2),
            np.repeat(~on_left[:, :, None], right.size, axis=2),
        ], axis=2) * count[:, None, None]  # (P, F, |L(n)|)
        row_cols = np.concatenate([
            f[n - 1][:, None],
            np.broadcast_to(d_cols.reshape(1, -1), (F, d_cols.size)),
        ], axis=1)
        row_coefs = np.concatenate([np.full((F, 1), M), np.transpose(coefs, (1, 0, 2)).reshape(F, -1)], axis=1)
        rows.add("threshold_range (3)", row_cols, row_coefs, -np.inf, M)
    rows.add("one_leaf_each (4)", d, 1.0, 1.0, 1.0)
    rows.add("one_class_each (5)", p, 1.0, 1.0, 1.0)
    # (6) sum_{r: y_r = c} weight_r d[r, l] - M_c p[l, c] - e[l, c] <= 0
    of_class = (data.y[:, None] == np.arange(K)[None, :]) * data.weight[:, None]  # (P, K)
    err_cols = np.concatenate([np.repeat(d.T, K, axis=0), p.reshape(-1, 1), e.reshape(-1, 1)], axis=1)
    err_coefs = np.concatenate([
        np.tile(of_class.T, (nL, 1)),
        -np.tile(class_weight, nL)[:, None],
        -np.ones((nL * K, 1)),
    ], axis=1)
    rows.add("leaf_errors (6)", err_cols, err_coefs, -np.inf, 0.0)

    # (1) minimize sum e, written as maximize W - sum e.
    c = np.zeros(cols.n_cols)
    c[e] = -1.0
    A, row_lower, row_upper = rows.matrix(cols.n_cols)
    col_lower, col_upper, integrality = cols.bounds()
    return ModelArrays(
        sense="max", c=c, A=A, row_lower=row_lower, row_upper=row_upper, col_lower=col_lower,
        col_upper=col_upper, integrality=integrality, index=dict(cols.index),
        name="BinOCT (Verwer and Zhang)", obj_offset=float(data.weight.sum()),
    )


def decode_binoct(idx, x: np.ndarray, depth: int) -> TreeStructure:
    """Node n tests argmax_f f[n, f]; leaf l predicts argmax_c p[l, c]."""
    graph = TreeGraph(depth)
    x = np.asarray(x, dtype=float)
    feature = np.full(graph.n_nodes, LEAF, dtype=np.int64)
    prediction = np.full(graph.n_nodes, -1, dtype=np.int64)
    if graph.n_branching:
        feature[: graph.n_branching] = x[idx["f"]].argmax(axis=1)
    prediction[graph.n_branching :] = x[idx["p"]].argmax(axis=1)
    return TreeStructure(depth, feature, prediction)


def binoct_start_vector(model: ModelArrays, tree: TreeStructure, data: PatternData) -> np.ndarray:
    """``tree`` (padded to full depth) as a complete BinOCT solution."""
    idx = model.index
    tree = pad_to_balanced(tree)
    graph = TreeGraph(tree.depth)
    x = np.zeros(model.n_cols)
    for n in tree.branching:
        x[idx["f"][n - 1, tree.feature[n - 1]]] = 1.0
    leaf = tree.apply(data.X) - graph.n_branching - 1
    predicted = tree.prediction[graph.n_branching:]
    x[idx["p"][np.arange(graph.n_terminal), predicted]] = 1.0
    x[idx["d"][np.arange(data.n_patterns), leaf]] = 1.0
    errors = np.zeros((graph.n_terminal, data.n_classes))
    wrong = predicted[leaf] != data.y
    np.add.at(errors, (leaf[wrong], data.y[wrong]), data.weight[wrong])
    x[idx["e"]] = errors
    return x
