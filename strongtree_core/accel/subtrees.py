"""Every subtree of depth <= 2 on one set of patterns whose relaxed score
reaches a threshold, with the quantities it adds up to.

The branch-and-bound (``accel/search.py``) ends every path in subtrees of
depth at most 2.  On a set ``D`` of patterns they are: a leaf (``K``); a
split on ``b`` with two leaves of different classes; and a split on ``a``
whose two children are each a leaf or such a split (not two leaves of the
same class, which is a leaf).  Their quantities (objective parts and
constraint quantities, ``LinearProblem.G`` and ``U``) are sums over the
leaves, and the sum over any leaf is a difference of entries of

    MV[a, b] = sum_{i in D, x_ia = 1, x_ib = 1} V[i],    RV[a] = MV[a, a],   TV = sum_{i in D} V[i]

(``V[i] = (G[i], U[i])`` per predicted class), one matrix product per root
feature ``a`` (memory O(F), not O(F^2)).  The score of a subtree is ``theta . V - pen * b``.
Subtrees with the same constraint quantities and branchings are kept once,
with their best score (which is also their best objective).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from strongtree_core.accel.dp import Tree


@dataclass(frozen=True)
class Subtrees:
    """A list of subtrees, best score first.

    Attributes
    ----------
    score : ndarray (n,)
    parts : ndarray (n, J)
    q : ndarray (n, R)
    nb : ndarray of int (n,)
    code : ndarray of int (n, 7)
        ``(a, lb, lk1, lk2, rb, rk1, rk2)``: the root split ``a`` (-1 for a
        leaf predicting ``lk1``), and each child: a split on ``b`` with leaf
        classes ``k1`` (x_b = 0) and ``k2``, or a leaf ``k1`` when ``b = -1``.
    tau : float
        Every subtree scoring at least ``tau`` is listed.
    """

    score: np.ndarray
    parts: np.ndarray
    q: np.ndarray
    nb: np.ndarray
    code: np.ndarray
    tau: float

    def __len__(self) -> int:
        return int(self.score.shape[0])

    def features(self) -> np.ndarray:
        """(n, 3) features used (-1 for none)."""
        return self.code[:, [0, 1, 4]]

    def tree(self, j: int) -> Tree:
        a, lb, lk1, lk2, rb, rk1, rk2 = (int(v) for v in self.code[j])
        if a < 0:
            return lk1
        left = lk1 if lb < 0 else (lb, lk1, lk2)
        right = rk1 if rb < 0 else (rb, rk1, rk2)
        return (a, left, right)

    def head(self, tau: float) -> "Subtrees":
        """The subtrees scoring at least ``tau`` (a prefix)."""
        n = int(np.searchsorted(-self.score, -tau, side="right"))
        return Subtrees(self.score[:n], self.parts[:n], self.q[:n], self.nb[:n], self.code[:n], max(tau, self.tau))


@lru_cache(maxsize=64)
def _label_pairs(K: int) -> tuple[np.ndarray, np.ndarray]:
    k1, k2 = np.meshgrid(np.arange(K), np.arange(K), indexing="ij")
    keep = k1 != k2
    return k1[keep], k2[keep]


@lru_cache(maxsize=64)
def _option_layout(F: int, K: int) -> tuple[np.ndarray, ...]:
    """Index arrays of a child's options (K leaves, then a split on each b with two
    leaf classes), the same for every child of a problem: computed once."""
    k1, k2 = _label_pairs(K)
    bs = np.repeat(np.arange(F), k1.size)
    ks1 = np.tile(k1, F)
    ks2 = np.tile(k2, F)
    nb = np.concatenate([np.zeros(K, dtype=np.int64), np.ones(bs.size, dtype=np.int64)])
    b = np.concatenate([np.full(K, -1), bs])
    c1 = np.concatenate([np.arange(K), ks1])
    c2 = np.concatenate([np.arange(K), ks2])
    for a in (bs, ks1, ks2, nb, b, c1, c2):
        a.setflags(write=False)
    return bs, ks1, ks2, nb, b, c1, c2


def _side_options(lo_V, hi_V, lo_c, hi_c, leaf_V, leaf_c, theta, pen, need, min_leaf):
    """Options of one child: a leaf per class, or a split on b with two leaves.

    ``lo_V`` / ``hi_V`` (F_b, K, D): sums over the child's rows with x_b = 0 / 1;
    ``leaf_V`` (K, D) the child's own sums.  Returns (score, V, nb, b, k1, k2).
    """
    K = leaf_V.shape[0]
    F = lo_V.shape[0]
    bs, ks1, ks2, nb, b, c1, c2 = _option_layout(F, K)
    leaf_score = leaf_V @ theta
    split_ok = (lo_c >= need) & (hi_c >= need)  # (F,)
    V = lo_V[bs, ks1] + hi_V[bs, ks2]  # (F * K(K-1), D)
    ok = np.empty(K + bs.size, dtype=bool)
    ok[:K] = leaf_c >= min_leaf
    ok[K:] = split_ok[bs]
    allV = np.concatenate([leaf_V, V])
    score = np.concatenate([leaf_score, V @ theta - pen])
    return score[ok], allV[ok], nb[ok], b[ok], c1[ok], c2[ok]


def subtree_list(Xd, Vd, cd, depth: int, theta, pen: float, min_leaf: int, n_parts: int, tau: float,
                 keep_features: bool = False, check=None, sums: tuple | None = None) -> Subtrees:
    """Every subtree of depth <= ``depth`` (0-2) on these patterns scoring >= ``tau``.

    Parameters
    ----------
    Xd : (n, F) float features; Vd : (n, K, D) quantities (J objective parts then R
    constraint quantities); cd : (n,) rows; theta : (D,) prices; pen : per branching.
    keep_features : bool
        Keep subtrees that differ only in the features they use (needed when
        the number of distinct features is bounded).
    check : callable, optional
        Called between root features (it may raise to stop).
    sums : (M, T, K), optional
        The patterns' sums counted already (then ``Xd``, ``Vd`` and ``cd`` are not
        read): ``M`` (F, F, K * D + 1) the sums of ``(V, rows)`` over the patterns with
        ``x_a = x_b = 1`` (``M[a, a]``: over ``x_a = 1``), ``T`` (K * D + 1) over all of
        them (:func:`kernels.pattern_pair_sums`, one pass over the patterns' lists of
        ones instead of a matrix product per root feature: 10 times faster on 500,000
        patterns of 21 features).
    """
    if sums is None:
        n, F = Xd.shape
        K, D = Vd.shape[1], Vd.shape[2]
        TV = Vd.sum(axis=0)  # (K, D)
        N = float(cd.sum())
    else:
        M, T, K = sums
        F = M.shape[0]
        D = (T.size - 1) // K
        n = 2 if T[-1] > 0 else 0  # (only whether a split may be tried is read below)
        TV = T[:-1].reshape(K, D)
        N = float(T[-1])
    need = max(1, min_leaf)
    rows: list[tuple] = []  # (score, V, nb, code)

    leaf_score = TV @ theta
    if N >= min_leaf:
        code = np.full((K, 7), -1)
        code[:, 2] = np.arange(K)
        rows.append((leaf_score, TV, np.zeros(K, dtype=np.int64), code))
    if depth >= 1 and n > 1 and F > 0:
        if sums is None:
            W = Vd.reshape(n, K * D)
            RV = (Xd.T @ W).reshape(F, K, D)
            Rc = Xd.T @ cd
        else:
            diagonal = M[np.arange(F), np.arange(F)]
            RV = np.ascontiguousarray(diagonal[:, :-1]).reshape(F, K, D)
            Rc = np.ascontiguousarray(diagonal[:, -1])
        LV = TV[None] - RV
        Lc = N - Rc
        split_ok = (Rc >= need) & (Lc >= need)
        # depth-1 trees: a split with two leaves of different classes
        k1, k2 = _label_pairs(K)
        a_idx = np.repeat(np.flatnonzero(split_ok), k1.size)
        if a_idx.size:
            ks1 = np.tile(k1, a_idx.size // k1.size)
            ks2 = np.tile(k2, a_idx.size // k1.size)
            V1 = LV[a_idx, ks1] + RV[a_idx, ks2]
            s1 = V1 @ theta - pen
            keep = s1 >= tau
            code = np.full((int(keep.sum()), 7), -1)
            code[:, 0] = a_idx[keep]
            code[:, 2] = ks1[keep]
            code[:, 5] = ks2[keep]
            rows.append((s1[keep], V1[keep], np.ones(int(keep.sum()), dtype=np.int64), code))
        if depth >= 2 and split_ok.any():
            for a in np.flatnonzero(split_ok):
                if check is not None:
                    check()
                # sums over x_a = 1 and x_b = 1, for every b: (F, K, D), and their rows
                if sums is None:
                    on = Xd[:, a] > 0.5
                    MVa = (Xd[on].T @ W[on]).reshape(F, K, D)
                    Ca = Xd[on].T @ cd[on]
                else:
                    MVa = np.ascontiguousarray(M[a, :, :-1]).reshape(F, K, D)
                    Ca = np.ascontiguousarray(M[a, :, -1])
                # right child (x_a = 1), split on b: x_b = 0 is RV[a] - MV[a, b], x_b = 1 is MV[a, b]
                r_hi = MVa
                r_lo = RV[a][None] - r_hi
                right = _side_options(r_lo, r_hi, Rc[a] - Ca, Ca, RV[a], Rc[a], theta, pen, need, min_leaf)
                # left child (x_a = 0), split on b: x_b = 1 is RV[b] - MV[a, b], x_b = 0 the rest
                l_hi = RV - MVa
                l_lo = LV[a][None] - l_hi
                left = _side_options(l_lo, l_hi, Lc[a] - (Rc - Ca), Rc - Ca, LV[a], Lc[a], theta, pen, need, min_leaf)
                rows += _pairs(a, left, right, pen, tau)
    if not rows:
        empty = np.zeros((0, 7), dtype=np.int64)
        return Subtrees(np.zeros(0), np.zeros((0, n_parts)), np.zeros((0, D - n_parts)), np.zeros(0, dtype=np.int64), empty, tau)
    score = np.concatenate([r[0] for r in rows])
    V = np.concatenate([r[1] for r in rows])
    nb = np.concatenate([r[2] for r in rows])
    code = np.concatenate([r[3] for r in rows]).astype(np.int64)
    keep = score >= tau
    score, V, nb, code = score[keep], V[keep], nb[keep], code[keep]
    order = np.argsort(-score, kind="stable")
    score, V, nb, code = score[order], V[order], nb[order], code[order]
    # One subtree per (constraint quantities, branchings): the first (best) of each.
    key = [np.round(V[:, n_parts:], 6), nb[:, None].astype(float)]
    if n_parts > 1:
        key.append(np.round(V[:, :n_parts], 9))
    if keep_features:
        key.append(np.sort(code[:, [0, 1, 4]], axis=1).astype(float))
    key = np.hstack(key)
    if key.shape[0] > 1:
        _, first = np.unique(key, axis=0, return_index=True)
        first.sort()
        score, V, nb, code = score[first], V[first], nb[first], code[first]
    return Subtrees(score, V[:, :n_parts], V[:, n_parts:], nb, code, tau)


def _pairs(a: int, left, right, pen: float, tau: float) -> list[tuple]:
    """Subtrees splitting on ``a`` with a left and a right option scoring >= tau together."""
    ls, lV, lnb, lb, l1, l2 = left
    rs, rV, rnb, rb, r1, r2 = right
    if ls.size == 0 or rs.size == 0:
        return []
    if ls.max() + rs.max() - pen < tau:
        return []
    ro = np.argsort(-rs, kind="stable")
    rs_sorted = rs[ro]
    # for each left option, the right options with rs >= tau + pen - ls form a prefix
    counts = np.searchsorted(-rs_sorted, -(tau + pen - ls), side="right")
    li = np.repeat(np.arange(ls.size), counts)
    if li.size == 0:
        return []
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    ri = ro[np.arange(li.size) - starts]
    both_leaves = (lb[li] < 0) & (rb[ri] < 0)  # depth-1 trees are listed on their own
    keep = ~both_leaves
    li, ri = li[keep], ri[keep]
    score = ls[li] + rs[ri] - pen
    V = lV[li] + rV[ri]
    nb = lnb[li] + rnb[ri] + 1
    code = np.stack([np.full(li.size, a), lb[li], l1[li], l2[li], rb[ri], r1[ri], r2[ri]], axis=1)
    return [(score, V, nb, code)]
