"""The dynamic program over tree structures, compiled (numba).

A state is a set of patterns ``S``, the levels ``d`` left and the most
branching nodes ``b`` the subtree may use (eq. 8 counted in the state, not
priced); its value is

    best(S, d, b) = max( max_k sum_{i in S} s[i, k],                                 (a leaf, eq. 10: >= min_leaf rows)
                         max_f max_{b_0 + b_1 = b - 1} best(S_f0, d-1, b_0) + best(S_f1, d-1, b_1) - pen )

with ``b`` at most ``2^d - 1`` (then the bound is not binding).  A split must
send at least ``max(1, min_leaf)`` rows each way.

* **Depth two, by counting** (MurTree's terminal solver): with the sums over
  ``S`` of every class's gain and of the rows, for every pair of features
  ``(a, b)`` with ``x_a = x_b = 1``, the value of every tree of depth <= 2 is
  a difference of entries, so one pass over the pairs gives ``best(S, 2, b)``
  for every ``b`` in 0..3 at once (a profile).  The sums come from each
  pattern's list of ones (only the features that can split ``S``).
* **Depth three, incrementally**: the children of a depth-3 node are depth-2
  problems; the sums of the node's own patterns are counted once, then for
  each feature only the smaller child is counted and the larger one is the
  difference.
* **Bounds**: every pattern at its best class (``sum max_k s``) bounds any
  subtree; a solved sibling split bounds the next one (similarity, MurTree
  4.5): if ``best(D) <= v`` then ``best(D') <= v + sum_{D' - D} max_k s -
  sum_{D - D'} min_k s`` (valid with ``pen >= 0`` and ``min_leaf <= 1``).  A
  child is solved with the value it must exceed (a floor); a child that cannot
  exceed it ends that split.
* **Cache by set of patterns**: a set is named by two 64-bit sums of random
  keys of its patterns (Zobrist hashing; the sums of a split are one pass);
  exact values and proven upper bounds are kept per (set, depth, budget), and
  depth-2 profiles per set.
* Features are tried in order of their best depth-1 value.

Trees are read back from the cache (:func:`extract`).  The search checks a
flag that another thread sets at the deadline or on a stop request.
"""

from __future__ import annotations

import numpy as np

try:  # numba is a requirement; the numpy dynamic program in dp.py runs without it
    from numba import njit, types
    from numba.typed import Dict
except ImportError:  # pragma: no cover - exercised only without numba
    njit = None

NEG = -np.inf
#: Widest table the compiled program takes: two (F, F, K + 1) arrays of float64 each.
MAX_FEATURES = 1024
#: Entries of the pair-sum arrays the compiled program may allocate (F * F * (K + 1) each, two arrays).
MAX_PAIR_ENTRIES = 1 << 26


def available() -> bool:
    return njit is not None


def _jit(fn):
    return njit(cache=True, nogil=True)(fn) if njit is not None else fn


# ------------------------------------------------------------------ engine layout
# E = (XT, indptr, indices, W, smax, smin, h1, h2, prm, stop, stats, MCp, MCc, term, node, shared, scratch)
#   XT      uint8 (F, P)      features, one row per feature (1 goes right)
#   indptr  int64 (P + 1,)    each pattern's ones (CSR, sorted)
#   indices int64 (nnz,)
#   W       float64 (P, K+1)  gains per class, then rows (or (P, K) when the rows are their sum)
#   smax, smin float64 (P,)   best and worst gain per pattern
#   h1, h2  uint64 (P,)       random keys (Zobrist)
#   prm     float64 (5,)      pen, min_leaf, need = max(1, min_leaf), similarity allowed (0/1), K
#   stop    uint8 (1,)        set to 1: give up
#   stats   int64 (4,)        nodes solved, depth-2 problems counted, cache hits, unused
#   MCp, MCc float64 (F, F, K+1)  pair sums of a depth-3 node and of its child
#   term    dict (h1, h2) -> profile best(S, 2, b), b = 0..3
#   node    dict (h1, h2, d, b) -> (upper bound, exact value or nan, feature, left budget)
#   shared  float64 (1,)      the best value any worker found at the top (parallel search)
#   scratch int64 (F,)        -1 everywhere between calls (global -> local feature map)


def _leaf_value(tot, K, min_leaf):
    if tot[K] < min_leaf:
        return NEG
    v = tot[0]
    for k in range(1, K):
        if tot[k] > v:
            v = tot[k]
    return v


def _totals(S, W, smax, smin, K):
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


def _feature_sums(S, indptr, indices, W, smax, F, K):
    """Per feature a: sums over the patterns of S with x_a = 1 of each gain and the rows
    (F, K + 1), and of max_k s (F,)."""
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


