"""The search over the groups' counts (``accel/count_search.py``, kernels in
``accel/fronts.py``) is exact: checked against truth from outside it.

* Every kernel against a plain computation: the subtrees of depth <= 2 of a set
  against every tree of that depth (``brute_force.all_trees``), one best value
  per vector of counts and exactly those that reach the thresholds; merges
  against every pair; reachability and the comparisons against exact fractions
  over every total in the box; the rest's best against every pair of states.
* The fronts of a root's children: every part of a feasible tree of value tau
  is kept, and every state kept passes each bound (value, priced value,
  reachability, each cohort against the rest's subtrees), on instances where
  every bound removes some state.
* The optimum against brute force (depth <= 2, every notion, 2 to 6 groups) and
  the MILP (depth 3); a threshold above the optimum finds nothing.
* Through ``exact_solve`` and the estimator: the record says which method proved
  the tree, and the tree meets the bound when its predictions are measured.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from fractions import Fraction
from itertools import product

import numpy as np
import pytest
from brute_force import all_trees, holds, milp_solve

from strongtree_core import StrongTreeClassifier
from strongtree_core.accel import count_search, fronts, search
from strongtree_core.accel.count_search import CountSearch, Front, _Member, _MULT
from strongtree_core.accel.dp import NEG, Deadline, GainDP
from strongtree_core.accel.group_counts import group_counts
from strongtree_core.accel.lagrange import Prices, measure_tree, optimize_dual, satisfies
from strongtree_core.accel.problem import linear_problem
from strongtree_core.accel.search import exact_solve
from strongtree_core.encoding.patterns import collapse_patterns
from strongtree_core.formulation import build_model
from strongtree_core.formulation.fairness_constraints import FAIRNESS_NOTIONS
from strongtree_core.formulation.spec import TreeSpec

pytestmark = pytest.mark.skipif(not fronts.library.usable(), reason="numba is not installed")
NOTIONS = tuple(FAIRNESS_NOTIONS)


@pytest.fixture(scope="module", autouse=True)
def compiled_kernels():
    """The kernels, here and now (compiled in this process when the installation's build is not
    there yet): the exact search takes the counts' route only when they are ready."""
    fronts.library.implementation("_enumerate")
    assert fronts.available()


# ---------------------------------------------------------------------------------------- instances
def instance(seed: int, *, n: int = 16, n_features: int = 3, n_groups: int = 2, n_classes: int = 2,
             notion: str = "statistical_parity", delta: float = 0.1, depth: int = 2, min_leaf: int = 0,
             lambda_: float = 0.0, legit_levels: int = 2):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, n_features))
    group = rng.integers(0, n_groups, n)
    group[:n_groups] = np.arange(n_groups)  # every group present
    legit = rng.integers(0, legit_levels, n)
    y = ((X[:, 0] + X[:, -1] * (group == 0) + rng.random(n) * 1.5) > 1.2).astype(int)
    if n_classes > 2:
        y = np.where(rng.random(n) < 0.3, 2, y)
    data = collapse_patterns(X, y, n_classes, group=group, legit=legit)
    spec = TreeSpec(depth=depth, pos_label=1, min_leaf=min_leaf, lambda_=lambda_,
                    side_constraints=(FAIRNESS_NOTIONS[notion](delta, 1),))
    return X, y, group, legit, data, spec


def predict(tree, X: np.ndarray) -> np.ndarray:
    """Class of each row under a nested tree (``int`` leaf, ``(f, left, right)``)."""
    out = np.empty(X.shape[0], dtype=np.int64)
    stack = [(tree, np.arange(X.shape[0]))]
    while stack:
        t, idx = stack.pop()
        if isinstance(t, tuple):
            right = X[idx, t[0]] > 0.5
            stack += [(t[1], idx[~right]), (t[2], idx[right])]
        else:
            out[idx] = t
    return out


def key_and_value(p, gc, S: np.ndarray, pred: np.ndarray, n_branching: int) -> tuple[tuple, float]:
    """Rows predicted positive per atom and the value of a subtree predicting ``pred`` on the patterns ``S``."""
    on = (pred == gc.positive) & (gc.atom[S] >= 0)
    key = np.bincount(gc.atom[S][on], weights=p.count[S][on], minlength=gc.n_atoms).astype(np.int64)
    value = (1 - p.lambda_) * float(p.G[S, pred, 0].sum()) - p.lambda_ * n_branching
    return tuple(int(v) for v in key), value


def brute_states(p, gc, S: np.ndarray, depth: int) -> dict[tuple, float]:
    """Every vector of counts of the subtrees of depth <= ``depth`` on ``S`` (leaves of at least
    ``min_leaf`` rows), with its best value."""
    best: dict[tuple, float] = {}
    X = p.X[S]
    for tree in all_trees(depth, p.n_features, p.n_classes):
        leaves = tree.apply(X)
        if p.min_leaf and any(p.count[S][leaves == node].sum() < p.min_leaf for node in tree.leaves):
            continue
        key, value = key_and_value(p, gc, S, tree.predict(X), tree.n_branching)
        if value > best.get(key, -math.inf):
            best[key] = value
    return best


def structure_value(p, gc, S, tree) -> tuple[tuple, float]:
    from strongtree_core.accel.dp import tree_branchings

    return key_and_value(p, gc, S, predict(tree, p.X[S]), tree_branchings(tree))


def fraction_holds(gc, totals) -> bool:
    """Every cohort's rates differ by at most its bound, in exact fractions (from the bounds H:
    independent of the kernels' arithmetic)."""
    return gc.holds(np.asarray(totals))


# ------------------------------------------------------------------------------- subtrees of depth <= 2
@pytest.mark.parametrize("seed", range(14))
def test_enumeration_is_the_best_subtree_of_every_vector_that_reaches_the_thresholds(seed) -> None:
    notion = NOTIONS[seed % len(NOTIONS)]
    X, y, group, legit, data, spec = instance(seed, n_groups=2 + seed % 5, n_classes=3 if seed % 4 == 3 else 2,
                                               notion=notion, min_leaf=2 if seed % 3 == 1 else 0,
                                               lambda_=0.1 if seed % 5 == 2 else 0.0)
    p = linear_problem(data, spec)
    gc = group_counts(data, spec)
    cs = CountSearch(p, gc, Deadline())
    rng = np.random.default_rng(seed)
    S = np.sort(rng.choice(p.n_patterns, size=max(3, int(0.8 * p.n_patterns)), replace=False))
    depth = seed % 3
    truth = brute_states(p, gc, S, depth)
    values = np.array(list(truth.values()))
    t0 = float(np.quantile(values, 0.4))
    w = rng.normal(0, 0.3, gc.n_atoms)
    priced = np.array([v - w @ np.array(k) for k, v in truth.items()])
    tv = float(np.quantile(priced, 0.3))
    feats, T, MM = cs._pair_sums(S)
    keys, obj, back, start, done = fronts._enumerate(T, MM, feats, cs.cols, cs.one_set, cs.cnt, cs.K, cs.pos, cs.pen,
                                                     cs.min_leaf, t0, tv, w, depth, _MULT, cs.flag, 0)
    assert done and list(start) == [0, obj.size]
    expected = {k: v for k, v in truth.items() if v >= t0 - 1e-9 and v - w @ np.array(k) >= tv - 1e-9}
    got = {tuple(int(v) for v in k): float(o) for k, o in zip(keys, obj)}
    assert got.keys() == expected.keys()
    for k, v in expected.items():
        assert got[k] == pytest.approx(v, abs=1e-9)
    # each state's code is a subtree with that vector and value
    f = Front(keys, obj, back, "enumerated")
    for j in range(len(f)):
        k, v = structure_value(p, gc, S, f.tree(j))
        assert k == tuple(int(x) for x in keys[j]) and v == pytest.approx(obj[j], abs=1e-9)


