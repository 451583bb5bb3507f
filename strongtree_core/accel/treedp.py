"""The dynamic program over tree structures, compiled (kernels of a
:class:`~strongtree_core.accel.compiled.KernelLibrary`: built once per
installation, the numpy program in ``dp.py`` runs until they are ready).

A state is a set of patterns ``S``, the levels ``d`` left and the most
branching nodes ``b`` the subtree may use (eq. 8 counted in the state, not
priced); its value is

    best(S, d, b) = max( max_k sum_{i in S} s[i, k],                              (a leaf: >= min_leaf rows, eq. 10)
                         max_f max_{b_0 + b_1 = b - 1} best(S_f0, d-1, b_0) + best(S_f1, d-1, b_1) - pen )

with ``b`` at most ``2^d - 1`` (then the bound does not bind) and every split
sending at least ``max(1, min_leaf)`` rows each way.

* **Depth two, by counting** (MurTree's terminal solver, section 4.3): with
  the sums over ``S`` of every class's gain and of the rows, for every pair of
  features ``(a, b)`` with ``x_a = x_b = 1``, every tree of depth <= 2 is
  worth a difference of entries; one pass over the pairs gives ``best(S, 2,
  b)`` for ``b`` = 0..3 at once (a profile).  The sums come from each
  pattern's list of ones, over the features that can split ``S``; a feature
  set on most of ``S`` is listed by its zeros instead (a split on ``x`` is a
  split on ``1 - x``), so a pattern lists at most half of them.  Without a
  row column when the rows are the sum of the gains (plain accuracy).  With
  ``min_leaf <= 1`` and ``pen >= 0`` the pairs are scanned without counting
  either side of a split (:func:`_free`, :func:`_unsound`).
* **Depth three, incrementally**: the sums of the node's own patterns are
  counted once; for each split one child's sums are moved from the last
  child held (the rows between them added or taken away; integer gains) or
  counted afresh, and the other child is the difference.
* **Bounds**: every pattern at its best class (``sum max_k s``) bounds any
  subtree; a solved sibling split bounds the next (similarity, MurTree 4.5):
  ``best(D) <= v`` gives ``best(D') <= v + sum_{D' - D} max_k s -
  sum_{D - D'} min_k s`` (valid with ``pen >= 0`` and ``min_leaf <= 1``);
  a child is solved with the value it must exceed (a floor) and a child that
  cannot exceed it ends that split.
* **Cache by set of patterns**: a set is named by two 64-bit sums of random
  keys of its patterns (Zobrist; a split's keys cost one pass), in an
  open-addressing table of exact values and proven upper bounds per (set,
  depth, budget) and of depth-2 profiles per set.  A full table overwrites
  old entries (the cache only ever saves work).
* The features that can split a set are tried in their numbers' order
  (neighbouring thresholds split alike: the similarity bound is tight and
  moved sums are cheap).

Depth four and more run on an explicit stack (no recursion: the library is
compiled ahead of time).  The search reads a flag that another thread sets at
the deadline or on a stop request.  Trees are read back from the table by
:class:`Engine` (``dp.py``): an entry lost to a full table is solved again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np

from strongtree_core.accel.compiled import KernelLibrary
from strongtree_core.background import run_in_background

#: The compiled kernels of this module.
library = KernelLibrary(__name__)

NEG = -np.inf
#: Widest table the compiled program takes: two (F, F, K + 1) arrays of pair sums.
MAX_FEATURES = 1024
#: Entries of those arrays (F * F * (K + 1) each).
MAX_PAIR_ENTRIES = 1 << 25
#: Slots probed in the table before an entry is overwritten.
PROBES = 16
#: Levels of the explicit stack: depth >= 4 nodes on one path (trees up to depth 12).
MAX_LEVELS = 10
#: A depth-3 node of at least this many patterns, splitting on at most ``TRIPLE_FEATURES``
#: features, counts its sums over triples of features once (see :func:`_triples`; the
#: count is read from ``prm[6]``, which tests lower).
TRIPLE_PATTERNS = 20_000
TRIPLE_FEATURES = 64

# The engine's arrays, one tuple E:
#  0 XT      u1 (F, P)     features, one row per feature (1 goes right)
#  1 indptr  i8 (P + 1,)   each pattern's ones (CSR, sorted)
#  2 indices i8 (nnz,)
#  3 W       f8 (P, slots) gains per class, then the rows (no row column when the rows are the gains' sum)
#  4 smax    f8 (P,)       best gain of each pattern
#  5 smin    f8 (P,)       worst gain
#  6 hk      u8 (P, 2)     random keys of the patterns (Zobrist)
#  7 prm     f8 (7,)       pen, min_leaf, need = max(1, min_leaf), similarity allowed (0/1), K,
#                          integer gains (0/1: pair sums may be moved row by row), the patterns
#                          from which a depth-3 node counts triples (TRIPLE_PATTERNS)
#  8 stop    u1 (1,)       1: give up
#  9 stats   i8 (6,)       depth >= 3 nodes solved, depth-2 problems counted, cache hits, table entries,
#                          entries overwritten, the deadline (ns of the monotonic clock, 0: none)
# 10 MC      f8 (3, F, F, slots)  pair sums: a depth-3 node's (0), a child's (1), the child moved
#                          from split to split (2)
# 11 tk      u8 (C, 2)     table: keys of the sets
# 12 tdb     i8 (C, 2)     table: depth (-1 empty) and budget
# 13 tv      f8 (C, 5)     table: a depth-2 profile and its tree at the full budget (_global_code), or
#                          (upper bound, exact value or nan, feature, left budget)
# 14 shared  f8 (1,)       best value found at the top by any worker (parallel search)
# 15 loc     i8 (F,)       scratch, -1 everywhere between calls
# 16 sbuf    i8 (L, P)     the stack: each level's split of its set (left part first)
# 17 obuf    i8 (L, F)     the stack: each level's order of features
# 18 fst     f8 (L, 16)    the stack: each level's numbers (see _deep)
# 19 hst     u8 (L, 6)     the stack: each level's keys (its set, left child, right child)
# 20 ist     i8 (L, 16)    the stack: each level's counters
E_TYPE = ("Tuple((u1[:, ::1], i8[::1], i8[::1], f8[:, ::1], f8[::1], f8[::1], u8[:, ::1], f8[::1], u1[::1], "
          "i8[::1], f8[:, :, :, ::1], u8[:, ::1], i8[:, ::1], f8[:, ::1], f8[::1], i8[::1], i8[:, ::1], "
          "i8[:, ::1], f8[:, ::1], u8[:, ::1], i8[:, ::1]))")


class _MonotonicClock:
    """``monotonic_ns()`` in compiled code: nanoseconds of the monotonic clock
    (``clock_gettime``, the clock of :func:`time.perf_counter` on Linux); -1
    where there is no such clock (Windows: the deadline is then only the flag
    set by another thread).  A numba intrinsic, made only when the kernels are
    compiled (:meth:`compiled_extension`), so that loading them imports no numba."""

    _made = None

    def compiled_extension(self):
        if _MonotonicClock._made is None:
            _MonotonicClock._made = _monotonic_intrinsic()
        return _MonotonicClock._made

    def __call__(self) -> int:  # the same in Python
        clock = getattr(time, "CLOCK_MONOTONIC", None)
        return -1 if clock is None else time.clock_gettime_ns(clock)


def _monotonic_intrinsic():
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.core.extending import intrinsic

    clock = getattr(time, "CLOCK_MONOTONIC", None)

    @intrinsic
    def monotonic_ns(typingctx):
        def codegen(context, builder, signature, args):
            i64 = ir.IntType(64)
            if clock is None:
                return ir.Constant(i64, -1)
            spec = ir.LiteralStructType([i64, i64])  # struct timespec on 64-bit Linux and macOS
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(32), [
                ir.IntType(32), spec.as_pointer()]), "clock_gettime")
            ts = cgutils.alloca_once(builder, spec)
            builder.call(fn, [ir.Constant(ir.IntType(32), int(clock)), ts])
            zero = ir.Constant(ir.IntType(32), 0)
            sec = builder.load(builder.gep(ts, [zero, zero]))
            nsec = builder.load(builder.gep(ts, [zero, ir.Constant(ir.IntType(32), 1)]))
            return builder.add(builder.mul(sec, ir.Constant(i64, 1_000_000_000)), nsec)

        return types.int64(), codegen

    return monotonic_ns


#: The monotonic clock in nanoseconds, read by the compiled search.
monotonic_ns = _MonotonicClock()


def _sig(text: str) -> str:
    return text.replace("E", E_TYPE)


def available() -> bool:
    """True when the compiled program can run now (never waits for a compiler)."""
    return library.ready()


@library.kernel(_sig("b1(E)"))
def _halted(E):  # pragma: no cover - compiled
    """True once the stop flag is set, or (setting it) once the clock passes the
    deadline in ``stats[5]``: the compiled search reads the clock itself, so that no
    other thread has to watch the deadline for it."""
    stop = E[8]
    if stop[0]:
        return True
    limit = E[9][5]
    if limit > 0 and monotonic_ns() > limit:
        stop[0] = 1
        return True
    return False


# ------------------------------------------------------------------ sums over a set
@library.kernel("f8(f8[::1], i8, f8)")
def _leaf_value(tot, K, min_leaf):  # pragma: no cover - compiled
    if tot[K] < min_leaf:
        return NEG
    v = tot[0]
    for k in range(1, K):
        if tot[k] > v:
            v = tot[k]
    return v


@library.kernel("i8(f8[::1], i8)")
def _class_of(tot, K):  # pragma: no cover - compiled
    best = 0
    for k in range(1, K):
        if tot[k] > tot[best]:
            best = k
    return best


@library.kernel("Tuple((f8[::1], f8, f8))(i8[::1], f8[:, ::1], f8[::1], f8[::1], i8)")
def _totals(S, W, smax, smin, K):  # pragma: no cover - compiled
    """Sums over S of each class's gain and of the rows (K + 1), of max_k s and of min_k s."""
    slots = W.shape[1]
    tot = np.zeros(K + 1)
    sm = 0.0
    sn = 0.0
    for r in range(S.shape[0]):
        i = S[r]
        for k in range(slots):
            tot[k] += W[i, k]
        sm += smax[i]
        sn += smin[i]
    if slots == K:
        for k in range(K):
            tot[K] += tot[k]
    return tot, sm, sn