def _order(R, tot, K, pen, min_leaf, need):
    """Features that can split the set (>= need rows each way), best depth-1 value first."""
    F = R.shape[0]
    N = tot[K]
    val = np.empty(F)
    ok = np.zeros(F, dtype=np.bool_)
    n_ok = 0
    for a in range(F):
        rc = R[a, K]
        if rc >= need and N - rc >= need:
            ok[a] = True
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
        else:
            val[a] = NEG
    out = np.empty(n_ok, dtype=np.int64)
    idx = np.argsort(-val, kind="mergesort")
    j = 0
    for r in range(F):
        a = idx[r]
        if ok[a]:
            out[j] = a
            j += 1
    return out


def _split(S, XT, f, h1, h2, smax):
    """(S_f0, S_f1, their keys, sum of max_k s over S_f1)."""
    n = S.shape[0]
    n1 = 0
    for r in range(n):
        if XT[f, S[r]]:
            n1 += 1
    S0 = np.empty(n - n1, dtype=np.int64)
    S1 = np.empty(n1, dtype=np.int64)
    a = np.uint64(0)
    b = np.uint64(0)
    sm1 = 0.0
    j0 = 0
    j1 = 0
    for r in range(n):
        i = S[r]
        if XT[f, i]:
            S1[j1] = i
            j1 += 1
            a += h1[i]
            b += h2[i]
            sm1 += smax[i]
        else:
            S0[j0] = i
            j0 += 1
    return S0, S1, a, b, sm1


def _key(S, h1, h2):
    a = np.uint64(0)
    b = np.uint64(0)
    for r in range(S.shape[0]):
        a += h1[S[r]]
        b += h2[S[r]]
    return a, b


def _similar(S, XT, f, g, smax, smin):
    """For splits on f and g of S: (sum max_k s over x_f=0, x_g=1; sum min_k s over x_f=1, x_g=0;
    sum max_k s over x_f=1, x_g=0; sum min_k s over x_f=0, x_g=1)."""
    a = 0.0
    b = 0.0
    c = 0.0
    d = 0.0
    for r in range(S.shape[0]):
        i = S[r]
        xf = XT[f, i]
        xg = XT[g, i]
        if xf != xg:
            if xg:  # x_f = 0, x_g = 1
                a += smax[i]
                d += smin[i]
            else:  # x_f = 1, x_g = 0
                b += smin[i]
                c += smax[i]
    return a, b, c, d


# -------------------------------------------------------------- depth two, counting
def _local_features(S, indptr, indices, W, F, K, need, loc):
    """The features that can split S, numbered 0..m-1 (``act`` their global numbers),
    and S's ones in them as CSR over positions in S.  A feature set on more than half
    of S's patterns is counted by its zeros instead (``flip``: local value 1 means
    x = 0), so that no pattern lists more than half of the features.

    ``loc`` (F,) is scratch, -1 everywhere on entry and on return."""
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
    if n_flip == 0:
        nnz = 0
        for r in range(n):
            i = S[r]
            for j in range(indptr[i], indptr[i + 1]):
                if loc[indices[j]] >= 0:
                    nnz += 1
            lptr[r + 1] = nnz
        lidx = np.empty(nnz, dtype=np.int64)
        p = 0
        for r in range(n):
            i = S[r]
            for j in range(indptr[i], indptr[i + 1]):
                la = loc[indices[j]]
                if la >= 0:
                    lidx[p] = la
                    p += 1
    else:
        mark = np.zeros(m, dtype=np.bool_)
        nnz = 0
        for r in range(n):
            i = S[r]
            for j in range(indptr[i], indptr[i + 1]):
                la = loc[indices[j]]
                if la >= 0:
                    mark[la] = True
            for b in range(m):
                if mark[b] != flip[b]:
                    nnz += 1
                mark[b] = False
            lptr[r + 1] = nnz
        lidx = np.empty(nnz, dtype=np.int64)
        p = 0
        for r in range(n):
            i = S[r]
            for j in range(indptr[i], indptr[i + 1]):
                la = loc[indices[j]]
                if la >= 0:
                    mark[la] = True
            for b in range(m):
                if mark[b] != flip[b]:
                    lidx[p] = b
                    p += 1
                mark[b] = False
    for t in range(m):
        loc[act[t]] = -1
    return act[:m], flip[:m], lptr, lidx


def _count(rows, lptr, lidx, S, W, MC, m):
    """Pair sums (upper triangle) over the positions ``rows`` of S: MC[a, b, k] for a <= b,
    one slot per column of W."""
    slots = W.shape[1]
    for a in range(m):
        for b in range(a, m):
            for k in range(slots):
                MC[a, b, k] = 0.0
    for r in range(rows.shape[0]):
        p = rows[r]
        i = S[p]
        st = lptr[p]
        en = lptr[p + 1]
        for j in range(st, en):
            a = lidx[j]
            for l in range(j, en):
                b = lidx[l]
                for k in range(slots):
                    MC[a, b, k] += W[i, k]


