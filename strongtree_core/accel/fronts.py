"""Fronts of the groups' counts: the compiled kernels of the exact search that
carries counts in its states (``accel/count_search.py``).

A *state* of a subtree on a set of patterns is the vector of its *atoms'*
counts of rows predicted positive (an atom is a set of rows that every
fairness comparison counts alike: one cohort and one protected group for a
single notion), with the best value of any subtree of that vector.  A front is
the list of such states, one per distinct vector, kept in an open-addressing
table keyed by the vector.

* :func:`_enumerate`: every subtree of depth <= 2 on a set, by counting
  (MurTree's terminal solver with counts instead of values): for each root
  feature ``a``, the sums over the set with ``x_a = 1`` and ``x_b = 1`` for
  every ``b`` give each child's leaves and splits; a child is a leaf (the
  positive class, or its best other class) or a split on ``b`` with one leaf
  positive; a pair of children is kept when its value reaches the thresholds.
* :func:`_merge`: the states of a split, every pair of a left and a right
  state whose value reaches the thresholds, into the parent's table.
* :func:`_reachable`, :func:`_feasible`: whether a vector can still be
  completed into one that meets every comparison, and whether it meets them.
* :func:`_rest_best`: for each state, the best value the rest of the tree can
  add while one cohort's comparisons hold (the rest given as fronts of that
  cohort's counts alone).

The comparisons are those of formulation (11): for groups ``j``, ``m`` of a
cohort with ``N_j``, ``N_m`` rows and ``T_j``, ``T_m`` of them predicted
positive, ``N_m T_j - N_j T_m <= H[j, m]`` with ``H = g floor(delta N_j N_m /
g)``, ``g = gcd(N_j, N_m)``: the row of (11) times ``g``.
"""

from __future__ import annotations

import numpy as np

from strongtree_core.accel.compiled import KernelLibrary
from strongtree_core.accel.treedp import monotonic_ns

#: The compiled kernels of this module.
library = KernelLibrary(__name__)

#: Empty slot of a table.
EMPTY = -1
#: Entries (rows, slots, points) a kernel's pass over a front handles between two looks at the deadline:
#: a pass over a front of millions of states takes a few hundred ms (several times that on a busy machine),
#: longer than the engine waits past the time limit (``engine.routes.EXACT_GRACE``).
STRIDE = 1 << 14


def available() -> bool:
    """True when the compiled kernels can run now (never waits for a compiler)."""
    return library.ready()


@library.kernel("b1(u1[::1], i8)")
def _halted(flag, limit):  # pragma: no cover - compiled
    """True once ``flag`` is raised, or (raising it) once the monotonic clock passes ``limit``
    (nanoseconds, 0: no deadline): the kernels read the clock themselves, as the dynamic
    program's do (``treedp._halted``), so that no other thread has to watch the deadline."""
    if flag[0]:
        return True
    if limit > 0 and monotonic_ns() > limit:
        flag[0] = 1
        return True
    return False


# ---------------------------------------------------------------------------------------------- tables
@library.kernel("u8(i8[::1], u8[::1])")
def _hash(key, mult):  # pragma: no cover - compiled
    h = np.uint64(1469598103934665603)
    for t in range(key.shape[0]):
        h = (h ^ np.uint64(key[t] & 0xFFFFFFFF)) * mult[t]
        h ^= h >> np.uint64(29)
    return h


@library.kernel("Tuple((i8[::1], u8[::1], i4[:, ::1], f8[::1], i8[:, ::1]))(i8[::1], u8[::1], i4[:, ::1], f8[::1], "
                "i8[:, ::1], i8, u1[::1], i8)")
def _grow(slots, hs, keys, obj, back, n, flag, limit):  # pragma: no cover - compiled
    """The table with twice the room, entries kept in place and slots made again.  Once ``flag`` is
    raised (or the clock passes ``limit``) it returns at once, the table unfinished: the caller reads
    the flag and drops the table."""
    cap = slots.shape[0] * 2
    new_slots = np.empty(cap, dtype=np.int64)
    for s in range(cap):
        if s % STRIDE == 0 and _halted(flag, limit):
            break
        new_slots[s] = -1
    room = keys.shape[0] * 2  # entries past ``n`` are written before they are read (``_put``)
    new_hs = np.empty(room, dtype=np.uint64)
    new_keys = np.empty((room, keys.shape[1]), dtype=np.int32)
    new_obj = np.empty(room)
    new_back = np.empty((room, back.shape[1]), dtype=np.int64)
    if flag[0]:
        return new_slots, new_hs, new_keys, new_obj, new_back
    mask = np.uint64(cap - 1)
    for e in range(n):
        if e % STRIDE == 0 and _halted(flag, limit):
            break
        s = np.int64(hs[e] & mask)
        while new_slots[s] >= 0:
            s = (s + 1) & (cap - 1)
        new_slots[s] = e
        new_hs[e] = hs[e]
        new_keys[e] = keys[e]
        new_obj[e] = obj[e]
        new_back[e] = back[e]
    return new_slots, new_hs, new_keys, new_obj, new_back


@library.kernel("i8(i8[::1], u8[::1], i4[:, ::1], f8[::1], i8[:, ::1], i8, i8[::1], u8, f8, i8[::1])")
def _put(slots, hs, keys, obj, back, n, key, h, value, code):  # pragma: no cover - compiled
    """Keep ``value`` for ``key`` if the table has no better one: returns the new number of
    entries (room for one more entry and a slot must be there)."""
    cap = slots.shape[0]
    s = np.int64(h & np.uint64(cap - 1))
    nt = key.shape[0]
    while True:
        e = slots[s]
        if e < 0:
            break
        if hs[e] == h:
            same = True
            for t in range(nt):
                if keys[e, t] != key[t]:
                    same = False
                    break
            if same:
                if value > obj[e]:
                    obj[e] = value
                    for t in range(code.shape[0]):
                        back[e, t] = code[t]
                return n
        s = (s + 1) & (cap - 1)
    slots[s] = n
    hs[n] = h
    for t in range(nt):
        keys[n, t] = key[t]
    obj[n] = value
    for t in range(code.shape[0]):
        back[n, t] = code[t]
    return n + 1


