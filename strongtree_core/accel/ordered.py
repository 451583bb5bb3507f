"""Ordered columns: the depth-2 subproblem counted from histograms of bins.

The thresholds of one continuous column are nested binary features: with
cuts ``t_0 < t_1 < ...`` the rows with ``x <= t_j`` (feature ``j`` = 1) are
among those with ``x <= t_{j+1}``.  Such a *chain* of ``T`` features is one
number per row, its *bin* ``b = #{j : x > t_j}`` in ``0..T``, and feature
``j`` is 1 exactly when ``b <= j``.  Every other binary feature is a chain of
one (bin 0 when it is 1).

The depth-2 search (``dp.depth_two``, ``kernels.depth_two_binary``) needs,
for every pair of features, sums over the rows where both are 1.  For two
chains ``u``, ``v`` those are the 2-D prefix sums of the histogram of
``(b_u, b_v)``: one pass over the rows adds ``C (C - 1) / 2`` histogram
cells per row (``C`` chains), where the list of ones costs ``nnz^2 / 2`` per
row (``nnz`` about half the features of a thermometer-coded table): with 16
cuts per column that is some 64 times fewer steps.  The choice of the best
subtree is then one pass over pairs of features, as in the list kernel.

Two classes only (gains ``s_0`` and the differences ``d = s_1 - s_0``), like
the compiled list kernel, and with the same codes and tie-breaking
(:func:`strongtree_core.accel.kernels.tree_of` reads them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strongtree_core.accel import kernels
from strongtree_core.accel.compiled import KernelLibrary

#: The compiled kernels of this module (built once per installation, see ``accel/compiled.py``).
library = KernelLibrary(__name__)

NEG = -np.inf


@dataclass(frozen=True)
class OrderedColumns:
    """The features of a problem as chains of nested thresholds.

    Attributes
    ----------
    bins : ndarray of int32, shape (P, C)
        Bin of each pattern in each chain.
    n_cuts : ndarray of int64, shape (C,)
        Features of each chain (its bins run from 0 to ``n_cuts[c]``).
    offsets : ndarray of int64, shape (C + 1,)
        Chain ``c``'s features are ``feature[offsets[c]:offsets[c + 1]]``.
    feature : ndarray of int64, shape (F,)
        The problem's feature index of each cut, chain by chain.
    pair_offsets : ndarray of int64, shape (C * C,)
        Start of the 2-D histogram of chains ``u < v`` (entry ``u * C + v``).
    pair_cells : int
        Total size of the 2-D histograms.
    """

    bins: np.ndarray
    n_cuts: np.ndarray
    offsets: np.ndarray
    feature: np.ndarray
    pair_offsets: np.ndarray
    pair_cells: int

    @property
    def n_chains(self) -> int:
        return int(self.n_cuts.size)

    def steps(self, n_rows: int) -> float:
        """Histogram steps of one depth-2 solve on ``n_rows`` patterns."""
        C = self.n_chains
        return n_rows * C * (C - 1) / 2 + self.pair_cells


def ordered_columns(X: np.ndarray, chains) -> OrderedColumns | None:
    """The chains of ``X`` (P, F): ``chains`` lists feature indices per raw column
    in increasing threshold order; features in no chain become chains of one.
    None when a listed chain is not nested in ``X`` (then it is not a column's thresholds)."""
    F = X.shape[1]
    listed = [np.asarray(ch, dtype=np.int64) for ch in chains if len(ch)]
    seen = np.zeros(F, dtype=bool)
    for ch in listed:
        seen[ch] = True
    all_chains = listed + [np.array([f], dtype=np.int64) for f in np.flatnonzero(~seen)]
    P = X.shape[0]
    bins = np.zeros((P, len(all_chains)), dtype=np.int32)
    for c, ch in enumerate(all_chains):
        block = X[:, ch] > 0.5
        if ch.size > 1 and np.any(block[:, :-1] & ~block[:, 1:]):
            return None  # a 1 followed by a 0: not nested
        bins[:, c] = ch.size - block.sum(axis=1)
    n_cuts = np.array([ch.size for ch in all_chains], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(n_cuts)]).astype(np.int64)
    C = n_cuts.size
    pair_offsets = np.zeros(C * C, dtype=np.int64)
    size = 0
    for u in range(C):
        for v in range(u + 1, C):
            pair_offsets[u * C + v] = size
            size += int((n_cuts[u] + 1) * (n_cuts[v] + 1))
    return OrderedColumns(np.ascontiguousarray(bins), n_cuts, offsets, np.concatenate(all_chains).astype(np.int64),
                          pair_offsets, size)