def _difference(MCp, MCc, m, slots):
    """MCc := MCp - MCc on the upper triangle (the other child's sums)."""
    for a in range(m):
        for b in range(a, m):
            for k in range(slots):
                MCc[a, b, k] = MCp[a, b, k] - MCc[a, b, k]


def _pair_rows(MC, a, b, K, slots):
    if slots > K:
        return MC[a, b, K]
    c = MC[a, b, 0]
    for k in range(1, K):
        c += MC[a, b, k]
    return c


def _terminal(MC, tot, m, K, slots, pen, min_leaf, need, prof, code):
    """best(S, 2, b) for b = 0..3 from the pair sums (upper triangle of MC, m features;
    ``tot`` the sums over S, K gains then the rows).

    ``code[b] = (a, left, right)``: the root feature (-1: a leaf) and each child's
    feature (-1: a leaf), in local numbers, left meaning local value 0.  Fills
    MC's lower triangle.
    """
    N = tot[K]
    lv = _leaf_value(tot, K, min_leaf)
    for j in range(4):
        prof[j] = lv
        code[j, 0] = -1
        code[j, 1] = -1
        code[j, 2] = -1
    for a in range(m):
        for b in range(a + 1, m):
            for k in range(slots):
                MC[b, a, k] = MC[a, b, k]
    rows = np.empty(m)
    for a in range(m):
        rows[a] = _pair_rows(MC, a, a, K, slots)
    for a in range(m):
        Rc = rows[a]
        Lc = N - Rc
        if Rc < need or Lc < need:
            continue
        leafR = NEG
        leafL = NEG
        if Rc >= min_leaf:
            leafR = MC[a, a, 0]
            for k in range(1, K):
                if MC[a, a, k] > leafR:
                    leafR = MC[a, a, k]
        if Lc >= min_leaf:
            leafL = tot[0] - MC[a, a, 0]
            for k in range(1, K):
                if tot[k] - MC[a, a, k] > leafL:
                    leafL = tot[k] - MC[a, a, k]
        sR = NEG
        bR = -1
        sL = NEG
        bL = -1
        for b in range(m):
            if b == a:
                continue
            crr = _pair_rows(MC, a, b, K, slots)
            crl = Rc - crr
            if crr >= need and crl >= need:  # right child (x_a = 1) split on b
                m1 = MC[a, b, 0]
                m2 = MC[a, a, 0] - MC[a, b, 0]
                for k in range(1, K):
                    x = MC[a, b, k]
                    y = MC[a, a, k] - x
                    if x > m1:
                        m1 = x
                    if y > m2:
                        m2 = y
                v = m1 + m2 - pen
                if v > sR:
                    sR = v
                    bR = b
            clr = rows[b] - crr
            cll = Lc - clr
            if clr >= need and cll >= need:  # left child (x_a = 0) split on b
                m1 = MC[b, b, 0] - MC[a, b, 0]
                m2 = tot[0] - MC[a, a, 0] - m1
                for k in range(1, K):
                    x = MC[b, b, k] - MC[a, b, k]
                    y = tot[k] - MC[a, a, k] - x
                    if x > m1:
                        m1 = x
                    if y > m2:
                        m2 = y
                v = m1 + m2 - pen
                if v > sL:
                    sL = v
                    bL = b
        cR = bR if sR > leafR else -1
        cL = bL if sL > leafL else -1
        bestR = sR if sR > leafR else leafR
        bestL = sL if sL > leafL else leafL
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
    for j in range(1, 4):  # at most b branchings: never worse than fewer
        if prof[j - 1] >= prof[j]:
            prof[j] = prof[j - 1]
            code[j, 0] = code[j - 1, 0]
            code[j, 1] = code[j - 1, 1]
            code[j, 2] = code[j - 1, 2]


def _profile(E, S, ha, hb):
    """best(S, 2, b), b = 0..3: from the cache, else counted."""
    XT, indptr, indices, W, smax, smin, h1, h2, prm, stop, stats, MCp, MCc, term, node, shared, loc = E
    key = (ha, hb)
    if key in term:
        stats[2] += 1
        return term[key]
    K = np.int64(prm[4])
    act, flip, lptr, lidx = _local_features(S, indptr, indices, W, XT.shape[0], K, prm[2], loc)
    m = act.shape[0]
    tot, sm, sn = _totals(S, W, smax, smin, K)
    _count(np.arange(S.shape[0]), lptr, lidx, S, W, MCc, m)
    prof = np.empty(4)
    code = np.empty((4, 3), dtype=np.int64)
    _terminal(MCc, tot, m, K, W.shape[1], prm[0], prm[1], prm[2], prof, code)
    stats[1] += 1
    out = (prof[0], prof[1], prof[2], prof[3])
    term[key] = out
    return out


