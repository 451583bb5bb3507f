"""From solution vectors to trees and back (cvxpy's "invert" step).

:func:`decode_tree` reads a :class:`TreeStructure` from any formulation's
solution; :func:`start_vector` writes a tree as a full solution of a model
(a warm start), flows included, so that it can be checked for feasibility
without a solver.
"""

from __future__ import annotations

import numpy as np

from strongtree_core.encoding.patterns import PatternData
from strongtree_core.formulation.arrays import ModelArrays
from strongtree_core.structure import LEAF, PRUNED, TreeGraph, TreeStructure


def decode_tree(idx, x: np.ndarray, depth: int, *, balanced: bool) -> TreeStructure:
    """Read the tree from a (near-integral) solution vector.

    Balanced: node n in B branches on argmax_f b[n, f]; leaf n predicts
    argmax_k w[n, k].  Imbalanced: from the root, a node with p[n] = 1 predicts
    argmax_k w[n, k]; otherwise it branches on argmax_f b[n, f]; nodes below a
    leaf are pruned.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from strongtree_core.encoding import TableEncoder, collapse_patterns
    >>> X = pd.DataFrame({'a': [0, 1, 0, 1, 1, 0], 'b': [1, 1, 0, 0, 1, 0]})
    >>> y = np.array([0, 1, 0, 1, 1, 1])
    >>> plan = TableEncoder().fit(X)
    >>> data = collapse_patterns(plan.transform(X), y, 2)
    >>> from strongtree_core.formulation import TreeSpec, build_model
    >>> built = build_model(data, TreeSpec(depth=1), 'flow')
    >>> from strongtree_core.formulation import TreeStructure, start_vector
    >>> stump = TreeStructure(1, np.array([0, -1, -1]), np.array([-1, 0, 1]))
    >>> built.decode(start_vector(built.arrays, stump, data)).prediction.tolist()
    [-1, 0, 1]
    """
    graph = TreeGraph(depth)
    x = np.asarray(x, dtype=float)
    b = x[idx["b"]] if graph.n_branching else np.zeros((0, 0))
    w = x[idx["w"]]
    feature = np.full(graph.n_nodes, PRUNED, dtype=np.int64)
    prediction = np.full(graph.n_nodes, -1, dtype=np.int64)
    if balanced:
        if graph.n_branching:
            feature[: graph.n_branching] = b.argmax(axis=1)
        feature[graph.n_branching :] = LEAF
        prediction[graph.n_branching :] = w.argmax(axis=1)
        return TreeStructure(depth, feature, prediction)
    p = x[idx["p"]]
    stack = [1]
    while stack:
        n = stack.pop()
        is_terminal = n > graph.n_branching
        if is_terminal or p[n - 1] > 0.5 or b[n - 1].sum() < 0.5:
            feature[n - 1] = LEAF
            prediction[n - 1] = int(w[n - 1].argmax())
        else:
            feature[n - 1] = int(b[n - 1].argmax())
            stack += [2 * n, 2 * n + 1]
    return TreeStructure(depth, feature, prediction)


def pad_to_balanced(tree: TreeStructure) -> TreeStructure:
    """The same classifier as a balanced tree: a leaf above full depth branches on
    feature 0 and both children repeat its prediction (paper, Section 2)."""
    graph = TreeGraph(tree.depth)
    feature = tree.feature.copy()
    prediction = tree.prediction.copy()
    for n in range(1, graph.n_branching + 1):
        if feature[n - 1] == LEAF:
            feature[n - 1] = 0
            for child in (2 * n, 2 * n + 1):
                feature[child - 1] = LEAF
                prediction[child - 1] = prediction[n - 1]
            prediction[n - 1] = -1
    return TreeStructure(tree.depth, feature, prediction)


def canonical_splits(tree: TreeStructure) -> TreeStructure:
    """The same classifier with every subtree whose leaves all predict one class
    split on feature 0 (the form ``tree_rows.add_single_class_subtree_rows`` asks
    of a balanced tree); a tree that stops early is first padded to full depth."""
    tree = pad_to_balanced(tree)
    graph = TreeGraph(tree.depth)
    feature = tree.feature.copy()
    for level in range(tree.depth):
        width = 2 ** (tree.depth - level)
        for n in range(2**level, 2 ** (level + 1)):
            leaves = n * width + np.arange(width)
            if np.unique(tree.prediction[leaves - 1]).size == 1:
                feature[n - 1] = 0
    return TreeStructure(graph.depth, feature, tree.prediction)


def start_vector(model: ModelArrays, tree: TreeStructure, data: PatternData) -> np.ndarray:
    """Write ``tree`` as a complete solution of ``model`` (any formulation here).

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from strongtree_core.encoding import TableEncoder, collapse_patterns
    >>> X = pd.DataFrame({'a': [0, 1, 0, 1, 1, 0], 'b': [1, 1, 0, 0, 1, 0]})
    >>> y = np.array([0, 1, 0, 1, 1, 1])
    >>> plan = TableEncoder().fit(X)
    >>> data = collapse_patterns(plan.transform(X), y, 2)
    >>> from strongtree_core.formulation import TreeSpec, build_model
    >>> built = build_model(data, TreeSpec(depth=1), 'flow')
    >>> from strongtree_core.formulation import TreeStructure, start_vector
    >>> stump = TreeStructure(1, np.array([0, -1, -1]), np.array([-1, 0, 1]))
    >>> x = start_vector(built.arrays, stump, data)
    >>> built.arrays.max_violation(x) <= 1e-9
    True
    """
    idx = model.index
    balanced = "p" not in idx
    if balanced:
        tree = pad_to_balanced(tree)
    graph = TreeGraph(tree.depth)
    x = np.zeros(model.n_cols)
    for n in tree.branching:
        x[idx["b"][n - 1, tree.feature[n - 1]]] = 1.0
    for n in tree.leaves:
        if balanced:
            x[idx["w"][n - 1 - graph.n_branching, tree.prediction[n - 1]]] = 1.0
        else:
            x[idx["p"][n - 1]] = 1.0
            x[idx["w"][n - 1, tree.prediction[n - 1]]] = 1.0
    leaf = tree.apply(data.X)
    pred = tree.prediction[leaf - 1]
    correct = pred == data.y
    paths = tree.path_nodes(data.X)
    rows = np.repeat(np.arange(data.n_patterns), paths.shape[1])
    nodes = paths.ravel()
    on = nodes > 0
    if "z" in idx:
        carries = np.ones(data.n_patterns, dtype=bool) if "zs" in idx else correct
        keep = on & carries[rows]
        x[idx["z"][rows[keep], nodes[keep] - 1]] = 1.0
    if "zt" in idx:
        inner = correct & (leaf <= graph.n_branching)
        x[idx["zt"][np.flatnonzero(inner), leaf[inner] - 1]] = 1.0
    if "zs" in idx:
        x[idx["zs"][np.arange(data.n_patterns), leaf - 1, pred]] = 1.0
    if "g" in idx:
        x[idx["g"]] = correct.astype(float)
    if "u" in idx:
        x[idx["u"][tree.features_used]] = 1.0
    if "m" in idx:
        class_weight = np.bincount(data.y, weights=data.weight, minlength=data.n_classes)
        hit = np.bincount(data.y, weights=data.weight * correct, minlength=data.n_classes)
        present = class_weight > 0
        x[idx["m"][0]] = float(np.min(hit[present] / class_weight[present])) if present.any() else 0.0
    return x