@library.kernel("Tuple((f8[:, ::1], f8[::1]))(i8[::1], i8[::1], i8[::1], f8[:, ::1], f8[::1], i8, i8)")
def _feature_sums(S, indptr, indices, W, smax, F, K):  # pragma: no cover - compiled
    """Per feature a, sums over the patterns of S with x_a = 1: each gain and the rows
    (F, K + 1), and max_k s (F,)."""
    slots = W.shape[1]
    R = np.zeros((F, K + 1))
    Rs = np.zeros(F)
    for r in range(S.shape[0]):
        i = S[r]
        for j in range(indptr[i], indptr[i + 1]):
            a = indices[j]
            for k in range(slots):
                R[a, k] += W[i, k]
            Rs[a] += smax[i]
    if slots == K:
        for a in range(F):
            for k in range(K):
                R[a, K] += R[a, k]
    return R, Rs


@library.kernel("i8(f8[:, ::1], f8[::1], i8, f8, f8, f8, i8[::1])")
def _order(R, tot, K, pen, min_leaf, need, out):  # pragma: no cover - compiled
    """The features that can split the set (>= need rows each way), best depth-1 value
    first, into ``out``; returns how many."""
    F = R.shape[0]
    N = tot[K]
    val = np.empty(F)
    n_ok = 0
    for a in range(F):
        rc = R[a, K]
        val[a] = NEG
        if rc >= need and N - rc >= need:
            n_ok += 1
            right = NEG
            left = NEG
            if rc >= min_leaf:
                right = R[a, 0]
                for k in range(1, K):
                    if R[a, k] > right:
                        right = R[a, k]
            if N - rc >= min_leaf:
                left = tot[0] - R[a, 0]
                for k in range(1, K):
                    if tot[k] - R[a, k] > left:
                        left = tot[k] - R[a, k]
            val[a] = left + right - pen
            if not val[a] > NEG:  # splittable, but neither child can be a leaf
                val[a] = -1e300
    idx = np.argsort(-val, kind="mergesort")
    for j in range(n_ok):
        out[j] = idx[j]
    return n_ok


@library.kernel("Tuple((i8, u8, u8, f8))(i8[::1], u1[:, ::1], i8, u8[:, ::1], f8[::1], i8[::1])")
def _split(S, XT, f, hk, smax, out):  # pragma: no cover - compiled
    """S's patterns with x_f = 0 then those with x_f = 1 into ``out``: (size of the
    first part, the second part's keys, its sum of max_k s)."""
    n = S.shape[0]
    n1 = 0
    for r in range(n):
        if XT[f, S[r]]:
            n1 += 1
    n0 = n - n1
    a = np.uint64(0)
    b = np.uint64(0)
    sm1 = 0.0
    j0 = 0
    j1 = n0
    for r in range(n):
        i = S[r]
        if XT[f, i]:
            out[j1] = i
            j1 += 1
            a += hk[i, 0]
            b += hk[i, 1]
            sm1 += smax[i]
        else:
            out[j0] = i
            j0 += 1
    return n0, a, b, sm1


@library.kernel("Tuple((u8, u8))(i8[::1], u8[:, ::1])")
def _key(S, hk):  # pragma: no cover - compiled
    a = np.uint64(0)
    b = np.uint64(0)
    for r in range(S.shape[0]):
        a += hk[S[r], 0]
        b += hk[S[r], 1]
    return a, b


@library.kernel("Tuple((f8, f8, f8, f8))(i8[::1], u1[:, ::1], i8, i8, f8[::1], f8[::1])")
def _similar(S, XT, f, g, smax, smin):  # pragma: no cover - compiled
    """For splits of S on f and g: sum of max_k s over x_f = 0, x_g = 1; of min_k s over
    x_f = 1, x_g = 0; of max_k s over x_f = 1, x_g = 0; of min_k s over x_f = 0, x_g = 1."""
    a = 0.0
    b = 0.0
    c = 0.0
    d = 0.0
    for r in range(S.shape[0]):
        i = S[r]
        xf = XT[f, i]
        xg = XT[g, i]
        if xf != xg:
            if xg:
                a += smax[i]
                d += smin[i]
            else:
                b += smin[i]
                c += smax[i]
    return a, b, c, d


# ------------------------------------------------------------------------ the table
@library.kernel("i8(u8[:, ::1], i8[:, ::1], u8, u8, i8, i8)")
def _find(tk, tdb, ha, hb, d, b):  # pragma: no cover - compiled
    """The slot of state (set, d, b), or -1."""
    mask = np.uint64(tk.shape[0] - 1)
    h = (ha ^ (hb * np.uint64(0x9E3779B97F4A7C15)) ^ (np.uint64(d) << np.uint64(40)) ^ np.uint64(b)) & mask
    j0 = np.int64(h)
    for p in range(PROBES):
        j = (j0 + p) & np.int64(mask)
        if tdb[j, 0] < 0:
            return -1
        if tk[j, 0] == ha and tk[j, 1] == hb and tdb[j, 0] == d and tdb[j, 1] == b:
            return j
    return -1


@library.kernel("i8(u8[:, ::1], i8[:, ::1], i8[::1], u8, u8, i8, i8)")
def _place(tk, tdb, stats, ha, hb, d, b):  # pragma: no cover - compiled
    """The slot to write state (set, d, b) in: its own, a free one, or (table full
    there) the first probed, overwritten."""
    mask = np.uint64(tk.shape[0] - 1)
    h = (ha ^ (hb * np.uint64(0x9E3779B97F4A7C15)) ^ (np.uint64(d) << np.uint64(40)) ^ np.uint64(b)) & mask
    j0 = np.int64(h)
    for p in range(PROBES):
        j = (j0 + p) & np.int64(mask)
        if tdb[j, 0] < 0:
            stats[3] += 1
            tk[j, 0] = ha
            tk[j, 1] = hb
            tdb[j, 0] = d
            tdb[j, 1] = b
            return j
        if tk[j, 0] == ha and tk[j, 1] == hb and tdb[j, 0] == d and tdb[j, 1] == b:
            return j
    stats[4] += 1
    tk[j0, 0] = ha
    tk[j0, 1] = hb
    tdb[j0, 0] = d
    tdb[j0, 1] = b
    return j0


@library.kernel("i8(u8[:, ::1], i8[:, ::1], f8[:, ::1], u8[:, ::1], i8[:, ::1], f8[:, ::1], i8[::1])")
def _rehash(tk, tdb, tv, tk2, tdb2, tv2, stats):  # pragma: no cover - compiled
    """Every entry of a table into an empty larger one; returns the entries moved."""
    moved = 0
    stats[3] = 0
    for j in range(tk.shape[0]):
        if tdb[j, 0] >= 0:
            s = _place(tk2, tdb2, stats, tk[j, 0], tk[j, 1], tdb[j, 0], tdb[j, 1])
            for q in range(tv.shape[1]):
                tv2[s, q] = tv[j, q]
            moved += 1
    return moved


# -------------------------------------------------------------- depth two, counting
@library.kernel("Tuple((i8[::1], b1[::1], i8[::1], i8[::1]))(i8[::1], i8[::1], i8[::1], f8[:, ::1], i8, i8, f8, i8[::1])")
def _local_features(S, indptr, indices, W, F, K, need, loc):  # pragma: no cover - compiled
    """The features that can split S numbered 0..m-1 (``act``: their numbers), and S's
    ones in them as CSR over positions in S.  A feature set on more than half of S's
    patterns is listed by its zeros (``flip``: local value 1 means x = 0).

    ``loc`` (F,) is scratch: -1 everywhere on entry and on return."""
    slots = W.shape[1]
    rc = np.zeros(F)
    npat = np.zeros(F, dtype=np.int64)
    N = 0.0
    n = S.shape[0]
    for r in range(n):
        i = S[r]
        ci = 0.0
        if slots > K:
            ci = W[i, K]
        else:
            for k in range(K):
                ci += W[i, k]
        N += ci
        for j in range(indptr[i], indptr[i + 1]):
            rc[indices[j]] += ci
            npat[indices[j]] += 1
    act = np.empty(F, dtype=np.int64)
    flip = np.zeros(F, dtype=np.bool_)
    m = 0
    n_flip = 0
    for a in range(F):
        if rc[a] >= need and N - rc[a] >= need:
            loc[a] = m
            act[m] = a
            if 2 * npat[a] > n:
                flip[m] = True
                n_flip += 1
            m += 1
    lptr = np.empty(n + 1, dtype=np.int64)
    lptr[0] = 0
    mark = np.zeros(m, dtype=np.bool_)
    nnz = 0
    for r in range(n):
        i = S[r]
        if n_flip == 0:
            for j in range(indptr[i], indptr[i + 1]):
                if loc[indices[j]] >= 0:
                    nnz += 1
        else:
            for j in range(indptr[i], indptr[i + 1]):
                la = loc[indices[j]]
                if la >= 0:
                    mark[la] = True
            for c in range(m):
                if mark[c] != flip[c]:
                    nnz += 1
                mark[c] = False
        lptr[r + 1] = nnz
    lidx = np.empty(nnz, dtype=np.int64)
    p = 0
    for r in range(n):
        i = S[r]
        if n_flip == 0:
            for j in range(indptr[i], indptr[i + 1]):
                la = loc[indices[j]]
                if la >= 0:
                    lidx[p] = la
                    p += 1
        else:
            for j in range(indptr[i], indptr[i + 1]):
                la = loc[indices[j]]
                if la >= 0:
                    mark[la] = True
            for c in range(m):
                if mark[c] != flip[c]:
                    lidx[p] = c
                    p += 1
                mark[c] = False
    for t in range(m):
        loc[act[t]] = -1
    return act[:m].copy(), flip[:m].copy(), lptr, lidx


@library.kernel("void(f8[:, :, ::1], f8[:, :, ::1], f8[:, :, ::1], i8, i8)")
def _other(MCp, MCc, out, m, slots):  # pragma: no cover - compiled
    """out := MCp - MCc on the upper triangle: the other child's sums (MCc kept)."""
    for a in range(m):
        for b in range(a, m):
            for q in range(slots):
                out[a, b, q] = MCp[a, b, q] - MCc[a, b, q]