# ------------------------------------------------------------------ depth three
def _solve3(E, S, ha, hb, b, floor):
    """best(S, 3, b) if it exceeds ``floor``: (value, feature, left budget); else (an upper bound <= floor, -1, -1).

    The children's profiles come from the cache or from pair sums: the node's own
    sums are counted once, then only the smaller child of each split.
    """
    XT, indptr, indices, W, smax, smin, h1, h2, prm, stop, stats, MCp, MCc, term, node, shared, loc = E
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
        return (best, bf, bbl) if best > floor else (max(floor, NEG), -1, -1)
    act, flip, lptr, lidx = _local_features(S, indptr, indices, W, F, K, need, loc)
    m = act.shape[0]
    if m == 0:
        return (best, bf, bbl) if best > floor else (floor, -1, -1)
    R, Rs = _feature_sums(S, indptr, indices, W, smax, F, K)
    order = _order(R, tot, K, pen, min_leaf, need)
    pos = np.empty(S.shape[0], dtype=np.int64)  # positions of each child in S
    counted = False
    similar = prm[3] > 0.5 and b == 7
    pf = -1
    pvl = 0.0
    pvr = 0.0
    profL = np.empty(4)
    profR = np.empty(4)
    pl = (NEG, NEG, NEG, NEG)
    pr = (NEG, NEG, NEG, NEG)
    codeT = np.empty((4, 3), dtype=np.int64)
    lo = max(0, b - 1 - 3)
    hi = min(3, b - 1)
    for ii in range(order.shape[0]):
        if stop[0]:
            break
        f = order[ii]
        t = max(best, floor)
        if smax_sum - pen <= t:
            break
        if similar and pf >= 0:
            a_, b_, c_, d_ = _similar(S, XT, f, pf, smax, smin)
            ubL = min(smax_sum - Rs[f], pvl + a_ - b_)
            ubR = min(Rs[f], pvr + c_ - d_)
            if ubL + ubR - pen <= t:
                continue
        S0, S1, h1a, h1b, sm1 = _split(S, XT, f, h1, h2, smax)
        h0a = ha - h1a
        h0b = hb - h1b
        k0 = (h0a, h0b)
        k1 = (h1a, h1b)
        have0 = k0 in term
        have1 = k1 in term
        if have0:
            pl = term[k0]
            stats[2] += 1
        if have1:
            pr = term[k1]
            stats[2] += 1
        if not (have0 and have1):
            small_is_right = S1.shape[0] <= S0.shape[0]
            # positions in S of the smaller child
            n_small = S1.shape[0] if small_is_right else S0.shape[0]
            q = 0
            for r in range(S.shape[0]):
                if (XT[f, S[r]] == 1) == small_is_right:
                    pos[q] = r
                    q += 1
            rows = pos[:n_small]
            need_small = not (have1 if small_is_right else have0)
            need_large = not (have0 if small_is_right else have1)
            if need_large and not counted:
                _count(np.arange(S.shape[0]), lptr, lidx, S, W, MCp, m)
                counted = True
            _count(rows, lptr, lidx, S, W, MCc, m)
            tR = R[f].copy()
            tL = tot - tR
            if need_small:
                _terminal(MCc, tR if small_is_right else tL, m, K, slots, pen, min_leaf, need, profL, codeT)
                stats[1] += 1
                ps = (profL[0], profL[1], profL[2], profL[3])
                if small_is_right:
                    term[k1] = ps
                    pr = ps
                else:
                    term[k0] = ps
                    pl = ps
            if need_large:
                _difference(MCp, MCc, m, slots)
                _terminal(MCc, tL if small_is_right else tR, m, K, slots, pen, min_leaf, need, profR, codeT)
                stats[1] += 1
                pb = (profR[0], profR[1], profR[2], profR[3])
                if small_is_right:
                    term[k0] = pb
                    pl = pb
                else:
                    term[k1] = pb
                    pr = pb
        pf = f
        pvl = pl[3]
        pvr = pr[3]
        for bl in range(hi, lo - 1, -1):
            v = pl[bl] + pr[b - 1 - bl] - pen
            if v > max(best, floor):
                best = v
                bf = f
                bbl = bl
    if best > floor:
        return best, bf, bbl
    return floor, -1, -1


