"""The compiled dynamic program (``accel/treedp.py`` behind ``accel/dp.GainDP``)
is exact: checked against every tree, a plain recursion with no bounds and no
cache, the numpy program, and itself on several threads.

What it must get right: arbitrary gains (negative ones, several classes), a
penalty per branching node, a minimum leaf size (eq. 10) and a bound on the
branching nodes (eq. 8) counted in its states, dense features (counted by their
zeros), rows that are the sum of the gains (plain accuracy: no row column), the
floor below which it may give up, and the tree it reads back from its cache.
"""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest
from brute_force import all_trees
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strongtree_core.accel import dp as dp_module
from strongtree_core.accel import treedp
from strongtree_core.accel.dp import Deadline, GainDP, NumpyGainDP, SearchStopped, tree_branchings, tree_to_structure
from strongtree_core.accel.search import exact_solve
from strongtree_core.encoding.patterns import collapse_patterns
from strongtree_core.formulation.objectives import tree_objective
from strongtree_core.formulation.spec import TreeSpec

pytestmark = pytest.mark.skipif(not treedp.library.usable(), reason="numba is not installed")


@pytest.fixture(scope="module", autouse=True)
def compiled_program():
    """The compiled program, here and now (built in this process when the
    installation's build is not there yet): GainDP takes it only when ready."""
    treedp.library.implementation("_solve")
    assert treedp.available()


def _instance(rng, n: int, F: int, K: int, integer_gains: bool):
    """Features with a random density each (dense ones are counted by their zeros),
    gains either arbitrary (a row column of its own) or class counts (rows = their sum)."""
    X = (rng.random((n, F)) < rng.uniform(0.05, 0.95, F)).astype(float)
    if integer_gains:
        s = np.zeros((n, K))
        s[np.arange(n), rng.integers(0, K, n)] = rng.integers(1, 4, n)
        s[rng.random(n) < 0.3, 0] += 1  # some patterns hold rows of two classes
        count = s.sum(axis=1)
    else:
        s = rng.normal(size=(n, K)).round(2)
        count = rng.integers(1, 4, n).astype(float)
    return X, s, count


def _value(X, s, count, tree, pen, min_leaf):
    """Value of a nested tree on every pattern (-inf if a leaf is below min_leaf), and its branchings."""
    def walk(t, idx):
        if isinstance(t, tuple):
            right = X[idx, t[0]] > 0.5
            a, na = walk(t[1], idx[~right])
            b, nb = walk(t[2], idx[right])
            return a + b - pen, na + nb + 1
        if count[idx].sum() < min_leaf:
            return -math.inf, 0
        return float(s[idx, t].sum()), 0

    return walk(tree, np.arange(X.shape[0]))


def _brute_force(X, s, count, depth, pen, min_leaf, budget):
    best = -math.inf
    for tree in all_trees(depth, X.shape[1], s.shape[1]):
        if budget is not None and tree.n_branching > budget:
            continue
        leaves = tree.apply(X)
        if any(count[leaves == n].sum() < min_leaf for n in tree.leaves):
            continue
        pred = tree.predict(X)
        best = max(best, float(s[np.arange(X.shape[0]), pred].sum()) - pen * tree.n_branching)
    return best


def _recursion(X, s, count, idx, depth, pen, min_leaf, budget):
    """best(D, d, b) by trying every split and every share of the budget: no bounds, no cache."""
    leaf = float(s[idx].sum(axis=0).max()) if count[idx].sum() >= min_leaf else -math.inf
    if depth == 0 or budget == 0:
        return leaf
    best = leaf
    need = max(1, min_leaf)
    for f in range(X.shape[1]):
        left, right = idx[X[idx, f] < 0.5], idx[X[idx, f] > 0.5]
        if count[left].sum() < need or count[right].sum() < need:
            continue
        cap = 2 ** (depth - 1) - 1
        for bl in range(max(0, budget - 1 - cap), min(cap, budget - 1) + 1):
            v = _recursion(X, s, count, left, depth - 1, pen, min_leaf, bl) + \
                _recursion(X, s, count, right, depth - 1, pen, min_leaf, budget - 1 - bl) - pen
            best = max(best, v)
    return best


def _check(dp, X, s, count, depth, pen, min_leaf, budget, truth) -> None:
    idx = np.arange(X.shape[0])
    value, tree = dp.exact(idx, depth, budget)
    assert value == pytest.approx(truth, abs=1e-9)
    if math.isfinite(truth):
        worth, branchings = _value(X, s, count, tree, pen, min_leaf)
        assert worth == pytest.approx(value, abs=1e-9)
        assert branchings == tree_branchings(tree)
        if budget is not None:
            assert branchings <= budget
        tree_to_structure(tree, depth)  # no deeper than asked
        # a floor below the optimum gives it; at or above it, nothing
        assert dp.best(idx, depth, value - 0.5, budget)[0] == pytest.approx(value)
        fresh = GainDP(X, count, s, pen, min_leaf)
        assert fresh.best(idx, depth, value + 1e-6, budget) is None
        assert fresh.upper(idx, depth, budget) >= value - 1e-9


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), depth=st.integers(1, 2), K=st.integers(2, 3), integer_gains=st.booleans(),
       min_leaf=st.sampled_from([0, 1, 2, 4]), pen=st.sampled_from([0.0, 0.3, 2.0]), bounded=st.booleans())