@library.kernel("void(i8[::1], u1[:, ::1], i8[::1], i8[::1], f8[:, ::1], f8[:, :, ::1], i8, i8, i8, i8, i8)")
def _shift(S, XT, lptr, lidx, W, MC, m, f, side, g, gside):  # pragma: no cover - compiled
    """Pair sums MC[a, b, q] (a <= b: the upper triangle, one slot per column of W)
    of S's positions with x_f = ``side`` (f = -1: all of them), MC holding those of
    the positions with x_g = ``gside`` (g = -1: counted afresh).

    Only the positions in one set and not the other are added or taken away, so
    a split of S next to the last one counted costs the few rows between them (in
    exact arithmetic only: the search calls it when every gain is an integer)."""
    slots = W.shape[1]
    if g < 0:
        for a in range(m):
            for b in range(a, m):
                for q in range(slots):
                    MC[a, b, q] = 0.0
    for p in range(S.shape[0]):
        i = S[p]
        inn = f < 0 or XT[f, i] == side
        if g >= 0 and (XT[g, i] == gside) == inn:
            continue
        if g < 0 and not inn:
            continue
        sg = 1.0 if inn else -1.0
        st = lptr[p]
        en = lptr[p + 1]
        if slots == 2:  # (unsigned feature numbers: no test for a negative index on every add)
            w0 = sg * W[i, 0]
            w1 = sg * W[i, 1]
            for j in range(st, en):
                Ma = MC[np.uint64(lidx[j])]
                for l in range(j, en):
                    b = np.uint64(lidx[l])
                    Ma[b, 0] += w0
                    Ma[b, 1] += w1
        elif slots == 3:
            w0 = sg * W[i, 0]
            w1 = sg * W[i, 1]
            w2 = sg * W[i, 2]
            for j in range(st, en):
                Ma = MC[np.uint64(lidx[j])]
                for l in range(j, en):
                    b = np.uint64(lidx[l])
                    Ma[b, 0] += w0
                    Ma[b, 1] += w1
                    Ma[b, 2] += w2
        else:
            for j in range(st, en):
                a = lidx[j]
                for l in range(j, en):
                    b = lidx[l]
                    for q in range(slots):
                        MC[a, b, q] += sg * W[i, q]


@library.kernel("void(f8[:, :, ::1], f8[:, ::1], f8[::1], i8[::1], f8[::1], i8, i8, i8, f8, f8, f8, b1, "
                "f8[::1], i8[::1], f8[::1], i8[::1])")
def _pairs(MC, dg, rows, vi, tot, mv, K, slots, N, pen, need, count, sR, bR, sL, bL):  # pragma: no cover - compiled
    """The children's best splits of every root (see :func:`_terminal`), any number of
    classes, over the pairs of the ``mv`` features ``vi`` (increasing) that split the set.
    ``count``: take only splits with ``need`` rows or more on each side, else every pair
    (:func:`_free`).

    The four updates are written out: a kernel called for each (one ``_keep``) made
    the depth-4 searches of the wide tables 1.9-2.3 times slower (every call passes
    its arrays through the runtime)."""
    for ia in range(mv):
        a = vi[ia]
        ra = rows[a]
        for ib in range(ia + 1, mv):
            b = vi[ib]
            rb = rows[b]
            okRa = okLa = okRb = okLb = True
            if count:
                if slots > K:  # (written out: a kernel call per pair costs more than the pair)
                    c11 = MC[a, b, K]
                else:
                    c11 = MC[a, b, 0]
                    for k in range(1, K):
                        c11 += MC[a, b, k]
                c10 = ra - c11
                c01 = rb - c11
                okRa = c11 >= need and c10 >= need
                okLa = c01 >= need and (N - ra) - c01 >= need
                okRb = c11 >= need and c01 >= need
                okLb = c10 >= need and (N - rb) - c10 >= need
            g = MC[a, b, 0]
            m11 = g
            m10 = dg[a, 0] - g
            m01 = dg[b, 0] - g
            for k in range(1, K):
                g = MC[a, b, k]
                x = dg[a, k] - g
                y = dg[b, k] - g
                if g > m11:
                    m11 = g
                if x > m10:
                    m10 = x
                if y > m01:
                    m01 = y
            if okRa:  # a's right child (x_a = 1) split on b
                v = m11 + m10 - pen
                if v > sR[a]:
                    sR[a] = v
                    bR[a] = b
            if okLa:  # a's left child split on b
                m00 = tot[0] - dg[a, 0] - (dg[b, 0] - MC[a, b, 0])
                for k in range(1, K):
                    y = tot[k] - dg[a, k] - (dg[b, k] - MC[a, b, k])
                    if y > m00:
                        m00 = y
                v = m01 + m00 - pen
                if v > sL[a]:
                    sL[a] = v
                    bL[a] = b
            if okRb:  # b's right child split on a
                v = m11 + m01 - pen
                if v > sR[b]:
                    sR[b] = v
                    bR[b] = a
            if okLb:  # b's left child split on a
                m00 = tot[0] - dg[b, 0] - (dg[a, 0] - MC[a, b, 0])
                for k in range(1, K):
                    y = tot[k] - dg[b, k] - (dg[a, k] - MC[a, b, k])
                    if y > m00:
                        m00 = y
                v = m10 + m00 - pen
                if v > sL[b]:
                    sL[b] = v
                    bL[b] = a


@library.kernel("void(f8[:, :, ::1], f8[:, ::1], i8[::1], f8[::1], i8, f8, f8[::1], i8[::1], f8[::1], i8[::1])")
def _pairs_two(MC, dg, vi, tot, mv, pen, sR, bR, sL, bL):  # pragma: no cover - compiled
    """:func:`_pairs` for two classes without counting the sides: every pair is taken as
    a split, also one that leaves a side empty (or below ``need``).  See :func:`_free`
    for when that gives :func:`_pairs`'s profile and trees; :func:`_terminal` checks the
    splits kept.  Left without the four tests of each pair (which side is empty varies
    from pair to pair, so they were mispredicted), the scan of sonar's depth-2 sets took
    7.1 ns a pair against 10.7.

    The features' own sums and best children are first copied in ``vi``'s order (the
    scan reads them in sequence, by position), the outer feature's best children are
    carried in registers, and features index the pair sums as unsigned numbers (no
    test for a negative index on every read)."""
    t0 = tot[0]
    t1 = tot[1]
    d0 = np.empty(mv)
    d1 = np.empty(mv)
    cR = np.empty(mv)
    cL = np.empty(mv)
    jR = np.empty(mv, dtype=np.int64)  # positions in vi of a better child's feature, -1: none yet
    jL = np.empty(mv, dtype=np.int64)
    for i in range(mv):
        a = vi[i]
        d0[i] = dg[a, 0]
        d1[i] = dg[a, 1]
        cR[i] = sR[a]
        cL[i] = sL[a]
        jR[i] = -1
        jL[i] = -1
    for ia in range(mv):
        Ma = MC[np.uint64(vi[ia])]
        a0 = d0[ia]
        a1 = d1[ia]
        sra = cR[ia]  # a's right child's best so far (from the features before it), kept here
        jra = jR[ia]
        sla = cL[ia]
        jla = jL[ia]
        for ib in range(ia + 1, mv):
            b = np.uint64(vi[ib])
            g0 = Ma[b, 0]
            g1 = Ma[b, 1]
            b0 = d0[ib]
            b1 = d1[ib]
            m11 = g1 if g1 > g0 else g0
            x0 = a0 - g0
            x1 = a1 - g1
            m10 = x1 if x1 > x0 else x0
            y0 = b0 - g0
            y1 = b1 - g1
            m01 = y1 if y1 > y0 else y0
            v = m11 + m10 - pen  # a's right child (x_a = 1) split on b
            if v > sra:
                sra = v
                jra = ib
            z0 = t0 - a0 - y0  # a's left child split on b
            z1 = t1 - a1 - y1
            v = m01 + (z1 if z1 > z0 else z0) - pen
            if v > sla:
                sla = v
                jla = ib
            v = m11 + m01 - pen  # b's right child split on a
            if v > cR[ib]:
                cR[ib] = v
                jR[ib] = ia
            z0 = t0 - b0 - x0  # b's left child split on a
            z1 = t1 - b1 - x1
            v = m10 + (z1 if z1 > z0 else z0) - pen
            if v > cL[ib]:
                cL[ib] = v
                jL[ib] = ia
        cR[ia] = sra
        jR[ia] = jra
        cL[ia] = sla
        jL[ia] = jla
    for i in range(mv):  # back by feature number where a better child was found
        a = vi[i]
        if jR[i] >= 0:
            sR[a] = cR[i]
            bR[a] = vi[jR[i]]
        if jL[i] >= 0:
            sL[a] = cL[i]
            bL[a] = vi[jL[i]]


@library.kernel("b1(f8[::1])")
def _free(prm):  # pragma: no cover - compiled
    """Whether the pairs may be scanned without counting the sides (``pen >= 0``,
    ``need`` 1): :func:`_pairs_two` for two classes, :func:`_pairs` for more.

    A "split" with an empty side is worth the child's leaf less ``pen``, so never more
    than the leaf; a split recorded in place of a better-placed one whose value is
    at most its own is then below the leaf too.  So the profile and trees are
    :func:`_pairs`'s unless a recorded split with a side below ``need`` beats its
    child's leaf (a side of weight between 0 and 1, or rounding in the sums): then
    :func:`_terminal` scans again, counting (:func:`_unsound`)."""
    return prm[0] >= 0.0 and prm[2] <= 1.0


@library.kernel("b1(f8[:, :, ::1], f8[::1], i8[::1], i8, i8, i8, f8, f8, f8[::1], f8[::1], f8[::1], i8[::1], "
                "f8[::1], i8[::1])")
def _unsound(MC, rows, vi, mv, K, slots, N, need, lR, lL, sR, bR, sL, bL):  # pragma: no cover - compiled
    """Whether a child's best split recorded without counting the sides has a side below
    ``need`` and beats the child's leaf (``lR``, ``lL``): see :func:`_free`."""
    for i in range(mv):
        a = vi[i]
        for side in range(2):
            b = bR[a] if side == 1 else bL[a]
            if b < 0 or (sR[a] if side == 1 else sL[a]) <= (lR[a] if side == 1 else lL[a]):
                continue
            lo = min(a, b)
            hi = max(a, b)
            if slots > K:
                c11 = MC[lo, hi, K]
            else:
                c11 = MC[lo, hi, 0]
                for k in range(1, K):
                    c11 += MC[lo, hi, k]
            if side == 1:  # x_a = 1, split on b
                c1 = c11
                c0 = rows[a] - c11
            else:
                c1 = rows[b] - c11
                c0 = (N - rows[a]) - c1
            if c1 < need or c0 < need:
                return True
    return False