# ---------------------------------------------------------- depth four and more
def _known(E, S, ha, hb, d, b, floor):
    """best(S, d, b) where no search below depth 3 is needed: (True, value) from a
    depth-2 profile, a depth-3 search or the cache (exact if > floor, else a bound
    <= floor); (False, a bound) when a deeper search is needed."""
    XT, indptr, indices, W, smax, smin, h1, h2, prm, stop, stats, MCp, MCc, term, node, shared, loc = E
    if d <= 2:
        p = _profile(E, S, ha, hb)
        return True, p[b]
    key = (ha, hb, np.int64(d), np.int64(b))
    ub = np.inf
    if key in node:
        ent = node[key]
        stats[2] += 1
        if not np.isnan(ent[1]):
            return True, ent[1]
        if ent[0] <= floor:
            return True, ent[0]
        ub = ent[0]
    if d > 3:
        return False, ub
    v, f, bl = _solve3(E, S, ha, hb, b, floor)
    if not stop[0]:
        _remember(E, key, v, floor, ub, f, bl)
    return True, v


def _remember(E, key, v, floor, ub, f, bl):
    node = E[14]
    if v > floor:
        node[key] = (v, v, np.int64(f), np.int64(bl))
    else:
        node[key] = (min(ub, v), np.nan, np.int64(-1), np.int64(-1))


def _upper(E, S0, ha, hb, d, b, sm):
    """A proven upper bound on best(S0, d, b): cached, else ``sm`` (sum of max_k s)."""
    XT, indptr, indices, W, smax, smin, h1, h2, prm, stop, stats, MCp, MCc, term, node, shared, loc = E
    full = (1 << d) - 1
    if b > full:
        b = full
    if d <= 2:
        key2 = (ha, hb)
        if key2 in term:
            return term[key2][b]
        return sm
    key = (ha, hb, np.int64(d), np.int64(b))
    if key in node:
        ent = node[key]
        return ent[1] if not np.isnan(ent[1]) else min(ent[0], sm)
    return sm


def _node(E, S, ha, hb, d, b, floor, order, lo, hi, st, top):
    # top: int (1: prune with ``shared`` too)
    """best(S, d, b) for d >= 3 over the features ``order[lo:hi]``; with an empty
    ``order`` every feature (and ``st`` is filled here).

    ``st`` = (best value, its feature (-1: a leaf), its left budget, previous
    feature, its left and right values, sum of max_k s, unused).  Returns the
    best value if it exceeds ``floor`` (exact), else ``floor`` (a bound).  With
    ``top`` the value any worker found (``shared``) also prunes.
    """
    XT, indptr, indices, W, smax, smin, h1, h2, prm, stop, stats, MCp, MCc, term, node, shared, loc = E
    pen = prm[0]
    K = np.int64(prm[4])
    if order.shape[0] == 0:
        stats[0] += 1
        tot, sm, sn = _totals(S, W, smax, smin, K)
        leaf = _leaf_value(tot, K, prm[1])
        st[0] = leaf
        st[1] = -1.0
        st[2] = -1.0
        st[3] = -1.0
        st[6] = sm
        if b == 0 or S.shape[0] <= 1 or leaf >= sm or sm - pen <= max(leaf, floor):
            return leaf if leaf > floor else floor
        R, Rs = _feature_sums(S, indptr, indices, W, smax, XT.shape[0], K)
        order = _order(R, tot, K, pen, prm[1], prm[2])
        lo = 0
        hi = order.shape[0]
    if d == 3:  # only at the top: the caller asked for a depth-3 tree in pieces
        v, f, bl = _solve3(E, S, ha, hb, b, max(floor, st[0]))
        if v > max(floor, st[0]):
            st[0] = v
            st[1] = f
            st[2] = bl
        return st[0] if st[0] > floor else floor
    sm = st[6]
    cap = (1 << (d - 1)) - 1
    blo = max(0, b - 1 - cap)
    bhi = min(cap, b - 1)
    similar = prm[3] > 0.5 and b == (1 << d) - 1
    zero = np.int64(0)  # no literal arguments in the recursive call (one compiled signature, safe to cache)
    for ii in range(lo, hi):
        if stop[0]:
            break
        f = order[ii]
        t = max(st[0], floor)
        if top and shared[0] > t:
            t = shared[0]
        if sm - pen <= t:
            break
        S0, S1, h1a, h1b, sm1 = _split(S, XT, f, h1, h2, smax)
        h0a = ha - h1a
        h0b = hb - h1b
        sm0 = sm - sm1
        bndL = sm0
        bndR = sm1
        pf = np.int64(st[3])
        if similar and pf >= 0:
            a_, b_, c_, d_ = _similar(S, XT, f, pf, smax, smin)
            bndL = min(bndL, st[4] + a_ - b_)
            bndR = min(bndR, st[5] + c_ - d_)
            if bndL + bndR - pen <= t:
                continue
        vl_seen = bndL
        vr_seen = bndR
        for bl in range(bhi, blo - 1, -1):
            br = b - 1 - bl
            uL = min(bndL, _upper(E, S0, h0a, h0b, d - 1, bl, sm0))
            uR = min(bndR, _upper(E, S1, h1a, h1b, d - 1, br, sm1))
            if uL + uR - pen <= t:
                continue
            fl = t + pen - uR
            done, vl = _known(E, S0, h0a, h0b, d - 1, bl, fl)
            if not done:  # a deeper search (the recursion stays in this one function)
                st2 = np.empty(8)
                ubl = vl
                vl = _node(E, S0, h0a, h0b, d - 1, bl, fl, np.empty(0, dtype=np.int64), zero, zero, st2, zero)
                if not stop[0]:
                    _remember(E, (h0a, h0b, np.int64(d - 1), np.int64(bl)), vl, fl, ubl, np.int64(st2[1]), np.int64(st2[2]))
            if stop[0]:
                return NEG
            if bl == cap:
                vl_seen = vl
            if not vl > fl:
                continue
            fr = t + pen - vl
            done, vr = _known(E, S1, h1a, h1b, d - 1, br, fr)
            if not done:
                st2 = np.empty(8)
                ubr = vr
                vr = _node(E, S1, h1a, h1b, d - 1, br, fr, np.empty(0, dtype=np.int64), zero, zero, st2, zero)
                if not stop[0]:
                    _remember(E, (h1a, h1b, np.int64(d - 1), np.int64(br)), vr, fr, ubr, np.int64(st2[1]), np.int64(st2[2]))
            if stop[0]:
                return NEG
            if br == cap:
                vr_seen = vr
            if vr > fr:
                v = vl + vr - pen
                if v > t:
                    st[0] = v
                    st[1] = f
                    st[2] = bl
                    t = v
                    if top and v > shared[0]:
                        shared[0] = v
        if similar:
            # the children's values (or bounds) at the full budget, for the next split
            st[3] = f
            st[4] = min(vl_seen, _upper(E, S0, h0a, h0b, d - 1, cap, sm0))
            st[5] = min(vr_seen, _upper(E, S1, h1a, h1b, d - 1, cap, sm1))
    return st[0] if st[0] > floor else floor