def test_every_tree_brute_force(seed, depth, K, integer_gains, min_leaf, pen, bounded) -> None:
    """Against every tree of depth 1 or 2 on up to three features."""
    rng = np.random.default_rng(seed)
    F = int(rng.integers(1, 4))
    X, s, count = _instance(rng, int(rng.integers(2, 25)), F, K, integer_gains)
    budget = int(rng.integers(0, 2 ** depth)) if bounded else None
    truth = _brute_force(X, s, count, depth, pen, min_leaf, budget)
    _check(GainDP(X, count, s, pen, min_leaf), X, s, count, depth, pen, min_leaf, budget, truth)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), depth=st.integers(3, 4), K=st.integers(2, 3), integer_gains=st.booleans(),
       min_leaf=st.sampled_from([0, 1, 3]), pen=st.sampled_from([0.0, 0.5]), bounded=st.booleans())
def test_depth_three_and_four_against_the_plain_recursion(seed, depth, K, integer_gains, min_leaf, pen, bounded) -> None:
    rng = np.random.default_rng(seed)
    X, s, count = _instance(rng, int(rng.integers(4, 30)), int(rng.integers(2, 5)), K, integer_gains)
    budget = int(rng.integers(0, 2 ** depth)) if bounded else None
    idx = np.arange(X.shape[0])
    truth = _recursion(X, s, count, idx, depth, pen, min_leaf, 2 ** depth - 1 if budget is None else budget)
    _check(GainDP(X, count, s, pen, min_leaf), X, s, count, depth, pen, min_leaf, budget, truth)


@pytest.mark.parametrize("seed", range(6))
def test_the_compiled_and_numpy_programs_agree(seed) -> None:
    """Larger sets (200 patterns, 14 features, depth 3): both programs find the same optimum."""
    rng = np.random.default_rng(seed)
    X, s, count = _instance(rng, 200, 14, 2 + seed % 2, integer_gains=seed % 2 == 0)
    pen, min_leaf = [(0.0, 0), (0.5, 0), (0.0, 6)][seed % 3]
    idx = np.arange(200)
    ours = GainDP(X, count, s, pen, min_leaf).exact(idx, 3)
    reference = NumpyGainDP(X, count, s, pen, min_leaf).exact(idx, 3)
    assert ours[0] == pytest.approx(reference[0], abs=1e-9)
    assert _value(X, s, count, ours[1], pen, min_leaf)[0] == pytest.approx(ours[0], abs=1e-9)


def _check_sides(top, dp, s, pen) -> None:
    """The bounds on the sides of the top's features not tried, against the similarity
    bound counted set by set from the sides of those tried, and against the sides' optima."""
    X = dp._Xe
    fresh = GainDP(X, dp.count, s, pen, 0)
    smax, smin = s.max(axis=1), s.min(axis=1)
    every = np.arange(X.shape[0])
    sides = {int(f): (set(every[X[:, f] == 0]), set(every[X[:, f] == 1])) for f in top.order}

    def total(values, rows):
        return float(sum(values[i] for i in rows))

    positions, left, right = top.sides((dp._engine,))
    tried = np.flatnonzero(top.done)
    assert list(positions) == list(np.flatnonzero(~top.done))
    for pos in tried:  # the children of a feature tried: bounds on their optima
        for side, bound in zip(sides[int(top.order[pos])], top._children[int(pos)]):
            assert bound >= fresh.exact(np.array(sorted(side)), 3)[0] - 1e-9
    for k, pos in enumerate(positions):
        for j, (got, mine) in enumerate(((left[k], 0), (right[k], 1))):
            S_ = sides[int(top.order[pos])][mine]
            want = total(smax, S_)
            for g in tried:
                for other, v in zip(sides[int(top.order[g])], top._children[int(g)]):
                    want = min(want, v + total(smax, S_ - other) - total(smin, other - S_))
            assert got == pytest.approx(want, abs=1e-9)
            assert got >= fresh.exact(np.array(sorted(S_)), 3)[0] - 1e-9
    # the bound: the best so far, or the best of the features left (each with its split's pen)
    best = float(s[:, 0].sum())
    worst_left = min(top.trivial, float((left + right).max()) - pen)
    assert top.bound((dp._engine,), best, fresh=True) == pytest.approx(max(best, worst_left), abs=1e-9)


def _cut_columns(rng, n: int, columns: int, cuts: int, integer_gains: bool):
    """Continuous columns cut at ``cuts`` quantiles each (nested 0/1 features, as DL8.5's
    tables), labels from a noisy rule on them; gains class counts or arbitrary (negative too)."""
    Z = rng.normal(size=(n, columns))
    X = np.column_stack([Z[:, c] > t for c in range(columns)
                         for t in np.quantile(Z[:, c], np.arange(1, cuts + 1) / (cuts + 1))]).astype(float)
    y = ((Z[:, 0] + Z[:, 1] * Z[:, 2] + rng.normal(0, 0.7, n)) > 0).astype(int)
    if integer_gains:
        s = np.zeros((n, 2))
        s[np.arange(n), y] = rng.integers(1, 3, n)
        return X, s, s.sum(axis=1)
    s = rng.normal(size=(n, 2)).round(2)
    s[np.arange(n), y] += 1.0
    return X, s, rng.integers(1, 3, n).astype(float)


@pytest.mark.parametrize("seed,integer_gains,pen,n_jobs",
                         [(0, True, 0.0, 1), (1, True, 0.0, 1), (2, False, 0.0, 1), (3, True, 0.5, 1),
                          (4, False, 0.3, 1), (5, True, 0.0, 2), (6, False, 0.0, 2)])