@library.kernel("Tuple((f8[:], f8[:], f8[:], f8[:], f8[:]))(i4[:, :], i8[:], f8[:], f8[:], f8[:], i8[:], i8[:], i8[:], i8)")
def _histograms(bins, rows, d, s0, c, n_cuts, offsets, pair_offsets, pair_cells):  # pragma: no cover - compiled
    """1-D sums of d, s_0 and rows per chain and bin; 2-D sums of d and rows per pair of chains and bins;
    all turned into prefix sums (bins <= a; bins <= a and <= b)."""
    C = n_cuts.shape[0]
    n1 = offsets[C] + C
    D1 = np.zeros(n1)
    S1 = np.zeros(n1)
    N1 = np.zeros(n1)
    D2 = np.zeros(pair_cells)
    N2 = np.zeros(pair_cells)
    for r in range(rows.shape[0]):
        i = rows[r]
        di = d[i]
        si = s0[i]
        ci = c[i]
        for u in range(C):
            bu = bins[i, u]
            k = offsets[u] + u + bu
            D1[k] += di
            S1[k] += si
            N1[k] += ci
            for v in range(u + 1, C):
                cell = pair_offsets[u * C + v] + bu * (n_cuts[v] + 1) + bins[i, v]
                D2[cell] += di
                N2[cell] += ci
    for u in range(C):
        start = offsets[u] + u
        for b in range(1, n_cuts[u] + 1):
            D1[start + b] += D1[start + b - 1]
            S1[start + b] += S1[start + b - 1]
            N1[start + b] += N1[start + b - 1]
        for v in range(u + 1, C):
            base = pair_offsets[u * C + v]
            w = n_cuts[v] + 1
            for a in range(n_cuts[u] + 1):
                for b in range(w):
                    k = base + a * w + b
                    if b > 0:
                        D2[k] += D2[k - 1]
                        N2[k] += N2[k - 1]
                    if a > 0:
                        D2[k] += D2[k - w]
                        N2[k] += N2[k - w]
                    if a > 0 and b > 0:
                        D2[k] -= D2[k - w - 1]
                        N2[k] -= N2[k - w - 1]
    return D1, S1, N1, D2, N2


