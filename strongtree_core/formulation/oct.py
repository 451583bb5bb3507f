"""OCT: the univariate-split formulation of Bertsimas and Dunn (2017), their
formulation (24), as the paper restates it for binary data (Electronic
Companion, "OCT", rows (a)-(o) below), a baseline for Theorem 1.

Nodes are numbered as everywhere here (``structure.TreeGraph``): branching
nodes B, terminal nodes T; ``PL(n)`` / ``PR(n)`` are the ancestors of ``n``
whose left / right branch the path to ``n`` follows.  A datapoint passes the
test of node ``m`` (goes left) when ``sum_f b[m, f] x_f < v[m]``: with binary
features and ``v[m] = p[m] = 1`` that is ``x_f = 0``, the convention of the
flow formulations (``x_f = 1`` goes right).  A node that does not split
(``p[m] = 0``) sends every datapoint right, down to the rightmost terminal
node below it, whose class is then the prediction.

Datapoints are the weighted patterns: ``|I|`` becomes the total weight W,
``Q`` sums weights, the minimum leaf size counts rows.  Unlike FlowOCT, every
datapoint is routed to a leaf by a binary ``zeta`` (the paper, Section 2:
"previous formulations include binary decision variables that indicate the
leaf each datapoint lands on"); rows (i)-(j) are the big-M routing rows whose
weak relaxation Theorem 1 is about.

The paper: Sina Aghaei, Andrés Gómez and Phebe Vayanos, *Strong Optimal Classification Trees*,
arXiv:2103.15965 (Operations Research).
"""

from __future__ import annotations

import numpy as np

from strongtree_core.encoding.patterns import PatternData
from strongtree_core.formulation.arrays import ColumnAllocator, ModelArrays, RowBuilder
from strongtree_core.formulation.decode import pad_to_balanced
from strongtree_core.formulation.spec import TreeSpec
from strongtree_core.structure import LEAF, PRUNED, TreeGraph, TreeStructure

#: OCT refuses what formulation (24) has no rows for; tests assert this text.
OCT_REFUSED = (
    "OCT (Bertsimas and Dunn 2017, formulation (24)) learns trees that maximize accuracy, with the penalty "
    "lambda and a minimum leaf size; it cannot take {names}. Use formulation='flow' or 'auto'."
)


def oct_unsupported(spec: TreeSpec) -> list[str]:
    """What ``spec`` asks that formulation (24) cannot express (empty when OCT takes it)."""
    names = [c.name for c in spec.side_constraints]
    if spec.objective != "accuracy":
        names.append(f"the objective {spec.objective}")
    if spec.max_branching is not None:
        names.append(f"at most {spec.max_branching} branching nodes")
    if spec.max_features_used is not None:
        names.append(f"at most {spec.max_features_used} features")
    return names