def test_each_cohorts_own_counts_in_one_enumeration() -> None:
    """Several sets of tracked columns at once: each is the enumeration of its columns alone."""
    X, y, group, legit, data, spec = instance(5, n=18, n_groups=3, notion="conditional_statistical_parity",
                                               delta=0.0, legit_levels=3)
    p = linear_problem(data, spec)
    gc = group_counts(data, spec)
    cs = CountSearch(p, gc, Deadline())
    S = np.arange(p.n_patterns)
    feats, T, MM = cs._pair_sums(S)
    sets = [cs.cohort_cols[c] for c in range(gc.n_cohorts)]
    cols = np.concatenate(sets)
    cset = np.concatenate([[0], np.cumsum([s.size for s in sets])]).astype(np.int64)
    floor = cs.dp0.value(S, 2) - 3
    keys, obj, back, start, done = fronts._enumerate(T, MM, feats, cols, cset, cs.cnt, cs.K, cs.pos, 0.0, 0.0, floor,
                                                     NEG, np.zeros(cols.size), 2, _MULT, cs.flag, 0)
    for q, one in enumerate(sets):
        alone = fronts._enumerate(T, MM, feats, one, np.array([0, one.size]), cs.cnt, cs.K, cs.pos, 0.0, 0.0, floor,
                                  NEG, np.zeros(one.size), 2, _MULT, cs.flag, 0)
        mine = {tuple(k[:one.size]): o for k, o in zip(keys[start[q]:start[q + 1]], obj[start[q]:start[q + 1]])}
        assert mine == {tuple(k): o for k, o in zip(alone[0], alone[1])}
        assert len(mine) > 1


def test_pair_sums_and_kept_features() -> None:
    X, y, group, legit, data, spec = instance(3, n=20, n_features=4)
    p = linear_problem(data, spec)
    gc = group_counts(data, spec)
    cs = CountSearch(p, gc, Deadline())
    S = np.arange(1, p.n_patterns, 2)
    Xs = (p.X[S] > 0.5).astype(int)
    feats = fronts._kept_features(S, cs.XT, cs.z)
    # one feature of each distinct split of S (a column or its complement), none that splits nothing
    canon = {tuple(col) if col[0] == 0 else tuple(1 - col) for col in Xs.T if 0 < col.sum() < len(S)}
    assert {tuple(Xs[:, f]) if Xs[0, f] == 0 else tuple(1 - Xs[:, f]) for f in feats} == canon
    assert len(feats) == len(canon)
    at = np.full(p.n_features, -1)
    at[feats] = np.arange(feats.size)
    T, MM = fronts._pair_sums(S, cs.indptr, cs.indices, cs.W, at, feats.size)
    assert np.allclose(T, cs.W[S].sum(axis=0))
    for i, a in enumerate(feats):
        for j, b in enumerate(feats):
            rows = S[(Xs[:, a] == 1) & (Xs[:, b] == 1)]
            assert np.allclose(MM[i, j], cs.W[rows].sum(axis=0))


# --------------------------------------------------------------------------------------------- merges
@pytest.mark.parametrize("seed", range(6))
def test_merge_keeps_the_best_pair_of_every_vector_that_reaches_the_thresholds(seed) -> None:
    rng = np.random.default_rng(seed)
    nt = 3
    Ak = rng.integers(0, 4, (30, nt)).astype(np.int32)
    Bk = rng.integers(0, 4, (25, nt)).astype(np.int32)
    Ao, Bo = rng.integers(0, 20, 30).astype(float), rng.integers(0, 20, 25).astype(float)
    w = rng.normal(0, 1, nt)
    Apv, Bpv = Ao - Ak @ w, Bo - Bk @ w
    pen, t0, tv = 0.5, 22.0, 15.0
    table = table_of(nt)
    table.merge(Front(Ak, Ao, np.zeros((30, 3), np.int64), "merged"), Apv,
                Front(Bk, Bo, np.zeros((25, 3), np.int64), "merged"), Bpv, pen, t0, tv, 7,
                np.argsort(-Bo, kind="stable"))
    keys, obj, back = table.arrays()
    expected: dict = {}
    for x, yy in product(range(30), range(25)):
        v = Ao[x] + Bo[yy] - pen
        if v >= t0 and Apv[x] + Bpv[yy] - pen >= tv:
            k = tuple(Ak[x] + Bk[yy])
            expected[k] = max(expected.get(k, -math.inf), v)
    assert {tuple(k): o for k, o in zip(keys, obj)} == expected
    for k, o, (g, x, yy) in zip(keys, obj, back):
        assert g == 7 and tuple(Ak[x] + Bk[yy]) == tuple(k) and Ao[x] + Bo[yy] - pen == o


def table_of(nt: int, flag=None, limit: int = 0):
    """A table with no deadline (or the kernels' ``flag`` and ``limit``)."""
    return count_search._Table(nt, np.zeros(1, np.uint8) if flag is None else flag, limit, lambda: None)


def test_a_table_keeps_the_better_value_of_a_vector_and_grows() -> None:
    table = table_of(2)
    table.put_all(np.array([[1, 2], [1, 2], [3, 4]]), np.array([5.0, 7.0, 1.0]), np.array([[0, 0, 0], [1, 1, 1], [2, 2, 2]]))
    table.put_all(np.array([[1, 2], [3, 4]]), np.array([6.0, 0.5]), np.array([[3, 3, 3], [4, 4, 4]]))
    keys, obj, back = table.arrays()
    got = {tuple(k): (o, b[0]) for k, o, b in zip(keys, obj, back)}
    assert got == {(1, 2): (7.0, 1), (3, 4): (1.0, 2)}
    many = np.arange(6000).reshape(-1, 2)
    table.put_all(many, np.arange(3000, dtype=float), np.zeros((3000, 3), np.int64))
    keys, obj, _ = table.arrays()
    assert len(obj) == 3000 + 2 and {tuple(k) for k in keys} == {tuple(r) for r in many} | {(1, 2), (3, 4)}
    lookup = {tuple(k): o for k, o in zip(keys, obj)}
    assert lookup[(1, 2)] == 7.0 and lookup[(3, 4)] == 1.0 and lookup[(10, 11)] == 5.0


# ------------------------------------------------------------------------------- comparisons of counts
def cohort_of(sizes: list[int], delta: float, notion: str = "statistical_parity"):
    """GroupCounts of one cohort whose groups have ``sizes`` rows (statistical parity)."""
    group = np.repeat(np.arange(len(sizes)), sizes)
    X = np.zeros((group.size, 1), dtype=int)
    y = np.arange(group.size) % 2
    data = collapse_patterns(X, y, 2, group=group)
    spec = TreeSpec(depth=1, pos_label=1, side_constraints=(FAIRNESS_NOTIONS[notion](delta, 1),))
    return group_counts(data, spec)


def rates_ok(T, N, delta: Fraction) -> bool:
    rates = [Fraction(int(t), int(n)) for t, n in zip(T, N)]
    return max(rates) - min(rates) <= delta


@pytest.mark.parametrize("seed", range(24))
def test_reachability_and_the_comparisons_are_exact(seed) -> None:
    rng = np.random.default_rng(seed)
    k = 2 + seed % 5
    sizes = [int(v) for v in rng.integers(1, 9 if k <= 3 else 5, k)]
    delta = [0.0, 0.05, 0.1, 1 / 3, 0.25, float(rng.random())][seed % 6]
    gc = cohort_of(sizes, delta)
    exact = Fraction(repr(delta))
    N = gc.gN
    assert list(N) == sizes
    totals = np.array(list(product(*[range(n + 1) for n in sizes])), dtype=np.int64)
    feasible = fronts._feasible(totals, gc.cg_start, gc.gN, gc.H, gc.ch_start)
    truth = np.array([rates_ok(t, N, exact) for t in totals])
    assert np.array_equal(feasible, truth)
    assert all(gc.holds(t) == v for t, v in zip(totals[:200], truth[:200]))
    # a state s with a rest box r is reachable iff some total in [s, s + r] is feasible
    ok_set = {tuple(t) for t, v in zip(totals, truth) if v}
    states, rests, expect = [], [], []
    for _ in range(60):
        s = np.array([rng.integers(0, n + 1) for n in sizes])
        r = np.array([rng.integers(0, n - v + 1) for n, v in zip(sizes, s)])
        states.append(s)
        rests.append(r)
        expect.append(any(tuple(t) in ok_set for t in product(*[range(a, a + b + 1) for a, b in zip(s, r)])))
    for s, r, e in zip(states, rests, expect):
        got = fronts._reachable(np.array([s], dtype=np.int64), np.asarray(r, dtype=np.int64), gc.cg_start, gc.gN,
                                gc.H, gc.ch_start, np.zeros(1, np.uint8), 0)[0]
        assert got == e, (sizes, delta, s, r)
    assert any(expect) and (delta > 0.1 or not all(expect))