# ---------------------------------------------------------------------------------- subtrees of depth <= 2
@library.kernel("i8[::1](i8[::1], u1[:, ::1], u8[::1])")
def _kept_features(S, XT, z):  # pragma: no cover - compiled
    """The features that split the patterns ``S``, one of each set of features that split them alike
    (the same column on ``S``, or its complement): the first met.  Columns are matched by sums of
    the random keys ``z`` of their patterns, then compared pattern by pattern."""
    F = XT.shape[0]
    n = S.shape[0]
    tot = np.uint64(0)
    for r in range(n):
        tot += z[S[r]]
    sig = np.zeros(F, dtype=np.uint64)
    ones = np.zeros(F, dtype=np.int64)
    keep = np.zeros(F, dtype=np.int64)
    m = 0
    for f in range(F):
        h = np.uint64(0)
        c = 0
        for r in range(n):
            if XT[f, S[r]]:
                h += z[S[r]]
                c += 1
        if c == 0 or c == n:
            continue
        other = tot - h
        if other < h:
            h = other
        dup = False
        for j in range(m):
            g = keep[j]
            if sig[g] != h:
                continue
            same = True
            flip = XT[f, S[0]] != XT[g, S[0]]
            for r in range(n):
                if (XT[f, S[r]] != XT[g, S[r]]) != flip:
                    same = False
                    break
            if same:
                dup = True
                break
        if dup:
            continue
        sig[f] = h
        ones[f] = c
        keep[m] = f
        m += 1
    return keep[:m].copy()


@library.kernel("Tuple((f8[::1], f8[:, :, ::1]))(i8[::1], i8[::1], i8[::1], f8[:, ::1], i8[::1], i8)")
def _pair_sums(S, indptr, indices, W, at, Fk):  # pragma: no cover - compiled
    """Sums of ``W`` over the patterns ``S`` (V,), and over those with ``x_a = x_b = 1`` for every pair
    of kept features, ``MM[a, b]`` (Fk, Fk, V; ``MM[a, a]``: ``x_a = 1``), numbered by ``at``
    (a feature's place among the kept ones, -1 when left out), from each pattern's list of ones."""
    V = W.shape[1]
    T = np.zeros(V)
    MM = np.zeros((Fk, Fk, V))
    for r in range(S.shape[0]):
        i = S[r]
        for q in range(V):
            T[q] += W[i, q]
        for j in range(indptr[i], indptr[i + 1]):
            a = at[indices[j]]
            if a < 0:
                continue
            for k in range(j, indptr[i + 1]):
                b = at[indices[k]]
                if b < 0:
                    continue
                for q in range(V):
                    MM[a, b, q] += W[i, q]
    for a in range(Fk):
        for b in range(a + 1, Fk):
            for q in range(V):
                v = MM[a, b, q] + MM[b, a, q]
                MM[a, b, q] = v
                MM[b, a, q] = v
    return T, MM


@library.kernel("void(f8[::1], i8[::1], i8, i8, f8[::1], f8[:, ::1], f8[::1], i8[::1])")
def _leaves(u, cols, K, pos, wv, out_key, out_val, out_cls):  # pragma: no cover - compiled
    """The two leaves of a set with sums ``u``: positive (its counts of the tracked columns ``cols``),
    and its best other class (no counts): values in ``out_val``, classes in ``out_cls`` (-1: none)."""
    best = -np.inf
    cls = -1
    for k in range(K):
        if k != pos and u[k] > best:
            best = u[k]
            cls = k
    out_val[0] = u[pos]
    out_cls[0] = pos
    out_val[1] = best
    out_cls[1] = cls
    for t in range(cols.shape[0]):
        out_key[0, t] = u[cols[t]]
        out_key[1, t] = 0.0


@library.kernel("f8(f8[::1], f8[:, :, ::1], i8, i8, i8, i8)")
def _child_sum(T, MM, a, b, side, q):  # pragma: no cover - compiled
    """Column ``q`` summed over one child of a split on ``a`` (``side`` 1: ``x_a = 1``), and within it
    over ``x_b = 1`` (``b >= 0``) or all of it (``b = -1``)."""
    if b < 0:
        return MM[a, a, q] if side == 1 else T[q] - MM[a, a, q]
    return MM[a, b, q] if side == 1 else MM[b, b, q] - MM[a, b, q]


@library.kernel("i8(f8[::1], f8[:, :, ::1], i8, i8, b1, i8[::1], i8, i8, i8, f8, f8, f8[::1], f8[:, ::1], f8[::1], "
                "f8[::1], i8[:, ::1])")
def _child_options(T, MM, a, side, splits, cols, cnt, K, pos, pen, min_leaf, wv, okey, oval, opv, ocode):  # pragma: no cover
    """Every subtree of depth <= 1 of one child of a root split on ``a`` (``side`` 1: ``x_a = 1``,
    0: ``x_a = 0``), into ``okey`` (counts of the columns ``cols``), ``oval`` (value), ``opv``
    (priced value) and ``ocode`` (``b, k0, k1``; ``b = -1``: a leaf of class ``k0``); without
    ``splits``, the leaves only.  A leaf holds ``min_leaf`` rows, a split sends at least
    ``max(1, min_leaf)`` each way; one leaf of a split is positive (or both of other classes,
    when they differ).  Returns the number of options."""
    F = MM.shape[0]
    nt = cols.shape[0]
    n = 0
    ccnt = _child_sum(T, MM, a, -1, side, cnt)
    if ccnt >= min_leaf:
        best = -np.inf
        cls = -1
        for k in range(K):
            if k != pos:
                v = _child_sum(T, MM, a, -1, side, k)
                if v > best:
                    best = v
                    cls = k
        v = _child_sum(T, MM, a, -1, side, pos)
        p = v
        for t in range(nt):
            x = _child_sum(T, MM, a, -1, side, cols[t])
            okey[n, t] = x
            p -= wv[t] * x
        oval[n] = v
        opv[n] = p
        ocode[n, 0] = -1
        ocode[n, 1] = pos
        ocode[n, 2] = -1
        n += 1
        if cls >= 0:
            for t in range(nt):
                okey[n, t] = 0.0
            oval[n] = best
            opv[n] = best
            ocode[n, 0] = -1
            ocode[n, 1] = cls
            ocode[n, 2] = -1
            n += 1
    if not splits:
        return n
    need = max(min_leaf, 1.0)
    g1 = np.empty(K)
    g0 = np.empty(K)
    for b in range(F):
        if b == a:
            continue
        c1 = _child_sum(T, MM, a, b, side, cnt)
        if c1 < need or ccnt - c1 < need:
            continue
        for k in range(K):
            g1[k] = _child_sum(T, MM, a, b, side, k)
            g0[k] = _child_sum(T, MM, a, -1, side, k) - g1[k]
        best0 = -np.inf
        best1 = -np.inf
        k0 = -1
        k1 = -1
        for k in range(K):
            if k != pos:
                if g0[k] > best0:
                    best0 = g0[k]
                    k0 = k
                if g1[k] > best1:
                    best1 = g1[k]
                    k1 = k
        if k0 < 0:
            continue
        # positive where x_b = 0
        v = g0[pos] + best1 - pen
        p = v
        for t in range(nt):
            x = _child_sum(T, MM, a, -1, side, cols[t]) - _child_sum(T, MM, a, b, side, cols[t])
            okey[n, t] = x
            p -= wv[t] * x
        oval[n] = v
        opv[n] = p
        ocode[n, 0] = b
        ocode[n, 1] = pos
        ocode[n, 2] = k1
        n += 1
        # positive where x_b = 1
        v = best0 + g1[pos] - pen
        p = v
        for t in range(nt):
            x = _child_sum(T, MM, a, b, side, cols[t])
            okey[n, t] = x
            p -= wv[t] * x
        oval[n] = v
        opv[n] = p
        ocode[n, 0] = b
        ocode[n, 1] = k0
        ocode[n, 2] = pos
        n += 1
        if k0 != k1:  # two other classes
            v = best0 + best1 - pen
            for t in range(nt):
                okey[n, t] = 0.0
            oval[n] = v
            opv[n] = v
            ocode[n, 0] = b
            ocode[n, 1] = k0
            ocode[n, 2] = k1
            n += 1
    return n