@library.kernel("Tuple((f8, i8[:]))(f8[:], f8[:], f8[:], f8[:], f8[:], i8[:], i8[:], i8[:], i8[:], f8, f8)")
def _best_ordered(D1, S1, N1, D2, N2, n_cuts, offsets, pair_offsets, feature, pen, min_leaf):  # pragma: no cover
    """The best subtree of depth <= 2 from the prefix sums (the list kernel's choice, by chains).

    Cut ``j`` of chain ``v`` (``offsets[v] + j``) holds the rows with bin ``<= j``;
    in the 1-D arrays chain ``v``'s bins start at ``offsets[v] + v``.  A child's
    split is kept as the value of its ``x_b = 1`` part (``*_hi``) for its leaf classes."""
    C = n_cuts.shape[0]
    need = max(1.0, min_leaf)
    code = np.full(7, -1, dtype=np.int64)
    Dt = D1[offsets[0] + n_cuts[0]]
    T0 = S1[offsets[0] + n_cuts[0]]
    N = N1[offsets[0] + n_cuts[0]]
    best = NEG
    if N >= min_leaf:
        best = T0 + max(Dt, 0.0)
        code[2] = 1 if Dt > 0.0 else 0
    for u in range(C):
        su = offsets[u] + u
        for a in range(n_cuts[u]):
            Dr = D1[su + a]
            Rc = N1[su + a]
            Dl = Dt - Dr
            Lc = N - Rc
            if Rc < need or Lc < need:
                continue
            base_r = S1[su + a]
            base_l = T0 - base_r
            best_r = max(Dr, 0.0) if Rc >= min_leaf else NEG
            best_l = max(Dl, 0.0) if Lc >= min_leaf else NEG
            br = -1
            bl = -1
            r_hi = 0.0
            l_hi = 0.0
            for v in range(C):
                sv = offsets[v] + v
                for b in range(n_cuts[v]):
                    if v == u:
                        rr = D1[su + min(a, b)]
                        crr = N1[su + min(a, b)]
                        lr = D1[su + b] - Dr if b > a else 0.0
                        clr = N1[su + b] - Rc if b > a else 0.0
                    else:
                        if u < v:
                            k = pair_offsets[u * C + v] + a * (n_cuts[v] + 1) + b
                        else:
                            k = pair_offsets[v * C + u] + b * (n_cuts[u] + 1) + a
                        rr = D2[k]
                        crr = N2[k]
                        lr = D1[sv + b] - rr
                        clr = N1[sv + b] - crr
                    crl = Rc - crr
                    if crr >= need and crl >= need:
                        value = max(rr, 0.0) + max(Dr - rr, 0.0) - pen
                        if value > best_r:
                            best_r = value
                            br = offsets[v] + b
                            r_hi = rr
                    cll = Lc - clr
                    if clr >= need and cll >= need:
                        value = max(lr, 0.0) + max(Dl - lr, 0.0) - pen
                        if value > best_l:
                            best_l = value
                            bl = offsets[v] + b
                            l_hi = lr
            total = base_l + best_l + base_r + best_r - pen
            if total > best:
                best = total
                code[0] = feature[offsets[u] + a]
                if bl < 0:
                    code[1], code[2], code[3] = -1, 1 if Dl > 0.0 else 0, -1
                else:
                    code[1], code[2], code[3] = feature[bl], 1 if Dl - l_hi > 0.0 else 0, 1 if l_hi > 0.0 else 0
                if br < 0:
                    code[4], code[5], code[6] = -1, 1 if Dr > 0.0 else 0, -1
                else:
                    code[4], code[5], code[6] = feature[br], 1 if Dr - r_hi > 0.0 else 0, 1 if r_hi > 0.0 else 0
    return best, code


def available() -> bool:
    """True when the compiled kernels can run now (never waits for a compiler)."""
    return library.ready()


def depth_two_ordered(cols: OrderedColumns, rows: np.ndarray, d: np.ndarray, s0: np.ndarray, c: np.ndarray,
                      pen: float, min_leaf: int):
    """Best subtree of depth <= 2 on patterns ``rows`` (two classes), from the chains' histograms.

    Same arguments and result as :func:`strongtree_core.accel.kernels.depth_two_binary`
    (``code`` in the problem's feature indices)."""
    D1, S1, N1, D2, N2 = _histograms(cols.bins, rows, d, s0, c, cols.n_cuts, cols.offsets, cols.pair_offsets,
                                     int(cols.pair_cells))
    return _best_ordered(D1, S1, N1, D2, N2, cols.n_cuts, cols.offsets, cols.pair_offsets, cols.feature, float(pen),
                         float(min_leaf))


def cheaper_than_lists(cols: OrderedColumns, indptr: np.ndarray, rows: np.ndarray) -> bool:
    """The histograms take fewer steps than the lists of ones (or the dense product) on these rows."""
    ones = indptr[rows + 1] - indptr[rows]
    F = int(cols.feature.size)
    lists = min(float(np.dot(ones, ones)) / 2, rows.size * F * F / kernels.DENSE_SPEEDUP)
    return cols.steps(rows.size) < lists


# Last, once every kernel is declared: a library already built loads now (a few ms).
library.preload()