@library.kernel("void(i8[::1], i8[::1], i8[::1], f8[:, ::1], f8[:, ::1], i8)")
def _triples(S, lptr, lidx, W, T, m):  # pragma: no cover - compiled
    """Triple sums ``T[(a * m + b) * m + c, q]`` (a < b < c, local features) of S's
    positions with all three set: one pass over each position's triples of ones.

    A depth-3 node needs, for each feature f, the pair sums of its two children; those
    of the side where f is set are the node's triple sums with f (and its pair sums for
    the pairs with f), and the other side's are the node's pair sums less those.  Counting
    each child's pairs costs a position's pairs for every feature it has set (about
    k^3 / 2 additions for k ones), the triples k^3 / 6, once: on a million patterns of 40
    features at depth 3 the triples took a third of the node's additions."""
    slots = W.shape[1]
    mm = np.uint64(m)
    for p in range(S.shape[0]):
        i = S[p]
        st = lptr[p]
        en = lptr[p + 1]
        if en - st < 3:
            continue
        if slots == 2:
            w0 = W[i, 0]
            w1 = W[i, 1]
            for j in range(st, en - 2):
                ra = np.uint64(lidx[j]) * mm
                for l in range(j + 1, en - 1):
                    rb = (ra + np.uint64(lidx[l])) * mm
                    for r in range(l + 1, en):
                        c = rb + np.uint64(lidx[r])
                        T[c, 0] += w0
                        T[c, 1] += w1
        elif slots == 3:
            w0 = W[i, 0]
            w1 = W[i, 1]
            w2 = W[i, 2]
            for j in range(st, en - 2):
                ra = np.uint64(lidx[j]) * mm
                for l in range(j + 1, en - 1):
                    rb = (ra + np.uint64(lidx[l])) * mm
                    for r in range(l + 1, en):
                        c = rb + np.uint64(lidx[r])
                        T[c, 0] += w0
                        T[c, 1] += w1
                        T[c, 2] += w2
        else:
            for j in range(st, en - 2):
                ra = np.uint64(lidx[j]) * mm
                for l in range(j + 1, en - 1):
                    rb = (ra + np.uint64(lidx[l])) * mm
                    for r in range(l + 1, en):
                        c = rb + np.uint64(lidx[r])
                        for q in range(slots):
                            T[c, q] += W[i, q]


@library.kernel("void(f8[:, :, ::1], f8[:, ::1], i8, i8, f8[:, :, ::1])")
def _from_triples(MC, T, t, m, out):  # pragma: no cover - compiled
    """out := the pair sums (upper triangle) of the positions of the node with local
    feature ``t`` set, from the node's pair sums ``MC`` and triple sums ``T``."""
    slots = MC.shape[2]
    for a in range(m):
        for b in range(a, m):
            if a == t or b == t:  # pairs with t: the node's own
                for q in range(slots):
                    out[a, b, q] = MC[a, b, q]
            elif a == b:
                lo = min(a, t)
                hi = max(a, t)
                for q in range(slots):
                    out[a, a, q] = MC[lo, hi, q]
            else:
                if t < a:
                    c = (t * m + a) * m + b
                elif t < b:
                    c = (a * m + t) * m + b
                else:
                    c = (a * m + b) * m + t
                for q in range(slots):
                    out[a, b, q] = T[c, q]


@library.kernel("void(f8[:, :, ::1], f8[::1], i8, i8, i8, f8, f8, f8, b1, f8[::1], i8[:, ::1])")
def _terminal(MC, tot, m, K, slots, pen, min_leaf, need, free, prof, code):  # pragma: no cover - compiled
    """best(S, 2, b) for b = 0..3 into ``prof`` from the pair sums (upper triangle of
    MC, m features; ``tot`` the sums over S, K gains then the rows).

    ``code[b] = (a, left, right)``: the root feature (-1: a leaf) and each child's
    feature (-1: a leaf), local numbers, left meaning local value 0.  ``free``:
    :func:`_free` (the pairs are then scanned without counting the sides).

    ``code[3]`` names the same tree whichever features of the set are counted by their
    zeros (the set counted as a child of another one, or on its own): each choice is
    the first best in the features' order, and two trees splitting one child each tie
    at the full budget only when neither child splits (see :func:`_global_code`).
    """
    N = tot[K]
    lv = _leaf_value(tot, K, min_leaf)
    for j in range(4):
        prof[j] = lv
        code[j, 0] = -1
        code[j, 1] = -1
        code[j, 2] = -1
    rows = np.empty(m)
    valid = np.empty(m, dtype=np.bool_)
    lR = np.empty(m)
    lL = np.empty(m)
    dg = np.empty((m, slots))  # each feature's own sums (the diagonal), read for every pair
    for a in range(m):
        for q in range(slots):
            dg[a, q] = MC[a, a, q]
        c = dg[a, K] if slots > K else dg[a, 0]
        if slots == K:
            for k in range(1, K):
                c += dg[a, k]
        rows[a] = c
        valid[a] = rows[a] >= need and N - rows[a] >= need
        lR[a] = NEG  # each side's leaf
        lL[a] = NEG
        if c >= min_leaf:
            lR[a] = dg[a, 0]
            for k in range(1, K):
                if dg[a, k] > lR[a]:
                    lR[a] = dg[a, k]
        if N - c >= min_leaf:
            lL[a] = tot[0] - dg[a, 0]
            for k in range(1, K):
                if tot[k] - dg[a, k] > lL[a]:
                    lL[a] = tot[k] - dg[a, k]
    # A child split on a feature that does not split the set has a side below
    # ``need`` (row weights are not negative): only pairs of splitting features count.
    vi = np.flatnonzero(valid)
    mv = vi.shape[0]
    # Each root feature's children at their best split: sR / bR for the right child
    # (x_a = 1), sL / bL for the left one.  One visit of each pair {a, b}, a < b,
    # serves both roots: the cells of (x_a, x_b) give a's children split on b and b's
    # split on a.  Each root meets the other features in increasing order (the first
    # best is kept) and every value is summed in the same order as when each root
    # is scanned on its own.
    sR = np.full(m, NEG)
    bR = np.full(m, -1, dtype=np.int64)
    sL = np.full(m, NEG)
    bL = np.full(m, -1, dtype=np.int64)
    scanned = False
    if free:
        if K == 2:
            _pairs_two(MC, dg, vi, tot, mv, pen, sR, bR, sL, bL)
        else:
            _pairs(MC, dg, rows, vi, tot, mv, K, slots, N, pen, need, False, sR, bR, sL, bL)
        scanned = not _unsound(MC, rows, vi, mv, K, slots, N, need, lR, lL, sR, bR, sL, bL)
        if not scanned:
            sR[:] = NEG
            bR[:] = -1
            sL[:] = NEG
            bL[:] = -1
    if not scanned:
        _pairs(MC, dg, rows, vi, tot, mv, K, slots, N, pen, need, True, sR, bR, sL, bL)
    for a in range(m):
        if not valid[a]:
            continue
        leafR = lR[a]
        leafL = lL[a]
        cR = bR[a] if sR[a] > leafR else -1
        cL = bL[a] if sL[a] > leafL else -1
        bestR = sR[a] if sR[a] > leafR else leafR
        bestL = sL[a] if sL[a] > leafL else leafL
        v = leafL + leafR - pen
        if v > prof[1]:
            prof[1] = v
            code[1, 0] = a
            code[1, 1] = -1
            code[1, 2] = -1
        v = leafL + bestR - pen
        if v > prof[2]:
            prof[2] = v
            code[2, 0] = a
            code[2, 1] = -1
            code[2, 2] = cR
        v = bestL + leafR - pen
        if v > prof[2]:
            prof[2] = v
            code[2, 0] = a
            code[2, 1] = cL
            code[2, 2] = -1
        v = bestL + bestR - pen
        if v > prof[3]:
            prof[3] = v
            code[3, 0] = a
            code[3, 1] = cL
            code[3, 2] = cR
    for j in range(1, 4):  # at most b branchings: never worse than with fewer
        if prof[j - 1] >= prof[j]:
            prof[j] = prof[j - 1]
            code[j, 0] = code[j - 1, 0]
            code[j, 1] = code[j - 1, 1]
            code[j, 2] = code[j - 1, 2]


#: Base of the packed tree codes (above MAX_FEATURES + 1).
CODE_BASE = 1 << 11


@library.kernel("f8(i8[:, ::1], i8[::1], b1[::1])")
def _global_code(code, act, flip):  # pragma: no cover - compiled
    """The tree at the full budget (``code[3]``, local numbers) as one number kept beside
    its profile: ``(fa + 1) + (f0 + 1) B + (f1 + 1) B^2`` in the table's feature numbers,
    ``f0`` / ``f1`` the split of the child where ``x_fa`` = 0 / 1 (-1: a leaf), 0 for a
    leaf; ``B = CODE_BASE``.  The tree is then read back without counting its set again."""
    a = code[3, 0]
    if a < 0:
        return 0.0
    cl = code[3, 1]
    cr = code[3, 2]
    if flip[a]:  # local value 0 is x = 1
        cl, cr = cr, cl
    f0 = act[cl] if cl >= 0 else -1
    f1 = act[cr] if cr >= 0 else -1
    return float((act[a] + 1) + (f0 + 1) * CODE_BASE + (f1 + 1) * CODE_BASE * CODE_BASE)


@library.kernel(_sig("i8(E, i8[::1], u8, u8)"))
def _profile(E, S, ha, hb):  # pragma: no cover - compiled
    """The table slot of best(S, 2, b), b = 0..3: found, else counted."""
    XT, indptr, indices, W, smax, smin, hk, prm, stop, stats, MC, tk, tdb, tv = E[:14]
    j = _find(tk, tdb, ha, hb, 2, 0)
    if j >= 0:
        stats[2] += 1
        return j
    K = np.int64(prm[4])
    act, flip, lptr, lidx = _local_features(S, indptr, indices, W, XT.shape[0], K, prm[2], E[15])
    m = act.shape[0]
    tot, sm, sn = _totals(S, W, smax, smin, K)
    _shift(S, XT, lptr, lidx, W, MC[1], m, -1, 0, -1, 0)
    prof = np.empty(4)
    code = np.empty((4, 3), dtype=np.int64)
    _terminal(MC[1], tot, m, K, W.shape[1], prm[0], prm[1], prm[2], _free(prm), prof, code)
    stats[1] += 1
    j = _place(tk, tdb, stats, ha, hb, 2, 0)
    for q in range(4):
        tv[j, q] = prof[q]
    tv[j, 4] = _global_code(code, act, flip)
    return j