def _prepare(E, S, d, b):
    """The top of a search: (key, order of the features, state ``st``) for :func:`_node` in pieces."""
    XT, indptr, indices, W, smax, smin, h1, h2, prm, stop, stats, MCp, MCc, term, node, shared, loc = E
    K = np.int64(prm[4])
    ha, hb = _key(S, h1, h2)
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
    R, Rs = _feature_sums(S, indptr, indices, W, smax, XT.shape[0], K)
    order = _order(R, tot, K, prm[0], prm[1], prm[2])
    if b == 0 or S.shape[0] <= 1 or st[0] >= sm:
        order = order[:0]
    return ha, hb, order, st


def _solve(E, S, d, b, floor):
    """best(S, d, b) if it exceeds ``floor``, else an upper bound <= floor (cached)."""
    XT, indptr, indices, W, smax, smin, h1, h2, prm, stop, stats, MCp, MCc, term, node, shared, loc = E
    ha, hb = _key(S, h1, h2)
    full = (1 << d) - 1
    if b > full:
        b = full
    done, v = _known(E, S, ha, hb, d, b, floor)
    if done:
        return v
    st = np.empty(8)
    zero = np.int64(0)
    v2 = _node(E, S, ha, hb, d, b, floor, np.empty(0, dtype=np.int64), zero, zero, st, zero)
    if not stop[0]:
        _remember(E, (ha, hb, np.int64(d), np.int64(b)), v2, floor, v, np.int64(st[1]), np.int64(st[2]))
    return v2


def _store(E, ha, hb, d, b, value, exact, f, bl):
    """Keep the outcome of a search run in pieces at the top."""
    node = E[14]
    key = (ha, hb, np.int64(d), np.int64(b))
    if exact:
        node[key] = (value, value, np.int64(f), np.int64(bl))
    else:
        ub = np.inf
        if key in node:
            ub = node[key][0]
        node[key] = (min(ub, value), np.nan, np.int64(-1), np.int64(-1))


def _lookup(E, ha, hb, d, b):
    """(upper bound, exact value or nan) of a cached state, (inf, nan) if unknown."""
    node = E[14]
    term = E[13]
    if d <= 2:
        if (ha, hb) in term:
            v = term[(ha, hb)][b]
            return v, v
        return np.inf, np.nan
    key = (ha, hb, np.int64(d), np.int64(b))
    if key in node:
        ent = node[key]
        return ent[0], ent[1]
    return np.inf, np.nan


# ------------------------------------------------------------------ trees back
def _class_of(sums, K):
    k_best = 0
    for k in range(1, K):
        if sums[k] > sums[k_best]:
            k_best = k
    return k_best