@library.kernel("i8(f8[:, ::1], f8[::1], f8[::1], i8[:, ::1], i8, i8, i8, f8, f8, f8, f8, f8, i8[::1], i8[::1], i8, "
                "u8[::1], i8[::1], u8[::1], f8[:, ::1], f8[::1], f8[::1], i8[:, ::1])")
def _project(okey, oval, opv, ocode, n, c0, c1, top, toppv, pen, t0, tv, slots, stamp, gen, mult, key, hs, pkey, pval,
             ppv, pcode):  # pragma: no cover - compiled
    """The first ``n`` options with the columns ``c0 .. c1 - 1`` of their counts, those that can still
    reach ``t0`` (and ``tv``) with the best option of the other child (``top``, ``toppv``), the best
    per vector kept, into ``pkey`` .. ``pcode``; returns how many.  ``slots`` is a table whose
    entries count only where ``stamp`` equals ``gen`` (no clearing between calls)."""
    nt = c1 - c0
    cap = slots.shape[0]
    m = 0
    eps = 1e-9 * max(1.0, abs(t0))
    epsv = 1e-9 * max(1.0, abs(tv))
    for x in range(n):
        if oval[x] + top - pen < t0 - eps or opv[x] + toppv - pen < tv - epsv:
            continue
        for t in range(nt):
            key[t] = np.int64(round(okey[x, c0 + t]))
        h = _hash(key[:nt], mult)
        s = np.int64(h & np.uint64(cap - 1))
        found = -1
        while stamp[s] == gen:
            e = slots[s]
            if hs[e] == h:
                same = True
                for t in range(nt):
                    if np.int64(round(pkey[e, t])) != key[t]:
                        same = False
                        break
                if same:
                    found = e
                    break
            s = (s + 1) & (cap - 1)
        if found >= 0:
            if oval[x] > pval[found]:
                pval[found] = oval[x]
                ppv[found] = opv[x]
                pcode[found, :] = ocode[x]
            continue
        for t in range(nt):
            pkey[m, t] = key[t]
        pval[m] = oval[x]
        ppv[m] = opv[x]
        pcode[m, :] = ocode[x]
        stamp[s] = gen
        slots[s] = m
        hs[m] = h
        m += 1
    return m


@library.kernel("Tuple((i4[:, ::1], f8[::1], i8[:, ::1], i8[::1], b1))(f8[::1], f8[:, :, ::1], i8[::1], i8[::1], i8[::1], "
                "i8, i8, i8, f8, f8, f8, f8, f8[::1], i8, u8[::1], u1[::1], i8)")