@library.kernel(_sig("void(E, i8[::1], i8, i8[::1], i8[::1])"))
def _depth_two_tree(E, S, b, feat, cls):  # pragma: no cover - compiled
    """The best tree of depth <= 2 on S with at most b branchings, as heap arrays
    (nodes 1..7: ``feat`` the split feature or -1 for a leaf, -2 for none; ``cls``):
    read off its profile's code in the table at the full budget, else counted."""
    XT, indptr, indices, W, smax, smin, hk, prm = E[:8]
    MC, tk, tdb, tv = E[10], E[11], E[12], E[13]
    K = np.int64(prm[4])
    for q in range(8):
        feat[q] = -2
        cls[q] = 0
    fa = -1
    f0 = -1
    f1 = -1
    known = False
    if b == 3:
        ha, hb = _key(S, hk)
        j = _find(tk, tdb, ha, hb, 2, 0)
        if j >= 0 and tv[j, 4] >= 0.0:
            c = np.int64(tv[j, 4])
            fa = c % CODE_BASE - 1
            f0 = (c // CODE_BASE) % CODE_BASE - 1
            f1 = c // (CODE_BASE * CODE_BASE) - 1
            known = True
    if not known:
        act, flip, lptr, lidx = _local_features(S, indptr, indices, W, XT.shape[0], K, prm[2], E[15])
        m = act.shape[0]
        tot, sm, sn = _totals(S, W, smax, smin, K)
        _shift(S, XT, lptr, lidx, W, MC[1], m, -1, 0, -1, 0)
        prof = np.empty(4)
        code = np.empty((4, 3), dtype=np.int64)
        _terminal(MC[1], tot, m, K, W.shape[1], prm[0], prm[1], prm[2], _free(prm), prof, code)
        a, cl, cr = code[b, 0], code[b, 1], code[b, 2]
        if a >= 0:
            if flip[a]:  # local value 0 is x = 1: the children trade places
                cl, cr = cr, cl
            fa = act[a]
            f0 = act[cl] if cl >= 0 else -1
            f1 = act[cr] if cr >= 0 else -1
    if fa < 0:
        tot, sm, sn = _totals(S, W, smax, smin, K)
        feat[1] = -1
        cls[1] = _class_of(tot, K)
        return
    feat[1] = fa
    buf = np.empty(S.shape[0], dtype=np.int64)
    n0, x1, x2, x3 = _split(S, XT, fa, hk, smax, buf)
    for side in range(2):
        Sc = buf[:n0].copy() if side == 0 else buf[n0:].copy()
        fb = f0 if side == 0 else f1
        node = 2 + side
        tc, y1, y2 = _totals(Sc, W, smax, smin, K)
        if fb < 0:
            feat[node] = -1
            cls[node] = _class_of(tc, K)
        else:
            feat[node] = fb
            buf2 = np.empty(Sc.shape[0], dtype=np.int64)
            n2, z1, z2, z3 = _split(Sc, XT, fb, hk, smax, buf2)
            t0, w1, w2 = _totals(buf2[:n2].copy(), W, smax, smin, K)
            t1, w3, w4 = _totals(buf2[n2:].copy(), W, smax, smin, K)
            feat[2 * node] = -1
            cls[2 * node] = _class_of(t0, K)
            feat[2 * node + 1] = -1
            cls[2 * node + 1] = _class_of(t1, K)


# ------------------------------------------------------------------ depth three
@library.kernel(_sig("Tuple((f8, i8, i8))(E, i8[::1], u8, u8, i8, f8)"))
def _solve3(E, S, ha, hb, b, floor):  # pragma: no cover - compiled
    """best(S, 3, b) if it exceeds ``floor``: (value, feature (-1: a leaf), left budget);
    else (an upper bound <= floor, -1, -1).

    The features are tried in their numbers' order, so that consecutive splits are
    alike (the similarity bound is tight, and a child's pair sums move from the
    last child's by few rows).  The children's profiles come from the table or from
    pair sums (see ``_shift``)."""
    XT, indptr, indices, W, smax, smin, hk, prm, stop, stats, MC, tk, tdb, tv = E[:14]
    pen = prm[0]
    min_leaf = prm[1]
    need = prm[2]
    K = np.int64(prm[4])
    slots = W.shape[1]
    F = XT.shape[0]
    stats[0] += 1
    tot, smax_sum, smin_sum = _totals(S, W, smax, smin, K)
    best = _leaf_value(tot, K, min_leaf)
    bf = -1
    bbl = -1
    if b == 0 or S.shape[0] <= 1 or best >= smax_sum or smax_sum - pen <= max(best, floor):
        if best > floor:
            return best, bf, bbl
        return floor, -1, -1
    act, flip, lptr, lidx = _local_features(S, indptr, indices, W, F, K, need, E[15])
    m = act.shape[0]
    if m == 0:
        if best > floor:
            return best, bf, bbl
        return floor, -1, -1
    R, Rs = _feature_sums(S, indptr, indices, W, smax, F, K)
    order = np.empty(F, dtype=np.int64)
    n_order = _order(R, tot, K, pen, min_leaf, need, order)
    order[:n_order].sort()  # see above
    n = S.shape[0]
    split = np.empty(n, dtype=np.int64)
    counted = False
    # the children's pair sums from the node's triple sums (counted when first needed)
    by_triples = n >= prm[6] and m <= TRIPLE_FEATURES
    tri = np.empty((0, slots))
    lof = np.full(F, -1, dtype=np.int64)  # local number of each feature
    for q in range(m):
        lof[act[q]] = q
    exact = prm[5] > 0.5  # integer gains: sums moved row by row stay exact
    free = _free(prm)
    cf = -1  # the split whose child MC[2] holds (side cside)
    cside = 0
    similar = prm[3] > 0.5 and b == 7
    pf = -1
    pvl = 0.0
    pvr = 0.0
    pl = np.empty(4)
    pr = np.empty(4)
    codeT = np.empty((4, 3), dtype=np.int64)
    tL = np.empty(K + 1)
    tR = np.empty(K + 1)
    lo = max(0, b - 4)
    hi = min(3, b - 1)
    for ii in range(n_order):
        if _halted(E):
            break
        f = order[ii]
        t = max(best, floor)
        if smax_sum - pen <= t:
            break
        ubL = smax_sum - Rs[f]  # bounds on the children's values
        ubR = Rs[f]
        if similar and pf >= 0:
            a_, b_, c_, d_ = _similar(S, XT, f, pf, smax, smin)
            ubL = min(ubL, pvl + a_ - b_)
            ubR = min(ubR, pvr + c_ - d_)
            if ubL + ubR - pen <= t:
                continue
        n0, h1a, h1b, sm1 = _split(S, XT, f, hk, smax, split)
        h0a = ha - h1a
        h0b = hb - h1b
        # the children's profiles, copied out at once (a later entry may take their slots)
        j0 = _find(tk, tdb, h0a, h0b, 2, 0)
        j1 = _find(tk, tdb, h1a, h1b, 2, 0)
        if j0 >= 0:
            stats[2] += 1
            for q in range(4):
                pl[q] = tv[j0, q]
        if j1 >= 0:
            stats[2] += 1
            for q in range(4):
                pr[q] = tv[j1, q]
        for k in range(K + 1):
            tR[k] = R[f, k]
            tL[k] = tot[k] - R[f, k]
        if exact and pen >= 0:  # a child whose leaf is right on every pattern is that leaf at every budget
            if j0 < 0:
                lv = _leaf_value(tL, K, min_leaf)
                if lv >= smax_sum - Rs[f]:
                    for q in range(4):
                        pl[q] = lv
                    j0 = 0  # (known: nothing to count)
            if j1 < 0:
                lv = _leaf_value(tR, K, min_leaf)
                if lv >= Rs[f]:
                    for q in range(4):
                        pr[q] = lv
                    j1 = 0
        pruned = False
        if (j0 < 0 or j1 < 0) and by_triples and lof[f] >= 0:
            if j1 >= 0 and pr[hi] + ubL - pen <= t:  # the known child shows the other cannot matter
                pruned = True
                for q in range(4):
                    pl[q] = ubL
            elif j0 >= 0 and pl[hi] + ubR - pen <= t:
                pruned = True
                for q in range(4):
                    pr[q] = ubR
            else:
                if tri.shape[0] == 0:
                    if not counted:
                        _shift(S, XT, lptr, lidx, W, MC[0], m, -1, 0, -1, 0)
                        counted = True
                    tri = np.zeros((m * m * m, slots))
                    _triples(S, lptr, lidx, W, tri, m)
                tl = lof[f]
                _from_triples(MC[0], tri, tl, m, MC[2])  # the side where f's local value is 1
                _other(MC[0], MC[2], MC[1], m, slots)
                cf = -1  # MC[2] holds no child moved from split to split
                right = 1 if flip[tl] else 2  # local value 1 is x_f = 1 unless f is counted by its zeros
                if j1 < 0:
                    _terminal(MC[right], tR, m, K, slots, pen, min_leaf, need, free, pr, codeT)
                    stats[1] += 1
                    j = _place(tk, tdb, stats, h1a, h1b, 2, 0)
                    for q in range(4):
                        tv[j, q] = pr[q]
                    tv[j, 4] = _global_code(codeT, act, flip)
                if j0 < 0:
                    if pr[hi] + ubL - pen <= t:
                        pruned = True
                        for q in range(4):
                            pl[q] = ubL
                    else:
                        _terminal(MC[3 - right], tL, m, K, slots, pen, min_leaf, need, free, pl, codeT)
                        stats[1] += 1
                        j = _place(tk, tdb, stats, h0a, h0b, 2, 0)
                        for q in range(4):
                            tv[j, q] = pl[q]
                        tv[j, 4] = _global_code(codeT, act, flip)
        elif j0 < 0 or j1 < 0:
            # MC[2] comes to hold one child's pair sums: counted afresh, or moved from
            # the child held last when fewer rows lie between them (consecutive
            # features are often thresholds of one column); the other child, when
            # needed, is the node's sums (counted once) less those.
            n1 = n - n0
            inc1 = n + 1
            inc0 = n + 1
            if exact and cf >= 0:
                inc1 = 0
                for r in range(n):
                    i = S[r]
                    if (XT[cf, i] == cside) != (XT[f, i] == 1):
                        inc1 += 1
                inc0 = n - inc1
            c1 = min(n1, inc1) + (n if j0 < 0 and not counted else 0)
            c0 = min(n0, inc0) + (n if j1 < 0 and not counted else 0)
            side = 1 if c1 <= c0 else 0
            jh = j1 if side == 1 else j0  # the child held in MC[2], and the other
            jo = j0 if side == 1 else j1
            ph = pr if side == 1 else pl
            po = pl if side == 1 else pr
            ub_o = ubL if side == 1 else ubR
            # Once the held child's value is known, the other is searched only if the
            # two can beat t: its bound stands for its profile (see below).
            pruned = jh >= 0 and ph[hi] + ub_o - pen <= t
            if jh < 0 or not pruned:
                if (inc1 < n1) if side == 1 else (inc0 < n0):
                    _shift(S, XT, lptr, lidx, W, MC[2], m, f, side, cf, cside)
                else:
                    _shift(S, XT, lptr, lidx, W, MC[2], m, f, side, -1, 0)
                cf = f
                cside = side
            if jh < 0:
                _terminal(MC[2], tR if side == 1 else tL, m, K, slots, pen, min_leaf, need, free, ph, codeT)
                stats[1] += 1
                j = _place(tk, tdb, stats, h1a if side == 1 else h0a, h1b if side == 1 else h0b, 2, 0)
                for q in range(4):
                    tv[j, q] = ph[q]
                tv[j, 4] = _global_code(codeT, act, flip)
                pruned = jo < 0 and ph[hi] + ub_o - pen <= t
            if pruned:
                for q in range(4):
                    po[q] = ub_o
            elif jo < 0:
                if not counted:
                    _shift(S, XT, lptr, lidx, W, MC[0], m, -1, 0, -1, 0)
                    counted = True
                _other(MC[0], MC[2], MC[1], m, slots)
                _terminal(MC[1], tL if side == 1 else tR, m, K, slots, pen, min_leaf, need, free, po, codeT)
                stats[1] += 1
                j = _place(tk, tdb, stats, h0a if side == 1 else h1a, h0b if side == 1 else h1b, 2, 0)
                for q in range(4):
                    tv[j, q] = po[q]
                tv[j, 4] = _global_code(codeT, act, flip)
        pf = f
        pvl = pl[3]
        pvr = pr[3]
        if pruned:  # nothing here beats t; the bound serves the next similarity bound
            continue
        for bl in range(hi, lo - 1, -1):
            v = pl[bl] + pr[b - 1 - bl] - pen
            if v > max(best, floor):
                best = v
                bf = f
                bbl = bl
    if best > floor:
        return best, bf, bbl
    return floor, -1, -1


# ------------------------------------------------------- depth four and more
@library.kernel(_sig("f8(E, u8, u8, i8, i8, f8)"))
def _upper(E, ha, hb, d, b, sm):  # pragma: no cover - compiled
    """A proven upper bound on best(set, d, b): from the table, else ``sm`` (sum of max_k s)."""
    tk, tdb, tv = E[11], E[12], E[13]
    if d <= 2:
        j = _find(tk, tdb, ha, hb, 2, 0)
        if j >= 0:
            return tv[j, b]
        return sm
    j = _find(tk, tdb, ha, hb, d, b)
    if j >= 0:
        if not np.isnan(tv[j, 1]):
            return tv[j, 1]
        return min(tv[j, 0], sm)
    return sm


@library.kernel(_sig("void(E, u8, u8, i8, i8, f8, f8, f8, i8, i8)"))
def _remember(E, ha, hb, d, b, v, floor, ub, f, bl):  # pragma: no cover - compiled
    """Keep the outcome of state (set, d >= 3, b) searched with ``floor``."""
    j = _place(E[11], E[12], E[9], ha, hb, d, b)
    tv = E[13]
    if v > floor:
        tv[j, 0] = v
        tv[j, 1] = v
        tv[j, 2] = f
        tv[j, 3] = bl
    else:
        tv[j, 0] = min(ub, v)
        tv[j, 1] = np.nan
        tv[j, 2] = -1.0
        tv[j, 3] = -1.0


@library.kernel(_sig("Tuple((b1, f8))(E, i8[::1], u8, u8, i8, i8, f8)"))
def _known(E, S, ha, hb, d, b, floor):  # pragma: no cover - compiled
    """best(S, d, b) without the stack: (True, value) from a depth-2 profile, the
    table or a depth-3 search (exact if > floor, else a bound <= floor); (False, the
    table's bound) when a search of depth >= 4 is needed."""
    stop, stats, tk, tdb, tv = E[8], E[9], E[11], E[12], E[13]
    if d <= 2:
        j = _profile(E, S, ha, hb)
        return True, tv[j, b]
    j = _find(tk, tdb, ha, hb, d, b)
    ub = np.inf
    if j >= 0:
        stats[2] += 1
        if not np.isnan(tv[j, 1]):
            return True, tv[j, 1]
        if tv[j, 0] <= floor:
            return True, tv[j, 0]
        ub = tv[j, 0]
    if d > 3:
        return False, ub
    v, f, bl = _solve3(E, S, ha, hb, b, floor)
    if not stop[0]:
        _remember(E, ha, hb, d, b, v, floor, ub, f, bl)
    return True, v


@library.kernel(_sig("Tuple((b1, f8))(E, i8, i8, i8, u8, u8, i8, i8, f8, f8)"))
def _push(E, L, off, n, ha, hb, d, b, floor, ub):  # pragma: no cover - compiled
    """Open stack level L (d >= 4) for the set ``sbuf[L, off:off + n]``: (True, 0) or,
    when the set needs no search (a leaf is best, or nothing can beat the floor),
    (False, its value or a bound <= floor), kept in the table."""
    XT, indptr, indices, W, smax, smin, hk, prm, stop, stats = E[:10]
    sbuf, obuf, fst, hst, ist = E[16], E[17], E[18], E[19], E[20]
    K = np.int64(prm[4])
    S = sbuf[L, off:off + n]
    stats[0] += 1
    tot, sm, sn = _totals(S, W, smax, smin, K)
    leaf = _leaf_value(tot, K, prm[1])
    if b == 0 or n <= 1 or leaf >= sm or sm - prm[0] <= max(leaf, floor):
        v = leaf if leaf > floor else floor
        _remember(E, ha, hb, d, b, v, floor, ub, -1, -1)
        return False, v
    R, Rs = _feature_sums(S, indptr, indices, W, smax, XT.shape[0], K)
    n_order = _order(R, tot, K, prm[0], prm[1], prm[2], obuf[L])
    obuf[L, :n_order].sort()
    cap = (1 << (d - 1)) - 1
    ist[L, 0] = d
    ist[L, 1] = b
    ist[L, 2] = 0
    ist[L, 3] = n_order
    ist[L, 5] = 0
    ist[L, 8] = off
    ist[L, 9] = n
    ist[L, 10] = -1
    ist[L, 11] = -1
    ist[L, 12] = -1
    ist[L, 13] = max(0, b - 1 - cap)
    ist[L, 14] = min(cap, b - 1)
    ist[L, 15] = cap
    fst[L, 0] = floor
    fst[L, 1] = leaf
    fst[L, 2] = sm
    fst[L, 15] = ub
    hst[L, 0] = ha
    hst[L, 1] = hb
    return True, 0.0


@library.kernel(_sig("f8(E, i8[::1], u8, u8, i8, i8, f8, i8[::1], i8, i8, f8[::1], i8)"))
def _deep(E, S_top, ha, hb, d, b, floor, order, lo, hi, st, top):  # pragma: no cover - compiled
    """best(S, d, b) for d >= 4 on an explicit stack, the top level trying the features
    ``order[lo:hi]``.

    ``st`` (8,) is the top level's state, read and written: best value, its feature
    (-1: a leaf), its left budget, the previous feature, bounds on its children's
    values, sum of max_k s, unused.  With ``top`` a value another worker found
    (``shared``) prunes too.  Returns the best value if it exceeds ``floor``, else
    ``floor``.

    Stack level numbers: ``fst`` = floor, best, sum max_k s, left and right children's
    sums of max_k s, left value, right value, left floor, right floor, left and right
    bounds, left and right values at the full budget, previous feature's left and
    right values, the table's bound; ``ist`` = d, b, next feature, end, left budget,
    phase (0 next feature, 1 next budget, 2 left value in, 3 right value in),
    feature, left size, offset and size of the set in ``sbuf``, best feature, its
    left budget, previous feature, lowest and highest left budget, cap.
    """
    XT, indptr, indices, W, smax, smin, hk, prm, stop, stats, MC, tk, tdb, tv, shared, loc = E[:16]
    sbuf, obuf, fst, hst, ist = E[16], E[17], E[18], E[19], E[20]
    pen = prm[0]
    n_top = S_top.shape[0]
    for r in range(n_top):
        sbuf[0, r] = S_top[r]
    for r in range(hi):
        obuf[0, r] = order[r]
    cap0 = (1 << (d - 1)) - 1
    ist[0, 0] = d
    ist[0, 1] = b
    ist[0, 2] = lo
    ist[0, 3] = hi
    ist[0, 5] = 0
    ist[0, 8] = 0
    ist[0, 9] = n_top
    ist[0, 10] = np.int64(st[1])
    ist[0, 11] = np.int64(st[2])
    ist[0, 12] = np.int64(st[3])
    ist[0, 13] = max(0, b - 1 - cap0)
    ist[0, 14] = min(cap0, b - 1)
    ist[0, 15] = cap0
    fst[0, 0] = floor
    fst[0, 1] = st[0]
    fst[0, 2] = st[6]
    fst[0, 13] = st[4]
    fst[0, 14] = st[5]
    hst[0, 0] = ha
    hst[0, 1] = hb
    L = 0
    while not _halted(E):
        dL = ist[L, 0]
        bL = ist[L, 1]
        off = ist[L, 8]
        n = ist[L, 9]
        cap = ist[L, 15]
        S = sbuf[L, off:off + n]
        t = max(fst[L, 1], fst[L, 0])
        if top != 0 and L == 0 and shared[0] > t:
            t = shared[0]
        phase = ist[L, 5]
        similar = prm[3] > 0.5 and bL == 2 * cap + 1
        if phase == 0:  # the next feature
            ii = ist[L, 2]
            if ii >= ist[L, 3] or fst[L, 2] - pen <= t:
                if L == 0:
                    break
                v = fst[L, 1] if fst[L, 1] > fst[L, 0] else fst[L, 0]
                _remember(E, hst[L, 0], hst[L, 1], dL, bL, v, fst[L, 0], fst[L, 15], ist[L, 10], ist[L, 11])
                L -= 1
                if ist[L, 5] == 2:
                    fst[L, 5] = v
                else:
                    fst[L, 6] = v
                continue
            f = obuf[L, ii]
            ist[L, 6] = f
            n0, h1a, h1b, sm1 = _split(S, XT, f, hk, smax, sbuf[L + 1, :n])
            ist[L, 7] = n0
            hst[L, 2] = hst[L, 0] - h1a
            hst[L, 3] = hst[L, 1] - h1b
            hst[L, 4] = h1a
            hst[L, 5] = h1b
            fst[L, 3] = fst[L, 2] - sm1
            fst[L, 4] = sm1
            bndL = fst[L, 3]
            bndR = sm1
            if similar and ist[L, 12] >= 0:
                a_, b_, c_, d_ = _similar(S, XT, f, ist[L, 12], smax, smin)
                bndL = min(bndL, fst[L, 13] + a_ - b_)
                bndR = min(bndR, fst[L, 14] + c_ - d_)
                if bndL + bndR - pen <= t:
                    ist[L, 2] = ii + 1
                    continue
            fst[L, 9] = bndL
            fst[L, 10] = bndR
            fst[L, 11] = bndL
            fst[L, 12] = bndR
            ist[L, 4] = ist[L, 14]
            ist[L, 5] = 1
            continue
        f = ist[L, 6]
        n0 = ist[L, 7]
        bl = ist[L, 4]
        if phase == 1:  # the next share of the budget
            if bl < ist[L, 13]:
                if similar:  # the children's values (or bounds) at the full budget, for the next feature
                    ist[L, 12] = f
                    fst[L, 13] = min(fst[L, 11], _upper(E, hst[L, 2], hst[L, 3], dL - 1, cap, fst[L, 3]))
                    fst[L, 14] = min(fst[L, 12], _upper(E, hst[L, 4], hst[L, 5], dL - 1, cap, fst[L, 4]))
                ist[L, 2] += 1
                ist[L, 5] = 0
                continue
            br = bL - 1 - bl
            uL = min(fst[L, 9], _upper(E, hst[L, 2], hst[L, 3], dL - 1, bl, fst[L, 3]))
            uR = min(fst[L, 10], _upper(E, hst[L, 4], hst[L, 5], dL - 1, br, fst[L, 4]))
            if uL + uR - pen <= t:
                ist[L, 4] = bl - 1
                continue
            fl = t + pen - uR
            fst[L, 7] = fl
            ist[L, 5] = 2
            done, v = _known(E, sbuf[L + 1, :n0], hst[L, 2], hst[L, 3], dL - 1, bl, fl)
            if not done:
                pushed, v = _push(E, L + 1, 0, n0, hst[L, 2], hst[L, 3], dL - 1, bl, fl, v)
                if pushed:
                    L += 1
                    continue
            fst[L, 5] = v
            continue
        if phase == 2:  # the left child's value is in
            vl = fst[L, 5]
            if bl == cap:
                fst[L, 11] = vl
            if not vl > fst[L, 7]:
                ist[L, 4] = bl - 1
                ist[L, 5] = 1
                continue
            br = bL - 1 - bl
            fr = t + pen - vl
            fst[L, 8] = fr
            ist[L, 5] = 3
            done, v = _known(E, sbuf[L + 1, n0:n], hst[L, 4], hst[L, 5], dL - 1, br, fr)
            if not done:
                pushed, v = _push(E, L + 1, n0, n - n0, hst[L, 4], hst[L, 5], dL - 1, br, fr, v)
                if pushed:
                    L += 1
                    continue
            fst[L, 6] = v
            continue
        # phase 3: the right child's value is in
        vr = fst[L, 6]
        br = bL - 1 - bl
        if br == cap:
            fst[L, 12] = vr
        if vr > fst[L, 8]:
            v = fst[L, 5] + vr - pen
            if v > t:
                fst[L, 1] = v
                ist[L, 10] = f
                ist[L, 11] = bl
                if top != 0 and L == 0 and v > shared[0]:
                    shared[0] = v
        ist[L, 4] = bl - 1
        ist[L, 5] = 1
    st[0] = fst[0, 1]
    st[1] = ist[0, 10]
    st[2] = ist[0, 11]
    st[3] = ist[0, 12]
    st[4] = fst[0, 13]
    st[5] = fst[0, 14]
    return st[0] if st[0] > floor else floor


@library.kernel(_sig("Tuple((u8, u8, i8[::1], f8[::1]))(E, i8[::1], i8, i8)"))
def _prepare(E, S, d, b):  # pragma: no cover - compiled
    """The top of a search run in pieces: the set's keys, the order of its features
    (empty when nothing needs trying) and the top level's state for :func:`_deep`."""
    XT, indptr, indices, W, smax, smin, hk, prm = E[:8]
    K = np.int64(prm[4])
    ha, hb = _key(S, hk)
    tot, sm, sn = _totals(S, W, smax, smin, K)
    st = np.empty(8)
    st[0] = _leaf_value(tot, K, prm[1])
    st[1] = -1.0
    st[2] = -1.0
    st[3] = -1.0
    st[4] = 0.0
    st[5] = 0.0
    st[6] = sm
    st[7] = 0.0
    order = np.empty(XT.shape[0], dtype=np.int64)
    n_order = 0
    if not (b == 0 or S.shape[0] <= 1 or st[0] >= sm):
        R, Rs = _feature_sums(S, indptr, indices, W, smax, XT.shape[0], K)
        n_order = _order(R, tot, K, prm[0], prm[1], prm[2], order)
        order[:n_order].sort()
    return ha, hb, order[:n_order].copy(), st


@library.kernel(_sig("f8(E, i8[::1], i8, i8, f8)"))
def _solve(E, S, d, b, floor):  # pragma: no cover - compiled
    """best(S, d, b) if it exceeds ``floor`` (exact), else an upper bound <= floor."""
    stop, tv = E[8], E[13]
    if d <= 2:
        ha, hb = _key(S, E[6])
        j = _profile(E, S, ha, hb)
        return tv[j, b]
    ha, hb = _key(S, E[6])
    done, v = _known(E, S, ha, hb, d, b, floor)
    if done:
        return v
    ha, hb, order, st = _prepare(E, S, d, b)
    leaf = st[0]
    if order.shape[0] == 0 or st[6] - E[7][0] <= max(leaf, floor):
        w = leaf if leaf > floor else floor
        _remember(E, ha, hb, d, b, w, floor, v, -1, -1)
        return w
    w = _deep(E, S, ha, hb, d, b, floor, order, 0, order.shape[0], st, 0)
    if not stop[0]:
        _remember(E, ha, hb, d, b, w, floor, v, np.int64(st[1]), np.int64(st[2]))
    return w


@library.kernel(_sig("void(E, u8, u8, i8, i8, f8, f8, i8, i8)"))
def _store(E, ha, hb, d, b, v, floor, f, bl):  # pragma: no cover - compiled
    """Keep the outcome of a search run in pieces at the top."""
    ub = np.inf
    j = _find(E[11], E[12], ha, hb, d, b)
    if j >= 0:
        ub = E[13][j, 0]
    _remember(E, ha, hb, d, b, v, floor, ub, f, bl)


@library.kernel(_sig("Tuple((f8, f8, i8, i8))(E, u8, u8, i8, i8)"))
def _entry(E, ha, hb, d, b):  # pragma: no cover - compiled
    """(upper bound, exact value or nan, feature, left budget) of a state in the table;
    (inf, nan, -1, -1) when it is not there.  Depth <= 2: the profile's value."""
    tk, tdb, tv = E[11], E[12], E[13]
    if d <= 2:
        j = _find(tk, tdb, ha, hb, 2, 0)
        if j >= 0:
            return tv[j, b], tv[j, b], -1, -1
        return np.inf, np.nan, -1, -1
    j = _find(tk, tdb, ha, hb, d, b)
    if j < 0:
        return np.inf, np.nan, -1, -1
    return tv[j, 0], tv[j, 1], np.int64(tv[j, 2]), np.int64(tv[j, 3])


library.preload()


# ------------------------------------------------------------------ the Python side
#: Seed of the patterns' random keys (fixed: the same search every run).
KEY_SEED = 0x5EED_7AEE
#: Table slots at the start, at most (doubled between pieces of the top while more than half
#: full): see :func:`table_slots`.
TABLE_SLOTS = 1 << 14
#: Table slots at the start, at least.
MIN_TABLE_SLOTS = 1 << 8
#: Most table slots (72 bytes each): past it a full table overwrites entries.
MAX_TABLE_SLOTS = 1 << 21
#: Table slots before a search of depth >= 4 made in one compiled call (``solve``): it
#: cannot grow its table on the way, as a search in pieces does (with 16,384 slots,
#: sonar in 5 buckets at depth 4 overwrote 51,213 entries and took 1.7 times as long).
DEEP_TABLE_SLOTS = 1 << 18

#: In the main thread, with a stop request to watch, the compiled search first runs for
#: at most this many nanoseconds: a Ctrl-C is raised in the main thread, and only between
#: two calls of compiled code.  A search still at work then (the slice ends as the
#: deadline does: it gives up, storing nothing unfinished) is called again in a kept
#: background thread, which finds every subproblem finished so far in the table, while
#: the main thread waits where a Ctrl-C reaches it (and then stops the search).  The search
#: used to run on in slices of at most half a second: each slice set up its top node
#: again, and on a busy core a node of 600,000 patterns took longer than that to set up,
#: so that no slice ever finished anything (the search never ended).
#:
#: In any other thread the search is one call: the kernels run without the interpreter's
#: lock (both compiled tiers), so the deadline's watching thread sets the stop flag that
#: the compiled search reads, at most ``dp.WATCH_SECONDS`` after a Stop.
SLICE_NS = 100_000_000
#: How often the main thread looks at the stop request while the search runs beside it.
WAIT_SECONDS = 0.05


class Engine:
    """The compiled program's arrays and table for one set of gains.

    Parameters
    ----------
    X : ndarray (P, F), binary features (1 goes right)
    count : ndarray (P,), rows per pattern
    scores : ndarray (P, K), gain of predicting each class
    pen : float, per branching node
    min_leaf : int
    ones : (indptr, indices), each pattern's ones (CSR, sorted)
    stop : ndarray uint8 (1,), set to 1 to stop the search
    shared : ndarray float64 (1,), optional; the best value at the top, shared by workers
    base : Engine, optional; share its read-only arrays (a worker of a parallel search)
    at : float, the deadline (:func:`time.perf_counter`), read by the compiled search itself
    layout : tuple, optional; :func:`table_layout` of ``X`` when the caller keeps it
    """

    def __init__(self, X, count, scores, pen: float, min_leaf: int, ones, stop: np.ndarray,
                 shared: np.ndarray | None = None, base: "Engine | None" = None, at: float = np.inf,
                 stop_requested: Callable[[], bool] | None = None, layout: tuple | None = None) -> None:
        P, F = X.shape
        K = scores.shape[1]
        if base is not None:
            fixed = base.E[:8]
        else:
            XT, indptr, indices, hk = layout if layout is not None else table_layout(X, ones)
            # The rows per pattern are a gain column of their own unless they are the
            # gains' sum (plain accuracy): then they are added up when needed.
            count = np.asarray(count, dtype=np.float64)
            derived = bool(np.array_equal(scores.sum(axis=1), count))
            W = np.empty((P, K if derived else K + 1))
            W[:, :K] = scores
            if not derived:
                W[:, K] = count
            smax = np.ascontiguousarray(scores.max(axis=1))
            smin = np.ascontiguousarray(scores.min(axis=1))
            similar = 1.0 if (pen >= 0 and min_leaf <= 1) else 0.0
            exact = 1.0 if bool(np.all(W == np.round(W))) and float(np.abs(W).sum()) < 2.0 ** 52 else 0.0
            prm = np.array([float(pen), float(min_leaf), float(max(1, min_leaf)), similar, float(K), exact,
                            float(TRIPLE_PATTERNS)])
            fixed = (XT, indptr, indices, W, smax, smin, hk, prm)
        W = fixed[3]
        stats = np.zeros(6, dtype=np.int64)
        now = monotonic_ns()
        if np.isfinite(at) and now >= 0:
            stats[5] = max(1, now + int(max(0.0, at - time.perf_counter()) * 1e9))
        MC = np.empty((3, F, F, W.shape[1]))
        shared = np.full(1, -np.inf) if shared is None else shared
        loc = np.full(F, -1, dtype=np.int64)
        table = _empty_table(table_slots(F, 3))
        stack = _empty_stack(1, P, F)
        self.P, self.F = P, F
        self.E = (*fixed, stop, stats, MC, *table, shared, loc, *stack)
        self._deadline_ns = int(stats[5])
        self._stop_requested = stop_requested

    # -- the arrays ---------------------------------------------------------------
    @property
    def stats(self) -> np.ndarray:
        return self.E[9]

    def _replace(self, first: int, parts: tuple) -> None:
        E = list(self.E)
        E[first:first + len(parts)] = parts
        self.E = tuple(E)

    def _levels(self, depth: int) -> None:
        """Stack levels for a search of ``depth``."""
        if depth - 2 > self.E[16].shape[0]:
            self._replace(16, _empty_stack(depth - 2, self.P, self.F))

    def grow(self) -> None:
        """Double the table while it is more than half full (up to MAX_TABLE_SLOTS)."""
        slots = self.E[11].shape[0]
        if 2 * self.stats[3] <= slots or slots >= MAX_TABLE_SLOTS:
            return
        self._resize(min(MAX_TABLE_SLOTS, 4 * slots))

    def _resize(self, slots: int) -> None:
        """The table's entries moved into a table of ``slots`` slots."""
        bigger = _empty_table(slots)
        _rehash(self.E[11], self.E[12], self.E[13], *bigger, self.stats)
        self._replace(11, bigger)

    def key(self, idx: np.ndarray) -> tuple[np.uint64, np.uint64]:
        ha, hb = _key(idx, self.E[6])
        return np.uint64(ha), np.uint64(hb)

    # -- searches -----------------------------------------------------------------
    def solve(self, idx: np.ndarray, depth: int, budget: int, floor: float) -> float:
        """best(idx, depth, budget) if it exceeds ``floor`` (exact), else a bound <= floor."""
        self._levels(depth)
        self.grow()
        if depth >= 4 and self.E[11].shape[0] < table_slots(self.F, depth):
            self._resize(table_slots(self.F, depth))
        return float(self._sliced(_solve, idx, int(depth), int(budget), float(floor)))

    def entry(self, idx: np.ndarray, depth: int, budget: int) -> tuple[float, float, int, int]:
        """(upper bound, exact value or nan, feature, left budget) known for a state."""
        ha, hb = self.key(idx)
        ub, value, f, bl = _entry(self.E, ha, hb, int(depth), int(budget))
        return float(ub), float(value), int(f), int(bl)

    def prepare(self, idx: np.ndarray, depth: int, budget: int):
        """The top of a search in pieces: (key a, key b, feature order, state)."""
        self._levels(depth)
        ha, hb, order, st = _prepare(self.E, idx, int(depth), int(budget))
        return np.uint64(ha), np.uint64(hb), order, st

    def piece(self, idx, ha, hb, depth: int, budget: int, floor: float, order, lo: int, hi: int, st, top: bool) -> None:
        """Try the top's features ``order[lo:hi]`` (state in ``st``)."""
        self._levels(depth)
        self.grow()
        self._sliced(_deep, idx, np.uint64(ha), np.uint64(hb), int(depth), int(budget), float(floor), order, int(lo),
                     int(hi), st, int(bool(top)))

    def _sliced(self, kernel, *args):
        """``kernel(E, *args)``; in the main thread with a stop request to watch, a first
        slice, then the rest in a background thread (see ``SLICE_NS``).  Calling a kernel
        again after a slice is safe: a search that gives up stores nothing unfinished,
        and the top's state ``st`` keeps only finished features (it is read again from
        its start, so it is tried again at most once)."""
        stop, stats = self.E[8], self.E[9]
        if self._stop_requested is None or threading.current_thread() is not threading.main_thread():
            return kernel(self.E, *args)
        if self._stop_requested():
            stop[0] = 1  # (no thread watches the request for a search in the main thread: the kernel ends at once)
        real = self._deadline_ns
        now = monotonic_ns()
        if now < 0:  # no monotonic clock here: one call, the deadline read by the watching thread
            return kernel(self.E, *args)
        stats[5] = now + SLICE_NS if real <= 0 else min(real, now + SLICE_NS)
        out = kernel(self.E, *args)
        stats[5] = real
        if not stop[0] or (real > 0 and monotonic_ns() >= real) or self._stop_requested():
            return out
        stop[0] = 0  # only the slice ended
        return self._beside(kernel, args)

    def _beside(self, kernel, args):
        """``kernel(E, *args)`` in a background thread, the main thread waiting for it where
        a Ctrl-C reaches it: then the search is stopped, waited for, and the Ctrl-C raised."""
        stop = self.E[8]
        done: dict = {}

        def run() -> None:
            try:
                done["out"] = kernel(self.E, *args)
            except BaseException as exc:  # noqa: BLE001 - raised again in the main thread
                done["error"] = exc
        finished = run_in_background(run)
        try:
            while not finished.wait(WAIT_SECONDS):
                if self._stop_requested():
                    stop[0] = 1
        except BaseException:
            stop[0] = 1
            finished.wait()
            raise
        if "error" in done:
            raise done["error"]
        return done["out"]

    def store(self, ha, hb, depth: int, budget: int, value: float, floor: float, feature: int, left_budget: int) -> None:
        _store(self.E, np.uint64(ha), np.uint64(hb), int(depth), int(budget), float(value), float(floor), int(feature),
               int(left_budget))

    def tree(self, idx: np.ndarray, depth: int, budget: int):
        """The nested tree of state (idx, depth, budget), read from the table (a
        state whose entry was overwritten is solved again)."""
        budget = min(int(budget), (1 << depth) - 1)
        if depth <= 2:
            feat = np.empty(8, dtype=np.int64)
            cls = np.empty(8, dtype=np.int64)
            _depth_two_tree(self.E, idx, budget, feat, cls)
            return _nested(feat, cls, 1)
        ub, value, f, bl = self.entry(idx, depth, budget)
        if value != value:  # not in the table any more
            self.solve(idx, depth, budget, -np.inf)
            ub, value, f, bl = self.entry(idx, depth, budget)
            if value != value:
                raise RuntimeError("the state's tree was lost")
        if f < 0:
            return int(np.argmax(self.E[3][idx, :int(self.E[7][4])].sum(axis=0)))
        right = self.E[0][f, idx] > 0
        cap = (1 << (depth - 1)) - 1
        return (f, self.tree(idx[~right], depth - 1, min(bl, cap)),
                self.tree(idx[right], depth - 1, min(budget - 1 - bl, cap)))


def table_slots(F: int, depth: int) -> int:
    """Slots for a search of ``depth`` over ``F`` features made in one compiled call (it
    cannot grow its table on the way), the table at most half full: depth 3 keeps 2F
    depth-2 profiles and a top entry per budget; depth 4 at most 2F depth-3 sets (8
    budgets each) and 4F^2 depth-2 ones; deeper ones ``DEEP_TABLE_SLOTS``.  Zeroing 16,384
    slots took a tenth of a millisecond of every small fit, 262,144 a millisecond."""
    if depth <= 3:
        need, cap = 2 * (2 * F + 8), TABLE_SLOTS
    elif depth == 4:
        need, cap = 2 * (4 * F * F + 16 * F + 8), DEEP_TABLE_SLOTS
    else:
        return DEEP_TABLE_SLOTS
    return min(cap, max(MIN_TABLE_SLOTS, 1 << (need - 1).bit_length()))


#: Patterns up to which the patterns' random keys are cut from one draw kept by the process.
KEPT_KEYS = 1 << 20
_keys = np.zeros((0, 2), dtype=np.uint64)


def pattern_keys(P: int) -> np.ndarray:
    """(P, 2) random keys of the patterns (Zobrist hashing of sets), from ``KEY_SEED``: the
    same for every search (row i of a draw does not depend on the draw's length); the first
    million are kept (a generator made for every fit took 0.05 ms of a small one)."""
    global _keys
    if P > KEPT_KEYS:
        return _draw_keys(P)
    if _keys.shape[0] < P:
        _keys = _draw_keys(min(KEPT_KEYS, max(P, 2 * _keys.shape[0], 1024)))
    return _keys[:P]


def _draw_keys(P: int) -> np.ndarray:
    return np.random.default_rng(KEY_SEED).integers(0, np.iinfo(np.uint64).max, (P, 2), dtype=np.uint64, endpoint=True)


def table_layout(X, ones) -> tuple:
    """The arrays of an :class:`Engine` that depend on the features alone (not on the
    gains), shared by every search over the same table: the features by rows
    (``XT``), each pattern's ones (CSR) and the patterns' random keys."""
    P = X.shape[0]
    XT = np.ascontiguousarray((np.asarray(X) > 0.5).T, dtype=np.uint8)
    indptr = np.ascontiguousarray(ones[0], dtype=np.int64)
    indices = np.ascontiguousarray(ones[1], dtype=np.int64)
    return XT, indptr, indices, pattern_keys(P)


def _empty_table(slots: int):
    return (np.zeros((slots, 2), dtype=np.uint64), np.full((slots, 2), -1, dtype=np.int64), np.zeros((slots, 5)))


def _empty_stack(levels: int, P: int, F: int):
    return (np.zeros((levels, max(P, 1)), dtype=np.int64), np.zeros((levels, max(F, 1)), dtype=np.int64),
            np.zeros((levels, 16)), np.zeros((levels, 6), dtype=np.uint64), np.zeros((levels, 16), dtype=np.int64))


def _nested(feat: np.ndarray, cls: np.ndarray, n: int):
    f = int(feat[n])
    if f >= 0:
        return (f, _nested(feat, cls, 2 * n), _nested(feat, cls, 2 * n + 1))
    return int(cls[n])