def _extract(E, S, d, b, n, feat, cls):
    """Write the best tree of state (S, d, b) into heap arrays from node ``n``
    (children 2n, 2n + 1): ``feat`` the split feature or -1 for a leaf, ``cls`` its class."""
    XT, indptr, indices, W, smax, smin, h1, h2, prm, stop, stats, MCp, MCc, term, node, shared, loc = E
    K = np.int64(prm[4])
    full = (1 << d) - 1
    if b > full:
        b = full
    tot, sm, sn = _totals(S, W, smax, smin, K)
    if d <= 2:
        act, flip, lptr, lidx = _local_features(S, indptr, indices, W, XT.shape[0], K, prm[2], loc)
        m = act.shape[0]
        _count(np.arange(S.shape[0]), lptr, lidx, S, W, MCc, m)
        prof = np.empty(4)
        code = np.empty((4, 3), dtype=np.int64)
        _terminal(MCc, tot, m, K, W.shape[1], prm[0], prm[1], prm[2], prof, code)
        a, cl, cr = code[b, 0], code[b, 1], code[b, 2]
        if a < 0:
            feat[n] = -1
            cls[n] = _class_of(tot, K)
            return
        if flip[a]:  # local value 0 is x = 1: the children trade places
            cl, cr = cr, cl
        fa = act[a]
        feat[n] = fa
        S0, S1, x1, x2, s1 = _split(S, XT, fa, h1, h2, smax)
        for side in range(2):
            Sc = S0 if side == 0 else S1
            c = cl if side == 0 else cr
            nn = 2 * n + side
            tc, x3, x4 = _totals(Sc, W, smax, smin, K)
            if c < 0:
                feat[nn] = -1
                cls[nn] = _class_of(tc, K)
            else:
                fb = act[c]
                feat[nn] = fb
                G0, G1, y1, y2, y3 = _split(Sc, XT, fb, h1, h2, smax)
                t0, z1, z2 = _totals(G0, W, smax, smin, K)
                t1, z3, z4 = _totals(G1, W, smax, smin, K)
                feat[2 * nn] = -1
                cls[2 * nn] = _class_of(t0, K)
                feat[2 * nn + 1] = -1
                cls[2 * nn + 1] = _class_of(t1, K)
        return
    ha, hb = _key(S, h1, h2)
    ent = node[(ha, hb, np.int64(d), np.int64(b))]
    f = ent[2]
    if f < 0:
        feat[n] = -1
        cls[n] = _class_of(tot, K)
        return
    feat[n] = f
    S0, S1, x1, x2, x3 = _split(S, XT, f, h1, h2, smax)
    _extract(E, S0, d - 1, ent[3], 2 * n, feat, cls)
    _extract(E, S1, d - 1, b - 1 - ent[3], 2 * n + 1, feat, cls)


if njit is not None:
    _leaf_value = _jit(_leaf_value)
    _totals = _jit(_totals)
    _feature_sums = _jit(_feature_sums)
    _order = _jit(_order)
    _split = _jit(_split)
    _key = _jit(_key)
    _similar = _jit(_similar)
    _local_features = _jit(_local_features)
    _count = _jit(_count)
    _difference = _jit(_difference)
    _pair_rows = _jit(_pair_rows)
    _terminal = _jit(_terminal)
    _profile = _jit(_profile)
    _solve3 = _jit(_solve3)
    _known = _jit(_known)
    _remember = _jit(_remember)
    _upper = _jit(_upper)
    _node = _jit(_node)
    _prepare = _jit(_prepare)
    _solve = _jit(_solve)
    _store = _jit(_store)
    _lookup = _jit(_lookup)
    _class_of = _jit(_class_of)
    _extract = _jit(_extract)


# ------------------------------------------------------------------ the Python side
if njit is not None:
    _KEY2 = types.UniTuple(types.uint64, 2)
    _PROFILE = types.UniTuple(types.float64, 4)
    _KEY4 = types.Tuple((types.uint64, types.uint64, types.int64, types.int64))
    _ENTRY = types.Tuple((types.float64, types.float64, types.int64, types.int64))

#: Seed of the patterns' random keys (fixed: the same search every run).
KEY_SEED = 0x5EED_7AEE


