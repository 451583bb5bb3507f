"""Compiled kernel of the depth-2 subproblem for two classes (numba).

The depth-2 search needs, for every pair of features ``(a, b)``, the sums of
the gain differences ``d = s_1 - s_0`` and of the rows over the patterns that
have both ``x_a = 1`` and ``x_b = 1``.  With the features of each pattern
stored as the list of its ones (CSR), each pattern adds to the pairs of its
own ones only: ``sum_i nnz_i^2`` additions instead of ``n F^2`` for a dense
matrix product (one-hot encodings have few ones per row), and the choice of
the best subtree for every root feature is one pass over the ``F x F`` sums.

:func:`depth_two_binary` returns the same optimum as the numpy kernel
(``dp.depth_two``), which stays the reference and the fallback when numba is
not installed, while the compiled kernels are being built (see
:mod:`~strongtree_core.accel.compiled`: built once per installation, in the
background), or when the table is too wide for ``F x F`` arrays.
"""

from __future__ import annotations

import numpy as np

from strongtree_core.accel.compiled import KernelLibrary

#: The compiled kernels of this module (numba; without it the numpy kernel runs).
library = KernelLibrary(__name__)

#: Widest table the compiled kernel takes (two F x F arrays of float64 per call).
MAX_FEATURES_USED = 2048
NEG = -np.inf


def available() -> bool:
    """True when the compiled kernels can run now (never waits for a compiler)."""
    return library.ready()


@library.kernel("Tuple((f8[:, :], f8[:, :], f8[:], f8, f8, f8))(i8[:], i8[:], i8[:], f8[:], f8[:], f8[:], i8)")
def _pair_sums(indptr, indices, rows, d, s0, c, n_features):  # pragma: no cover - compiled
    """Sums of d and of rows over the patterns with x_a = x_b = 1 (F, F), of s_0 over x_a = 1 (F,),
    and the totals, from each pattern's list of ones."""
    F = n_features
    M = np.zeros((F, F))
    C = np.zeros((F, F))
    R0 = np.zeros(F)
    T0 = 0.0
    Dt = 0.0
    N = 0.0
    for r in range(rows.shape[0]):
        i = rows[r]
        di = d[i]
        ci = c[i]
        T0 += s0[i]
        Dt += di
        N += ci
        start, stop = indptr[i], indptr[i + 1]
        for j in range(start, stop):
            a = indices[j]
            R0[a] += s0[i]
            for k in range(j, stop):
                b = indices[k]
                M[a, b] += di
                C[a, b] += ci
    # symmetric fill (indices are sorted within a row, so only a <= b was written)
    for a in range(F):
        for b in range(a + 1, F):
            M[b, a] = M[a, b]
            C[b, a] = C[a, b]
    return M, C, R0, T0, Dt, N


@library.kernel("Tuple((f8, i8[:]))(f8[:, :], f8[:, :], f8[:], f8, f8, f8, f8, f8)")
def _best_from_sums(M, C, R0, T0, Dt, N, pen, min_leaf):  # pragma: no cover - compiled
    """The best subtree of depth <= 2 from the pair sums (see the module docstring)."""
    F = M.shape[0]
    need = max(1.0, min_leaf)
    code = np.full(7, -1, dtype=np.int64)
    best = NEG
    if N >= min_leaf:
        best = T0 + max(Dt, 0.0)
        code[2] = 1 if Dt > 0.0 else 0
    for a in range(F):
        Dr = M[a, a]
        Rc = C[a, a]
        Dl = Dt - Dr
        Lc = N - Rc
        if Rc < need or Lc < need:
            continue
        base_r = R0[a]
        base_l = T0 - base_r
        # right child (x_a = 1)
        best_r = max(Dr, 0.0) if Rc >= min_leaf else NEG
        br = -1
        for b in range(F):
            crr = C[a, b]
            crl = Rc - crr
            if crr < need or crl < need:
                continue
            rr = M[a, b]
            v = max(rr, 0.0) + max(Dr - rr, 0.0) - pen
            if v > best_r:
                best_r = v
                br = b
        # left child (x_a = 0): x_b = 1 part is (b's ones) - (both ones)
        best_l = max(Dl, 0.0) if Lc >= min_leaf else NEG
        bl = -1
        for b in range(F):
            clr = C[b, b] - C[a, b]
            cll = Lc - clr
            if clr < need or cll < need:
                continue
            lr = M[b, b] - M[a, b]
            v = max(lr, 0.0) + max(Dl - lr, 0.0) - pen
            if v > best_l:
                best_l = v
                bl = b
        total = base_l + best_l + base_r + best_r - pen
        if total > best:
            best = total
            code[0] = a
            if bl < 0:
                code[1], code[2], code[3] = -1, 1 if Dl > 0.0 else 0, -1
            else:
                lr = M[bl, bl] - M[a, bl]
                code[1], code[2], code[3] = bl, 1 if Dl - lr > 0.0 else 0, 1 if lr > 0.0 else 0
            if br < 0:
                code[4], code[5], code[6] = -1, 1 if Dr > 0.0 else 0, -1
            else:
                rr = M[a, br]
                code[4], code[5], code[6] = br, 1 if Dr - rr > 0.0 else 0, 1 if rr > 0.0 else 0
    return best, code