def _enumerate(T, MM, feats, cols, cset, cnt, K, pos, pen, min_leaf, t0, tv, wv, depth, mult, flag, limit):  # pragma: no cover
    """Every subtree of depth <= ``depth`` (0, 1 or 2) on a set whose value reaches ``t0`` and priced
    value reaches ``tv``, one per vector of counts (the best), for each of several sets of tracked
    columns at once: set ``s`` is ``cols[cset[s]:cset[s + 1]]``.

    ``T`` and ``MM`` are the set's sums (:func:`_pair_sums`) of each pattern's gains per class (the
    first ``K`` columns), its rows per atom when predicted positive and its rows (column ``cnt``),
    over the kept features ``feats``; ``wv`` the price of each column of ``cols``.  Returns the
    counts (set ``s``'s in its first columns), values and codes ``(a, lb, lk0, lk1, rb, rk0, rk1)``
    (``a = -1``: a leaf of class ``lk0``; a child with ``b = -1``: a leaf of class ``k0``), the
    states of set ``s`` from ``start[s]`` on, and False if ``flag`` was raised (or the clock passed
    ``limit``) on the way.
    """
    F = MM.shape[0]
    ncols = cols.shape[0]
    nsets = cset.shape[0] - 1
    width = 1
    for q in range(nsets):
        width = max(width, cset[q + 1] - cset[q])
    need = max(min_leaf, 1.0)
    cap = 1024
    slots = np.full(cap, -1, dtype=np.int64)
    hs = np.zeros(cap // 2, dtype=np.uint64)
    keys = np.zeros((cap // 2, width + 1), dtype=np.int32)
    obj = np.zeros(cap // 2)
    back = np.zeros((cap // 2, 7), dtype=np.int64)
    n = 0
    key = np.zeros(width + 1, dtype=np.int64)
    code = np.full(7, -1, dtype=np.int64)
    eps = 1e-9 * max(1.0, abs(t0))
    epsv = 1e-9 * max(1.0, abs(tv))
    # the set as a leaf
    if T[cnt] >= min_leaf:
        lk = np.zeros((2, ncols))
        lv = np.zeros(2)
        lc = np.zeros(2, dtype=np.int64)
        _leaves(T, cols, K, pos, wv, lk, lv, lc)
        for j in range(2):
            if lc[j] < 0 or lv[j] < t0 - eps:
                continue
            p = lv[j]
            for t in range(ncols):
                p -= wv[t] * lk[j, t]
            if p < tv - epsv:
                continue
            for q in range(nsets):
                key[:] = 0
                key[0] = q
                for t in range(cset[q + 1] - cset[q]):
                    key[1 + t] = np.int64(round(lk[j, cset[q] + t]))
                code[:] = -1
                code[2] = lc[j]
                if n + 1 >= hs.shape[0] or 2 * (n + 1) > slots.shape[0]:
                    slots, hs, keys, obj, back = _grow(slots, hs, keys, obj, back, n, flag, limit)
                    if flag[0]:
                        return keys[:0].copy(), obj[:0].copy(), back[:0].copy(), np.zeros(nsets + 1, dtype=np.int64), False
                n = _put(slots, hs, keys, obj, back, n, key, _hash(key, mult), lv[j], code)
    if depth > 0:
        n_opt = 2 + 3 * F
        okl = np.zeros((n_opt, ncols))
        ovl = np.zeros(n_opt)
        opl = np.zeros(n_opt)
        ocl = np.zeros((n_opt, 3), dtype=np.int64)
        okr = np.zeros((n_opt, ncols))
        ovr = np.zeros(n_opt)
        opr = np.zeros(n_opt)
        ocr = np.zeros((n_opt, 3), dtype=np.int64)
        lkey = np.zeros((n_opt, width))
        lval = np.zeros(n_opt)
        lpv = np.zeros(n_opt)
        lcode = np.zeros((n_opt, 3), dtype=np.int64)
        rkey = np.zeros((n_opt, width))
        rval = np.zeros(n_opt)
        rpv = np.zeros(n_opt)
        rcode = np.zeros((n_opt, 3), dtype=np.int64)
        room = 1
        while room < 4 * n_opt:
            room *= 2
        dslots = np.zeros(room, dtype=np.int64)
        stamp = np.zeros(room, dtype=np.int64)
        gen = 0
        dhs = np.zeros(n_opt, dtype=np.uint64)
        scratch = np.zeros(width + 1, dtype=np.int64)
        for a in range(F):
            if T[cnt] - MM[a, a, cnt] < need or MM[a, a, cnt] < need:
                continue
            if _halted(flag, limit):
                return keys[:0].copy(), obj[:0].copy(), back[:0].copy(), np.zeros(nsets + 1, dtype=np.int64), False
            nl = _child_options(T, MM, a, 0, depth >= 2, cols, cnt, K, pos, pen, min_leaf, wv, okl, ovl, opl, ocl)
            nr = _child_options(T, MM, a, 1, depth >= 2, cols, cnt, K, pos, pen, min_leaf, wv, okr, ovr, opr, ocr)
            if nl == 0 or nr == 0:
                continue
            topl = ovl[:nl].max()
            topr = ovr[:nr].max()
            toplp = opl[:nl].max()
            toprp = opr[:nr].max()
            for q in range(nsets):
                c0, c1 = cset[q], cset[q + 1]
                gen += 1
                ml = _project(okl, ovl, opl, ocl, nl, c0, c1, topr, toprp, pen, t0, tv, dslots, stamp, gen, mult,
                              scratch, dhs, lkey, lval, lpv, lcode)
                gen += 1
                mr = _project(okr, ovr, opr, ocr, nr, c0, c1, topl, toplp, pen, t0, tv, dslots, stamp, gen, mult,
                              scratch, dhs, rkey, rval, rpv, rcode)
                if ml == 0 or mr == 0:
                    continue
                order = np.argsort(-rval[:mr])
                nt = c1 - c0
                for x in range(ml):
                    floor = t0 + pen - lval[x] - eps
                    for yy in range(mr):
                        y = order[yy]
                        if rval[y] < floor:
                            break
                        if lcode[x, 0] < 0 and rcode[y, 0] < 0 and lcode[x, 1] == rcode[y, 1]:
                            continue  # two leaves of one class: the set as that leaf is better
                        if lpv[x] + rpv[y] - pen < tv - epsv:
                            continue
                        key[:] = 0
                        key[0] = q
                        for t in range(nt):
                            key[1 + t] = np.int64(round(lkey[x, t] + rkey[y, t]))
                        if n + 1 >= hs.shape[0] or 2 * (n + 1) > slots.shape[0]:
                            slots, hs, keys, obj, back = _grow(slots, hs, keys, obj, back, n, flag, limit)
                            if flag[0]:
                                return keys[:0].copy(), obj[:0].copy(), back[:0].copy(), np.zeros(nsets + 1, dtype=np.int64), False
                        code[0] = feats[a]
                        code[1] = feats[lcode[x, 0]] if lcode[x, 0] >= 0 else -1
                        code[2] = lcode[x, 1]
                        code[3] = lcode[x, 2]
                        code[4] = feats[rcode[y, 0]] if rcode[y, 0] >= 0 else -1
                        code[5] = rcode[y, 1]
                        code[6] = rcode[y, 2]
                        n = _put(slots, hs, keys, obj, back, n, key, _hash(key, mult), lval[x] + rval[y] - pen, code)
    # group the states by set
    counts = np.zeros(nsets + 1, dtype=np.int64)
    for e in range(n):
        counts[keys[e, 0] + 1] += 1
    start = np.cumsum(counts)
    fill = start[:nsets].copy()
    out_keys = np.empty((n, width), dtype=np.int32)
    out_obj = np.empty(n)
    out_back = np.empty((n, 7), dtype=np.int64)
    for e in range(n):
        if e % STRIDE == 0 and _halted(flag, limit):
            return keys[:0].copy(), obj[:0].copy(), back[:0].copy(), np.zeros(nsets + 1, dtype=np.int64), False
        q = keys[e, 0]
        d = fill[q]
        fill[q] += 1
        out_keys[d, :] = keys[e, 1:]
        out_obj[d] = obj[e]
        out_back[d, :] = back[e]
    return out_keys, out_obj, out_back, start, True


# ------------------------------------------------------------------------------------------------ merges
@library.kernel("Tuple((i8[::1], u8[::1], i4[:, ::1], f8[::1], i8[:, ::1], i8, b1))(i4[:, ::1], f8[::1], f8[::1], "
                "i4[:, ::1], f8[::1], f8[::1], i8[::1], f8, f8, f8, i8, i8[::1], u8[::1], i4[:, ::1], f8[::1], "
                "i8[:, ::1], i8, u8[::1], u1[::1], i8)")
def _merge(Ak, Ao, Apv, Bk, Bo, Bpv, Border, pen, t0, tv, g, slots, hs, keys, obj, back, n, mult, flag, limit):  # pragma: no cover
    """Every pair of a left state (``A``) and a right state (``B``, ``Border``: by value, best first)
    of a split on ``g`` whose value ``Ao + Bo - pen`` reaches ``t0`` and priced value ``tv``, into
    the table (``back``: ``g``, the left and the right state).  Returns the table, its number of
    entries and False if ``flag`` was raised (or the clock passed ``limit``) on the way."""
    nt = Ak.shape[1]
    key = np.zeros(nt, dtype=np.int64)
    code = np.zeros(3, dtype=np.int64)
    code[0] = g
    eps = 1e-9 * max(1.0, abs(t0))
    epsv = 1e-9 * max(1.0, abs(tv))
    work = 0
    for x in range(Ak.shape[0]):
        if x % 256 == 0 and _halted(flag, limit):
            return slots, hs, keys, obj, back, n, False
        floor = t0 + pen - Ao[x] - eps
        for yy in range(Border.shape[0]):
            y = Border[yy]
            if Bo[y] < floor:
                break
            work += 1
            if work % 8192 == 0 and _halted(flag, limit):
                return slots, hs, keys, obj, back, n, False
            if Apv[x] + Bpv[y] - pen < tv - epsv:
                continue
            for t in range(nt):
                key[t] = Ak[x, t] + Bk[y, t]
            if n + 1 >= hs.shape[0] or 2 * (n + 1) > slots.shape[0]:
                slots, hs, keys, obj, back = _grow(slots, hs, keys, obj, back, n, flag, limit)
                if flag[0]:
                    return slots, hs, keys, obj, back, n, False
            code[1] = x
            code[2] = y
            n = _put(slots, hs, keys, obj, back, n, key, _hash(key, mult), Ao[x] + Bo[y] - pen, code)
    return slots, hs, keys, obj, back, n, True


# ------------------------------------------------------------------------------------------- comparisons
@library.kernel("i8[:, ::1](i4[:, ::1], i8[::1], i8[::1], u1[::1], i8)")
def _group_totals(keys, ga_start, ga_atoms, flag, limit):  # pragma: no cover - compiled
    """Rows predicted positive per group of each cohort, from the atoms' counts: (m, groups).  Once
    ``flag`` is raised (or the clock passes ``limit``) it returns at once, the rows not reached left
    unwritten: the caller reads the flag."""
    m = keys.shape[0]
    ng = ga_start.shape[0] - 1
    out = np.empty((m, ng), dtype=np.int64)  # not zeroed: 0.08 s for 3.2 million states of 14 groups
    for x in range(m):
        if x % STRIDE == 0 and _halted(flag, limit):
            break
        for j in range(ng):
            s = 0
            for p in range(ga_start[j], ga_start[j + 1]):
                s += keys[x, ga_atoms[p]]
            out[x, j] = s
    return out


@library.kernel("b1(i8[::1], i8, i8[::1], i8[::1], i8[::1], i8[::1])")
def _cohort_holds(T, c, cg_start, gN, H, ch_start):  # pragma: no cover - compiled
    """Every comparison of cohort ``c`` holds at the groups' totals ``T``."""
    g0 = cg_start[c]
    k = cg_start[c + 1] - g0
    base = ch_start[c]
    for j in range(k):
        for m in range(k):
            if j != m and gN[g0 + m] * T[g0 + j] - gN[g0 + j] * T[g0 + m] > H[base + j * k + m]:
                return False
    return True


@library.kernel("b1[::1](i8[:, ::1], i8[::1], i8[::1], i8[::1], i8[::1])")
def _feasible(GT, cg_start, gN, H, ch_start):  # pragma: no cover - compiled
    """Whether each row of groups' totals meets every comparison."""
    m = GT.shape[0]
    out = np.ones(m, dtype=np.bool_)
    for x in range(m):
        for c in range(cg_start.shape[0] - 1):
            if not _cohort_holds(GT[x], c, cg_start, gN, H, ch_start):
                out[x] = False
                break
    return out


@library.kernel("b1(i8[::1], i8[::1], i8, i8[::1], i8[::1], i8[::1], i8[::1])")
def _cohort_reachable(s, r, c, cg_start, gN, H, ch_start):  # pragma: no cover - compiled
    """Whether totals ``T`` with ``s <= T <= s + r`` meeting cohort ``c``'s comparisons exist.

    The group ``m`` of the smallest rate is tried in turn with each of its totals; then every other
    group needs a total whose rate is at least ``m``'s and at most ``delta`` above it (the rows of
    (11) with ``m``), and all of them then differ by at most ``delta`` pairwise."""
    g0 = cg_start[c]
    k = cg_start[c + 1] - g0
    base = ch_start[c]
    if k <= 1:
        return True
    if k == 2:
        # loop over the group with the smaller box; the other's interval from both rows
        a, b = g0, g0 + 1
        if r[a] > r[b]:
            a, b = b, a
        ja, jb = a - g0, b - g0
        Na, Nb = gN[a], gN[b]
        h_ba = H[base + jb * k + ja]  # Na T_b - Nb T_a <= h_ba
        h_ab = H[base + ja * k + jb]  # Nb T_a - Na T_b <= h_ab
        for Ta in range(s[a], s[a] + r[a] + 1):
            lo = -((-(Nb * Ta - h_ab)) // Na)
            hi = (h_ba + Nb * Ta) // Na
            if lo < s[b]:
                lo = s[b]
            if hi > s[b] + r[b]:
                hi = s[b] + r[b]
            if lo <= hi:
                return True
        return False
    for mm in range(k):
        m = g0 + mm
        Nm = gN[m]
        for Tm in range(s[m], s[m] + r[m] + 1):
            ok = True
            for jj in range(k):
                if jj == mm:
                    continue
                j = g0 + jj
                lo = -((-(gN[j] * Tm)) // Nm)
                hi = (H[base + jj * k + mm] + gN[j] * Tm) // Nm
                if lo < s[j]:
                    lo = s[j]
                if hi > s[j] + r[j]:
                    hi = s[j] + r[j]
                if lo > hi:
                    ok = False
                    break
            if ok:
                return True
    return False


@library.kernel("b1[::1](i8[:, ::1], i8[::1], i8[::1], i8[::1], i8[::1], i8[::1], u1[::1], i8)")
def _reachable(GT, rest, cg_start, gN, H, ch_start, flag, limit):  # pragma: no cover - compiled
    """Whether each row of groups' totals can still be completed, the rest adding between 0 and
    ``rest`` rows to each group, into totals that meet every comparison.  Once ``flag`` is raised
    (or the clock passes ``limit``) the rows not looked at yet stay True (kept: never a wrong
    removal) and the flag stays raised for the caller to read."""
    m = GT.shape[0]
    out = np.ones(m, dtype=np.bool_)
    for x in range(m):
        if x % 64 == 0 and _halted(flag, limit):
            break
        for c in range(cg_start.shape[0] - 1):
            if not _cohort_reachable(GT[x], rest, c, cg_start, gN, H, ch_start):
                out[x] = False
                break
    return out


#: States in a leaf of the index of right states (``_kd_build``).
KD_LEAF = 16


@library.kernel("i8[:, ::1](i4[:, ::1], i8[::1], i8[::1], i8[::1], i8[::1], u1[::1], i8)")
def _pair_forms(keys, ga_start, ga_atoms, cg_start, gN, flag, limit):  # pragma: no cover - compiled
    """For each state and each pair ``j < m`` of groups of a cohort (cohort by cohort, pairs in
    order), ``N_m T_j - N_j T_m`` (``T``: the state's rows predicted positive per group).  The forms
    add up over the parts of a tree, and every comparison holds for a tree iff each form of its
    totals lies in :func:`_pair_box`.  Once ``flag`` is raised (or the clock passes ``limit``) it
    returns at once, the rows not reached left unwritten: the caller reads the flag."""
    m = keys.shape[0]
    ng = ga_start.shape[0] - 1
    nd = 0
    for c in range(cg_start.shape[0] - 1):
        k = cg_start[c + 1] - cg_start[c]
        nd += k * (k - 1) // 2
    out = np.empty((m, nd), dtype=np.int64)
    T = np.zeros(ng, dtype=np.int64)
    for x in range(m):
        if x % STRIDE == 0 and _halted(flag, limit):
            break
        for j in range(ng):
            s = 0
            for p in range(ga_start[j], ga_start[j + 1]):
                s += keys[x, ga_atoms[p]]
            T[j] = s
        d = 0
        for c in range(cg_start.shape[0] - 1):
            g0 = cg_start[c]
            k = cg_start[c + 1] - g0
            for jj in range(k):
                for mm in range(jj + 1, k):
                    out[x, d] = gN[g0 + mm] * T[g0 + jj] - gN[g0 + jj] * T[g0 + mm]
                    d += 1
    return out


@library.kernel("Tuple((i8[::1], i8[::1]))(i8[::1], i8[::1], i8[::1])")
def _pair_box(cg_start, H, ch_start):  # pragma: no cover - compiled
    """The range of each form of :func:`_pair_forms` where the comparisons hold: for groups ``j < m``,
    ``N_m T_j - N_j T_m <= H[j, m]`` and ``N_j T_m - N_m T_j <= H[m, j]``."""
    nd = 0
    for c in range(cg_start.shape[0] - 1):
        k = cg_start[c + 1] - cg_start[c]
        nd += k * (k - 1) // 2
    lo = np.zeros(nd, dtype=np.int64)
    hi = np.zeros(nd, dtype=np.int64)
    d = 0
    for c in range(cg_start.shape[0] - 1):
        k = cg_start[c + 1] - cg_start[c]
        base = ch_start[c]
        for jj in range(k):
            for mm in range(jj + 1, k):
                lo[d] = -H[base + mm * k + jj]
                hi[d] = H[base + jj * k + mm]
                d += 1
    return lo, hi


@library.kernel("Tuple((i8[::1], i8[:, ::1], f8[::1], i8[:, ::1], i8[:, ::1], i8[:, ::1], f8[::1]))(i8[:, ::1], "
                "f8[::1], u1[::1], i8)")
def _kd_build(D, vals, flag, limit):  # pragma: no cover - compiled
    """An index of the points ``D`` (a k-d tree): ``P``, ``V`` are the points and their values
    reordered so that each node holds ``P[start:end]`` (``perm``: their numbers in ``D``);
    ``info[node]`` is ``(start, end, left, right, best)`` (children -1 at a leaf, ``best`` the place
    of its largest value), ``lo``/``hi`` the node's box (the smallest holding its points), ``top`` its
    largest value.  A node is halved at the median of its widest side; the boxes are measured, so the
    answers hold whatever the halving.  Once ``flag`` is raised (or the clock passes ``limit``) it
    returns at once (every :data:`STRIDE` points it handles), the index unfinished: the caller reads
    the flag."""
    n = D.shape[0]
    nd = D.shape[1]
    perm = np.arange(n)
    P = np.empty((n, nd), dtype=np.int64)
    V = np.empty(n)
    for i in range(n):
        if i % STRIDE == 0 and _halted(flag, limit):
            break
        P[i] = D[i]
        V[i] = vals[i]
    cap = 1
    while cap < 2 * (n // KD_LEAF + 1):
        cap *= 2
    cap = 2 * cap + 1
    # a node's row, box and top are written when it is made and handled (not filled ahead: at 3 million
    # points that alone took tens of ms)
    info = np.empty((cap, 5), dtype=np.int64)
    lo = np.empty((cap, nd), dtype=np.int64)
    hi = np.empty((cap, nd), dtype=np.int64)
    top = np.empty(cap)
    if n == 0 or flag[0]:
        return perm, P, V, info[:0].copy(), lo[:0].copy(), hi[:0].copy(), top[:0].copy()
    stack = np.zeros(256, dtype=np.int64)
    info[0, 0] = 0
    info[0, 1] = n
    info[0, 2] = -1
    info[0, 3] = -1
    made = 1
    sp = 0
    stack[sp] = 0
    sp += 1
    while sp > 0:
        sp -= 1
        node = stack[sp]
        s = info[node, 0]
        e = info[node, 1]
        if e - s > 4096 and _halted(flag, limit):
            break
        for d in range(nd):
            lo[node, d] = P[s, d]
            hi[node, d] = P[s, d]
        top[node] = V[s]
        info[node, 4] = s
        stopped = False
        for i in range(s + 1, e):
            if (i - s) % STRIDE == 0 and _halted(flag, limit):
                stopped = True
                break
            for d in range(nd):
                v = P[i, d]
                if v < lo[node, d]:
                    lo[node, d] = v
                if v > hi[node, d]:
                    hi[node, d] = v
            if V[i] > top[node]:
                top[node] = V[i]
                info[node, 4] = i
        if stopped:
            break
        if e - s <= KD_LEAF:
            continue
        dim = -1
        wide = 0
        for d in range(nd):
            if hi[node, d] - lo[node, d] > wide:
                wide = hi[node, d] - lo[node, d]
                dim = d
        if dim < 0:
            continue  # every point alike: a leaf
        # the median of the widest side in its place (Hoare's selection), the points moved with it
        kth = (s + e) // 2
        a = s
        b = e - 1
        work = 0
        while a < b and not stopped:
            pivot = P[(a + b) // 2, dim]
            i = a
            j = b
            while i <= j:
                work += 1
                if work % STRIDE == 0 and _halted(flag, limit):
                    stopped = True
                    break
                while P[i, dim] < pivot:
                    i += 1
                while P[j, dim] > pivot:
                    j -= 1
                if i <= j:
                    for d in range(nd):
                        t = P[i, d]
                        P[i, d] = P[j, d]
                        P[j, d] = t
                    tv = V[i]
                    V[i] = V[j]
                    V[j] = tv
                    t = perm[i]
                    perm[i] = perm[j]
                    perm[j] = t
                    i += 1
                    j -= 1
            if kth <= j:
                b = j
            elif kth >= i:
                a = i
            else:
                break
        if stopped:
            break
        left = made
        right = made + 1
        made += 2
        info[node, 2] = left
        info[node, 3] = right
        info[left, 0] = s
        info[left, 1] = kth
        info[right, 0] = kth
        info[right, 1] = e
        for c in (left, right):
            info[c, 2] = -1
            info[c, 3] = -1
        stack[sp] = left
        stack[sp + 1] = right
        sp += 2
    return perm, P, V, info[:made].copy(), lo[:made].copy(), hi[:made].copy(), top[:made].copy()


@library.kernel("i8(i8[:, ::1], f8[::1], i8[:, ::1], i8[:, ::1], i8[:, ::1], f8[::1], i8[::1], i8[::1], f8, f8, "
                "i8[::1], u1[::1], i8)")
def _kd_best(P, V, info, lo, hi, top, qlo, qhi, base, floor, stack, flag, limit):  # pragma: no cover
    """The place in the index (:func:`_kd_build`) of the point inside the box ``qlo <= P <= qhi`` of
    the largest ``base + V`` above ``floor``: -1 when there is none, -2 when ``flag`` was raised (or
    the clock passed ``limit``) on the way."""
    nd = P.shape[1]
    if info.shape[0] == 0:
        return -1
    best = floor
    found = -1
    sp = 0
    stack[sp] = 0
    sp += 1
    work = 0
    while sp > 0:
        sp -= 1
        node = stack[sp]
        if base + top[node] <= best:
            continue
        inside = True
        out = False
        for d in range(nd):
            if hi[node, d] < qlo[d] or lo[node, d] > qhi[d]:
                out = True
                break
            if lo[node, d] < qlo[d] or hi[node, d] > qhi[d]:
                inside = False
        if out:
            continue
        work += 1
        if work % 4096 == 0 and _halted(flag, limit):
            return -2
        if inside:
            best = base + top[node]
            found = info[node, 4]
            continue
        left = info[node, 2]
        if left < 0:
            for i in range(info[node, 0], info[node, 1]):
                v = base + V[i]
                if v <= best:
                    continue
                ok = True
                for d in range(nd):
                    if P[i, d] < qlo[d] or P[i, d] > qhi[d]:
                        ok = False
                        break
                if ok:
                    best = v
                    found = i
            continue
        right = info[node, 3]
        # the child of the larger value last: looked at first
        if top[left] > top[right]:
            left, right = right, left
        stack[sp] = left
        stack[sp + 1] = right
        sp += 2
    return found


@library.kernel("Tuple((f8, i8, i8, b1))(i4[:, ::1], f8[::1], i8[::1], i4[:, ::1], f8[::1], f8, f8, "
                "i8[::1], i8[::1], i8[::1], i8[::1], i8[::1], i8[::1], u1[::1], i8)")
def _pair_best(Ak, Ao, Aorder, Bk, Bo, pen, floor, ga_start, ga_atoms, cg_start, gN, H, ch_start, flag,
               limit):  # pragma: no cover
    """The best pair of a left and a right state (the left ones by value, best first) whose counts
    together meet every comparison and whose value ``Ao + Bo - pen`` exceeds ``floor``: (value,
    left, right, finished); (-inf, -1, -1, ...) when there is none.

    The comparisons of a pair hold iff the sum of its states' forms (:func:`_pair_forms`) lies in
    :func:`_pair_box`: for a left state, the right states whose forms lie in the box less its own,
    the best of them found in an index of the right states (:func:`_kd_best`)."""
    DA = _pair_forms(Ak, ga_start, ga_atoms, cg_start, gN, flag, limit)
    DB = _pair_forms(Bk, ga_start, ga_atoms, cg_start, gN, flag, limit)
    blo, bhi = _pair_box(cg_start, H, ch_start)
    nd = blo.shape[0]
    best = floor
    ba, bb = -1, -1
    if _halted(flag, limit):
        return -np.inf, ba, bb, False
    perm, P, V, info, lo, hi, top = _kd_build(DB, Bo, flag, limit)
    if _halted(flag, limit):
        return -np.inf, ba, bb, False
    if Bo.shape[0] == 0:
        return -np.inf, ba, bb, True
    stack = np.zeros(256, dtype=np.int64)
    qlo = np.zeros(nd, dtype=np.int64)
    qhi = np.zeros(nd, dtype=np.int64)
    for xx in range(Aorder.shape[0]):
        if xx % 64 == 0 and _halted(flag, limit):
            return (best if ba >= 0 else -np.inf), ba, bb, False
        x = Aorder[xx]
        if Ao[x] + top[0] - pen <= best:
            break
        for d in range(nd):
            qlo[d] = blo[d] - DA[x, d]
            qhi[d] = bhi[d] - DA[x, d]
        i = _kd_best(P, V, info, lo, hi, top, qlo, qhi, Ao[x] - pen, best, stack, flag, limit)
        if i == -2:
            return (best if ba >= 0 else -np.inf), ba, bb, False
        if i >= 0:
            best, ba, bb = Ao[x] + Bo[perm[i]] - pen, x, perm[i]
    return (best if ba >= 0 else -np.inf), ba, bb, True


# ------------------------------------------------------------------------------ one cohort against the rest
@library.kernel("f8[::1](i8[:, ::1], i8[:, ::1], f8[::1], i8[:, ::1], f8[::1], i8[::1], i8[::1], i8[::1], i8[::1], "
                "i8, u8[::1], u1[::1], i8)")
def _rest_best(U, Ik, Iv, Ok, Ov, cg_start, gN, H, ch_start, c, mult, flag, limit):  # pragma: no cover - compiled
    """For each row of ``U`` (a state's totals of cohort ``c``'s groups), the best ``Iv[i] + Ov[o]``
    over an inner state ``i`` and an outer state ``o`` (each sorted by value, best first) whose
    totals with it meet cohort ``c``'s comparisons; ``-inf`` when none does.  The outer states'
    best for a total ``U + Ik[i]`` is looked up once.  Once ``flag`` is raised (or the clock passes
    ``limit``) the rows not finished stay ``+inf`` (no bound: never a wrong removal) and the flag
    stays raised for the caller to read."""
    m = U.shape[0]
    k = U.shape[1]
    out = np.full(m, -np.inf)
    if Ik.shape[0] == 0 or Ok.shape[0] == 0:
        return out
    cap = 1024
    slots = np.full(cap, -1, dtype=np.int64)
    hs = np.zeros(cap // 2, dtype=np.uint64)
    keys = np.zeros((cap // 2, k), dtype=np.int32)
    vals = np.zeros(cap // 2)
    back = np.zeros((cap // 2, 1), dtype=np.int64)
    n = 0
    u = np.zeros(k, dtype=np.int64)
    T = np.zeros(gN.shape[0], dtype=np.int64)
    g0 = cg_start[c]
    code = np.zeros(1, dtype=np.int64)
    top = Ov[0]
    for x in range(m):
        if _halted(flag, limit):
            out[x:] = np.inf
            return out
        best = -np.inf
        for i in range(Ik.shape[0]):
            if Iv[i] + top <= best:
                break
            if i % 64 == 63 and _halted(flag, limit):
                out[x:] = np.inf
                return out
            for t in range(k):
                u[t] = U[x, t] + Ik[i, t]
            h = _hash(u, mult)
            # the outer states' best for u, from the table or by a scan
            s = np.int64(h & np.uint64(slots.shape[0] - 1))
            found = -1
            while slots[s] >= 0:
                e = slots[s]
                if hs[e] == h:
                    same = True
                    for t in range(k):
                        if keys[e, t] != u[t]:
                            same = False
                            break
                    if same:
                        found = e
                        break
                s = (s + 1) & (slots.shape[0] - 1)
            if found >= 0:
                ov = vals[found]
            else:
                ov = -np.inf
                for o in range(Ok.shape[0]):
                    if o % 4096 == 4095 and _halted(flag, limit):
                        out[x:] = np.inf
                        return out
                    for t in range(k):
                        T[g0 + t] = u[t] + Ok[o, t]
                    if _cohort_holds(T, c, cg_start, gN, H, ch_start):
                        ov = Ov[o]
                        break
                if n + 1 >= hs.shape[0] or 2 * (n + 1) > slots.shape[0]:
                    slots, hs, keys, vals, back = _grow(slots, hs, keys, vals, back, n, flag, limit)
                    if flag[0]:
                        out[x:] = np.inf
                        return out
                n = _put(slots, hs, keys, vals, back, n, u, h, ov, code)
            if Iv[i] + ov > best:
                best = Iv[i] + ov
        out[x] = best
    return out


# -------------------------------------------------------------------------------------------------- rows
@library.kernel("Tuple((i8[::1], i8[::1], f8[::1]))(i8[:, ::1], f8[::1], u8[::1], u1[::1], i8)")
def _distinct_rows(R, vals, mult, flag, limit):  # pragma: no cover - compiled
    """The distinct rows of ``R``: the first row of each (in the order met), each row's distinct row,
    and the best of ``vals`` over each distinct row's copies.  Once ``flag`` is raised (or the clock
    passes ``limit``) it returns at once, unfinished: the caller reads the flag."""
    m = R.shape[0]
    k = R.shape[1]
    cap = 16
    while cap < 2 * m + 2:
        cap *= 2
    slots = np.empty(cap, dtype=np.int64)
    for s in range(cap):
        if s % STRIDE == 0 and _halted(flag, limit):
            break
        slots[s] = -1
    hs = np.empty(m, dtype=np.uint64)  # entry ``e`` is written when it is made, before it is read
    first = np.empty(m, dtype=np.int64)
    best = np.empty(m)
    inverse = np.empty(m, dtype=np.int64)
    n = 0
    for x in range(m):
        if x % STRIDE == 0 and _halted(flag, limit):
            break
        h = _hash(R[x], mult)
        s = np.int64(h & np.uint64(cap - 1))
        found = -1
        while slots[s] >= 0:
            e = slots[s]
            if hs[e] == h:
                same = True
                for t in range(k):
                    if R[first[e], t] != R[x, t]:
                        same = False
                        break
                if same:
                    found = e
                    break
            s = (s + 1) & (cap - 1)
        if found < 0:
            slots[s] = n
            hs[n] = h
            first[n] = x
            best[n] = vals[x]
            found = n
            n += 1
        elif vals[x] > best[found]:
            best[found] = vals[x]
        inverse[x] = found
    return first[:n].copy(), inverse, best[:n].copy()


@library.kernel("Tuple((i8[::1], u8[::1], i4[:, ::1], f8[::1], i8[:, ::1], i8, b1))(i4[:, ::1], f8[::1], "
                "i8[:, ::1], i8[::1], u8[::1], i4[:, ::1], f8[::1], i8[:, ::1], i8, u8[::1], u1[::1], i8)")
def _put_all(keys_in, obj_in, back_in, slots, hs, keys, obj, back, n, mult, flag, limit):  # pragma: no cover - compiled
    """Every given state into the table (the better value per vector); the table, its number of entries
    and False if ``flag`` was raised (or the clock passed ``limit``) on the way."""
    nt = keys_in.shape[1]
    key = np.zeros(nt, dtype=np.int64)
    for x in range(keys_in.shape[0]):
        if x % STRIDE == 0 and _halted(flag, limit):
            return slots, hs, keys, obj, back, n, False
        for t in range(nt):
            key[t] = keys_in[x, t]
        if n + 1 >= hs.shape[0] or 2 * (n + 1) > slots.shape[0]:
            slots, hs, keys, obj, back = _grow(slots, hs, keys, obj, back, n, flag, limit)
            if flag[0]:
                return slots, hs, keys, obj, back, n, False
        n = _put(slots, hs, keys, obj, back, n, key, _hash(key, mult), obj_in[x], back_in[x])
    return slots, hs, keys, obj, back, n, True


# ----------------------------------------------------------------------------------------------- order
#: Length of the runs :func:`_order` sorts by insertion before merging them.
RUN = 32


@library.kernel("Tuple((i8[::1], b1))(f8[::1], u1[::1], i8)")
def _order(values, flag, limit):  # pragma: no cover - compiled
    """The places of ``values`` from the largest to the smallest, equal values in the order met
    (``np.argsort(-values, kind="stable")`` for values that are not NaN), and True; a merge sort,
    so that it reads the deadline as it goes: once ``flag`` is raised (or the clock passes
    ``limit``) it returns at once, unfinished, and False."""
    n = values.shape[0]
    a = np.arange(n)
    b = np.empty(n, dtype=np.int64)
    for s in range(0, n, RUN):
        if s % STRIDE == 0 and _halted(flag, limit):
            return a, False
        for i in range(s + 1, min(n, s + RUN)):
            x = a[i]
            v = values[x]
            j = i - 1
            while j >= s and values[a[j]] < v:
                a[j + 1] = a[j]
                j -= 1
            a[j + 1] = x
    width = RUN
    work = 0
    while width < n:
        for s in range(0, n, 2 * width):
            m = min(n, s + width)
            e = min(n, s + 2 * width)
            i = s
            j = m
            for k in range(s, e):
                work += 1
                if work % STRIDE == 0 and _halted(flag, limit):
                    return a, False
                # the right run's value first only when larger: equal values keep their order
                if j < e and (i >= m or values[a[j]] > values[a[i]]):
                    b[k] = a[j]
                    j += 1
                else:
                    b[k] = a[i]
                    i += 1
        a, b = b, a
        width *= 2
    return a, True