class Engine:
    """The compiled program's arrays and caches for one set of gains.

    Parameters
    ----------
    X : ndarray (P, F), binary features (1 goes right)
    count : ndarray (P,), rows per pattern
    scores : ndarray (P, K), gain of predicting each class
    pen : float, per branching node (>= 0)
    min_leaf : int
    ones : (indptr, indices), each pattern's ones (CSR, sorted)
    stop : ndarray uint8 (1,), set to 1 to stop the search
    shared : ndarray float64 (1,), optional; the best value at the top, shared by workers
    base : Engine, optional; share its read-only arrays (a worker of a parallel search)
    """

    def __init__(self, X, count, scores, pen: float, min_leaf: int, ones, stop: np.ndarray,
                 shared: np.ndarray | None = None, base: "Engine | None" = None) -> None:
        P, F = X.shape
        K = scores.shape[1]
        if base is not None:
            XT, indptr, indices, W, smax, smin, h1, h2, prm = base.E[:9]
        else:
            XT = np.ascontiguousarray((X > 0.5).T, dtype=np.uint8)
            indptr = np.ascontiguousarray(ones[0], dtype=np.int64)
            indices = np.ascontiguousarray(ones[1], dtype=np.int64)
            # The rows per pattern are a gain column of their own unless they are the
            # sum of the gains (plain accuracy): then they are added up when needed.
            derived = bool(np.array_equal(scores.sum(axis=1), np.asarray(count, dtype=np.float64)))
            W = np.empty((P, K if derived else K + 1))
            W[:, :K] = scores
            if not derived:
                W[:, K] = count
            smax = np.ascontiguousarray(scores.max(axis=1))
            smin = np.ascontiguousarray(scores.min(axis=1))
            rng = np.random.default_rng(KEY_SEED)
            h1 = rng.integers(0, np.iinfo(np.uint64).max, P, dtype=np.uint64, endpoint=True)
            h2 = rng.integers(0, np.iinfo(np.uint64).max, P, dtype=np.uint64, endpoint=True)
            similar = 1.0 if (pen >= 0 and min_leaf <= 1) else 0.0
            prm = np.array([float(pen), float(min_leaf), float(max(1, min_leaf)), similar, float(K)])
        stats = np.zeros(4, dtype=np.int64)
        MCp = np.empty((F, F, W.shape[1]))
        MCc = np.empty((F, F, W.shape[1]))
        term = Dict.empty(_KEY2, _PROFILE)
        node = Dict.empty(_KEY4, _ENTRY)
        shared = np.full(1, NEG) if shared is None else shared
        loc = np.full(F, -1, dtype=np.int64)
        self.E = (XT, indptr, indices, W, smax, smin, h1, h2, prm, stop, stats, MCp, MCc, term, node, shared, loc)
        self.depth_limit = 62

    @property
    def stats(self) -> np.ndarray:
        return self.E[10]

    def key(self, idx: np.ndarray) -> tuple[np.uint64, np.uint64]:
        ha, hb = _key(idx, self.E[6], self.E[7])
        return np.uint64(ha), np.uint64(hb)

    def solve(self, idx: np.ndarray, depth: int, budget: int, floor: float) -> float:
        """best(idx, depth, budget) if it exceeds ``floor`` (exact), else a bound <= floor."""
        return float(_solve(self.E, idx, int(depth), int(budget), float(floor)))

    def lookup(self, idx: np.ndarray, depth: int, budget: int) -> tuple[float, float]:
        """(upper bound, exact value or nan) known for the state; (inf, nan) if none."""
        ha, hb = self.key(idx)
        ub, value = _lookup(self.E, ha, hb, int(depth), int(min(budget, (1 << depth) - 1)))
        return float(ub), float(value)

    def tree(self, idx: np.ndarray, depth: int, budget: int):
        """The nested tree of a solved state (its value must be exact in the cache)."""
        n = 1 << (depth + 1)
        feat = np.full(n, -2, dtype=np.int64)
        cls = np.zeros(n, dtype=np.int64)
        _extract(self.E, idx, int(depth), int(budget), 1, feat, cls)
        return _nested(feat, cls, 1)

    def prepare(self, idx: np.ndarray, depth: int, budget: int):
        """The top of a search in pieces: (key a, key b, feature order, state)."""
        ha, hb, order, st = _prepare(self.E, idx, int(depth), int(budget))
        return np.uint64(ha), np.uint64(hb), order, st

    def piece(self, idx, ha, hb, depth: int, budget: int, floor: float, order, lo: int, hi: int, st, top: bool) -> None:
        """Try the top's features ``order[lo:hi]`` (state in ``st``)."""
        _node(self.E, idx, np.uint64(ha), np.uint64(hb), int(depth), int(budget), float(floor), order, int(lo), int(hi), st, int(bool(top)))

    def store(self, ha, hb, depth: int, budget: int, value: float, exact: bool, feature: int, left_budget: int) -> None:
        _store(self.E, np.uint64(ha), np.uint64(hb), int(depth), int(budget), float(value), bool(exact), int(feature), int(left_budget))


def _nested(feat: np.ndarray, cls: np.ndarray, n: int):
    f = int(feat[n])
    if f >= 0:
        return (f, _nested(feat, cls, 2 * n), _nested(feat, cls, 2 * n + 1))
    return int(cls[n])
