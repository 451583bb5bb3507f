"""Dynamic program over tree structures for per-pattern, per-class gains
(the MurTree / STreeD line of exact algorithms).

Given a gain ``s[i, k]`` for predicting class ``k`` on pattern ``i`` and a
penalty ``pen`` per branching node, :class:`GainDP` finds

    best(D, d) = max( max_k sum_{i in D} s[i, k],                          (a leaf)
                      max_f best(D_f0, d - 1) + best(D_f1, d - 1) - pen )   (a split)

for the patterns ``D`` reaching a node with ``d`` levels left, where ``D_f0``
/ ``D_f1`` are the patterns of ``D`` with ``x_f = 0`` / ``1``.  A leaf must hold
at least ``min_leaf`` rows (eq. 10), and a split must send rows both ways
(a split with an empty side never beats the leaf of its other side).

* Depth 1 and 2 are solved by counting (:func:`depth_two`): with
  ``M_k = X_D^T diag(s_k) X_D`` (one matrix product per class) the gain of
  every leaf of every tree of depth 2 is an entry or a difference of entries
  of ``M_k``.
* Deeper nodes branch over features in order of an upper bound (every pattern
  gets its best class) and skip a feature whose bound cannot beat the best so
  far; a child is solved with the value it must reach, and a child that
  cannot reach it stops that feature early.  Results are cached per set of
  patterns and depth, exact values and proven upper bounds alike.

Trees are nested tuples: an ``int`` is a leaf predicting that class, and
``(f, left, right)`` splits on feature ``f`` (``left`` takes ``x_f = 0``).
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Union

import numpy as np

from strongtree_core.accel import kernels, treedp
from strongtree_core.accel import ordered as ordered_kernel
from strongtree_core.background import run_in_background
from strongtree_core.structure import LEAF, PRUNED, TreeGraph, TreeStructure

Tree = Union[int, tuple]
NEG = -math.inf


class SearchStopped(Exception):
    """The time limit passed or a stop was requested during the search."""


@dataclass
class Deadline:
    """When the search must give up: a wall-clock limit and a stop event."""

    at: float = math.inf
    stop: threading.Event | None = None
    _flag: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)
    _closing: threading.Event = field(default_factory=threading.Event, init=False, repr=False, compare=False)
    _watcher: threading.Event | None = field(default=None, init=False, repr=False, compare=False)  # set when it ends

    def check(self) -> None:
        if self.passed:
            raise SearchStopped

    @property
    def passed(self) -> bool:
        return time.perf_counter() > self.at or (self.stop is not None and self.stop.is_set()) or (
            self._flag is not None and bool(self._flag[0]))

    @property
    def requested(self) -> Callable[[], bool] | None:
        """A test of the stop event alone (``None`` without one), read by the
        compiled search between its slices."""
        stop = self.stop
        return None if stop is None else stop.is_set

    def flag(self, watch_stop: bool = False) -> np.ndarray:
        """One byte the compiled search reads: set to 1 when the deadline passes or a
        stop is requested.

        The compiled search reads the clock itself (and sets the byte at the deadline).
        A stop request is an event another thread sets: in the main thread the search
        reads it between its slices (``treedp.Engine._sliced``); asked for in any other
        thread, the byte comes with a watching thread that sets it, at most
        ``WATCH_SECONDS`` after the request (the kernels let go of the interpreter's
        lock).  A search in the main thread starts no thread: handing a piece of work to
        a waiting thread and ending its watch took about a millisecond of a fit of the
        paper's small tables, whose search takes one.  ``watch_stop``: a stop request is
        watched in the main thread too (for a search that has no slices, such as the one
        over the groups' counts, which begins after a branch-and-bound of its own)."""
        if self._flag is None:
            self._flag = np.zeros(1, dtype=np.uint8)
        if self._watcher is None and (self._needs_watch() or (watch_stop and self.stop is not None)):
            ref, flag, closing = weakref.ref(self), self._flag, self._closing
            self._watcher = run_in_background(lambda: _watch(ref, flag, closing))
        return self._flag

    def _needs_watch(self) -> bool:
        if self.stop is not None and threading.current_thread() is not threading.main_thread():
            return True
        return math.isfinite(self.at) and treedp.monotonic_ns() < 0  # no clock the compiled search can read

    def close(self) -> None:
        """The search is over: the watch, if any, ends at once (its thread is free for the next fit's)."""
        if self._watcher is not None:
            self._closing.set()


#: How often the deadline's watching thread looks at the clock and the stop event.
WATCH_SECONDS = 0.01


def _watch(ref, flag: np.ndarray, closing: threading.Event) -> None:
    while not flag[0] and not closing.is_set():
        deadline = ref()
        if deadline is None:
            return
        if time.perf_counter() > deadline.at or (deadline.stop is not None and deadline.stop.is_set()):
            flag[0] = 1
            return
        stop, at = deadline.stop, deadline.at
        del deadline
        del stop  # anything with is_set() (the engine passes several events as one)
        closing.wait(min(WATCH_SECONDS, max(0.0, at - time.perf_counter())))


def subset_key(idx: np.ndarray, depth: int) -> bytes:
    """Cache key of a set of patterns (sorted indices) at a depth."""
    return hashlib.blake2b(idx.tobytes(), digest_size=16).digest() + bytes((depth,))


@dataclass
class _Entry:
    ub: float
    value: float | None = None
    tree: Tree | None = None


class GainDP:
    """Best subtrees for the gains ``scores`` (P, K) on binary ``X`` (P, F).

    The compiled program (``accel/treedp.py``) when its kernels are ready and
    the table fits its pair sums, else :class:`NumpyGainDP`.

    Parameters
    ----------
    X : ndarray of float64, shape (P, F)
    count : ndarray of float64, shape (P,)
    scores : ndarray of float64, shape (P, K)
    penalty : float
        Subtracted per branching node (the paper's lambda, plus any price).
    min_leaf : int
    deadline : Deadline, optional
    ones : (indptr, indices), optional
        ``X``'s ones as CSR (:func:`kernels.ones_of`), when the caller keeps them.
    ordered : OrderedColumns, optional
        The features as chains of nested thresholds (``accel/ordered.py``), for
        the numpy program's depth-2 kernel.
    n_jobs : int
        Threads for a search over all patterns at depth >= 4 (the top's
        features are shared out; each thread keeps its own cache).
    """

    def __init__(self, X, count, scores, penalty: float, min_leaf: int, deadline: Deadline | None = None,
                 ones=None, ordered=None, n_jobs: int = 1) -> None:
        self.X = X
        self.count = count
        self.s = np.ascontiguousarray(scores, dtype=np.float64)
        self.smax = self.s.max(axis=1)
        self.smin = self.s.min(axis=1)
        self.pen = float(penalty)
        self.min_leaf = int(min_leaf)
        self.deadline = deadline or Deadline()
        self.n_jobs = max(1, int(n_jobs))
        #: Called as ``root_hook(best_value, best_tree, bound)`` now and then while
        #: the top (all patterns) is searched: an anytime view of the search.
        self.root_hook = None
        P, F = X.shape
        K = self.s.shape[1]
        self._engine = None
        self._numpy = None
        self._workers_solved = 0
        self._keep = None
        self._Xe = X
        if self.counts_budgets(X, K):
            keep, self._Xe, ones, layout = _features_of(X, ones)
            if keep.size < F:
                self._keep = keep
            self._engine = treedp.Engine(self._Xe, count, self.s, self.pen, self.min_leaf, ones, self.deadline.flag(),
                                         at=self.deadline.at, stop_requested=self.deadline.requested, layout=layout)
        else:
            self._numpy = NumpyGainDP(X, count, scores, penalty, min_leaf, deadline, ones, ordered)

    @staticmethod
    def counts_budgets(X: np.ndarray, n_classes: int) -> bool:
        """The compiled program takes this table (it also counts bounds on branching nodes)."""
        F = X.shape[1]
        return 0 < F <= treedp.MAX_FEATURES and F * F * (n_classes + 1) <= treedp.MAX_PAIR_ENTRIES and \
            treedp.available()

    @property
    def n_solved(self) -> int:
        """Subproblems solved (depth >= 3 nodes and depth-2 problems counted)."""
        if self._engine is None:
            return self._numpy.n_solved
        st = self._engine.stats
        return int(st[0] + st[1]) + self._workers_solved

    # -- public -------------------------------------------------------------
    def best(self, idx: np.ndarray, depth: int, floor: float = NEG, budget: int | None = None) -> tuple[float, Tree] | None:
        """The best subtree of depth <= ``depth`` (with at most ``budget``
        branching nodes) on patterns ``idx`` if its value exceeds ``floor``,
        else None (then no such subtree exceeds ``floor``)."""
        b = self._budget(depth, budget)
        if self._engine is None:
            self._numpy.root_hook = self.root_hook
            return self._numpy.best(idx, depth, floor)
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        if idx.size == self.X.shape[0] and depth >= 4 and (self.root_hook is not None or self.n_jobs > 1):
            return self._top(idx, depth, b, floor)
        value = self._solve(idx, depth, b, floor)
        if not value > floor:
            return None
        return value, self._out(self._engine.tree(idx, depth, b))

    def value(self, idx: np.ndarray, depth: int, floor: float = NEG, budget: int | None = None) -> float | None:
        """The value of :meth:`best` without its tree."""
        if self._engine is None:
            found = self.best(idx, depth, floor, budget)
            return None if found is None else found[0]
        value = self._solve(np.ascontiguousarray(idx, dtype=np.int64), depth, self._budget(depth, budget), floor)
        return value if value > floor else None

    def upper(self, idx: np.ndarray, depth: int, budget: int | None = None) -> float:
        """A proven upper bound on best(idx, depth): cached, else every pattern at its best class."""
        if self._engine is None:
            return self._numpy.upper(idx, depth)
        ub, value, _, _ = self._engine.entry(np.ascontiguousarray(idx, dtype=np.int64), depth, self._budget(depth, budget))
        if not math.isnan(value):
            return value
        return min(ub, float(self.smax[idx].sum()))

    def exact(self, idx: np.ndarray, depth: int, budget: int | None = None) -> tuple[float, Tree]:
        """The best subtree, always (infeasible subsets give ``-inf`` and a leaf)."""
        found = self.best(idx, depth, NEG, budget)
        if found is None:  # only when nothing is feasible (min leaf)
            return NEG, 0
        return found

    # -- the compiled search ------------------------------------------------
    def _budget(self, depth: int, budget: int | None) -> int:
        full = (1 << depth) - 1
        if budget is None or budget >= full:
            return full
        if self._engine is None:
            raise ValueError("a bound on branching nodes needs the compiled dynamic program (numba)")
        return max(0, int(budget))

    def _solve(self, idx: np.ndarray, depth: int, b: int, floor: float) -> float:
        self.deadline.flag()  # (a watch on the stop request, when this thread needs one)
        value = self._engine.solve(idx, depth, b, floor)
        if self.deadline.flag()[0]:
            raise SearchStopped
        return value

    def _top(self, idx: np.ndarray, depth: int, b: int, floor: float) -> tuple[float, Tree] | None:
        """The search over all patterns, its top features tried in growing pieces
        (the root hook sees the best so far between pieces), or shared out among
        ``n_jobs`` threads."""
        engine = self._engine
        self.deadline.flag()  # (a watch on the stop request, when this thread needs one)
        ha, hb, order, st = engine.prepare(idx, depth, b)
        if self.n_jobs > 1 and order.size > 1:
            value, tree = _Parallel(self, idx, depth, b, floor, ha, hb, order, st).run()
        else:
            flag = self.deadline.flag()
            top = _TopBound(self, idx, depth, b, order, float(st[6]))
            lo, size, last = 0, 1, time.perf_counter()
            while lo < order.size:
                hi = min(order.size, lo + size)
                engine.piece(idx, ha, hb, depth, b, floor, order, lo, hi, st, False)
                if flag[0]:  # the features of this piece are not all tried: left out of the bound
                    self._hook(engine, idx, depth, b, st, top.bound((engine,), float(st[0]), fresh=True))
                    raise SearchStopped
                top.done[lo:hi] = True
                lo, size = hi, min(2 * size, PIECE_FEATURES)
                if self.root_hook is not None and lo < order.size and time.perf_counter() - last > HOOK_SECONDS:
                    self._hook(engine, idx, depth, b, st, top.bound((engine,), float(st[0])))
                    last = time.perf_counter()
            value = float(st[0])
            engine.store(ha, hb, depth, b, value if value > floor else floor, floor, int(st[1]), int(st[2]))
            if not value > floor:
                return None
            tree = _top_tree(engine, self._Xe, self.s, idx, depth, b, st)
        if not value > floor:
            return None
        return value, self._out(tree)

    def _out(self, tree: Tree) -> Tree:
        """A tree of the compiled program's features in the caller's feature numbers."""
        if self._keep is None or not isinstance(tree, tuple):
            return tree
        return (int(self._keep[tree[0]]), self._out(tree[1]), self._out(tree[2]))

    def _hook(self, engine, idx, depth, b, st, bound: float) -> None:
        if self.root_hook is not None and st[0] > NEG:
            self.root_hook(float(st[0]), self._out(_top_tree(engine, self._Xe, self.s, idx, depth, b, st)),
                           max(float(st[0]), bound))


#: The features of the last tables searched (see :func:`_features_of`): id -> (weak reference, what was read).
_FEATURES: dict[int, tuple] = {}
#: Tables whose features are kept.
FEATURES_KEPT = 4


def _features_of(X: np.ndarray, ones) -> tuple:
    """``(keep, Xe, ones of Xe, treedp.table_layout of Xe)`` for the table ``X``: the features
    that split it distinctly (:func:`distinct_features`) and the compiled program's arrays
    over them.  Kept for the last few tables (by identity, while ``X`` lives): a search
    under constraints makes a program for every set of prices (the Lagrangian dual, the
    branch-and-bound, the polish), all on the same table, and reading it again took 10-17 %
    of such a search on 200,000 to 2 million patterns."""
    key = id(X)
    got = _FEATURES.get(key)
    if got is not None and got[0]() is X:
        keep, Xe, ones, layout = got[1]
        return keep, X if Xe is None else Xe, ones, layout
    # Features that split the patterns as an earlier one does (the same column or
    # its complement, as in DL8.5's tables) or not at all are left out: the same trees.
    keep = distinct_features(X)
    Xe = X
    if keep.size < X.shape[1]:
        Xe = np.ascontiguousarray(X[:, keep])
        ones = None
    if ones is None:
        ones = kernels.ones_of(Xe)
    out = (keep, Xe, ones, treedp.table_layout(Xe, ones))
    try:
        ref = weakref.ref(X, lambda _, k=key: _FEATURES.pop(k, None))
    except TypeError:  # not an object a weak reference can follow: nothing kept
        return out
    while len(_FEATURES) >= FEATURES_KEPT:
        _FEATURES.pop(next(iter(_FEATURES)), None)
    _FEATURES[key] = (ref, (keep, None if Xe is X else Xe, ones, out[3]))  # no strong reference to X
    return out


def distinct_features(X: np.ndarray) -> np.ndarray:
    """Indices of the features to search: the first of each group of features that
    split the patterns the same way (equal columns, or one the complement of the
    other), none that is constant; at least one (a constant one if all are)."""
    B = np.asarray(X) > 0.5
    if B.shape[1] == 0:
        return np.zeros(0, dtype=np.int64)
    canonical = B ^ B[:1, :]  # complemented so that the first pattern is 0
    packed = np.ascontiguousarray(np.packbits(canonical, axis=0).T)  # (F, P / 8): one row of bytes per feature
    # The first feature of each distinct row of bytes, by a dictionary of the rows (np.unique
    # over rows compared them as structured values: 1 s on a million patterns of 40 features).
    first: dict[bytes, int] = {}
    for f in range(packed.shape[0]):
        first.setdefault(packed[f].tobytes(), f)
    split = canonical.any(axis=0)
    keep = np.array(sorted(f for f in first.values() if split[f]), dtype=np.int64)
    return keep if keep.size else np.zeros(1, dtype=np.int64)


#: Seconds between two calls of the root hook while the top is searched.
HOOK_SECONDS = 0.05
#: The top's features tried in pieces of at most this many (a search stopped in a piece
#: counts none of that piece's features in its bound: see :class:`_TopBound`).
PIECE_FEATURES = 8
#: Above this many patterns x features^2 the top's bound is not counted (the matrices
#: of pair sums would take seconds): a stopped search then keeps the bound it had.
TOP_BOUND_WORK = 2e9
#: Seconds between two countings of the top's bound (the pair sums are counted once;
#: each counting after that reads the children of the features tried since).
TOP_BOUND_SECONDS = 0.25
#: Patterns per matrix product of the top's pair sums.
PAIR_CHUNK = 1 << 16


class _TopBound:
    """A proven bound on the top's value while some of its features are still untried.

    A feature tried (in full) gave a tree no better than the best so far, so the top's
    value is at most ``max(best, max over untried f of bound(f))`` where, with the
    full budget, ``bound(f) = b(f's left side) + b(f's right side) - pen``.  A side
    ``S'`` of an untried feature ``f`` is bounded from a side ``S`` of a feature ``g``
    already tried, whose best subtree ``v(S)`` the search's table holds (or a bound on
    it), by the similarity bound (MurTree)::

        v(S') <= v(S) + sum_{S' \\ S} max_k s - sum_{S \\ S'} min_k s

    (the best tree on ``S'`` is a tree on ``S`` too, with ``S' \\ S`` taken away and
    ``S \\ S'`` added: valid when a split with an empty side is never better than the
    same tree without it, ``pen >= 0``, and no leaf has a least size, ``min_leaf <= 1``).
    Each side takes the least over the features tried, either side of each (a split and
    its complement give the same trees), and at most its rows at their best class.
    The sums over two features' sides come from one matrix product, counted once.
    Otherwise (a bound on branching nodes, leaves of a least size, too large a table)
    the bound is every pattern at its best class, less ``pen``.
    """

    def __init__(self, dp: "GainDP", idx: np.ndarray, depth: int, b: int, order: np.ndarray, sm: float) -> None:
        self.dp, self.idx, self.depth, self.order = dp, idx, depth, order
        self.trivial = sm - dp.pen
        self.done = np.zeros(order.size, dtype=bool)
        self.cap = (1 << (depth - 1)) - 1
        XT = dp._engine.E[0]
        self.applies = (b == (1 << depth) - 1 and dp.pen >= 0 and dp.min_leaf <= 1 and order.size > 0
                        and float(idx.size) * float(order.size) ** 2 <= TOP_BOUND_WORK)
        self._XT = XT
        self._sums = None  # (A, B, r, q, T, Tq) over the features of ``order``
        self._children: dict[int, tuple[float, float]] = {}  # position -> (left, right) bounds
        self._last = (-1, math.inf, 0.0)  # (features tried, bound, when)

    def _pair_sums(self):
        if self._sums is None:
            F = self.order.size
            A, B, r, q = np.zeros((F, F)), np.zeros((F, F)), np.zeros(F), np.zeros(F)
            for a in range(0, self.idx.size, PAIR_CHUNK):  # (a float copy of a million patterns' features: 320 MB)
                part = self.idx[a:a + PAIR_CHUNK]
                X = self._XT[self.order][:, part].astype(np.float64)  # (features, patterns)
                hi, lo = self.dp.smax[part], self.dp.smin[part]
                A += (X * hi) @ X.T
                B += (X * lo) @ X.T
                r += X @ hi
                q += X @ lo
            self._sums = A, B, r, q, float(self.dp.smax[self.idx].sum()), float(self.dp.smin[self.idx].sum())
        return self._sums

    def _child_bounds(self, engines, pos: int) -> tuple[float, float]:
        """Bounds on the best subtrees of feature ``order[pos]``'s two sides (left: x = 0)."""
        got = self._children.get(pos)
        if got is None:
            f = int(self.order[pos])
            right = self._XT[f, self.idx].astype(bool)
            got = tuple(self._upper(engines, self.idx[side]) for side in (~right, right))
            self._children[pos] = got
        return got

    def _upper(self, engines, sub: np.ndarray) -> float:
        sub = np.ascontiguousarray(sub, dtype=np.int64)
        best = float(self.dp.smax[sub].sum())
        for engine in engines:
            ub, value, _, _ = engine.entry(sub, self.depth - 1, self.cap)
            best = min(best, ub if math.isnan(value) else value)
        return best

    def sides(self, engines) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(positions in ``order`` of the features not done, bounds on their left sides'
        best subtrees, on their right sides'), from the features done."""
        A, B, r, q, T, Tq = self._pair_sums()
        g = np.flatnonzero(self.done)
        f = np.flatnonzero(~self.done)
        vL, vR = (np.array(v) for v in zip(*(self._child_bounds(engines, int(pos)) for pos in g)))
        Afg, Bfg = A[np.ix_(f, g)], B[np.ix_(f, g)]
        rf, rg, qf, qg = r[f, None], r[None, g], q[f, None], q[None, g]
        # left side of f (x_f = 0): from g's left side, and from g's right side
        left = np.minimum(vL + (rg - Afg) - (qf - Bfg), vR + (T - rf - rg + Afg) - Bfg).min(axis=1)
        # right side of f (x_f = 1): from g's right side, and from g's left side
        right = np.minimum(vR + (rf - Afg) - (qg - Bfg), vL + Afg - (Tq - qf - qg + Bfg)).min(axis=1)
        return f, np.minimum(left, T - r[f]), np.minimum(right, r[f])

    def bound(self, engines, best: float, fresh: bool = False) -> float:
        """The bound, ``best`` the best value so far (the top's leaf at least), from the
        features marked ``done``; not counted again within ``TOP_BOUND_SECONDS`` unless
        ``fresh``.  Call only while no other thread writes the engines' tables."""
        if not self.applies or not self.done.any():
            return max(best, self.trivial)
        if self.done.all():
            return best
        n_done = int(self.done.sum())
        if n_done == self._last[0] or (not fresh and time.perf_counter() - self._last[2] < TOP_BOUND_SECONDS):
            return max(best, self._last[1])
        _, left, right = self.sides(engines)
        value = min(self.trivial, float((left + right).max()) - self.dp.pen)
        self._last = (n_done, value, time.perf_counter())
        return max(best, value)


def _top_tree(engine, X, s, idx, depth, b, st) -> Tree:
    """The tree of the best split found at the top (state ``st`` of the compiled search)."""
    f = int(st[1])
    if f < 0:
        return int(np.argmax(s[idx].sum(axis=0)))
    bl = int(st[2])
    right = X[idx, f] > 0.5
    cap = (1 << (depth - 1)) - 1
    return (f, engine.tree(idx[~right], depth - 1, min(bl, cap)), engine.tree(idx[right], depth - 1, min(b - 1 - bl, cap)))


class _Parallel:
    """The top's features shared out among threads (the compiled search runs
    without the interpreter lock); each thread has its own cache and they
    share the best value found (a value any of them beats prunes the others)."""

    def __init__(self, dp: GainDP, idx, depth, b, floor, ha, hb, order, st) -> None:
        self.dp, self.idx, self.depth, self.b, self.floor = dp, idx, depth, b, floor
        self.ha, self.hb, self.order, self.st0 = ha, hb, order, st
        self.shared = np.full(1, NEG)
        # Each thread walks a block of the top's features in order (neighbouring
        # features make the similarity bound tight), then helps the block with the
        # most left, from its end.
        cuts = np.linspace(0, order.size, dp.n_jobs + 1).astype(int)
        self.blocks = [[int(a), int(b)] for a, b in zip(cuts[:-1], cuts[1:])]
        self.lock = threading.Lock()
        self.found: list[tuple[float, int, Tree]] = []  # (value, position, tree)
        self.top = _TopBound(dp, idx, depth, b, order, float(st[6]))  # its ``done``: features tried in full
        self.error: BaseException | None = None

    def run(self) -> tuple[float, Tree | None]:
        dp = self.dp
        base = dp._engine
        workers = [treedp.Engine(dp._Xe, dp.count, dp.s, dp.pen, dp.min_leaf, None, base.E[8], shared=self.shared,
                                   base=base, at=dp.deadline.at) for _ in range(dp.n_jobs)]
        ended = [run_in_background(partial(self.work, w, k)) for k, w in enumerate(workers)]
        reported = None
        last = time.perf_counter()
        flag, stop = dp.deadline.flag(), dp.deadline.stop
        while not all(e.is_set() for e in ended):
            for e in ended:
                e.wait(HOOK_SECONDS)
            if stop is not None and stop.is_set():  # (no watching thread when this one is the main thread)
                flag[0] = 1
            if dp.root_hook is not None and time.perf_counter() - last > HOOK_SECONDS:
                best = self.best()
                if best is not None and best is not reported:
                    dp.root_hook(best[0], dp._out(best[2]), max(best[0], float(self.st0[6]) - dp.pen))
                    reported = best
                last = time.perf_counter()
        dp._workers_solved += sum(int(w.stats[0] + w.stats[1]) for w in workers)
        if self.error is not None:
            raise self.error
        best = self.best()
        if dp.deadline.flag()[0]:
            if best is not None and dp.root_hook is not None:  # (every thread has ended: the tables hold still)
                dp.root_hook(best[0], dp._out(best[2]), self.top.bound((base, *workers), best[0], fresh=True))
            raise SearchStopped
        leaf = float(self.st0[0])
        if best is None or not best[0] > leaf:
            return leaf, _top_tree(base, dp._Xe, dp.s, self.idx, self.depth, self.b, self.st0)
        return best[0], best[2]

    def best(self):
        with self.lock:
            if not self.found:
                return None
            return max(self.found, key=lambda t: (t[0], -t[1]))

    def take(self, k: int) -> int | None:
        """The next top feature's position for thread ``k``, or None when all are taken."""
        with self.lock:
            own = self.blocks[k]
            if own[0] < own[1]:
                own[0] += 1
                return own[0] - 1
            other = max(self.blocks, key=lambda bl: bl[1] - bl[0])
            if other[0] >= other[1]:
                return None
            other[1] -= 1
            return other[1]

    def work(self, engine, k: int) -> None:
        try:
            st = self.st0.copy()
            flag = self.dp.deadline.flag()
            while not flag[0]:
                pos = self.take(k)
                if pos is None:
                    return
                before = st[0]
                engine.piece(self.idx, self.ha, self.hb, self.depth, self.b, self.floor, self.order, pos, pos + 1, st,
                             True)
                if not flag[0]:
                    self.top.done[pos] = True
                if st[0] > before and not flag[0]:
                    tree = _top_tree(engine, self.dp._Xe, self.dp.s, self.idx, self.depth, self.b, st)
                    with self.lock:
                        self.found.append((float(st[0]), pos, tree))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            self.error = exc



class NumpyGainDP:
    """Best subtrees for the gains ``scores`` (P, K) on binary ``X`` (P, F), in numpy
    (the reference, and the route without numba or for tables too wide for the
    compiled program's pair sums).

    Parameters
    ----------
    X : ndarray of float64, shape (P, F)
    count : ndarray of float64, shape (P,)
    scores : ndarray of float64, shape (P, K)
    penalty : float
        Subtracted per branching node (the paper's lambda, plus any price).
    min_leaf : int
    deadline : Deadline, optional
    ones : (indptr, indices), optional
        ``X``'s ones as CSR (:func:`kernels.ones_of`), when the caller keeps them.
    ordered : OrderedColumns, optional
        ``X``'s features as chains of thresholds: depth-2 subproblems are then
        counted from histograms when that takes fewer steps (``accel/ordered.py``).
    """

    def __init__(self, X, count, scores, penalty: float, min_leaf: int, deadline: Deadline | None = None,
                 ones=None, ordered=None) -> None:
        self.X = X
        self.count = count
        self.s = np.ascontiguousarray(scores, dtype=np.float64)
        self.smax = self.s.max(axis=1)
        self.smin = self.s.min(axis=1)
        self.pen = float(penalty)
        self.min_leaf = int(min_leaf)
        self.need = max(1, self.min_leaf)
        self.deadline = deadline or Deadline()
        self.cache: dict[bytes, _Entry] = {}
        self.n_solved = 0
        #: Called as ``root_hook(best_value, best_tree, bound)`` after every feature
        #: tried at the root (all patterns): an anytime view of the search.
        self.root_hook = None
        # The compiled depth-2 kernel (two classes, not too wide): features as CSR.  It runs
        # once compiled kernels are ready (a first fit after an installation may start without).
        self.csr = None
        if kernels.library.usable() and self.s.shape[1] == 2 and 0 < X.shape[1] <= kernels.MAX_FEATURES_USED:
            indptr, indices = kernels.ones_of(X) if ones is None else ones
            self.csr = (indptr, indices, np.ascontiguousarray(self.s[:, 1] - self.s[:, 0]),
                        np.ascontiguousarray(self.s[:, 0]), np.ascontiguousarray(self.count, dtype=np.float64))
        self.ordered = ordered if self.csr is not None and ordered is not None and ordered_kernel.available() else None

    # -- public -------------------------------------------------------------
    def best(self, idx: np.ndarray, depth: int, floor: float = NEG) -> tuple[float, Tree] | None:
        """The best subtree of depth <= ``depth`` on patterns ``idx`` if its
        value exceeds ``floor``, else None (then no subtree exceeds ``floor``)."""
        key = subset_key(idx, depth)
        entry = self.cache.get(key)
        if entry is not None:
            if entry.value is not None:
                return (entry.value, entry.tree) if entry.value > floor else None
            if entry.ub <= floor:
                return None
        found = self._solve(idx, depth, floor)
        if found is None:
            ub = floor if entry is None else min(entry.ub, floor)
            self.cache[key] = _Entry(ub)
        else:
            self.cache[key] = _Entry(found[0], found[0], found[1])
        return found

    def upper(self, idx: np.ndarray, depth: int) -> float:
        """A proven upper bound on best(idx, depth): cached, else every pattern at its best class."""
        entry = self.cache.get(subset_key(idx, depth))
        if entry is not None:
            return entry.ub
        return float(self.smax[idx].sum())

    def exact(self, idx: np.ndarray, depth: int) -> tuple[float, Tree]:
        """The best subtree, always (infeasible subsets give ``-inf`` and a leaf)."""
        found = self.best(idx, depth, NEG)
        if found is None:  # only when nothing is feasible (min leaf)
            return NEG, 0
        return found

    # -- the recursion ------------------------------------------------------
    def _leaf(self, idx: np.ndarray) -> tuple[float, int]:
        if self.count[idx].sum() < self.min_leaf:
            return NEG, 0
        sums = self.s[idx].sum(axis=0)
        k = int(np.argmax(sums))
        return float(sums[k]), k

    def _solve(self, idx: np.ndarray, depth: int, floor: float) -> tuple[float, Tree] | None:
        self.n_solved += 1
        if depth == 2 and idx.size > 1 and self.csr is not None and kernels.available():
            indptr, indices, d, s0, c = self.csr
            rows = idx.astype(np.int64)
            if self.ordered is not None and ordered_kernel.cheaper_than_lists(self.ordered, indptr, rows):
                value, code = ordered_kernel.depth_two_ordered(self.ordered, rows, d, s0, c, self.pen, self.min_leaf)
                return (value, kernels.tree_of(code)) if value > floor and value > NEG else None
            value, code = kernels.depth_two_binary(self.X, indptr, indices, idx.astype(np.int64), d, s0, c,
                                                   self.pen, self.min_leaf)
            return (value, kernels.tree_of(code)) if value > floor and value > NEG else None
        if depth <= 2 or idx.size <= 1:
            value, tree = depth_two(self.X[idx], self.s[idx], self.count[idx], min(depth, 2), self.pen, self.min_leaf,
                                    check=self.deadline.check)
            return (value, tree) if value > floor else None
        self.deadline.check()
        leaf_value, leaf_k = self._leaf(idx)
        best_value, best_tree = leaf_value, leaf_k
        Xd = self.X[idx]
        c = self.count[idx]
        right_rows = Xd.T @ c
        left_rows = c.sum() - right_rows
        ok = (right_rows >= self.need) & (left_rows >= self.need)
        sim = None
        if self.min_leaf == 0 and Xd.shape[1] <= SIMILARITY_MAX_FEATURES:
            sim = _Similarity(Xd, self.smax[idx], self.smin[idx])
        # upper bounds of the best left (x_f = 0) and right (x_f = 1) subtree of each feature
        ub_right = Xd.T @ self.smax[idx]
        ub_left = self.smax[idx].sum() - ub_right
        ub = np.where(ok, ub_left + ub_right - self.pen, NEG)
        goes_right = Xd > 0.5
        while True:
            self.deadline.check()
            f = int(np.argmax(ub))
            target = max(best_value, floor)
            if ub[f] <= target:
                break
            ub[f] = NEG
            left = idx[~goes_right[:, f]]
            right = idx[goes_right[:, f]]
            ubr = min(float(ub_right[f]), self.upper(right, depth - 1))
            need_left = target + self.pen - ubr
            lft = self.best(left, depth - 1, need_left)
            if lft is None:
                if sim is not None:
                    ub_left = sim.left(f, need_left, ub_left)
                    ub = np.where(ub > NEG, np.minimum(ub, ub_left + ub_right - self.pen), NEG)
                if self.root_hook is not None and idx.size == self.X.shape[0]:
                    self.root_hook(best_value, best_tree, max(best_value, float(ub.max())))
                continue
            need_right = target + self.pen - lft[0]
            rgt = self.best(right, depth - 1, need_right)
            if sim is not None:
                ub_left = sim.left(f, lft[0], ub_left)
                ub_right = sim.right(f, need_right if rgt is None else rgt[0], ub_right)
                ub = np.where(ub > NEG, np.minimum(ub, ub_left + ub_right - self.pen), NEG)
            if rgt is not None:
                value = lft[0] + rgt[0] - self.pen
                if value > target:
                    best_value, best_tree = value, (int(f), lft[1], rgt[1])
            if self.root_hook is not None and idx.size == self.X.shape[0]:
                self.root_hook(best_value, best_tree, max(best_value, float(ub.max())))
        if best_value > floor and best_value > NEG:
            return best_value, best_tree
        return None


class _Similarity:
    """Similarity bounds between the children of two splits of one node (MurTree).

    If the best subtree on ``D`` has value at most ``v``, then on ``D'``

        best(D') <= v + sum_{D' \\ D} max_k s - sum_{D \\ D'} min_k s

    (the best tree of ``D'`` applied to ``D`` is worth at most ``v`` there).
    For the left children (x = 0) of splits on ``f`` and ``g``, ``D_f0 \\ D_g0`` are
    the rows with ``x_f = 0, x_g = 1``; every such sum is an entry of
    ``X^T diag(w) X``.  Valid without a minimum leaf size only.
    """

    def __init__(self, Xd: np.ndarray, smax: np.ndarray, smin: np.ndarray) -> None:
        self.P1 = (Xd * smax[:, None]).T @ Xd  # sum of max_k s over x_f = 1 and x_g = 1
        self.P2 = (Xd * smin[:, None]).T @ Xd
        self.R1 = np.diag(self.P1).copy()
        self.R2 = np.diag(self.P2).copy()

    def left(self, g: int, v: float, ub_left: np.ndarray) -> np.ndarray:
        """Tighten ``ub_left`` with ``best(D_g0) <= v``."""
        bound = v + (self.R1[g] - self.P1[:, g]) - (self.R2 - self.P2[:, g])
        return np.minimum(ub_left, bound)

    def right(self, g: int, v: float, ub_right: np.ndarray) -> np.ndarray:
        """Tighten ``ub_right`` with ``best(D_g1) <= v``."""
        bound = v + (self.R1 - self.P1[:, g]) - (self.R2[g] - self.P2[:, g])
        return np.minimum(ub_right, bound)


def depth_two(Xd: np.ndarray, S: np.ndarray, c: np.ndarray, depth: int, pen: float, min_leaf: int,
              check=None) -> tuple[float, Tree]:
    """Best subtree of depth <= ``depth`` (0, 1 or 2) on one set of patterns, by counting.

    ``Xd`` (n, F) binary features, ``S`` (n, K) gains, ``c`` (n,) rows.  Returns
    (-inf, 0) when no subtree keeps every leaf at ``min_leaf`` rows.  ``check()``
    is called between blocks of root features (it may raise to stop).
    """
    need = max(1, min_leaf)
    T = S.sum(axis=0)
    N = float(c.sum())
    k_leaf = int(np.argmax(T))
    best = (float(T[k_leaf]), k_leaf) if N >= min_leaf else (NEG, 0)
    if depth == 0 or Xd.shape[0] <= 1 or Xd.shape[1] == 0:
        return best
    R = Xd.T @ S  # (F, K): gains of the rows with x_a = 1
    L = T[None, :] - R
    Rc = Xd.T @ c
    Lc = N - Rc
    split_ok = (Rc >= need) & (Lc >= need)
    if depth == 1:
        v = np.where(split_ok, R.max(axis=1) + L.max(axis=1) - pen, NEG)
        a = int(np.argmax(v))
        if v[a] > best[0]:
            best = (float(v[a]), (a, int(np.argmax(L[a])), int(np.argmax(R[a]))))
        return best
    # Depth 2, one block of root features at a time: memory O(block * F), not O(F^2).
    F = Xd.shape[1]
    block = max(1, min(F, BLOCK_ENTRIES // max(F, 1)))
    for a0 in range(0, F, block):
        if check is not None and a0:
            check()
        rows = np.arange(a0, min(F, a0 + block))
        if S.shape[1] == 2:
            found = _depth_two_binary(Xd, S, c, pen, min_leaf, rows, R, Rc, Lc, split_ok)
        else:
            found = _depth_two_block(Xd, S, c, pen, min_leaf, rows, R, L, Rc, Lc, split_ok)
        if found[0] > best[0]:
            best = found
    return best


#: Similarity bounds keep two (F, F) matrices per node: only up to this many features.
SIMILARITY_MAX_FEATURES = 2048
#: Entries of the (block, F) arrays of the depth-2 kernel (about 8 MB each).
BLOCK_ENTRIES = 1 << 20


def _pair_counts(Xd: np.ndarray, c: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Rows with x_a = 1 and x_b = 1 for a in ``rows``, shape (len(rows), F):
    float32 products are exact below 2^24 rows."""
    if c.sum() < 2 ** 24:
        X32 = Xd.astype(np.float32)
        return ((X32[:, rows] * c[:, None].astype(np.float32)).T @ X32).astype(np.float64)
    return (Xd[:, rows] * c[:, None]).T @ Xd


def _depth_two_block(Xd, S, c, pen, min_leaf, rows, R, L, Rc, Lc, split_ok) -> tuple[float, Tree]:
    """Best depth-2 tree whose root splits on a feature in ``rows`` (any number of classes)."""
    need = max(1, min_leaf)
    K = S.shape[1]
    M = np.stack([(Xd[:, rows] * S[:, k:k + 1]).T @ Xd for k in range(K)])  # (K, B, F): x_a = 1 and x_b = 1
    C = _pair_counts(Xd, c, rows)
    # Right child of a root split on a (x_a = 1), split on b: quadrants (x_b = 1, x_b = 0).
    rr, rl = M, R[rows].T[:, :, None] - M
    crr, crl = C, Rc[rows][:, None] - C
    # Left child (x_a = 0), split on b: (x_b = 1) = R[b] - M[a, b], (x_b = 0) = L[a] - that.
    lr = R.T[:, None, :] - M
    ll = L[rows].T[:, :, None] - lr
    clr = Rc[None, :] - C
    cll = Lc[rows][:, None] - clr
    sub_r = np.where((crr >= need) & (crl >= need), rr.max(axis=0) + rl.max(axis=0) - pen, NEG)  # (B, F_b)
    sub_l = np.where((clr >= need) & (cll >= need), lr.max(axis=0) + ll.max(axis=0) - pen, NEG)
    leaf_r = np.where(Rc[rows] >= min_leaf, R[rows].max(axis=1), NEG)
    leaf_l = np.where(Lc[rows] >= min_leaf, L[rows].max(axis=1), NEG)
    return _best_root(rows, split_ok, pen, leaf_l, sub_l, leaf_r, sub_r,
                      leaf_class=lambda side, j: int(np.argmax((L if side == 0 else R)[rows[j]])),
                      split_classes=lambda side, j, b: (
                          (int(np.argmax(ll[:, j, b])), int(np.argmax(lr[:, j, b]))) if side == 0
                          else (int(np.argmax(rl[:, j, b])), int(np.argmax(rr[:, j, b])))))


def _depth_two_binary(Xd, S, c, pen, min_leaf, rows, R, Rc, Lc, split_ok) -> tuple[float, Tree]:
    """:func:`_depth_two_block` for two classes: a set's leaf gain is
    ``sum s_0 + max(0, sum (s_1 - s_0))``, and the ``sum s_0`` of a child's two
    leaves is the child's own, so one matrix product of the differences
    ``d = s_1 - s_0`` (and one of row counts) decides every tree."""
    need = max(1, min_leaf)
    d = S[:, 1] - S[:, 0]
    Md = (Xd[:, rows] * d[:, None]).T @ Xd  # (B, F): sum of d over x_a = 1 and x_b = 1
    C = _pair_counts(Xd, c, rows)
    Dr = R[:, 1] - R[:, 0]  # (F,): sum of d over x_b = 1
    Dl = float(d.sum()) - Dr
    base_r = R[rows, 0]  # sum of s_0 over x_a = 1
    base_l = float(S[:, 0].sum()) - base_r
    # right child of a (x_a = 1) split on b: (x_b = 1) Md[a, b], (x_b = 0) Dr[a] - Md[a, b]
    rr, rl = Md, Dr[rows][:, None] - Md
    crr, crl = C, Rc[rows][:, None] - C
    # left child (x_a = 0) split on b: (x_b = 1) Dr[b] - Md[a, b], (x_b = 0) Dl[a] - that
    lr = Dr[None, :] - Md
    ll = Dl[rows][:, None] - lr
    clr = Rc[None, :] - C
    cll = Lc[rows][:, None] - clr
    sub_r = np.where((crr >= need) & (crl >= need), np.maximum(rr, 0) + np.maximum(rl, 0) - pen, NEG)
    sub_l = np.where((clr >= need) & (cll >= need), np.maximum(lr, 0) + np.maximum(ll, 0) - pen, NEG)
    leaf_r = np.where(Rc[rows] >= min_leaf, np.maximum(Dr[rows], 0), NEG)
    leaf_l = np.where(Lc[rows] >= min_leaf, np.maximum(Dl[rows], 0), NEG)
    return _best_root(rows, split_ok, pen, base_l + leaf_l, base_l[:, None] + sub_l, base_r + leaf_r,
                      base_r[:, None] + sub_r,
                      leaf_class=lambda side, j: int((Dl if side == 0 else Dr)[rows[j]] > 0),
                      split_classes=lambda side, j, b: (
                          (int(ll[j, b] > 0), int(lr[j, b] > 0)) if side == 0 else (int(rl[j, b] > 0), int(rr[j, b] > 0))))


def _best_root(rows, split_ok, pen, leaf_l, sub_l, leaf_r, sub_r, leaf_class, split_classes) -> tuple[float, Tree]:
    """The best tree splitting at the root on a feature of ``rows``: each child is
    its best leaf or its best split (``sub_*[j, b]``: child split on ``b``)."""
    B = rows.size
    ar = np.arange(B)
    b_r = np.argmax(sub_r, axis=1)
    b_l = np.argmax(sub_l, axis=1)
    best_r = np.maximum(leaf_r, sub_r[ar, b_r])
    best_l = np.maximum(leaf_l, sub_l[ar, b_l])
    total = np.where(split_ok[rows], best_l + best_r - pen, NEG)
    j = int(np.argmax(total))
    if not total[j] > NEG:
        return NEG, 0

    def child(side, side_leaf, side_sub, b_side):
        if side_leaf[j] >= side_sub[j, b_side[j]]:
            return leaf_class(side, j)
        b = int(b_side[j])
        lo, hi = split_classes(side, j, b)
        return (b, lo, hi)

    return float(total[j]), (int(rows[j]), child(0, leaf_l, sub_l, b_l), child(1, leaf_r, sub_r, b_r))


def tree_to_structure(tree: Tree, depth: int) -> TreeStructure:
    """A nested-tuple tree as a :class:`TreeStructure` of maximum depth ``depth``."""
    g = TreeGraph(depth)
    feature = np.full(g.n_nodes, PRUNED, dtype=np.int64)
    prediction = np.full(g.n_nodes, -1, dtype=np.int64)
    stack = [(tree, 1)]
    while stack:
        t, n = stack.pop()
        if isinstance(t, tuple):
            if 2 * n > g.n_nodes:
                raise ValueError(f"the tree is deeper than {depth}")
            feature[n - 1] = t[0]
            stack += [(t[1], 2 * n), (t[2], 2 * n + 1)]
        else:
            feature[n - 1] = LEAF
            prediction[n - 1] = int(t)
    return TreeStructure(depth, feature, prediction)


def structure_to_tree(structure: TreeStructure) -> Tree:
    """The inverse of :func:`tree_to_structure`."""

    def walk(n: int) -> Tree:
        f = int(structure.feature[n - 1])
        if f >= 0:
            return (f, walk(2 * n), walk(2 * n + 1))
        return int(structure.prediction[n - 1])

    return walk(1)


def tree_branchings(tree: Tree) -> int:
    return 1 + tree_branchings(tree[1]) + tree_branchings(tree[2]) if isinstance(tree, tuple) else 0