@library.kernel("Tuple((f8[:, :, ::1], f8[::1]))(i8[::1], i8[::1], i8[::1], f8[:, ::1], i8)")
def _pattern_pair_sums(rows, indptr, indices, W, n_features):  # pragma: no cover - compiled
    """``M[a, b, q]``: the sum of ``W[i, q]`` over the patterns ``i`` of ``rows`` with
    ``x_a = x_b = 1`` (both triangles; ``M[a, a]`` over ``x_a = 1``), and the sums over
    every pattern of ``rows``, from each pattern's list of ones."""
    F = n_features
    slots = W.shape[1]
    M = np.zeros((F, F, slots))
    T = np.zeros(slots)
    for r in range(rows.shape[0]):
        i = rows[r]
        for q in range(slots):
            T[q] += W[i, q]
        start, stop = indptr[i], indptr[i + 1]
        for j in range(start, stop):
            Ma = M[indices[j]]
            for k in range(j, stop):
                Mb = Ma[indices[k]]
                for q in range(slots):
                    Mb[q] += W[i, q]
    for a in range(F):  # indices are sorted within a row: only a <= b was written
        for b in range(a + 1, F):
            for q in range(slots):
                M[b, a, q] = M[a, b, q]
    return M, T


def pattern_pair_sums(rows: np.ndarray, indptr: np.ndarray, indices: np.ndarray, W: np.ndarray,
                      n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """(F, F, S) sums of ``W`` (P, S) over the patterns ``rows`` with both features set, and
    (S,) over all of them (:func:`_pattern_pair_sums`; callers check :func:`available`)."""
    return _pattern_pair_sums(np.ascontiguousarray(rows, dtype=np.int64), indptr, indices,
                              np.ascontiguousarray(W, dtype=np.float64), int(n_features))


#: A dense matrix product does about this many pair additions in the time of one
#: loop step: the lists of ones are used when they need fewer steps than that.
DENSE_SPEEDUP = 12.0


def depth_two_binary(X, indptr, indices, rows, d, s0, c, pen: float, min_leaf: int):
    """Best subtree of depth <= 2 on patterns ``rows`` (two classes).

    ``X`` (P, F) binary features and their CSR ``indptr`` / ``indices``; ``d`` the
    gain differences ``s_1 - s_0``, ``s0`` the gains of class 0, ``c`` the rows,
    all of shape (P,).  Returns ``(value, code)`` with ``code = (a, lb, lk1, lk2,
    rb, rk1, rk2)``: the root split ``a`` (-1: a leaf predicting ``lk1``), and
    each child a split on ``b`` with leaf classes ``(k1, k2)`` for ``x_b = 0, 1``,
    or a leaf ``k1`` when ``b = -1``; value ``-inf`` when no subtree keeps every
    leaf at ``min_leaf`` rows.
    """
    F = X.shape[1]
    ones = indptr[rows + 1] - indptr[rows]
    if float(np.dot(ones, ones)) / 2 <= rows.size * F * F / DENSE_SPEEDUP:
        M, C, R0, T0, Dt, N = _pair_sums(indptr, indices, rows, d, s0, c, F)
    else:
        Xd = X[rows]
        dd, cc, ss = d[rows], c[rows], s0[rows]
        M = (Xd * dd[:, None]).T @ Xd
        C = (Xd * cc[:, None]).T @ Xd
        R0 = Xd.T @ ss
        T0, Dt, N = float(ss.sum()), float(dd.sum()), float(cc.sum())
    return _best_from_sums(M, C, R0, T0, Dt, N, float(pen), float(min_leaf))


def ones_of(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ones as CSR ``(indptr, indices)`` (indices sorted within a row)."""
    rows, cols = np.nonzero(X > 0.5)
    return np.searchsorted(rows, np.arange(X.shape[0] + 1)).astype(np.int64), cols.astype(np.int64)


def tree_of(code: np.ndarray):
    """The nested tuple of a kernel code."""
    a, lb, lk1, lk2, rb, rk1, rk2 = (int(v) for v in code)
    if a < 0:
        return lk1
    left = lk1 if lb < 0 else (lb, lk1, lk2)
    right = rk1 if rb < 0 else (rb, rk1, rk2)
    return (a, left, right)


# Last, once every kernel is declared: a library already built loads now (a few ms).
library.preload()