def test_a_stopped_top_reports_a_bound_from_the_features_it_tried(seed, integer_gains, pen, n_jobs,
                                                                   monkeypatch) -> None:
    """Depth 4 on nested thresholds: every bound the top reports while features are left
    (after each of them, and when stopped) is at least the optimum (every tree's value),
    and some, before the search ends, are below every pattern at its best class: the
    features tried bound those left by the similarity of their sides."""
    monkeypatch.setattr(dp_module, "HOOK_SECONDS", 0.0)
    monkeypatch.setattr(dp_module, "TOP_BOUND_SECONDS", 0.0)
    monkeypatch.setattr(dp_module, "PIECE_FEATURES", 1)
    monkeypatch.setattr(dp_module, "PAIR_CHUNK", 50)  # the pair sums counted in pieces of patterns
    rng = np.random.default_rng(seed)
    X, s, count = _cut_columns(rng, 160, 3, 5, integer_gains)
    idx = np.arange(X.shape[0])
    optimum, _ = GainDP(X, count, s, pen, 0).exact(idx, 4)
    everything = float(s.max(axis=1).sum()) - pen
    said = []
    piece, prepare = treedp.Engine.piece, treedp.Engine.prepare
    tops = []

    class Recorded(dp_module._TopBound):
        def __init__(self, *args):
            super().__init__(*args)
            tops.append(self)

    monkeypatch.setattr(dp_module, "_TopBound", Recorded)
    # the root features of optimal trees: a stop as the first of them is begun leaves the
    # best so far below the optimum, and that feature must count as left
    fresh = GainDP(X, count, s, pen, 0)
    roots = {f for f in range(X.shape[1])
             if fresh.exact(idx[X[:, f] == 0], 3)[0] + fresh.exact(idx[X[:, f] == 1], 3)[0] - pen >= optimum - 1e-9}
    assert roots and fresh._keep is None  # (the search's feature numbers are X's columns)
    for stop_after in (None, 2, 6, 10, 13, "root", "root last"):  # pieces (one feature each) begun before a stop
        stop = threading.Event()
        begun = [0]
        seen = []

        def counted(engine, *args, begun=begun, stop=stop, stop_after=stop_after):
            begun[0] += 1
            order, lo = args[6], args[7]
            if str(stop_after).startswith("root") and int(order[lo]) in roots \
                    or isinstance(stop_after, int) and begun[0] > stop_after:
                stop.set()
                engine.E[8][0] = 1  # (the flag every thread's search reads: no wait for the watch)
            return piece(engine, *args)

        def hook(value, tree, bound, seen=seen):
            seen.append(bound)
            assert _value(X, s, count, tree, pen, 0)[0] == pytest.approx(value, abs=1e-9)

        def roots_last(engine, *args):  # (any order of the top's features gives the same optimum)
            ha, hb, order, st = prepare(engine, *args)
            return ha, hb, np.array(sorted(order, key=lambda f: int(f) in roots), dtype=order.dtype), st

        monkeypatch.setattr(treedp.Engine, "piece", counted)
        monkeypatch.setattr(treedp.Engine, "prepare", roots_last if stop_after == "root last" else prepare)
        dp = GainDP(X, count, s, pen, 0, Deadline(stop=stop), n_jobs=n_jobs)
        dp.root_hook = hook
        try:
            assert dp.exact(idx, 4)[0] == pytest.approx(optimum, abs=1e-9)
        except SearchStopped:
            assert stop_after is not None
        assert all(bound >= optimum - 1e-9 for bound in seen)
        said += [bound for bound in seen if bound < everything - 1e-9 and bound > optimum + 1e-9]
        if n_jobs == 1 and stop_after is not None and 0 < tops[-1].done.sum() < tops[-1].done.size:
            _check_sides(tops[-1], dp, s, pen)
    # a bound that says something before the proof (in one thread: with two, which features
    # are left when the stop comes varies from run to run)
    assert said or n_jobs > 1


@pytest.mark.parametrize("budget,min_leaf,pen", [(None, 0, 0.0), (None, 0, 0.7), (5, 0, 0.0), (None, 8, 0.0), (9, 4, 0.3)])
def test_threads_agree_with_one_thread_exactly(budget, min_leaf, pen) -> None:
    """Depth 4, the top's features shared among 2 and 3 threads: the same optimum,
    to the last bit, and a tree worth it; with the root hook seeing only valid trees."""
    rng = np.random.default_rng(7)
    X, s, count = _instance(rng, 400, 12, 2, integer_gains=True)
    idx = np.arange(400)
    serial = GainDP(X, count, s, pen, min_leaf).exact(idx, 4, budget)
    for n_jobs in (2, 3):
        seen = []
        dp = GainDP(X, count, s, pen, min_leaf, n_jobs=n_jobs)
        dp.root_hook = lambda value, tree, bound: seen.append((value, tree, bound))
        value, tree = dp.exact(idx, 4, budget)
        assert value == serial[0]
        worth, branchings = _value(X, s, count, tree, pen, min_leaf)
        assert worth == pytest.approx(value, abs=1e-9)
        assert budget is None or branchings <= budget
        for v, t, bound in seen:
            assert _value(X, s, count, t, pen, min_leaf)[0] == pytest.approx(v, abs=1e-9)
            assert v <= value + 1e-9 <= bound + 2e-9


def test_exact_solve_with_threads_returns_the_same_optimum() -> None:
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, (1500, 16))
    y = ((X[:, :5].sum(axis=1) + rng.normal(0, 1.2, 1500)) > 2.5).astype(int)
    data = collapse_patterns(X, y, 2)
    for spec in (TreeSpec(depth=4), TreeSpec(depth=4, max_branching=6), TreeSpec(depth=4, min_leaf=40)):
        one = exact_solve(data, spec, time_limit=120)
        two = exact_solve(data, spec, time_limit=120, n_jobs=2)
        assert one.status == two.status == "optimal"
        assert one.objective == two.objective == tree_objective(data, spec, two.structure)