@pytest.mark.parametrize("seed", range(30))
def test_the_rests_best_is_the_best_compatible_pair(seed) -> None:
    rng = np.random.default_rng(seed)
    sizes = [int(v) for v in rng.integers(3, 9, 2 + seed % 2)]
    gc = cohort_of(sizes, [0.0, 0.1, 0.2][seed % 3])
    k = len(sizes)

    def states(m, top):
        K = np.array([[rng.integers(0, n // 2 + 1) for n in sizes] for _ in range(m)] + [[0] * k], dtype=np.int64)
        V = rng.integers(0, top, m + 1).astype(float)
        K, V = count_search._best_per_row(K, V)
        return K, V

    Ik, Iv = states(12, 4 + seed % 7)
    Ok, Ov = states(15, 5 + seed % 11)
    U = np.array([[0] * k] + [[rng.integers(0, n - n // 2 - n // 2 + 1) for n in sizes] for _ in range(20)],
                 dtype=np.int64)
    got = fronts._rest_best(U, Ik, Iv, Ok, Ov, gc.cg_start, gc.gN, gc.H, gc.ch_start, 0, _MULT, np.zeros(1, np.uint8), 0)
    for u, g in zip(U, got):
        best = -math.inf
        for i, o in product(range(len(Iv)), range(len(Ov))):
            if gc.holds(u + Ik[i] + Ok[o]):
                best = max(best, Iv[i] + Ov[o])
        assert g == best
    assert np.isfinite(got).any() and k >= 2


@pytest.mark.parametrize("seed", range(6))
def test_the_best_pair_at_the_root_is_the_best_feasible_pair(seed) -> None:
    rng = np.random.default_rng(seed)
    sizes = [6, 4, 3][: 2 + seed % 2]
    gc = cohort_of(sizes, 0.1)
    nt = gc.n_atoms
    Ak = np.array([[rng.integers(0, n // 2 + 1) for n in sizes] for _ in range(15)], dtype=np.int32)
    Bk = np.array([[rng.integers(0, n - n // 2 + 1) for n in sizes] for _ in range(15)], dtype=np.int32)
    assert nt == len(sizes)
    Ao, Bo = rng.integers(0, 30, 15).astype(float), rng.integers(0, 30, 15).astype(float)
    floor = 10.0
    v, ia, ib, done = fronts._pair_best(Ak, Ao, np.argsort(-Ao, kind="stable"), Bk, Bo, 1.0, floor, gc.ga_start,
                                        gc.ga_atoms, gc.cg_start, gc.gN, gc.H, gc.ch_start, np.zeros(1, np.uint8), 0)
    best = -math.inf
    for x, y in product(range(15), range(15)):
        if Ao[x] + Bo[y] - 1 > floor and gc.holds(gc.group_totals((Ak[x] + Bk[y])[None])[0]):
            best = max(best, Ao[x] + Bo[y] - 1)
    assert done and v == best
    if ia >= 0:
        assert Ao[ia] + Bo[ib] - 1 == v and gc.holds(gc.group_totals((Ak[ia] + Bk[ib])[None])[0])
        # nothing above the best itself: a pair must exceed the floor
        again = fronts._pair_best(Ak, Ao, np.argsort(-Ao, kind="stable"), Bk, Bo, 1.0, v, gc.ga_start, gc.ga_atoms,
                                  gc.cg_start, gc.gN, gc.H, gc.ch_start, np.zeros(1, np.uint8), 0)
        assert again[0] == -math.inf and again[1] == -1


def cohorts_of(sizes: list[list[int]], delta: float):
    """GroupCounts of conditional statistical parity: cohort ``c``'s groups have ``sizes[c]`` rows."""
    group = np.concatenate([np.repeat(np.arange(len(s)), s) for s in sizes])
    legit = np.concatenate([np.full(sum(s), c) for c, s in enumerate(sizes)])
    X = np.zeros((group.size, 1), dtype=int)
    y = np.arange(group.size) % 2
    data = collapse_patterns(X, y, 2, group=group, legit=legit)
    spec = TreeSpec(depth=1, pos_label=1,
                    side_constraints=(FAIRNESS_NOTIONS["conditional_statistical_parity"](delta, 1),))
    return group_counts(data, spec)


@pytest.mark.parametrize("seed", range(8))
def test_the_best_pair_of_large_fronts_is_the_best_feasible_pair(seed) -> None:
    """Fronts of hundreds of states over several cohorts (the index of the right states has many
    nodes; with few rows per group many states share their counts): the best pair is the one a
    scan of every pair finds, each comparison checked in exact fractions."""
    rng = np.random.default_rng(100 + seed)
    sizes = [[9, 7], [5, 8, 4], [6, 11]] if seed % 2 == 0 else [[3, 2], [2, 3]]
    delta = [0.0, 0.05, 0.2, 0.5][seed % 4]
    gc = cohorts_of(sizes, delta)
    flat = [n for s in sizes for n in s]
    assert gc.n_atoms == len(flat) and gc.n_cohorts == len(sizes)
    mA, mB = 300 + 10 * seed, 500 - 20 * seed
    Ak = np.array([[rng.integers(0, n // 2 + 1) for n in flat] for _ in range(mA)], dtype=np.int32)
    Bk = np.array([[rng.integers(0, n - n // 2 + 1) for n in flat] for _ in range(mB)], dtype=np.int32)
    # some pairs made feasible: each cohort's groups all predicted positive or none, split at random
    for x in range(60):
        full = np.concatenate([np.full(len(s), rng.integers(0, 2)) * s for s in sizes])
        Ak[x] = rng.integers(0, full + 1)
        Bk[x] = full - Ak[x]
    Ao, Bo = rng.integers(0, 40, mA).astype(float), rng.integers(0, 40, mB).astype(float)
    # every pair's comparisons: |T_j / N_j - T_m / N_m| <= delta, in integers
    d = Fraction(repr(delta))
    T = gc.group_totals(Ak)[:, None, :] + gc.group_totals(Bk)[None, :, :]
    ok = np.ones((mA, mB), dtype=bool)
    for c in range(gc.n_cohorts):
        g = list(range(int(gc.cg_start[c]), int(gc.cg_start[c + 1])))
        for j, m in product(g, g):
            if j < m:
                Nj, Nm = int(gc.gN[j]), int(gc.gN[m])
                ok &= d.denominator * np.abs(T[..., j] * Nm - T[..., m] * Nj) <= d.numerator * Nj * Nm
    value = Ao[:, None] + Bo[None, :] - 1.0
    assert 0 < ok.sum() < ok.size
    for floor in (-1e300, float(np.quantile(value[ok], 0.5)), float(value[ok].max())):
        v, ia, ib, done = fronts._pair_best(Ak, Ao, np.argsort(-Ao, kind="stable"), Bk, Bo, 1.0, floor, gc.ga_start,
                                            gc.ga_atoms, gc.cg_start, gc.gN, gc.H, gc.ch_start, np.zeros(1, np.uint8), 0)
        above = ok & (value > floor)
        assert done
        if above.any():
            assert v == value[above].max() and ia >= 0 and ok[ia, ib] and value[ia, ib] == v
        else:
            assert v == -math.inf and ia == -1 and ib == -1


def test_unsatisfiable_comparisons_are_proven_infeasible() -> None:
    """Counts that no tree can meet (a bound below every difference, written by hand: the notions
    never make one, since a single leaf meets every fairness bound): the passes prove it."""
    X, y, group, legit, data, spec = instance(2, n=12)
    p = linear_problem(data, spec)
    gc = group_counts(data, spec)
    from dataclasses import replace

    impossible = replace(gc, H=np.full_like(gc.H, -1))

    class Run:
        best, best_value, bound, lowest, explored = None, NEG, 100.0, -1e-6, 0
        proven: list = []

        def offer(self, m):
            raise AssertionError("no tree meets these counts")

        def prove(self, b):
            self.proven.append(b)

        def say(self, message):
            pass

    run = Run()
    assert count_search.Passes(run, p, impossible, Deadline(), None).solve() == "infeasible"
    assert CountSearch(p, impossible, Deadline()).best_tree(NEG).tree is None


# --------------------------------------------------------------------------- fronts of a root's children
def test_the_fronts_of_a_roots_children_keep_every_good_part_and_pass_every_bound() -> None:
    """Depth 3, the root split on feature 0: the left front (the right child's subtrees not explored
    yet) and the right front (against the left one) hold every part of every feasible tree of
    value tau, with at least its value; and every state they hold passes each bound, each of which
    removes something from the plain enumeration on one of the two instances."""
    removed: set[str] = set()
    for notion, delta, levels in (("conditional_statistical_parity", 0.0, 3), ("statistical_parity", 0.05, 2)):
        X, y, group, legit, data, spec = instance(12, n=40, n_features=3, n_groups=3, delta=delta, depth=3,
                                                   notion=notion, legit_levels=levels)
        p = linear_problem(data, spec)
        gc = group_counts(data, spec)
        dual = optimize_dual(p, Deadline(), max_solves=20)
        cs = CountSearch(p, gc, Deadline(), dual.prices)
        right = p.X[:, 0] > 0.5
        L, R = np.flatnonzero(~right), np.flatnonzero(right)
        states_L, states_R = brute_states(p, gc, L, 2), brute_states(p, gc, R, 2)
        feasible = [(vl + vr, kl, vl, kr, vr) for (kl, vl), (kr, vr) in product(states_L.items(), states_R.items())
                    if gc.holds(gc.group_totals(np.array([kl]) + np.array([kr]))[0])]
        cs.tau = tau = max(f[0] for f in feasible) - 3
        FL = cs.front(L, 2, (_Member(R, 2),), 1)
        FR = cs.front(R, 2, (_Member(L, 2, FL),), 1)
        fl = {tuple(int(v) for v in k): o for k, o in zip(FL.keys, FL.obj)}
        fr = {tuple(int(v) for v in k): o for k, o in zip(FR.keys, FR.obj)}
        # completeness: every part of a feasible tree of value >= tau
        good = [f for f in feasible if f[0] >= tau]
        assert len(good) >= 2
        for _, kl, vl, kr, vr in good:
            assert fl.get(kl, -math.inf) >= vl and fr.get(kr, -math.inf) >= vr
        # soundness of each bound on the left front
        ub_R, ubv_R = cs.dp0.value(R, 2), cs.dpv.value(R, 2)
        rest = cs._rest(gc, L)

        def each_cohort(k, v):
            mine = gc.group_totals(np.array([k]))[0]
            return all(any(v + vr >= tau - 1e-9 and cohort_holds(gc, c, mine + gc.group_totals(np.array([kr]))[0])
                           for kr, vr in states_R.items()) for c in range(gc.n_cohorts))

        bounds = {
            "value": lambda k, v: v + ub_R >= tau - 1e-9,
            "priced value": lambda k, v: v - cs.w_atom @ np.array(k) + ubv_R + cs.const >= tau - 1e-9,
            "reachability": lambda k, v: bool(fronts._reachable(gc.group_totals(np.array([k])), rest, gc.cg_start,
                                                                gc.gN, gc.H, gc.ch_start,
                                                                np.zeros(1, np.uint8), 0)[0]),
            "each cohort": each_cohort,
        }
        for name, test in bounds.items():
            assert all(test(k, v) for k, v in fl.items()), name
            if any(not test(k, v) for k, v in states_L.items()):
                removed.add(name)
        # and nothing else is dropped: the left front is every state passing them all, at its best value
        assert fl == {k: v for k, v in states_L.items() if all(test(k, v) for test in bounds.values())}
    assert removed == set(bounds)


def cohort_holds(gc, c: int, totals: np.ndarray) -> bool:
    g0, g1 = int(gc.cg_start[c]), int(gc.cg_start[c + 1])
    k = g1 - g0
    block = gc.H[gc.ch_start[c]:gc.ch_start[c] + k * k].reshape(k, k)
    return all(int(gc.gN[g0 + m]) * int(totals[g0 + j]) - int(gc.gN[g0 + j]) * int(totals[g0 + m]) <= int(block[j, m])
               for j in range(k) for m in range(k) if j != m)


# ------------------------------------------------------------------------------------------- optimum
def brute_optimum(X, y, group, legit, spec, notion, delta) -> int | None:
    best = None
    for tree in all_trees(spec.depth, X.shape[1], 2):
        pred = tree.predict(X)
        if holds(notion, delta, y, pred, group, legit, 1):
            v = int((pred == y).sum())
            best = v if best is None else max(best, v)
    return best


@pytest.mark.parametrize("n_groups", [2, 3, 4, 6])
@pytest.mark.parametrize("notion", NOTIONS)
def test_the_best_tree_is_the_brute_force_optimum(notion, n_groups) -> None:
    for seed, delta, depth in ((n_groups, 0.0, 2), (10 + n_groups, 0.1, 2), (20 + n_groups, 0.05, 1)):
        X, y, group, legit, data, spec = instance(seed, n=18, n_groups=n_groups, notion=notion, delta=delta,
                                                   depth=depth, legit_levels=3)
        p = linear_problem(data, spec)
        gc = group_counts(data, spec)
        truth = brute_optimum(X, y, group, legit, spec, notion, delta)
        found = CountSearch(p, gc, Deadline()).best_tree(NEG)
        assert found.value == truth
        pred = predict(found.tree, X)
        assert holds(notion, delta, y, pred, group, legit, 1) and int((pred == y).sum()) == truth
        assert CountSearch(p, gc, Deadline()).best_tree(truth).value == truth
        assert CountSearch(p, gc, Deadline()).best_tree(truth + 1).tree is None


@pytest.mark.parametrize("seed", range(5))
def test_depth_three_against_the_milp(seed) -> None:
    notion = NOTIONS[seed]
    X, y, group, legit, data, spec = instance(40 + seed, n=16, n_features=3, n_groups=2 + seed % 3, notion=notion,
                                               delta=[0.0, 0.05][seed % 2], depth=3, legit_levels=2)
    model = build_model(data, spec, "flow").arrays
    x = milp_solve(model)
    p = linear_problem(data, spec)
    found = CountSearch(p, group_counts(data, spec), Deadline()).best_tree(NEG)
    assert found.value == pytest.approx(model.objective(x), abs=1e-6)
    pred = predict(found.tree, X)
    assert holds(notion, spec.side_constraints[0].bound, y, pred, group, legit, 1)


# ------------------------------------------------------------------------------------ through the route
def tiny(seed: int, n: int = 46, n_features: int = 5):
    """Random rows, binary features, two groups, three legitimate levels (the instances where the
    Lagrangian bound leaves a gap: conditional parity 0 or equalized odds 0.005)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, n_features))
    group = rng.integers(0, 2, n)
    legit = rng.integers(0, 3, n)
    y = ((X[:, 0] + X[:, 1] * (group == 0) + X[:, 2] * legit / 2 + rng.random(n) * 1.5) > 1.4).astype(int)
    return X, y, group, legit


def test_the_route_certifies_by_counts_where_the_lagrangian_leaves_a_gap(monkeypatch) -> None:
    """Depth 2 on 24 rows and 4 features, against every tree: the optimum, its bound measured on its
    predictions, and the words of the proof (the counts' search on most of these, with no
    branch-and-bound before it)."""
    monkeypatch.setattr(search, "COUNTS_AFTER_SECONDS", 0.0)
    by_counts = 0
    for seed in range(20, 28):
        for notion, delta in (("conditional_statistical_parity", 0.0), ("equalized_odds", 0.005)):
            X, y, group, legit = tiny(seed, 24, 4)
            data = collapse_patterns(X, y, 2, group=group, legit=legit)
            spec = TreeSpec(depth=2, pos_label=1, side_constraints=(FAIRNESS_NOTIONS[notion](delta, 1),))
            found = exact_solve(data, spec, time_limit=60)
            assert found.status == "optimal" and found.objective == brute_optimum(X, y, group, legit, spec, notion, delta)
            assert holds(notion, delta, y, found.structure.predict(X), group, legit, 1)
            by_counts += found.reason.startswith(f"optimal by {count_search.PROVED_BY_COUNTS}")
    assert by_counts >= 8


def test_a_table_above_the_row_limit_is_left_to_the_branch_and_bound(monkeypatch) -> None:
    """The same instances with the limit just below their 24 rows: never the counts' search, the same optimum."""
    monkeypatch.setattr(search, "COUNTS_AFTER_SECONDS", 0.0)
    for limit, expect_counts in ((23, False), (24, True)):
        monkeypatch.setattr(count_search, "MAX_ROWS", limit)
        used = 0
        for seed in range(20, 24):
            X, y, group, legit = tiny(seed, 24, 4)
            data = collapse_patterns(X, y, 2, group=group, legit=legit)
            spec = TreeSpec(depth=2, pos_label=1,
                            side_constraints=(FAIRNESS_NOTIONS["conditional_statistical_parity"](0.0, 1),))
            found = exact_solve(data, spec, time_limit=60)
            assert found.status == "optimal"
            assert found.objective == brute_optimum(X, y, group, legit, spec, "conditional_statistical_parity", 0.0)
            used += found.reason.startswith(f"optimal by {count_search.PROVED_BY_COUNTS}")
        assert (used > 0) == expect_counts, (limit, used)


def test_depth_four_against_the_lagrangian_branch_and_bound(monkeypatch) -> None:
    """Depth 4, where fronts of depth-3 subtrees are merged from their children's: the optimum of the
    counts alone, and of a brief branch-and-bound handing over to them (its bounds and incumbent
    kept), equals the one the Lagrangian branch-and-bound certifies without the counts, and its
    bound holds when measured on its predictions."""
    by_counts = handed_over = 0
    for seed in range(30, 36):
        for notion, delta in (("conditional_statistical_parity", 0.0), ("equalized_odds", 0.005)):
            X, y, group, legit = tiny(seed, 32, 4)
            data = collapse_patterns(X, y, 2, group=group, legit=legit)
            spec = TreeSpec(depth=4, pos_label=1, side_constraints=(FAIRNESS_NOTIONS[notion](delta, 1),))
            with monkeypatch.context() as m:
                m.setattr(search, "COUNTS_AFTER_SECONDS", 0.0)
                found = exact_solve(data, spec, time_limit=60)
            with monkeypatch.context() as m:
                m.setattr(search, "COUNTS_AFTER_SECONDS", 0.002)
                both = exact_solve(data, spec, time_limit=60)
            with monkeypatch.context() as m:
                m.setattr(count_search, "applies", lambda problem, counts: False)
                other = exact_solve(data, spec, time_limit=120)
            assert found.status == both.status == other.status == "optimal"
            assert found.objective == both.objective == other.objective
            for result in (found, both):
                pred = result.structure.predict(X)
                assert holds(notion, delta, y, pred, group, legit, 1) and int((pred == y).sum()) == result.objective
            by_counts += found.reason.startswith(f"optimal by {count_search.PROVED_BY_COUNTS}")
            handed_over += both.reason.startswith(f"optimal by {count_search.PROVED_BY_COUNTS}")
    assert by_counts >= 9 and handed_over >= 1


def test_the_fitted_record_names_the_method_and_the_bound_holds_on_the_predictions(monkeypatch) -> None:
    """The estimator's record says the counts' search proved the tree; the Lagrangian
    branch-and-bound (the route before it) certifies the same optimum."""
    monkeypatch.setattr(search, "COUNTS_AFTER_SECONDS", 0.0)
    X, y, group, legit = tiny(2)
    fit = dict(sensitive_features=group, legitimate_features=legit)
    clf = StrongTreeClassifier(depth=3, fairness="conditional_statistical_parity", fairness_bound=0.1, pos_label=1,
                               time_limit=60).fit(X, y, **fit)
    assert clf.record_.certified and clf.record_.status == "optimal"
    assert count_search.PROVED_BY_COUNTS in clf.record_.choice
    pred = clf.predict(X)
    assert holds("conditional_statistical_parity", 0.1, y, pred, group, legit, 1)
    assert all(c["satisfied"] for c in clf.constraint_checks_)
    assert clf.record_.objective == int((pred == y).sum()) > max(np.bincount(y))
    monkeypatch.setattr(count_search, "applies", lambda problem, counts: False)
    other = StrongTreeClassifier(depth=3, fairness="conditional_statistical_parity", fairness_bound=0.1, pos_label=1,
                                 time_limit=120).fit(X, y, **fit)
    assert other.record_.certified and count_search.PROVED_BY_COUNTS not in other.record_.choice
    assert other.record_.objective == clf.record_.objective


# ------------------------------------------------------------------------------------- each bound alone
def searched(seed: int = 12, depth: int = 3, notion: str = "conditional_statistical_parity", delta: float = 0.0):
    X, y, group, legit, data, spec = instance(seed, n=40, n_features=4, n_groups=3, delta=delta, depth=depth,
                                               notion=notion, legit_levels=3)
    p = linear_problem(data, spec)
    gc = group_counts(data, spec)
    dual = optimize_dual(p, Deadline(), max_solves=20)
    return p, gc, CountSearch(p, gc, Deadline(), dual.prices)


def test_reachability_alone_filters_a_front_without_context() -> None:
    p, gc, cs = searched()
    S = np.flatnonzero(p.X[:, 1] > 0.5)
    cs.tau = NEG
    feats, T, MM = cs._pair_sums(S)
    keys, obj, back, _, _ = fronts._enumerate(T, MM, feats, cs.cols, cs.one_set, cs.cnt, cs.K, cs.pos, cs.pen,
                                              cs.min_leaf, NEG, NEG, cs.w_atom, 2, _MULT, cs.flag, 0)
    f = cs._filter(Front(keys, obj, back, "enumerated"), S, 2, (), 0)
    rest = cs._rest(gc, S)
    N = gc.gN
    expected = set()
    for k in keys:
        s = gc.group_totals(k[None])[0]
        if any(gc.holds(np.array(t)) for t in product(*[range(a, a + b + 1) for a, b in zip(s, rest)])):
            expected.add(tuple(int(v) for v in k))
    assert {tuple(int(v) for v in k) for k in f.keys} == expected
    assert 0 < len(expected) < len(keys) and len(N) == gc.n_groups


def test_thresholds_are_tau_less_the_rests_bounds() -> None:
    p, gc, cs = searched(delta=0.02, notion="statistical_parity")
    cs.tau = tau = 20.0
    right = p.X[:, 0] > 0.5
    L, R = np.flatnonzero(~right), np.flatnonzero(right)
    FR = cs.front(R, 2, (_Member(L, 2),), 1)
    t0, tv = cs._thresholds((_Member(L, 2), _Member(R, 2, FR)), 3)
    ub0 = cs.dp0.value(L, 2) + FR.obj.max()
    ubv = cs.dpv.value(L, 2) + (FR.obj - FR.keys @ cs.w_atom).max()
    assert t0 == pytest.approx(tau + 3 * cs.pen - ub0) and tv == pytest.approx(tau - cs.const + 3 * cs.pen - ubv)
    assert np.any(cs.w_atom != 0)


@pytest.mark.parametrize("depth, notion, delta, priced", [(3, "conditional_statistical_parity", 0.0, True),
                                                          (4, "statistical_parity", 0.05, True),
                                                          (4, "equalized_odds", 0.0, True),
                                                          (3, "statistical_parity", 0.0, True),
                                                          (4, "statistical_parity", 0.05, False)])
def test_every_front_asked_for_can_reach_its_thresholds(depth, notion, delta, priced) -> None:
    """A set's front is made only when its subtrees' bounds (the dynamic program, plain and priced)
    reach the thresholds the rest leaves it: the bounds of each split prune before any front is made."""
    p, gc, cs = searched(seed=13, depth=depth, notion=notion, delta=delta)
    if not priced:
        cs = CountSearch(p, gc, Deadline())
    made = []
    front, sc_raw = cs.front, cs._sc_raw

    def watched_front(S, d, ctx, splits):
        t0, tv = cs._thresholds(ctx, splits)
        made.append((S, d, t0, tv))
        return front(S, d, ctx, splits)

    def watched_sc(S, d, floor, wanted):
        made.append((S, d, floor, NEG))
        return sc_raw(S, d, floor, wanted)

    cs.front, cs._sc_raw = watched_front, watched_sc
    optimum = CountSearch(p, gc, Deadline()).best_tree(NEG).value
    for tau in (optimum + 1, optimum - 2):
        found = cs.best_tree(tau)
        assert (found.value == optimum) == (tau <= optimum)
    assert len(made) > 3
    for S, d, t0, tv in made:
        assert cs.dp0.value(S, d) >= t0 - 1e-7
        assert cs.dpv is None or cs.dpv.value(S, d) >= tv - 1e-7


def test_passes_prove_only_what_they_searched() -> None:
    """Each failed pass proves "nothing of value tau or more", no more; the last finds the optimum."""
    p, gc, cs = searched(seed=14, depth=3, notion="statistical_parity", delta=0.02)
    optimum = CountSearch(p, gc, Deadline()).best_tree(NEG).value

    class Run:
        best, best_value, lowest, explored = None, NEG, -1e-6, 0

        def __init__(self, bound):
            self.bound, self.proven = bound, []

        def offer(self, m):
            value = p.value(m.parts, m.n_branching)
            if satisfies(p, m) and value > self.best_value:
                self.best, self.best_value = m, value
                return True
            return False

        def prove(self, b):
            self.proven.append(b)
            self.bound = min(self.bound, b)

        def say(self, message):
            pass

    for bound in (optimum + 1, optimum + 2, optimum + 9):
        run = Run(bound)
        assert count_search.Passes(run, p, gc, Deadline(), None).solve() == "optimal"
        assert run.best_value == optimum and run.proven[-1] == optimum
        assert all(b >= optimum for b in run.proven) and len(run.proven) >= (1 if bound == optimum + 1 else 2)


def test_options_that_cannot_reach_the_thresholds_are_left_out() -> None:
    rng = np.random.default_rng(4)
    n, nt = 40, 2
    okey = rng.integers(0, 3, (n, 3)).astype(float)
    oval = rng.integers(0, 10, n).astype(float)
    opv = oval - okey[:, 1:3] @ np.array([0.5, 1.0])
    ocode = np.arange(3 * n).reshape(n, 3)
    pkey, pval, ppv, pcode = np.zeros((n, nt)), np.zeros(n), np.zeros(n), np.zeros((n, 3), np.int64)
    slots, stamp, hs, key = np.zeros(256, np.int64), np.zeros(256, np.int64), np.zeros(n, np.uint64), np.zeros(nt + 1, np.int64)
    top, toppv, pen, t0, tv = 6.0, 8.0, 1.0, 10.0, 10.5  # some options fail the value alone, some the price alone
    m = fronts._project(okey, oval, opv, ocode, n, 1, 3, top, toppv, pen, t0, tv, slots, stamp, 1, _MULT, key, hs, pkey,
                        pval, ppv, pcode)
    expected: dict = {}
    for x in range(n):
        if oval[x] + top - pen >= t0 and opv[x] + toppv - pen >= tv:
            k = tuple(okey[x, 1:3])
            if oval[x] > expected.get(k, (-math.inf,))[0]:
                expected[k] = (oval[x], tuple(ocode[x]))
    assert {tuple(k): (v, tuple(c)) for k, v, c in zip(pkey[:m], pval[:m], pcode[:m])} == expected
    assert 0 < m < n


def test_distinct_rows_keep_the_best_value_of_each() -> None:
    rng = np.random.default_rng(9)
    rows = rng.integers(0, 3, (200, 2))
    values = rng.normal(size=200)
    first, inverse, best = fronts._distinct_rows(np.ascontiguousarray(rows, dtype=np.int64), values, _MULT,
                                                 np.zeros(1, np.uint8), 0)
    expected: dict = {}
    for r, v in zip(map(tuple, rows), values):
        expected[r] = max(expected.get(r, -math.inf), v)
    assert {tuple(rows[f]): b for f, b in zip(first, best)} == expected
    assert all(tuple(rows[first[inverse[x]]]) == tuple(rows[x]) for x in range(200))
    keys, vals = count_search._best_per_row(rows, values)
    assert {tuple(k): v for k, v in zip(keys, vals)} == expected and np.all(np.diff(vals) <= 0)


# ---------------------------------------------------------------------------------------- stopping
PAST = 1  # a deadline (ns of the monotonic clock) long passed: the kernels read the clock themselves


def test_each_long_kernel_reads_the_flag_and_the_clock() -> None:
    """The kernels that run long (the enumeration, merges, reachability, the rest's best, the best pair
    at the root) end at once when the stop flag is up, and raise it themselves once the clock is past
    their deadline; with no deadline they finish.  A stopped kernel removes nothing it did not check."""
    p, gc, cs = searched(seed=12, depth=3)
    S = np.arange(p.n_patterns)
    feats, T, MM = cs._pair_sums(S)

    def enumerate_(flag, limit):
        return fronts._enumerate(T, MM, feats, cs.cols, cs.one_set, cs.cnt, cs.K, cs.pos, cs.pen, cs.min_leaf, NEG, NEG,
                                 cs.w_atom, 2, _MULT, flag, limit)

    keys, obj, back, _, done = enumerate_(np.zeros(1, np.uint8), 0)
    assert done and obj.size > 100
    totals = gc.group_totals(keys.astype(np.int64))
    rest = np.zeros(gc.n_groups, dtype=np.int64)
    whole = fronts._reachable(totals, rest, gc.cg_start, gc.gN, gc.H, gc.ch_start, np.zeros(1, np.uint8), 0)
    assert not whole.all()  # the check removes some: a stopped one must not
    order = np.argsort(-obj, kind="stable")
    one = gc.cohort(0)
    k1 = np.ascontiguousarray(totals[:, one.cg_start[0]:one.cg_start[1]])

    def calls(flag, limit):
        table = table_of(gc.n_atoms, flag, limit)
        try:
            table.merge(Front(keys, obj, back, "merged"), obj, Front(keys, obj, back, "merged"), obj, cs.pen, NEG, NEG,
                        0, order)
            merged = True
        except count_search.SearchStopped:
            merged = False
        return {
            "enumerate": enumerate_(flag, limit)[4],
            "merge": merged,
            "reachable": fronts._reachable(totals, rest, gc.cg_start, gc.gN, gc.H, gc.ch_start, flag, limit),
            "rest's best": fronts._rest_best(k1, k1, obj[order], k1, obj[order], one.cg_start, one.gN, one.H,
                                             one.ch_start, 0, _MULT, flag, limit),
            "pair": fronts._pair_best(keys, obj, order, keys, obj, cs.pen, -1e300, gc.ga_start, gc.ga_atoms,
                                      gc.cg_start, gc.gN, gc.H, gc.ch_start, flag, limit)[3],
        }

    for name in ("enumerate", "merge", "reachable", "rest's best", "pair"):
        for flag, limit in ((np.ones(1, np.uint8), 0), (np.zeros(1, np.uint8), PAST)):
            got = calls(flag, limit)[name]
            assert flag[0] == 1, name
            if name == "reachable":
                assert got.all()  # nothing looked at, nothing removed
            elif name == "rest's best":
                assert np.all(got == np.inf)  # no bound from a stopped call
            else:
                assert not got, name
        flag = np.zeros(1, np.uint8)
        got = calls(flag, 0)[name]
        assert flag[0] == 0, name
        if name == "reachable":
            assert np.array_equal(got, whole)
        elif name == "rest's best":
            assert np.isfinite(got).any()
        else:
            assert got, name


def test_a_search_past_its_deadline_inside_a_kernel_stops_there() -> None:
    """The count search's deadline is read by the kernels (no thread watches it in the main thread):
    with the kernels' deadline passed and the Python-side one not, the search stops in its first
    kernel, raising the flag the rest of the fit reads; a stop already requested stops it too."""
    p, gc, cs = searched(seed=12, depth=3)
    assert cs.limit == 0  # no deadline
    cs.limit = PAST
    with pytest.raises(count_search.SearchStopped):
        cs.best_tree(NEG)
    assert cs.flag[0] == 1 and cs.deadline.passed
    stop = threading.Event()
    stop.set()
    with pytest.raises(count_search.SearchStopped):
        CountSearch(p, gc, Deadline(stop=stop)).best_tree(NEG)
    soon = Deadline(at=time.perf_counter() + 3600.0)
    assert CountSearch(p, gc, soon).limit > 0


@pytest.mark.timing
def test_a_stop_requested_in_the_main_thread_reaches_the_kernels() -> None:
    """In the main thread no slice of this search reads the stop request: a thread watches it and
    raises the kernels' flag (waited for here, not timed)."""
    p, gc, _ = searched(seed=12, depth=3)
    stop = threading.Event()
    deadline = Deadline(stop=stop)
    try:
        cs = CountSearch(p, gc, deadline)
        assert not cs.flag[0]
        stop.set()
        waited = time.perf_counter()
        while not cs.flag[0] and time.perf_counter() - waited < 30.0:
            time.sleep(0.005)
        assert cs.flag[0] == 1
    finally:
        deadline.close()


@pytest.mark.parametrize("stop_at", [1, 2])
def test_a_count_search_stopped_between_or_in_passes_keeps_a_valid_bound(monkeypatch, stop_at) -> None:
    """``exact_solve`` with the counts' search stopped inside its ``stop_at``-th pass (its kernels'
    deadline set in the past there): the result says stopped, not optimal; its bound is at least the
    brute-force optimum and its tree, if any, meets the bound when measured on its predictions.  At
    least one instance is stopped in a pass after a first pass proved a bound below the Lagrangian
    one (the bound then comes from the counts' search)."""
    monkeypatch.setattr(search, "COUNTS_AFTER_SECONDS", 0.0)
    original = CountSearch.best_tree
    calls = []

    def stopping(self, tau, best=NEG, stop=True):
        calls.append(tau)
        if stop and len(calls) == stop_at:
            self.limit = PAST
        return original(self, tau, best)

    stopped = tighter = 0
    for seed in range(20, 28):
        for notion, delta in (("conditional_statistical_parity", 0.0), ("equalized_odds", 0.005)):
            X, y, group, legit = tiny(seed, 24, 4)
            data = collapse_patterns(X, y, 2, group=group, legit=legit)
            spec = TreeSpec(depth=2, pos_label=1, side_constraints=(FAIRNESS_NOTIONS[notion](delta, 1),))
            truth = brute_optimum(X, y, group, legit, spec, notion, delta)
            calls.clear()
            with monkeypatch.context() as m:
                m.setattr(CountSearch, "best_tree", lambda self, tau, best=NEG: stopping(self, tau, best, stop=False))
                exact_solve(data, spec, time_limit=60)
            if len(calls) < stop_at:
                continue
            calls.clear()
            with monkeypatch.context() as m:
                m.setattr(CountSearch, "best_tree", stopping)
                found = exact_solve(data, spec, time_limit=60)
            assert len(calls) == stop_at
            assert found.status == "stopped" and found.reason.startswith("stopped by the time limit or a stop request")
            assert count_search.PROVED_BY_COUNTS in found.reason
            assert found.bound is not None and truth is not None and found.bound >= truth
            if found.structure is not None:
                pred = found.structure.predict(X)
                assert holds(notion, delta, y, pred, group, legit, 1) and found.objective == int((pred == y).sum())
                assert found.objective <= truth
            stopped += 1
            tighter += found.bound <= calls[0] - 1  # below the first pass's threshold: proven by it
    assert stopped >= 4
    if stop_at == 2:
        assert tighter >= 1


@pytest.mark.parametrize("name, where", [("_enumerate", "front"), ("_enumerate", "_sc_raw"), ("_merge", "front"),
                                         ("_merge", "_sc_raw"), ("_reachable", "_filter"), ("_reachable", "_sc_raw"),
                                         ("_rest_best", "_cohort_bounds"), ("_pair_best", "best_tree"),
                                         ("_enumerate", "front, leaves"), ("_group_totals", "_filter"),
                                         ("_group_totals", "_sc_fronts"), ("_group_totals", "_cohort_front"),
                                         ("_distinct_rows", "_cohort_bounds"), ("_distinct_rows", "_best_per_row"),
                                         ("_put_all", "front"), ("_put_all", "_sc_raw"), ("_order", "front"),
                                         ("_order", "_sc_raw"), ("_order", "best_tree"), ("_order", "_best_per_row")])
def test_a_kernel_that_saw_the_deadline_ends_the_search_at_once(monkeypatch, name, where) -> None:
    """Each kernel that reads the deadline, the first time the search calls it from ``where``, is given
    one already passed: the search raises SearchStopped right after that call (no kernel, not even a
    cheap one, runs after it), so a stopped reachability or cohort bound, or totals, distinct rows,
    a table or an order left half made, is never taken for a finished one.  "front, leaves": the
    leaves' enumeration (depth 0) of a front above depth 2."""
    X, y, group, legit = tiny(30, 32, 4)  # an instance whose search calls each of them from each place
    data = collapse_patterns(X, y, 2, group=group, legit=legit)
    spec = TreeSpec(depth=4, pos_label=1, side_constraints=(FAIRNESS_NOTIONS["equalized_odds"](0.005, 1),))
    cs = CountSearch(linear_problem(data, spec), group_counts(data, spec), Deadline())
    log, forced = [], []
    for kernel in ("_enumerate", "_merge", "_reachable", "_rest_best", "_pair_best", "_group_totals", "_feasible",
                   "_distinct_rows", "_put_all", "_order"):
        def wrapped(*args, real=getattr(fronts, kernel), kernel=kernel):
            log.append(kernel)
            callers = (sys._getframe(1).f_code.co_name, sys._getframe(2).f_code.co_name)
            if kernel == "_enumerate":  # the leaves alone (depth 0) only where asked for
                leaves = where == "front, leaves"
                if (args[13] == 0) != leaves or (leaves and sys._getframe(1).f_locals["depth"] <= 2):
                    return real(*args)
            if kernel == "_put_all" and args[0].shape[0] == 0:
                return real(*args)  # nothing to put: nothing to stop
            if kernel == name and where.split(",")[0] in callers and not forced:
                forced.append(len(log))
                return real(*args[:-1], PAST)
            return real(*args)
        monkeypatch.setattr(fronts, kernel, wrapped)
    with pytest.raises(count_search.SearchStopped):
        cs.best_tree(NEG)
    assert forced and len(log) == forced[0], (forced, len(log), log[forced[0] - 1:][:5] if forced else None)


# ------------------------------------------------------------------------------- long passes over a front
def test_the_order_kernel_is_numpys_stable_order_of_the_negated_values() -> None:
    """``fronts._order`` (a merge sort that reads the deadline) gives ``np.argsort(-v, kind="stable")``:
    equal values in the order met, across run and merge boundaries, and the infinities in place."""
    rng = np.random.default_rng(5)
    cases = [np.zeros(0), np.ones(1), rng.integers(0, 3, 31).astype(float), rng.integers(0, 3, 33).astype(float),
             rng.integers(0, 5, 1000).astype(float), rng.normal(size=4097), rng.integers(0, 50, 70_001).astype(float),
             np.array([1.0, -np.inf, np.inf, 0.0, -0.0, np.inf, 2.0])]
    for values in cases:
        order, done = fronts._order(values, np.zeros(1, np.uint8), 0)
        assert done and np.array_equal(order, np.argsort(-values, kind="stable")), values.size


def test_copies_and_gathers_of_a_front_look_at_the_deadline_between_chunks() -> None:
    """The Python steps over a whole front (the table's arrays, keeping some states, a gather of rows and
    columns, the distinct rows by value) look at the deadline every ``CHUNK`` states: with a clock that
    passes the deadline at the second look they stop there; with none they give numpy's answer."""
    n = 3 * count_search.CHUNK + 5
    rng = np.random.default_rng(3)
    keys = np.stack([np.arange(n), rng.integers(0, 9, n)], axis=1).astype(np.int32)
    obj = rng.normal(size=n)
    back = rng.integers(0, 9, (n, 3))
    looks: list = []

    def clock(at: int):
        def check() -> None:
            looks.append(1)
            if len(looks) >= at:
                raise count_search.SearchStopped
        looks.clear()
        return check

    table = table_of(2)
    table.put_all(keys, obj, back)
    keep = rng.random(n) < 0.7
    idx = np.flatnonzero(keep)
    rows = rng.integers(0, 100, (n, 3))
    front = Front(keys, obj, back, "merged")
    steps = {
        "arrays": (lambda check: (setattr(table, "check", check), table.arrays())[1], (keys, obj, back)),
        "take": (lambda check: (lambda f: (f.keys, f.obj, f.back))(front.take(keep, check)),
                 (keys[keep], obj[keep], back[keep])),
        "gather": (lambda check: (count_search._gather(rows, idx, check, np.array([2, 0])),),
                   (rows[idx][:, [2, 0]],)),
        "best per row": (lambda check: count_search._best_per_row(rows, obj, None, 0, check),
                         count_search._best_per_row(rows, obj)),
    }
    for name, (step, expected) in steps.items():
        got = step(clock(10**9))
        assert all(np.array_equal(a, b) for a, b in zip(got, expected)), name
        assert len(looks) >= 2, name  # a front this long is looked at between chunks
        with pytest.raises(count_search.SearchStopped):
            step(clock(2))
        assert len(looks) == 2, name


def test_priced_values_of_a_long_front_are_the_product_and_look_at_the_deadline() -> None:
    """The priced values of a front, by chunks: ``obj - keys @ w`` exactly, and stopped at the deadline."""
    p, gc, cs = searched(seed=12, depth=3)
    assert cs.dpv is not None
    n = 2 * count_search.CHUNK + 7
    rng = np.random.default_rng(4)
    keys = rng.integers(0, 6, (n, gc.n_atoms)).astype(np.int32)
    obj = rng.normal(size=n)
    f = Front(keys, obj, np.zeros((n, 3), np.int64), "merged")
    assert np.array_equal(cs._pv(f), obj - keys.astype(np.float64) @ cs.w_atom)
    cs.deadline = Deadline(at=time.perf_counter() - 1.0)  # passed: the first look stops it
    with pytest.raises(count_search.SearchStopped):
        cs._pv(Front(keys, obj, np.zeros((n, 3), np.int64), "merged"))


def soon_enough(spent: float, whole: float) -> bool:
    """A step stopped 5 ms in (wall) used little CPU: the 5 ms, and 15 ms or a tenth of the whole step
    more (a busy machine slows every look), where the whole step took more than twice that."""
    allowed = 0.005 + max(0.015, whole / 10)
    assert whole > 2 * allowed, whole  # long enough to mean something
    return spent < allowed


def _long_pass(name: str):
    """A kernel that makes one pass over a front of ``2**20`` states (or its table, or its index), as
    ``(arguments before the flag and the clock, the kernel, how to read "stopped" from its answer)``."""
    m = 1 << 20
    rng = np.random.default_rng(8)
    keys = rng.integers(0, 200, (m, 12)).astype(np.int32)
    vals = rng.normal(size=m)
    one = np.arange(13, dtype=np.int64)
    if name == "grow":  # the slots are made again: only their number is read
        hs = rng.integers(0, 2**63 - 1, m, dtype=np.int64).astype(np.uint64)
        return (np.empty(2 * m, dtype=np.int64), hs, keys, vals, np.zeros((m, 3), np.int64), m), fronts._grow, None
    if name == "put all":
        t = table_of(12)
        return ((keys[: m // 4], vals[: m // 4], np.zeros((m // 4, 3), np.int64), t.slots, t.hs, t.keys, t.obj, t.back,
                 0, _MULT), fronts._put_all, lambda r: not r[6])
    if name == "group totals":
        return (keys, one, one[:12]), fronts._group_totals, None
    if name == "distinct rows":
        return (np.ascontiguousarray(keys[:, :4], dtype=np.int64), vals, _MULT), fronts._distinct_rows, None
    if name == "pair forms":
        cohorts = np.array([0, 2, 4, 6, 8, 10, 12], dtype=np.int64)
        return (keys, one, one[:12], cohorts, np.full(12, 300, dtype=np.int64)), fronts._pair_forms, None
    if name == "index":
        return (rng.integers(-500, 500, (m, 4)), vals), fronts._kd_build, None
    return (vals,), fronts._order, lambda r: not r[1]


@pytest.mark.timing
@pytest.mark.parametrize("name", ["grow", "put all", "group totals", "distinct rows", "pair forms", "index", "order"])
def test_a_deadline_inside_a_long_pass_over_a_front_stops_it_there(name) -> None:
    """A front of Adult's counts (its row limit lifted) held 3.2 million states, and one pass over it
    (growing its table, its groups' totals, its distinct rows, its order, the index of its pairs' forms)
    took 0.2-0.5 s of CPU: longer than the engine waits for the search past its time limit
    (``EXACT_GRACE``), so the engine gave the search up and dropped its bound.  Here the clock passes the
    deadline 5 ms into such a pass over 2**20 states: the pass raises the flag and returns, having used
    little of the CPU the whole pass takes (:func:`soon_enough`; CPU of this thread: a busy machine slows
    both).
    The deadline falls in a pass's first part (the slots of a growth, the runs of the order): the looks
    of its later parts are not needed here (``test_front_looks.py`` places the deadline in those, by a
    count of the looks instead of the clock)."""
    args, kernel, stopped = _long_pass(name)
    flag = np.zeros(1, np.uint8)
    cpu = time.thread_time()
    kernel(*args, flag, 0)
    whole = time.thread_time() - cpu
    assert flag[0] == 0
    args, kernel, _ = _long_pass(name)  # fresh arguments (a pass may write into them)
    cpu = time.thread_time()
    answer = kernel(*args, flag, fronts.monotonic_ns() + 5_000_000)
    spent = time.thread_time() - cpu
    assert flag[0] == 1, name
    assert stopped is None or stopped(answer), name
    assert soon_enough(spent, whole), (name, spent, whole)


@pytest.mark.timing
@pytest.mark.parametrize("phase", ["into the table", "filtered"])
def test_a_deadline_inside_the_steps_after_a_long_merge_stops_the_search_there(phase) -> None:
    """The steps after a merge of 2**20 states (into a table, out of it, reachability and keeping the
    states it leaves), with the deadline 5 ms into ``phase`` (the phases before it done first, without
    one): the search raises SearchStopped having used little of the CPU the phase takes whole
    (:func:`soon_enough`), instead of finishing the pass it was in.  (Copying the table out looks at
    the deadline between chunks: too fast here to time, it is checked with a counting clock above.)"""
    p, gc, cs = searched(seed=12, depth=3)
    S = np.arange(p.n_patterns)
    m = 1 << 20
    rng = np.random.default_rng(6)
    keys = rng.integers(0, 1000, (m, gc.n_atoms)).astype(np.int32)  # nearly all distinct, nearly all unreachable
    keys[:5] = 0  # nobody predicted positive: meets every comparison
    obj = rng.normal(size=m)
    back = rng.integers(0, 9, (m, 3))
    phases = ("into the table", "out of it", "filtered")

    def before(phase: str) -> list:
        """What the phases before ``phase`` made: the table, and its arrays."""
        made = [count_search._Table(gc.n_atoms, cs.flag, cs.limit, cs._check)]
        if phases.index(phase) > 0:
            made[0].put_all(keys, obj, back)
        if phases.index(phase) > 1:
            made.append(made[0].arrays())
        return made

    def step(phase: str, made: list):
        table = made[0]
        table.flag, table.limit = cs.flag, cs.limit
        if phase == "into the table":
            return table.put_all(keys, obj, back)
        if phase == "out of it":
            return table.arrays()
        return cs._filter(Front(*made[1], "merged"), S, 3, (), 0)

    made = before(phase)
    cpu = time.thread_time()
    out = step(phase, made)
    whole = time.thread_time() - cpu
    if phase == "filtered":
        assert 0 < len(out) < m  # reachability removes some states
    made = before(phase)
    cs.deadline = Deadline(at=time.perf_counter() + 0.005)
    cs.flag, cs.limit = cs.deadline.flag(), count_search.clock_limit(cs.deadline.at)
    cpu = time.thread_time()
    with pytest.raises(count_search.SearchStopped):
        step(phase, made)
    spent = time.thread_time() - cpu
    assert soon_enough(spent, whole), (spent, whole)
