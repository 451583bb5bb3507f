"""The shape of a tree: the ground floor that formulations, exact searches and
fitted trees all stand on (it imports nothing of the project).

The flow graph of a depth-``d`` tree (paper, Definitions 2.2 and 4.2).

Nodes are numbered breadth-first from 1 as in the paper: branching nodes
``B = {1, ..., 2^d - 1}``, terminal nodes ``T`` (the leaves ``L`` of a balanced
tree) ``= {2^d, ..., 2^{d+1} - 1}``; ``l(n) = 2n``, ``r(n) = 2n + 1`` and
``a(n) = floor(n / 2)``.  Arrays indexed by node use position ``n - 1``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TreeGraph:
    """Index arithmetic of the flow graph of a tree of maximum depth ``depth``.

    Examples
    --------
    >>> from strongtree_core.formulation import TreeGraph
    >>> graph = TreeGraph(2)
    >>> graph.branching_nodes.tolist(), graph.terminal_nodes.tolist()
    ([1, 2, 3], [4, 5, 6, 7])
    """

    depth: int

    def __post_init__(self) -> None:
        if not 0 <= self.depth <= 12:
            raise ValueError(f"depth must be between 0 and 12, got {self.depth}")

    @property
    def n_branching(self) -> int:
        """How many branching nodes: ``|B| = 2^d - 1``."""
        return 2**self.depth - 1

    @property
    def n_terminal(self) -> int:
        """How many terminal nodes: ``|T| = |L| = 2^d``."""
        return 2**self.depth

    @property
    def n_nodes(self) -> int:
        """How many nodes: ``|B| + |T| = 2^(d+1) - 1``."""
        return 2 ** (self.depth + 1) - 1

    @property
    def branching_nodes(self) -> np.ndarray:
        """Node numbers of the branching nodes B, shape ``(|B|,)``."""
        return np.arange(1, self.n_branching + 1)

    @property
    def terminal_nodes(self) -> np.ndarray:
        """Node numbers of the terminal nodes T, shape ``(|T|,)``."""
        return np.arange(self.n_branching + 1, self.n_nodes + 1)

    @property
    def nodes(self) -> np.ndarray:
        """Node numbers of B and T, shape ``(|B| + |T|,)``."""
        return np.arange(1, self.n_nodes + 1)

    def ancestors_matrix(self) -> np.ndarray:
        """Boolean matrix ``P[n-1, m-1]`` true when ``m`` is a strict ancestor of ``n`` (set P(n))."""
        n_nodes = self.n_nodes
        P = np.zeros((n_nodes, n_nodes), dtype=bool)
        for n in range(2, n_nodes + 1):
            m = n // 2
            P[n - 1, m - 1] = True
            P[n - 1] |= P[m - 1]
        return P

    def node_depth(self) -> np.ndarray:
        """Depth of each node (root = 0), shape ``(|B| + |T|,)``."""
        return np.floor(np.log2(self.nodes)).astype(int)


#: Codes in :attr:`TreeStructure.feature` for nodes that do not branch.
LEAF = -1
PRUNED = -2


@dataclass(frozen=True)
class TreeStructure:
    """The decisions of a tree of maximum depth ``depth``, as plain arrays.

    ``feature[n-1]`` is the binary feature tested at node ``n`` (a pattern with
    ``x_f = 1`` goes right, ``x_f = 0`` left), ``LEAF`` where a prediction is made
    and ``PRUNED`` below a leaf; ``prediction[n-1]`` is the class index predicted
    at leaf ``n`` (-1 elsewhere).  Arrays have length ``2^{depth+1} - 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from strongtree_core.formulation import TreeStructure
    >>> stump = TreeStructure(1, np.array([0, -1, -1]), np.array([-1, 0, 1]))
    >>> stump.predict(np.array([[0], [1]])).tolist()
    [0, 1]
    """

    depth: int
    feature: np.ndarray
    prediction: np.ndarray

    @property
    def graph(self) -> TreeGraph:
        """The node numbering of a full tree of this depth."""
        return TreeGraph(self.depth)

    @property
    def branching(self) -> np.ndarray:
        """Node numbers that branch."""
        return np.flatnonzero(self.feature >= 0) + 1

    @property
    def leaves(self) -> np.ndarray:
        """Node numbers that predict."""
        return np.flatnonzero(self.feature == LEAF) + 1

    @property
    def n_branching(self) -> int:
        """How many nodes ask a question."""
        return int((self.feature >= 0).sum())

    @property
    def features_used(self) -> np.ndarray:
        """The binary features the tree splits on, each once, in increasing order."""
        return np.unique(self.feature[self.feature >= 0])

    def apply(self, X: np.ndarray) -> np.ndarray:
        """Leaf node number reached by each row of binary ``X`` (vectorized over rows)."""
        X = np.asarray(X)
        node = np.ones(X.shape[0], dtype=np.int64)
        rows = np.arange(X.shape[0])
        for _ in range(self.depth + 1):
            f = self.feature[node - 1]
            moving = f >= 0
            if not moving.any():
                break
            step = X[rows[moving], f[moving]].astype(np.int64)
            node[moving] = 2 * node[moving] + step
        return node

    def path_nodes(self, X: np.ndarray) -> np.ndarray:
        """Node visited by each row of binary ``X`` at each depth, shape (n_rows, depth + 1); 0 past the leaf."""
        n = X.shape[0]
        out = np.zeros((n, self.depth + 1), dtype=np.int64)
        node = np.ones(n, dtype=np.int64)
        active = np.ones(n, dtype=bool)
        rows = np.arange(n)
        for level in range(self.depth + 1):
            out[active, level] = node[active]
            f = self.feature[node - 1]
            moving = active & (f >= 0)
            node[moving] = 2 * node[moving] + X[rows[moving], f[moving]].astype(np.int64)
            active = moving
        return out

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Class index predicted for each row of binary ``X``."""
        return self.prediction[self.apply(X) - 1]

    def is_valid(self) -> bool:
        """Every reachable node either branches (with two reachable children) or predicts."""
        ok = True
        stack = [1]
        n_nodes = self.feature.shape[0]
        while stack:
            n = stack.pop()
            f = self.feature[n - 1]
            if f >= 0:
                if 2 * n > n_nodes:
                    return False
                stack += [2 * n, 2 * n + 1]
            elif f == LEAF:
                ok &= bool(self.prediction[n - 1] >= 0)
            else:
                return False
        return ok

    def with_depth(self, depth: int) -> "TreeStructure":
        """The same tree in the arrays of a deeper maximum depth (nodes keep their
        numbers; the new nodes are pruned), e.g. a depth-2 tree as a start at depth 3."""
        if depth < self.depth:
            raise ValueError(f"cannot fit a tree of depth {self.depth} into depth {depth}")
        n_nodes = TreeGraph(depth).n_nodes
        feature = np.full(n_nodes, PRUNED, dtype=np.int64)
        prediction = np.full(n_nodes, -1, dtype=np.int64)
        feature[: self.feature.shape[0]] = self.feature
        prediction[: self.prediction.shape[0]] = self.prediction
        return TreeStructure(depth, feature, prediction)

    @staticmethod
    def single_leaf(depth: int, prediction: int) -> "TreeStructure":
        """A tree of one leaf at the root predicting class ``prediction`` (nodes below it pruned)."""
        g = TreeGraph(depth)
        feature = np.full(g.n_nodes, PRUNED, dtype=np.int64)
        pred = np.full(g.n_nodes, -1, dtype=np.int64)
        feature[0] = LEAF
        pred[0] = prediction
        return TreeStructure(depth, feature, pred)