def left_right_ancestors(graph: TreeGraph) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(terminal node n, ancestor m) pairs with m in PL(n), and with m in PR(n)."""
    left: list[tuple[int, int]] = []
    right: list[tuple[int, int]] = []
    for n in graph.terminal_nodes:
        child = int(n)
        while child > 1:
            m = child // 2
            (left if child == 2 * m else right).append((int(n), m))
            child = m
    return left, right


def rightmost_terminal(node: int, graph: TreeGraph) -> int:
    """The terminal node reached from ``node`` by always going right."""
    while node <= graph.n_branching:
        node = 2 * node + 1
    return node


def build_oct(data: PatternData, spec: TreeSpec, *, balanced: bool) -> ModelArrays:
    """Formulation (24) of Bertsimas and Dunn as restated in the paper's appendix.

    ``balanced``: every branching node splits (``p`` fixed to 1, as the paper's
    proof of Theorem 1 does for balanced trees); otherwise ``p`` is free, the
    objective pays ``lambda`` per split and ``min_leaf`` bounds every leaf
    that holds a datapoint (Bertsimas and Dunn's ``N_min``).

    Columns: ``b`` (|B|, F), ``p`` (|B|,), ``v`` (|B|,) the cut-off values,
    ``w`` (|T|, K), ``l`` (|T|,) whether a terminal node predicts, ``zeta``
    (P, |T|) the leaf of each datapoint, ``Q`` (|T|, K) and ``Qn`` (|T|,) the
    weight of each class and in all at each leaf, ``L`` (|T|,) the
    misclassified weight at each leaf.
    """
    refused = oct_unsupported(spec)
    if refused:
        raise ValueError(OCT_REFUSED.format(names=", ".join(refused)))
    if balanced and (spec.lambda_ > 0 or spec.min_leaf > 0):
        raise ValueError("a balanced OCT splits at every node: lambda and min_leaf need the free p of (24)")
    graph = TreeGraph(spec.depth)
    P, F, K = data.n_patterns, data.n_features, data.n_classes
    nB, nT = graph.n_branching, graph.n_terminal
    W = float(data.weight.sum())
    cols = ColumnAllocator()
    b = cols.add("b", (nB, F), integer=True)
    p = cols.add("p", (nB,), lower=1.0 if balanced else 0.0, integer=True)
    v = cols.add("v", (nB,), integer=False)
    w = cols.add("w", (nT, K), integer=True)
    l = cols.add("l", (nT,), integer=True)
    zeta = cols.add("zeta", (P, nT), integer=True)
    Q = cols.add("Q", (nT, K), upper=W, integer=False)
    Qn = cols.add("Qn", (nT,), upper=W, integer=False)
    L = cols.add("L", (nT,), upper=W, integer=False)
    rows = RowBuilder()

    # (b) L_n >= Q_n - Q_nk - |I| (1 - w_nk)      k in K, n in T
    # (c) L_n <= Q_n - Q_nk + |I| w_nk            k in K, n in T
    terms = np.stack([np.broadcast_to(L[:, None], (nT, K)), np.broadcast_to(Qn[:, None], (nT, K)), Q, w], axis=-1)
    coefs = np.array([1.0, -1.0, 1.0, -W])
    rows.add("misclassified_lower (OCT b)", terms.reshape(-1, 4), coefs, -W, np.inf)
    rows.add("misclassified_upper (OCT c)", terms.reshape(-1, 4), coefs, -np.inf, 0.0)
    # (d) Q_nk = sum_{i: y_i = k} zeta_in           k in K, n in T  (weighted)
    of_class = (data.y[:, None] == np.arange(K)[None, :]) * data.weight[:, None]  # (P, K)
    for_q = np.concatenate([Q.reshape(-1, 1), np.repeat(zeta.T, K, axis=0)], axis=1)  # (nT*K, 1 + P)
    q_coefs = np.concatenate([np.ones((nT * K, 1)), -np.tile(of_class.T, (nT, 1))], axis=1)
    rows.add("class_weight_at_leaf (OCT d)", for_q, q_coefs, 0.0, 0.0)
    # (e) Q_n = sum_i zeta_in                        n in T  (weighted)
    rows.add("weight_at_leaf (OCT e)", np.concatenate([Qn[:, None], zeta.T], axis=1),
             np.concatenate([np.ones((nT, 1)), -np.broadcast_to(data.weight, (nT, P))], axis=1), 0.0, 0.0)
    # (f) l_n = sum_k w_nk                           n in T
    rows.add("leaf_predicts (OCT f)", np.concatenate([l[:, None], w], axis=1),
             np.concatenate([np.ones((nT, 1)), -np.ones((nT, K))], axis=1), 0.0, 0.0)
    # (g) zeta_in <= l_n                             i in I, n in T
    rows.add("only_to_predicting_leaves (OCT g)", np.stack([zeta, np.broadcast_to(l, (P, nT))], axis=-1).reshape(-1, 2),
             np.array([1.0, -1.0]), -np.inf, 0.0)
    # (h) sum_n zeta_in = 1                          i in I
    rows.add("one_leaf_each (OCT h)", zeta, 1.0, 1.0, 1.0)
    # (i) sum_f b_mf x_if >= v_m + zeta_in - 1       i in I, n in T, m in PR(n)
    # (j) sum_f b_mf x_if <= v_m - 2 zeta_in + 1     i in I, n in T, m in PL(n)
    left, right = left_right_ancestors(graph)
    Xf = data.X.astype(float)
    for name, pairs, sign, lower, upper in (
        ("route_right (OCT i)", right, -1.0, -1.0, np.inf),
        ("route_left (OCT j)", left, 2.0, -np.inf, 1.0),
    ):
        n_arr = np.array([n for n, _ in pairs]) - nB - 1  # terminal position
        m_arr = np.array([m for _, m in pairs]) - 1
        k = len(pairs)
        route_cols = np.concatenate([
            np.broadcast_to(b[m_arr][None, :, :], (P, k, F)),
            np.broadcast_to(v[m_arr][None, :, None], (P, k, 1)),
            zeta[:, n_arr][:, :, None],
        ], axis=2)
        route_coefs = np.concatenate([
            np.broadcast_to(Xf[:, None, :], (P, k, F)),
            -np.ones((P, k, 1)),
            np.full((P, k, 1), sign),
        ], axis=2)
        rows.add(name, route_cols.reshape(P * k, -1), route_coefs.reshape(P * k, -1), lower, upper)
    # (k) sum_f b_nf = p_n                           n in B
    rows.add("branch_if_split (OCT k)", np.concatenate([b, p[:, None]], axis=1),
             np.concatenate([np.ones((nB, F)), -np.ones((nB, 1))], axis=1), 0.0, 0.0)
    # (l) 0 <= v_n <= p_n                            n in B  (v >= 0 is its bound)
    rows.add("cut_off_if_split (OCT l)", np.stack([v, p], axis=-1), np.array([1.0, -1.0]), -np.inf, 0.0)
    # (m) p_n <= p_a(n)                              n in B \ {1}
    if nB > 1:
        inner = np.arange(2, nB + 1)
        rows.add("split_below_split (OCT m)", np.stack([p[inner - 1], p[inner // 2 - 1]], axis=-1),
                 np.array([1.0, -1.0]), -np.inf, 0.0)
    if spec.min_leaf > 0:
        # Bertsimas and Dunn's minimum leaf size: sum_i zeta_in >= N_min l_n   n in T  (rows, not weights)
        rows.add("min_leaf (B&D N_min)", np.concatenate([zeta.T, l[:, None]], axis=1),
                 np.concatenate([np.broadcast_to(data.count.astype(float), (nT, P)),
                                 np.full((nT, 1), -float(spec.min_leaf))], axis=1), 0.0, np.inf)

    # (a) maximize (1 - lambda) (|I| - sum_n L_n) - lambda sum_n p_n
    c = np.zeros(cols.n_cols)
    c[L] = -(1.0 - spec.lambda_)
    c[p] = -spec.lambda_
    A, row_lower, row_upper = rows.matrix(cols.n_cols)
    col_lower, col_upper, integrality = cols.bounds()
    return ModelArrays(
        sense="max", c=c, A=A, row_lower=row_lower, row_upper=row_upper, col_lower=col_lower,
        col_upper=col_upper, integrality=integrality, index=dict(cols.index),
        name="OCT (Bertsimas and Dunn, formulation 24)" + (", balanced" if balanced else ""),
        obj_offset=(1.0 - spec.lambda_) * W,
    )


def decode_oct(idx, x: np.ndarray, depth: int) -> TreeStructure:
    """The tree of an OCT solution.

    A node splits when ``p = 1`` and its cut-off ``v = 1``: ``x_f = 0`` goes
    left.  With ``p = 0``, or ``v < 1`` (then no datapoint passes the test,
    rows (i)-(j)), every datapoint goes right: the node takes the place of
    its right subtree, down to a terminal node, which predicts argmax_k w.
    """
    graph = TreeGraph(depth)
    x = np.asarray(x, dtype=float)
    b, p, v, w = x[idx["b"]], x[idx["p"]], x[idx["v"]], x[idx["w"]]
    feature = np.full(graph.n_nodes, PRUNED, dtype=np.int64)
    prediction = np.full(graph.n_nodes, -1, dtype=np.int64)
    stack = [(1, 1)]  # (node of the solution, node of the tree it becomes)
    while stack:
        src, dst = stack.pop()
        if src > graph.n_branching:
            feature[dst - 1] = LEAF
            prediction[dst - 1] = int(w[src - graph.n_branching - 1].argmax())
        elif p[src - 1] > 0.5 and v[src - 1] > 0.5:
            feature[dst - 1] = int(b[src - 1].argmax())
            stack += [(2 * src, 2 * dst), (2 * src + 1, 2 * dst + 1)]
        else:
            stack.append((2 * src + 1, dst))
    return TreeStructure(depth, feature, prediction)


def oct_start_vector(model: ModelArrays, tree: TreeStructure, data: PatternData) -> np.ndarray:
    """``tree`` as a complete OCT solution (a warm start); a balanced model
    (``p`` fixed to 1) gets the tree padded to full depth.

    Rows (b)-(c) admit only leaves that predict their (weighted) majority
    class, so every leaf holding datapoints is relabelled to it: the same
    splits, an accuracy at least the tree's.
    """
    idx = model.index
    graph = TreeGraph(tree.depth)
    nB, nT = graph.n_branching, graph.n_terminal
    if idx["p"].size and model.col_lower[idx["p"]].min() > 0.5:
        tree = pad_to_balanced(tree)
    x = np.zeros(model.n_cols)
    for n in tree.branching:
        x[idx["b"][n - 1, tree.feature[n - 1]]] = 1.0
        x[idx["p"][n - 1]] = 1.0
        x[idx["v"][n - 1]] = 1.0
    label = np.full(nT, -1, dtype=np.int64)  # the class of each predicting terminal node
    for n in tree.leaves:
        label[rightmost_terminal(int(n), graph) - nB - 1] = tree.prediction[n - 1]
    leaf = tree.apply(data.X)
    terminal = np.array([rightmost_terminal(int(n), graph) for n in range(1, graph.n_nodes + 1)])[leaf - 1] - nB - 1
    x[idx["zeta"][np.arange(data.n_patterns), terminal]] = 1.0
    weight_at = np.bincount(terminal, weights=data.weight, minlength=nT)
    class_at = np.zeros((nT, data.n_classes))
    np.add.at(class_at, (terminal, data.y), data.weight)
    label = np.where(weight_at > 0, class_at.argmax(axis=1), label)
    predicts = label >= 0
    x[idx["l"][predicts]] = 1.0
    x[idx["w"][predicts, label[predicts]]] = 1.0
    x[idx["Qn"]] = weight_at
    x[idx["Q"]] = class_at
    x[idx["L"]] = np.where(predicts, weight_at - class_at[np.arange(nT), np.maximum(label, 0)], 0.0)
    return x