@pytest.mark.parametrize("seed", [0, 3])
def test_a_bound_on_branching_nodes_is_certified_by_the_program_alone(seed) -> None:
    """max_branching with the accuracy objective (and lambda, min leaf): the dynamic
    program counts the bound in its states, no Lagrangian; brute force agrees
    (depth 3 on two features: 81,610 trees)."""
    rng = np.random.default_rng(50 + seed)
    n = 30
    X3 = rng.integers(0, 2, (n, 3))
    y = ((X3[:, 0] ^ X3[:, 1]) | (rng.random(n) < 0.2)).astype(int)
    lam = [0.0, 0.05][seed % 2]  # seed 0: plain; seed 3: lambda and a minimum leaf
    min_leaf = [0, 3][seed // 2]
    for depth, bounds in ((1, (0,)), (2, (1, 2)), (3, (2, 4))):
        X = X3 if depth <= 2 else X3[:, :2]
        best = {b: -math.inf for b in bounds}  # best value with at most b branching nodes
        for tree in all_trees(depth, X.shape[1], 2):
            if tree.n_branching > max(bounds):
                continue
            leaves = tree.apply(X)
            if any((leaves == m).sum() < min_leaf for m in tree.leaves):
                continue
            value = (1 - lam) * float((tree.predict(X) == y).sum()) - lam * tree.n_branching
            for b in bounds:
                if tree.n_branching <= b:
                    best[b] = max(best[b], value)
        for bound in bounds:
            spec = TreeSpec(depth=depth, max_branching=bound, lambda_=lam, min_leaf=min_leaf)
            res = exact_solve(collapse_patterns(X, y, 2), spec, time_limit=30)
            assert res.status == "optimal" and "dynamic programming" in res.reason
            assert res.objective == pytest.approx(best[bound], abs=1e-9)
            assert res.structure.n_branching <= bound


def test_a_full_table_overwrites_entries_and_trees_are_still_read_back() -> None:
    """A table of 16 slots (never grown): entries are overwritten all the time, the
    optimum and its tree stay right (a lost entry is solved again)."""
    rng = np.random.default_rng(4)
    X, s, count = _instance(rng, 80, 7, 2, integer_gains=True)
    idx = np.arange(80)
    truth = _recursion(X, s, count, idx, 4, 0.0, 0, 15)
    dp = GainDP(X, count, s, 0.0, 0)
    engine = dp._engine
    engine._replace(11, treedp._empty_table(16))
    engine.grow = lambda: None
    engine._resize = lambda slots: None
    value, tree = dp.exact(idx, 4)
    assert engine.stats[4] > 0  # entries were overwritten
    assert value == pytest.approx(truth, abs=1e-9)
    assert _value(X, s, count, tree, 0.0, 0)[0] == pytest.approx(value, abs=1e-9)


def test_a_deep_search_in_one_call_has_its_table_made_large_first() -> None:
    """A search of depth >= 4 made in one compiled call (no root hook, one thread, as
    the Lagrangian dual makes it) cannot grow its table on the way: the table is made
    large before, keeping what it held, and nothing is overwritten."""
    rng = np.random.default_rng(5)
    X, s, count = _instance(rng, 120, 9, 2, integer_gains=True)
    idx = np.arange(120)
    dp = GainDP(X, count, s, 0.0, 0)
    engine = dp._engine
    three = dp.exact(idx, 3)
    assert engine.E[11].shape[0] < treedp.table_slots(9, 4)
    held = int(engine.stats[3])
    value, tree = dp.exact(idx, 4)
    assert engine.E[11].shape[0] == treedp.table_slots(9, 4)
    assert engine.stats[4] == 0 and engine.stats[3] > held
    assert dp.exact(idx, 3) == three  # the same answer after the move
    truth = _recursion(X, s, count, idx, 4, 0.0, 0, 15)
    assert value == pytest.approx(truth, abs=1e-9)


@pytest.mark.timing
def test_the_deadline_reaches_the_compiled_search_by_its_own_clock() -> None:
    """The compiled search reads the monotonic clock itself: an ahead-of-time
    module holds the interpreter's lock, so no other thread could set its flag."""
    rng = np.random.default_rng(2)
    X, s, count = _instance(rng, 3000, 60, 2, integer_gains=True)
    dp = GainDP(X, count, s, 0.0, 0, Deadline(time.perf_counter() + 0.3))
    t0 = time.perf_counter()
    with pytest.raises(SearchStopped):
        dp.exact(np.arange(3000), 6)
    assert time.perf_counter() - t0 < 0.3 + 0.5
    assert dp._engine.E[8][0] == 1  # set by the compiled code or the watching thread


def test_the_compiled_clock_is_the_clock_of_the_deadline() -> None:
    """stats[5] holds the deadline on the clock the compiled code reads."""
    rng = np.random.default_rng(3)
    X, s, count = _instance(rng, 20, 4, 2, integer_gains=True)
    dp = GainDP(X, count, s, 0.0, 0, Deadline(time.perf_counter() + 10.0))
    left = (int(dp._engine.stats[5]) - treedp.monotonic_ns()) / 1e9
    assert 9.0 < left <= 10.0
    assert GainDP(X, count, s, 0.0, 0)._engine.stats[5] == 0  # no deadline


def _in_a_thread(work):
    out: dict = {}
    worker = threading.Thread(target=lambda: out.setdefault("value", work()))
    worker.start()
    worker.join()
    return out["value"]


@pytest.mark.timing
def test_the_deadline_watch_ends_with_the_search(monkeypatch) -> None:
    """The thread that sets the flag at a stop request (asked for outside the main
    thread) ends when the search closes it, not at the deadline an hour later, nor at its
    next look at the clock: with looks 60 s apart, close() still ends it within a second
    (no tight wall-clock bound, which a saturated machine could break); it sets the flag
    at a Stop."""
    monkeypatch.setattr(dp_module, "WATCH_SECONDS", 60.0)
    deadline = Deadline(time.perf_counter() + 3600, threading.Event())
    flag = _in_a_thread(deadline.flag)
    watch_ended = deadline._watcher
    time.sleep(0.05)  # the watch is asleep in its 60 s wait
    assert not watch_ended.is_set() and not flag[0]
    deadline.close()
    assert watch_ended.wait(1.0) and not flag[0]
    monkeypatch.setattr(dp_module, "WATCH_SECONDS", 0.01)
    stopped = Deadline(time.perf_counter() + 3600, threading.Event())
    flag = _in_a_thread(stopped.flag)
    stopped.stop.set()
    assert stopped._watcher.wait(1.0) and flag[0]


def test_a_search_in_the_main_thread_starts_no_watch() -> None:
    """The compiled search reads its deadline itself and, in the main thread, the stop
    request between its slices: no watching thread (handing work to one and ending its
    watch took about a millisecond of a small fit)."""
    for deadline in (Deadline(time.perf_counter() + 60.0), Deadline(time.perf_counter() + 60.0, threading.Event()),
                     Deadline()):
        deadline.flag()
        assert deadline._watcher is None
    outside = Deadline(time.perf_counter() + 60.0)  # a deadline alone needs no watch anywhere
    _in_a_thread(outside.flag)
    assert outside._watcher is None


def test_the_estimator_and_the_cli_take_n_jobs() -> None:
    """n_jobs in scikit-learn's sense (None one thread, -1 every core): the same tree's
    value whatever the threads; the CLI's --n-jobs reaches the estimator."""
    from strongtree_core import StrongTreeClassifier
    from strongtree_core.cli import fit as cli_fit
    from strongtree_core.cli import parser as cli_parser
    from strongtree_core.engine.limits import cores_for

    rng = np.random.default_rng(8)
    X = rng.integers(0, 2, (600, 12))
    y = ((X[:, :4].sum(axis=1) + rng.normal(0, 1, 600)) > 2).astype(int)
    scores = set()
    for n_jobs in (1, None, 2, -1):
        model = StrongTreeClassifier(depth=4, n_jobs=n_jobs, time_limit=120).fit(X, y)
        assert model.record_.status == "optimal"
        scores.add(int((model.predict(X) == y).sum()))
    assert len(scores) == 1
    assert cores_for(None) == 1 and cores_for(3) == 3 and cores_for(-1) >= 1 and cores_for(-1000) == 1
    args = cli_parser.build_parser().parse_args(["fit", "x.csv", "--target", "y", "--n-jobs", "-1"])
    assert args.n_jobs == -1
    assert cli_fit._estimator(args, __import__("pandas").Series([0, 1])).n_jobs == -1


def test_repeated_and_complementary_features_change_nothing() -> None:
    """DL8.5's tables hold each threshold twice (x <= t and x > t): the program searches
    one of each group and a constant feature not at all; same optimum, trees in the
    caller's feature numbers."""
    from strongtree_core.accel.dp import distinct_features

    rng = np.random.default_rng(9)
    X, s, count = _instance(rng, 150, 6, 2, integer_gains=True)
    wide = np.hstack([X, 1 - X[:, ::-1], X[:, :2], np.ones((150, 1)), np.zeros((150, 1))])
    assert list(distinct_features(wide)) == list(range(6))
    idx = np.arange(150)
    for depth, budget in ((3, None), (4, None), (4, 5)):
        plain = GainDP(X, count, s, 0.0, 0).exact(idx, depth, budget)
        value, tree = GainDP(wide, count, s, 0.0, 0).exact(idx, depth, budget)
        assert value == plain[0]
        assert _value(wide, s, count, tree, 0.0, 0)[0] == pytest.approx(value, abs=1e-9)


def _thresholds(rng, n: int, columns: int, cuts: int) -> np.ndarray:
    """Thermometer features of a few numeric columns (x > t for ``cuts`` thresholds
    each): consecutive features differ on few rows, as in a binarized numeric table."""
    values = rng.integers(0, 3 * cuts, (n, columns))
    return np.hstack([(values[:, [c]] > np.arange(cuts)[None, :] * 3).astype(float) for c in range(columns)])


def test_pair_sums_moved_from_split_to_split_equal_those_counted_afresh() -> None:
    """A depth-3 node moves a child's pair sums from the last child it held (adding
    the rows that enter, taking away those that leave): after a chain of moves over
    both sides of every split they equal the sums counted from nothing."""
    local_features = treedp.library.implementation("_local_features")
    shift = treedp.library.implementation("_shift")
    rng = np.random.default_rng(4)
    X = _thresholds(rng, 90, 3, 5)
    X[:, 1] = 1.0 - X[:, 1]  # a dense feature: counted by its zeros
    n, F = X.shape
    for slots in (2, 3, 4):
        W = np.ascontiguousarray(rng.integers(0, 4, (n, slots)).astype(float))
        indptr = np.concatenate([[0], np.cumsum(X.sum(axis=1))]).astype(np.int64)
        indices = np.nonzero(X)[1].astype(np.int64)
        XT = np.ascontiguousarray(X.T, dtype=np.uint8)
        S = np.arange(n, dtype=np.int64)[rng.random(n) < 0.8]
        act, flip, lptr, lidx = local_features(S, indptr, indices, W, F, slots if slots < 4 else 3,
                                               1.0, np.full(F, -1, dtype=np.int64))
        m = act.shape[0]
        assert m >= 10
        moved = np.zeros((F, F, slots))
        fresh = np.zeros((F, F, slots))
        g, gside = -1, 0
        for f, side in [(f, side) for f in range(m) for side in (1, 0, 1)]:
            fa = int(act[f])
            shift(S, XT, lptr, lidx, W, moved, m, fa, side, g, gside)
            shift(S, XT, lptr, lidx, W, fresh, m, fa, side, -1, 0)
            upper = np.triu(np.ones((m, m), dtype=bool))
            np.testing.assert_array_equal(moved[:m, :m][upper], fresh[:m, :m][upper])
            # the sums are those of the rows on that side: the diagonal of a local
            # feature sums its ones (its zeros when it is counted by them)
            rows = S[X[S, fa] == side]
            for a in range(m):
                on = X[rows, act[a]] != flip[a]
                np.testing.assert_array_equal(fresh[a, a], W[rows[on]].sum(axis=0))
            g, gside = fa, side


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("gains,rows_column", [("whole", False), ("whole", True), ("any", True), ("light rows", True)])
def test_pairs_scanned_without_side_counts_give_the_checked_profiles(K, gains, rows_column) -> None:
    """With need 1 and pen >= 0 the scan of pairs counts no side (a split with an empty
    side is worth the leaf less pen), and scans again with counts only where a split it
    kept has a side below need and beats the leaf (rows of weight below 1 here). Its
    depth-2 profiles and trees equal those of the scan that counts every side, on sets
    where one side of a split is often empty."""
    local_features = treedp.library.implementation("_local_features")
    shift = treedp.library.implementation("_shift")
    terminal = treedp.library.implementation("_terminal")
    pairs_two = treedp.library.implementation("_pairs_two")
    pairs = treedp.library.implementation("_pairs")
    unsound = treedp.library.implementation("_unsound")
    rng = np.random.default_rng(7 + K)
    n = 80
    X = np.hstack([_thresholds(rng, n, 3, 6), (rng.random((n, 6)) < 0.15).astype(float)])
    n, F = X.shape
    slots = K + 1 if rows_column else K
    indptr = np.concatenate([[0], np.cumsum(X.sum(axis=1))]).astype(np.int64)
    indices = np.nonzero(X)[1].astype(np.int64)
    XT = np.ascontiguousarray(X.T, dtype=np.uint8)
    trees = rescanned = 0
    for trial in range(60):
        if gains == "any":
            s = rng.normal(size=(n, K)).round(2)
        else:
            s = np.zeros((n, K))
            s[np.arange(n), rng.integers(0, K, n)] = rng.integers(1, 3, n)
            s[rng.random(n) < 0.2, 0] += 1  # patterns holding rows of two classes
        rows = s.sum(axis=1) if gains == "whole" else rng.integers(1, 4, n).astype(float)
        if gains == "light rows":
            rows[rng.random(n) < 0.3] = 0.5
        W = np.ascontiguousarray(np.column_stack([s, rows]) if rows_column else s)
        S = np.flatnonzero(rng.random(n) < rng.choice([0.15, 0.4, 0.9]))
        act, flip, lptr, lidx = local_features(S, indptr, indices, W, F, K, 1.0, np.full(F, -1, dtype=np.int64))
        m = act.shape[0]
        MC = np.zeros((F, F, slots))
        shift(S, XT, lptr, lidx, W, MC, m, -1, 0, -1, 0)  # every row of S, counted afresh
        tot = np.array([*W[S, :K].sum(axis=0), rows[S].sum()])
        for pen in (0.0, 0.5, 1.0, 2.0):
            out = []
            for free in (True, False):
                prof = np.zeros(4)
                code = np.zeros((4, 3), dtype=np.int64)
                terminal(MC, tot, m, K, slots, pen, 1.0, 1.0, free, prof, code)
                out.append((prof, code))
            np.testing.assert_array_equal(out[0][0], out[1][0])
            np.testing.assert_array_equal(out[0][1], out[1][1])
            trees += int(out[1][1][3, 0] >= 0)
            # how often the scan without counts was not enough
            dg = np.ascontiguousarray(MC[np.arange(m), np.arange(m)])
            own = np.ascontiguousarray(dg[:, K] if rows_column else dg.sum(axis=1))
            vi = np.flatnonzero((own >= 1) & (tot[K] - own >= 1))
            sR, sL = np.full(m, -np.inf), np.full(m, -np.inf)
            bR, bL = np.full(m, -1), np.full(m, -1)
            if K == 2:
                pairs_two(MC, dg, vi, tot, vi.size, pen, sR, bR, sL, bL)
            else:
                pairs(MC, dg, own, vi, tot, vi.size, K, slots, tot[K], pen, 1.0, False, sR, bR, sL, bL)
            lR = np.ascontiguousarray(dg[:, :K].max(axis=1))
            lL = np.ascontiguousarray((tot[:K] - dg[:, :K]).max(axis=1))
            rescanned += int(unsound(MC, own, vi, vi.size, K, slots, tot[K], 1.0, lR, lL, sR, bR, sL, bL))
    assert trees > 100  # most of them are trees, not leaves
    if gains == "light rows":
        assert rescanned > 0
    else:
        assert rescanned == 0  # whole rows: a side below need is an empty side


@pytest.mark.parametrize("integer_gains", [True, False])
@pytest.mark.parametrize("seed,K", [(0, 2), (1, 2), (2, 3), (3, 3)])
def test_depth_three_on_thresholds_against_the_plain_recursion(seed, K, integer_gains) -> None:
    """Thresholds of numeric columns: the depth-3 search moves its children's sums
    from split to split (with integer gains) or counts them afresh (other gains).
    Every budget on the whole table and on both sides of a split: each reads
    other entries of the children's depth-2 profiles."""
    rng = np.random.default_rng(100 + seed)
    n = 60
    X = _thresholds(rng, n, 2, 8)  # neighbours an eighth of the rows apart: moving beats counting
    _, s, count = _instance(rng, n, 1, K, integer_gains)
    every = np.arange(n)
    sets = [every, every[X[:, 3] < 0.5], every[X[:, 3] > 0.5]]
    for pen, min_leaf in ((0.0, 0), (0.5, 0), (0.0, 3)):
        dp = GainDP(X, count, s, pen, min_leaf)
        for idx in sets:
            for budget in (2, 5, 7):
                truth = _recursion(X, s, count, idx, 3, pen, min_leaf, budget)
                value, tree = dp.exact(idx, 3, budget)
                assert value == pytest.approx(truth, abs=1e-9)
                if math.isfinite(truth):
                    assert _value(X[idx], s[idx], count[idx], tree, pen, min_leaf)[0] == pytest.approx(value, abs=1e-9)


@pytest.mark.parametrize("triples", [False, True])
@pytest.mark.parametrize("K", [2, 3])
def test_a_depth_two_tree_read_off_its_code_is_the_tree_counted_afresh(K, triples) -> None:
    """A depth-3 search keeps each depth-2 profile's tree (its code, in the table's feature
    numbers) counted in the parent's local features; read back, it is the tree the set
    gives counted on its own (its own features counted by their zeros or ones): whole
    gains and a penalty make ties between trees of one value common."""
    compared = 0
    for seed in range(12):
        rng = np.random.default_rng(40 + seed)
        n, F = 60, 7
        X, s, count = _instance(rng, n, F, K, integer_gains=True)
        idx = np.arange(n)
        for pen in (0.0, 1.0):
            dp = GainDP(X, count, s, pen, 0)
            if triples:
                _by_triples(dp)
            dp.exact(idx, 3)
            engine = dp._engine
            tdb, tv = engine.E[12], engine.E[13]
            coded = (tdb[:, 0] == 2) & (tv[:, 4] >= 0)
            assert coded.sum() == (tdb[:, 0] == 2).sum() > 0  # every profile kept its code
            for side in [idx[X[:, f] < 0.5] for f in range(F)] + [idx[X[:, f] > 0.5] for f in range(F)]:
                if side.size < 2:
                    continue
                afresh = GainDP(X, count, s, pen, 0)._engine.tree(side, 2, 3)  # an empty table: counted
                assert engine.tree(side, 2, 3) == afresh
                compared += 1
    assert compared > 200


def _by_triples(dp: GainDP) -> GainDP:
    """``dp`` with every depth-3 node counting its triple sums (``treedp.TRIPLE_PATTERNS``
    lowered to 0 for this program)."""
    dp._engine.E[7][6] = 0.0
    return dp


@pytest.mark.parametrize("integer_gains", [True, False])
@pytest.mark.parametrize("seed,K,F", [(0, 2, 6), (1, 2, 9), (2, 3, 6), (3, 3, 8), (4, 2, 12)])
def test_depth_three_and_four_from_triple_sums_against_the_plain_recursion(seed, K, F, integer_gains) -> None:
    """A depth-3 node may take its children's pair sums from its triple sums: every budget,
    penalties, a minimum leaf, dense features (counted by their zeros) and sparse ones,
    depth 3 and depth 4 (depth-3 nodes inside), against the plain recursion."""
    rng = np.random.default_rng(300 + seed)
    n = 48
    X, s, count = _instance(rng, n, F, K, integer_gains)
    idx = np.arange(n)
    for pen, min_leaf in ((0.0, 0), (0.5, 0), (0.0, 3)):
        dp = _by_triples(GainDP(X, count, s, pen, min_leaf))
        for depth, budgets in ((3, (1, 4, 7)), (4, (6, 15))):
            if depth == 4 and F > 6:
                continue  # the plain recursion takes too long there
            for budget in budgets:
                truth = _recursion(X, s, count, idx, depth, pen, min_leaf, budget)
                value, tree = dp.exact(idx, depth, budget)
                assert value == pytest.approx(truth, abs=1e-9)
                if math.isfinite(truth):
                    assert _value(X, s, count, tree, pen, min_leaf)[0] == pytest.approx(value, abs=1e-9)
        assert dp._engine.stats[1] > 0  # depth-2 profiles were counted (from the triples)


def test_triple_sums_are_taken_on_large_nodes_and_give_the_same_search() -> None:
    """A node of TRIPLE_PATTERNS patterns counts its triples: the same optimum and tree as
    the program made to count every child's pairs (a threshold above the node)."""
    rng = np.random.default_rng(5)
    n = treedp.TRIPLE_PATTERNS + 500
    X = (rng.random((n, 14)) < rng.uniform(0.2, 0.8, 14)).astype(float)
    y = (X[:, 0] + X[:, 1] * X[:, 2] + (rng.random(n) < 0.2) > 1).astype(int)
    s = np.zeros((n, 2))
    s[np.arange(n), y] = 1.0
    count = np.ones(n)
    idx = np.arange(n)
    by_triples = GainDP(X, count, s, 0.0, 0)
    assert by_triples._engine.E[7][6] == treedp.TRIPLE_PATTERNS
    by_pairs = GainDP(X, count, s, 0.0, 0)
    by_pairs._engine.E[7][6] = float(n + 1)
    a, b = by_triples.exact(idx, 3), by_pairs.exact(idx, 3)
    assert a[0] == b[0] and a[1] == b[1]
    assert _value(X, s, count, a[1], 0.0, 0)[0] == a[0]


@pytest.mark.timing
@pytest.mark.parametrize("where", ["main thread", "other thread"])
def test_a_stop_request_ends_the_compiled_search(where) -> None:
    """A Stop (an event set by another thread) reaches the compiled search while it runs
    (it lets go of the interpreter's lock, so the deadline's watch sets its flag), not at
    the deadline: in the main thread and in any other."""
    rng = np.random.default_rng(2)
    X, s, count = _instance(rng, 3000, 60, 2, integer_gains=True)
    stop = threading.Event()
    dp = GainDP(X, count, s, 0.0, 0, Deadline(time.perf_counter() + 60.0, stop))
    threading.Timer(0.3, stop.set).start()
    out: dict = {}

    def search() -> None:
        t0 = time.perf_counter()
        try:
            dp.exact(np.arange(3000), 6)
        except SearchStopped:
            out["seconds"] = time.perf_counter() - t0
    if where == "main thread":
        search()
    else:
        worker = threading.Thread(target=search)
        worker.start()
        worker.join()
    assert "seconds" in out, "the search was not stopped"
    assert out["seconds"] < 0.3 + 0.5


def _counted_kernels(monkeypatch) -> list[bool]:
    """Every call of the compiled search's entry kernels, as whether it ended by the stop flag."""
    ended: list[bool] = []
    for name in ("_solve", "_deep"):
        kernel = getattr(treedp, name)

        def counted(E, *args, _kernel=kernel):
            out = _kernel(E, *args)
            ended.append(bool(E[8][0]))
            return out
        monkeypatch.setattr(treedp, name, counted)
    return ended


@pytest.mark.parametrize("where", ["main thread", "other thread"])
def test_a_long_search_is_not_begun_again_and_again(where, monkeypatch) -> None:
    """With a stop request to watch, a search that outlasts its first slice (in the main
    thread) goes on in one more call, beside the main thread, and a search in any other
    thread is one call: never slice after slice, each setting up the top node again
    (a node of 600,000 patterns outlasted every slice on a busy core: the search never
    ended).  Same optimum as the numpy program."""
    monkeypatch.setattr(treedp, "SLICE_NS", 1_000)  # 1 microsecond: the first slice ends at once
    ended = _counted_kernels(monkeypatch)
    rng = np.random.default_rng(7)
    X, s, count = _instance(rng, 400, 16, 2, integer_gains=True)
    idx = np.arange(400)
    dp = GainDP(X, count, s, 0.0, 0, Deadline(time.perf_counter() + 600.0, threading.Event()))
    out: dict = {}
    if where == "main thread":
        out["found"] = dp.exact(idx, 3)
        assert ended == [True, False]  # the slice, then the rest in one call
    else:
        worker = threading.Thread(target=lambda: out.setdefault("found", dp.exact(idx, 3)))
        worker.start()
        worker.join()
        assert ended == [False]
    reference = NumpyGainDP(X, count, s, 0.0, 0).exact(idx, 3)
    assert out["found"][0] == pytest.approx(reference[0], abs=1e-9)


@pytest.mark.timing
def test_a_ctrl_c_stops_a_search_in_the_main_thread(monkeypatch) -> None:
    """A Ctrl-C during a search in the main thread is raised there within a fraction of
    a second (the search runs beside it after its first slice), and stops the search."""
    rng = np.random.default_rng(2)
    X, s, count = _instance(rng, 3000, 60, 2, integer_gains=True)
    dp = GainDP(X, count, s, 0.0, 0, Deadline(time.perf_counter() + 60.0, threading.Event()))
    ended = _counted_kernels(monkeypatch)
    import signal
    threading.Timer(0.3, signal.raise_signal, args=(signal.SIGINT,)).start()
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        dp.exact(np.arange(3000), 6)
    assert time.perf_counter() - t0 < 0.3 + 0.5
    assert ended == [True, True]  # the search beside the main thread was stopped, and over


@pytest.mark.parametrize("seed", range(3))
def test_a_search_cut_into_slices_finds_the_same_optimum(seed, monkeypatch) -> None:
    """A first slice of 0.2 ms (the search given up and called again): the same
    optimum as the numpy program, its tree scoring that value."""
    monkeypatch.setattr(treedp, "SLICE_NS", 200_000)
    ended = _counted_kernels(monkeypatch)
    rng = np.random.default_rng(seed)
    X, s, count = _instance(rng, 400, 16, 2 + seed % 2, integer_gains=seed % 2 == 0)
    pen, min_leaf = [(0.0, 0), (0.5, 0), (0.0, 6)][seed]
    idx = np.arange(400)
    ours = GainDP(X, count, s, pen, min_leaf, Deadline(time.perf_counter() + 600.0, threading.Event())).exact(idx, 4)
    assert any(ended), "no slice ended: the test did not cut the search"
    reference = NumpyGainDP(X, count, s, pen, min_leaf).exact(idx, 4)
    assert ours[0] == pytest.approx(reference[0], abs=1e-9)
    assert _value(X, s, count, ours[1], pen, min_leaf)[0] == pytest.approx(ours[0], abs=1e-9)
