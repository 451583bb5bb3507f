"""Exact fair trees by dynamic programming over the groups' counts.

The Lagrangian bound of ``accel/search.py`` prices the fairness rows; when
small groups make the counts coarse (a cohort of 26 and 3 rows within 0.01
admits only "nobody" and "everybody" predicted positive), no price closes the
gap.  This search carries the counts themselves.  A *state* of a subtree on a
set of patterns is its vector of rows predicted positive per atom
(``accel/group_counts.py``) with the best value of a subtree giving it; the
states of a set form a *front*, one entry per vector (the better value wins:
the comparisons see only the vector).  The front of a split is every pair of
a left and a right state; the front of a set at depth <= 2 is counted
directly (``accel/fronts.py``).  At the root a pair of states whose counts
meet every comparison is a feasible tree, and the best such pair over every
root split is the optimum.

A pass looks for the best feasible tree of value at least ``tau``.  A state
is dropped when no tree of value ``tau`` can hold it, by four bounds, each
valid on its own:

* the value: the state's value plus the best value the rest of the tree can
  have (the dynamic program's exact optimum of each set the rest is made of,
  or the best state of an explored sibling) must reach ``tau``;
* the priced value: the same with the Lagrangian prices ``nu`` of the dual
  (a state's priced value is its value less ``nu`` times its rows of (11));
* reachability: the rest can add between 0 and all of its rows predicted
  positive to each atom; some totals within those ranges must meet every
  comparison (checked exactly, in integers, cohort by cohort);
* one cohort at a time: for each cohort, the rest's own front of that cohort's
  counts alone (other cohorts ignored) must hold a state that, with this one,
  meets the cohort's comparisons, and their values must reach ``tau``.

Passes run with a falling ``tau`` (from the bound down to the incumbent):
a pass either finds the optimum (the best feasible tree among all of value
``>= tau``) or proves that no feasible tree reaches ``tau``.  With no
incumbent the last pass has no threshold: it finds the optimum or proves
that no tree meets the constraints.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from strongtree_core.accel import fronts
from strongtree_core.accel.dp import NEG, Deadline, GainDP, SearchStopped, Tree, subset_key
from strongtree_core.accel.group_counts import GroupCounts
from strongtree_core.accel.lagrange import Prices
from strongtree_core.accel.problem import LinearProblem
from strongtree_core.accel.treedp import monotonic_ns

#: Relative slack on thresholds (float sums in another order never drop a state).
SLACK = 1e-9
#: Largest problem the search takes: patterns (each set's pair sums cost its patterns' ones squared),
#: and pair sums of one set (features squared times classes, atoms and rows; 8 bytes each).
MAX_PATTERNS = 50_000
MAX_PAIR_ENTRIES = 4_000_000
#: Most training rows (their weights' sum) the search takes.  A front keeps a state per count of
#: positive predictions per atom, so it widens with the rows: the search closed German's 750 training rows
#: (conditional parity 0.01, depth 4) where the branch-and-bound did not, but on the live demo's
#: 7,500 rows (equalized odds within 1 pp, depth 4) it had not closed in 60 s where the branch-and-bound
#: alone proves in about 5 CPU s, and on Adult's 2,700 its bound stayed looser.
MAX_ROWS = 2_000
#: Sets whose pair sums are kept (the last ones asked for).
SUMS_KEPT = 32
#: States a cohort's bound sees before it may be left out, and the share of them it must remove.
TRIAL_STATES = 1_000
MIN_REMOVED = 0.05
#: States a step over a front handles (a copy, a gather, a product) between two looks at the deadline: a
#: front of Adult's counts (its row limit lifted) held 3.2 million states, whose copy alone took 0.4 s.
CHUNK = 1 << 16
#: Random multipliers of the tables' hash (fixed: runs repeat).
_MULT = np.random.default_rng(20_261_129).integers(1, 2**63 - 1, size=4096, dtype=np.int64).astype(np.uint64) | np.uint64(1)


def applies(problem: LinearProblem, counts: GroupCounts | None) -> bool:
    """The search takes ``problem``: fairness rows only, one objective part, no bound on
    branching nodes or features, at least one comparison, at most :data:`MAX_ROWS` rows,
    :data:`MAX_PATTERNS` patterns and :data:`MAX_PAIR_ENTRIES` pair sums, and the compiled kernels ready."""
    if counts is None or counts.n_cohorts == 0 or problem.n_parts != 1 or problem.max_branching is not None \
            or problem.max_features_used is not None or problem.n_patterns > MAX_PATTERNS \
            or float(problem.count.sum()) > MAX_ROWS:
        return False
    width = problem.n_classes + counts.n_atoms + 1
    return problem.n_features ** 2 * width <= MAX_PAIR_ENTRIES and counts.n_atoms < _MULT.size and fronts.available()


@dataclass
class Front:
    """The states of subtrees on one set of patterns.

    ``keys`` (m, atoms) rows predicted positive per atom, ``obj`` (m,) their best value,
    ``back`` how each is built: (m, 7) codes of a subtree of depth <= 2 (``kind`` "enumerated"),
    or (m, 3) ``(g, left, right)`` of a split on ``g`` whose children's fronts are
    ``children[g]`` (``g = -1``: a leaf of class ``left``; ``kind`` "merged")."""

    keys: np.ndarray
    obj: np.ndarray
    back: np.ndarray
    kind: str
    children: dict = field(default_factory=dict)
    pv: np.ndarray | None = None
    _projections: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.obj.size)

    def take(self, keep: np.ndarray, check: Callable[[], None]) -> "Front":
        """The states where ``keep`` (``check()`` between chunks: it raises at the deadline)."""
        idx = np.flatnonzero(keep)
        return Front(_gather(self.keys, idx, check), _gather(self.obj, idx, check), _gather(self.back, idx, check),
                     self.kind, self.children, None if self.pv is None else _gather(self.pv, idx, check))

    def tree(self, j: int) -> Tree:
        b = [int(v) for v in self.back[j]]
        if self.kind == "enumerated":
            a, lb, lk0, lk1, rb, rk0, rk1 = b
            if a < 0:
                return lk0
            left = lk0 if lb < 0 else (lb, lk0, lk1)
            right = rk0 if rb < 0 else (rb, rk0, rk1)
            return (a, left, right)
        g, x, y = b
        if g < 0:
            return x
        left, right = self.children[g]
        return (g, left.tree(x), right.tree(y))


@dataclass(frozen=True)
class _Member:
    """A part of the rest of the tree: a set not explored yet (``idx`` at ``depth``), or an explored
    sibling's front."""

    idx: np.ndarray
    depth: int
    front: Front | None = None


@dataclass
class CountResult:
    """The best feasible tree of value at least the pass's threshold, if any."""

    value: float
    tree: Tree | None
    explored: int


class CountSearch:
    """The search of the module docstring on one problem (its caches kept between passes).

    Parameters
    ----------
    problem : LinearProblem
        One objective part; its fairness rows are those of ``counts``.
    counts : GroupCounts
    deadline : Deadline
    prices : Prices, optional
        The Lagrangian prices of the rows (a second bound on values); None: values only.
    """

    def __init__(self, problem: LinearProblem, counts: GroupCounts, deadline: Deadline,
                 prices: Prices | None = None) -> None:
        p = problem
        self.p = p
        self.counts = counts
        self.deadline = deadline
        self.flag = deadline.flag(watch_stop=True)
        self.limit = clock_limit(deadline.at)
        self.pen = float(p.lambda_)
        self.min_leaf = float(p.min_leaf)
        self.gains = np.ascontiguousarray((1.0 - p.lambda_) * p.G[:, :, 0])
        self.K = self.gains.shape[1]
        self.pos = counts.positive
        self.indptr, self.indices = (np.ascontiguousarray(a, dtype=np.int64) for a in p.ones)
        self.count = np.asarray(p.count, dtype=np.float64)
        self.goes_right = p.X > 0.5
        self.XT = np.ascontiguousarray(self.goes_right.T.astype(np.uint8))
        self.z = np.random.default_rng(7).integers(0, 2**63 - 1, size=p.n_patterns, dtype=np.int64).astype(np.uint64)
        self.dp0 = GainDP(p.X, p.count, self.gains, self.pen, p.min_leaf, deadline, p.ones, p.ordered)
        # per pattern: gains per class, rows per atom when predicted positive, rows
        nt = counts.n_atoms
        W = np.zeros((p.n_patterns, self.K + nt + 1))
        W[:, :self.K] = self.gains
        on = counts.atom >= 0
        W[np.flatnonzero(on), self.K + counts.atom[on]] = self.count[on]
        W[:, self.K + nt] = self.count
        self.W = np.ascontiguousarray(W)
        self.cnt = self.K + nt
        self.cols = self.K + np.arange(nt, dtype=np.int64)
        self.one_set = np.array([0, nt], dtype=np.int64)
        self.explored = 0
        self.prices = prices
        if prices is not None and p.n_rows:
            self.w_atom = self._atom_prices(prices)
            self.const = prices.constant(p)
            self.dpv = GainDP(p.X, p.count, prices.scores(p), prices.penalty(p), p.min_leaf, deadline, p.ones, p.ordered)
        else:
            self.w_atom = np.zeros(nt)
            self.const = 0.0
            self.dpv = None
        # one cohort at a time: its own comparisons over its atoms, the columns of those atoms
        self.cohorts = [counts.cohort(c) for c in range(counts.n_cohorts)]
        self.cohort_cols = []
        for c in range(counts.n_cohorts):
            g0, g1 = int(counts.cg_start[c]), int(counts.cg_start[c + 1])
            atoms = np.unique(counts.ga_atoms[counts.ga_start[g0]:counts.ga_start[g1]])
            self.cohort_cols.append(np.ascontiguousarray(self.K + atoms, dtype=np.int64))
        self.cohort_groups = [np.arange(counts.cg_start[c], counts.cg_start[c + 1]) for c in range(counts.n_cohorts)]
        # smallest group first: the coarsest counts, where the bound bites most
        self.order = sorted(range(counts.n_cohorts), key=lambda c: int(self.cohorts[c].gN.min()))
        self.checked = np.zeros(counts.n_cohorts, dtype=np.int64)
        self.removed = np.zeros(counts.n_cohorts, dtype=np.int64)
        self._sc_memo: dict = {}
        self._sums: dict = {}
        self.tau = NEG

    def _stopped(self) -> None:
        """Raise SearchStopped when a kernel saw the stop flag or the deadline (it raised the flag)."""
        if self.flag[0]:
            raise SearchStopped

    def _check(self) -> None:
        """Raise SearchStopped at the deadline or a stop (the flag, or the clock read here)."""
        if self.flag[0] or self.deadline.passed:
            raise SearchStopped

    def _totals(self, keys: np.ndarray, counts: GroupCounts | None = None) -> np.ndarray:
        """Rows predicted positive per group of ``counts`` (default: all) of each state."""
        c = self.counts if counts is None else counts
        totals = fronts._group_totals(keys, c.ga_start, c.ga_atoms, self.flag, self.limit)
        self._stopped()
        return totals

    def _order(self, values: np.ndarray) -> np.ndarray:
        """``np.argsort(-values, kind="stable")``, reading the deadline as it goes."""
        order, done = fronts._order(np.ascontiguousarray(values, dtype=np.float64), self.flag, self.limit)
        if not done:
            raise SearchStopped
        return order

    def _atom_prices(self, prices: Prices) -> np.ndarray:
        """The price of one row predicted positive in each atom: nu . (its coefficients in the rows of (11))."""
        nu = prices.mu_hi - prices.mu_lo
        per_row = (self.p.U[:, self.pos, :] @ nu) / np.maximum(self.count, 1e-300)
        w = np.zeros(self.counts.n_atoms)
        on = self.counts.atom >= 0
        w[self.counts.atom[on]] = per_row[on]
        return w

    def _pair_sums(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The features that split ``S`` (one of each alike set) and ``S``'s sums over them."""
        key = subset_key(S, 0)
        have = self._sums.get(key)
        if have is None:
            feats = fronts._kept_features(S, self.XT, self.z)
            at = np.full(self.p.n_features, -1, dtype=np.int64)
            at[feats] = np.arange(feats.size)
            T, MM = fronts._pair_sums(S, self.indptr, self.indices, self.W, at, feats.size)
            have = (feats, T, MM)
            if len(self._sums) >= SUMS_KEPT:
                self._sums.pop(next(iter(self._sums)))
            self._sums[key] = have
        return have

    def active(self, ci: int) -> bool:
        """Cohort ``ci``'s bound is still worth its cost: it removed at least :data:`MIN_REMOVED`
        of the states it saw once it has seen :data:`TRIAL_STATES`."""
        return self.checked[ci] < TRIAL_STATES or self.removed[ci] >= MIN_REMOVED * self.checked[ci]

    # -- bounds of the rest ----------------------------------------------------------------------
    def _ub(self, m: _Member) -> tuple[float, float]:
        """(value, priced value) no subtree of ``m`` exceeds."""
        if m.front is not None:
            f = m.front
            return float(f.obj.max()), float(self._pv(f).max())
        u0 = self.dp0.value(m.idx, m.depth)
        uv = NEG if self.dpv is None else self.dpv.value(m.idx, m.depth)
        return (NEG if u0 is None else u0), (NEG if uv is None else uv)

    def _pv(self, f: Front) -> np.ndarray:
        if f.pv is None:
            pv = f.obj.copy()
            if self.dpv is not None:
                for lo, hi in _chunks(len(f), self._check):
                    pv[lo:hi] -= f.keys[lo:hi].astype(np.float64) @ self.w_atom
            f.pv = pv
        return f.pv

    def _thresholds(self, ctx: tuple[_Member, ...], splits: int) -> tuple[float, float]:
        t0 = self.tau + splits * self.pen
        tv = self.tau - self.const + splits * self.pen
        for m in ctx:
            u0, uv = self._ub(m)
            t0 -= u0
            tv -= uv
        if self.dpv is None:
            tv = NEG
        return t0, tv

    # -- fronts ---------------------------------------------------------------------------------
    def front(self, S: np.ndarray, depth: int, ctx: tuple[_Member, ...], splits: int) -> Front:
        """The states of subtrees of depth <= ``depth`` on ``S`` that a tree of value ``tau`` can hold,
        the rest of the tree being ``ctx`` and ``splits`` branching nodes above ``S``."""
        self.deadline.check()
        self.explored += 1
        t0, tv = self._thresholds(ctx, splits)
        if depth <= 2:
            feats, T, MM = self._pair_sums(S)
            keys, obj, back, _, done = fronts._enumerate(T, MM, feats, self.cols, self.one_set, self.cnt, self.K,
                                                         self.pos, self.pen, self.min_leaf, t0, tv, self.w_atom, depth,
                                                         _MULT, self.flag, self.limit)
            if not done:
                raise SearchStopped
            return self._filter(Front(keys, obj, back, "enumerated"), S, depth, ctx, splits)
        nt = self.counts.n_atoms
        feats, T, MM = self._pair_sums(S)
        keys, obj, back, _, done = fronts._enumerate(T, MM, feats, self.cols, self.one_set, self.cnt, self.K,
                                                     self.pos, self.pen, self.min_leaf, t0, tv, self.w_atom, 0, _MULT,
                                                     self.flag, self.limit)
        if not done:
            raise SearchStopped
        leaves = self._filter(Front(keys, obj, back, "enumerated"), S, depth, ctx, splits)
        table = _Table(nt, self.flag, self.limit, self._check)
        table.put_all(leaves.keys, leaves.obj, np.stack([np.full(len(leaves), -1), leaves.back[:, 2],
                                                         np.full(len(leaves), -1)], axis=1))
        children: dict = {}
        for g in self._splits(S):
            right = self.goes_right[S, g]
            A, B = S[~right], S[right]
            uA0, uAv = self._ub(_Member(A, depth - 1))
            uB0, uBv = self._ub(_Member(B, depth - 1))
            if uA0 + uB0 - self.pen < t0 - _eps(t0) or uAv + uBv - self.pen < tv - _eps(tv):
                continue
            FA = self.front(A, depth - 1, ctx + (_Member(B, depth - 1),), splits + 1)
            if not len(FA):
                continue
            FB = self.front(B, depth - 1, ctx + (_Member(A, depth - 1, FA),), splits + 1)
            if not len(FB):
                continue
            pairs = _Table(nt, self.flag, self.limit, self._check)
            pairs.merge(FA, self._pv(FA), FB, self._pv(FB), self.pen, t0, tv, g, self._order(FB.obj))
            k, o, b = pairs.arrays()
            made = self._filter(Front(k, o, b, "merged"), S, depth, ctx, splits)
            if len(made):
                table.put_all(made.keys, made.obj, made.back)
                children[g] = (FA, FB)
        keys, obj, back = table.arrays()
        return Front(keys, obj, back, "merged", children)

    def _splits(self, S: np.ndarray) -> np.ndarray:
        """The features that split ``S`` with ``max(1, min_leaf)`` rows each way, one of each set that
        splits it alike."""
        need = max(1.0, self.min_leaf)
        feats = self._pair_sums(S)[0] if S.size < self.p.n_patterns else fronts._kept_features(S, self.XT, self.z)
        right = self.count[S] @ self.goes_right[S][:, feats]
        total = float(self.count[S].sum())
        return feats[(right >= need) & (total - right >= need)]

    def _rest(self, counts: GroupCounts, S: np.ndarray) -> np.ndarray:
        """Rows of each group of ``counts`` outside ``S`` (what the rest of the tree may add)."""
        a = counts.atom[S]
        inside = np.bincount(a[a >= 0], weights=self.count[S][a >= 0], minlength=counts.n_atoms).astype(np.int64)
        rest_atoms = counts.atom_rows - inside
        return np.array([rest_atoms[counts.ga_atoms[counts.ga_start[j]:counts.ga_start[j + 1]]].sum()
                         for j in range(counts.n_groups)], dtype=np.int64)

    def _filter(self, f: Front, S: np.ndarray, depth: int, ctx: tuple[_Member, ...], splits: int) -> Front:
        """Drop the states no feasible tree of value ``tau`` holds (reachability, one cohort at a time)."""
        if not len(f):
            return f
        c = self.counts
        totals = self._totals(f.keys)
        keep = fronts._reachable(totals, self._rest(c, S), c.cg_start, c.gN, c.H, c.ch_start, self.flag, self.limit)
        self._stopped()
        if ctx and keep.any():
            keep = self._cohort_bounds(f, totals, keep, S, depth, ctx, splits)
        return f.take(keep, self._check) if not keep.all() else f

    def _cohort_bounds(self, f: Front, totals: np.ndarray, keep: np.ndarray, S: np.ndarray, depth: int,
                       ctx: tuple[_Member, ...], splits: int) -> np.ndarray:
        """For each state, whether for every cohort the rest holds a state of that cohort's counts with
        which it meets the cohort's comparisons and reaches ``tau``.  A part of the rest is asked for
        its states of value ``tau`` less the best of everything else (this set's subtrees by the
        dynamic program: the same ask from every split of the set, so its fronts are made once)."""
        need = self.tau + splits * self.pen
        top = self._ub(_Member(S, depth))[0]
        ubs = [self._ub(m)[0] for m in ctx]
        for ci in self.order:
            if not self.active(ci):
                continue
            idx = np.flatnonzero(keep)
            if idx.size == 0:
                break
            U = _gather(totals, idx, self._check, self.cohort_groups[ci])
            values = _gather(f.obj, idx, self._check)
            first, inverse, _ = fronts._distinct_rows(U, values, _MULT, self.flag, self.limit)
            self._stopped()
            parts = [self._cohort_front(m, ci, need - top - (sum(ubs) - ubs[j])) for j, m in enumerate(ctx)]
            if any(len(v) == 0 for _, v in parts):
                best = np.full(first.size, NEG)
            else:
                inner_k, inner_v = _oplus(parts[1:], U.shape[1], self.flag, self.limit, self._check)
                best = fronts._rest_best(_gather(U, first, self._check), inner_k, inner_v, parts[0][0], parts[0][1],
                                         self.counts.cg_start, self.counts.gN, self.counts.H, self.counts.ch_start,
                                         ci, _MULT, self.flag, self.limit)
                self._stopped()
            cut, removed = need - _eps(need), 0
            for lo, hi in _chunks(idx.size, self._check):
                ok = values[lo:hi] + best[inverse[lo:hi]] >= cut
                keep[idx[lo:hi][~ok]] = False
                removed += int((~ok).sum())
            self.checked[ci] += idx.size
            self.removed[ci] += removed
        return keep

    def _cohort_front(self, m: _Member, ci: int, floor: float) -> tuple[np.ndarray, np.ndarray]:
        """A part of the rest as (totals of cohort ``ci``'s groups, best value), best first: every
        vector of those totals its subtrees of value >= ``floor`` reach."""
        if m.front is not None:
            cached = m.front._projections.get(ci)
            if cached is None:
                T = self._totals(m.front.keys)
                rows = _gather(T, np.arange(T.shape[0]), self._check, self.cohort_groups[ci])
                cached = _best_per_row(rows, m.front.obj, self.flag, self.limit, self._check)
                m.front._projections[ci] = cached
            k, v = cached
        else:
            k, v = self._sc_fronts(m.idx, m.depth, floor)[ci]
        n = int(np.searchsorted(-v, -(floor - _eps(floor)), side="right"))
        return k[:n], v[:n]

    def _sc_fronts(self, S: np.ndarray, depth: int, floor: float) -> dict:
        """Each active cohort's counts alone on ``S`` (other cohorts ignored): for cohort ``ci``, the
        (group totals, best value) of every vector its subtrees of value >= ``floor`` reach, best
        first."""
        key = subset_key(S, depth)
        have = self._sc_memo.get(key)
        wanted = [ci for ci in self.order if self.active(ci)]
        if have is not None and have[0] <= floor and all(ci in have[1] for ci in wanted):
            return have[1]
        raw = self._sc_raw(S, depth, floor, wanted)
        out = {}
        for ci, f in raw.items():
            out[ci] = _best_per_row(self._totals(f.keys, self.cohorts[ci]), f.obj, self.flag, self.limit, self._check)
        self._sc_memo[key] = (floor, out)
        return out

    def _sc_raw(self, S: np.ndarray, depth: int, floor: float, wanted: list[int]) -> dict:
        """The fronts of :meth:`_sc_fronts` keyed by each cohort's own atoms (for merging)."""
        key = (subset_key(S, depth), "raw")
        have = self._sc_memo.get(key)
        if have is not None and have[0] <= floor and all(ci in have[1] for ci in wanted):
            return {ci: have[1][ci] for ci in wanted}
        self.deadline.check()
        self.explored += 1
        feats, T, MM = self._pair_sums(S)
        out: dict = {}
        cols = np.concatenate([self.cohort_cols[ci] for ci in wanted])
        cset = np.concatenate([[0], np.cumsum([self.cohort_cols[ci].size for ci in wanted])]).astype(np.int64)
        k, o, b, start, done = fronts._enumerate(T, MM, feats, cols, cset, self.cnt, self.K, self.pos, self.pen,
                                                 self.min_leaf, floor, NEG, np.zeros(cols.size),
                                                 depth if depth <= 2 else 0, _MULT, self.flag, self.limit)
        if not done:
            raise SearchStopped
        made = {ci: (np.ascontiguousarray(k[start[j]:start[j + 1], :self.cohorts[ci].n_atoms]), o[start[j]:start[j + 1]],
                     b[start[j]:start[j + 1]]) for j, ci in enumerate(wanted)}
        if depth <= 2:
            for ci in wanted:
                out[ci] = Front(*made[ci], "enumerated")
        else:
            tables = {}
            for ci in wanted:
                kk, oo, _ = made[ci]
                tables[ci] = _Table(self.cohorts[ci].n_atoms, self.flag, self.limit, self._check)
                tables[ci].put_all(kk, oo, np.full((oo.size, 3), -1, dtype=np.int64))
            for g in self._splits(S):
                right = self.goes_right[S, g]
                A, B = S[~right], S[right]
                uA = self._ub(_Member(A, depth - 1))[0]
                uB = self._ub(_Member(B, depth - 1))[0]
                if uA + uB - self.pen < floor - _eps(floor):
                    continue
                FA = self._sc_raw(A, depth - 1, floor + self.pen - uB, wanted)
                FB = self._sc_raw(B, depth - 1, floor + self.pen - uA, wanted)
                for ci in wanted:
                    if len(FA[ci]) and len(FB[ci]):
                        tables[ci].merge(FA[ci], FA[ci].obj, FB[ci], FB[ci].obj, self.pen, floor, NEG, g,
                                         self._order(FB[ci].obj))
            for ci in wanted:
                k, o, b = tables[ci].arrays()
                out[ci] = Front(k, o, b, "merged")
        for ci in wanted:
            f = out[ci]
            if len(f):
                cc = self.cohorts[ci]
                totals = self._totals(f.keys, cc)
                keep = fronts._reachable(totals, self._rest(cc, S), cc.cg_start, cc.gN, cc.H, cc.ch_start, self.flag,
                                         self.limit)
                self._stopped()
                if not keep.all():
                    out[ci] = f.take(keep, self._check)
        self._sc_memo[key] = (floor, out)
        return out

    # -- the root -------------------------------------------------------------------------------
    def best_tree(self, tau: float, best: float = NEG) -> CountResult:
        """The best feasible tree of value ``>= tau`` and above ``best``, or ``tree = None`` when
        there is none (then no feasible tree has a value ``>= tau`` above ``best``)."""
        p = self.p
        unit = 1.0 if p.integral else 0.0
        self.tau = tau if best == NEG else max(tau, best + unit)
        S = np.arange(p.n_patterns)
        found: tuple[float, Tree] | None = None
        depth = p.depth
        c = self.counts
        first = depth if depth <= 2 else 0  # the root's subtrees of depth <= 2, or the root as a leaf
        u0, uv = self._ub(_Member(S, first))
        reach = u0 >= self.tau - _eps(self.tau) and (self.dpv is None or uv + self.const >= self.tau - _eps(self.tau))
        f = self.front(S, first, (), 0) if reach else None
        if f is not None and len(f):
            totals = self._totals(f.keys)
            ok = fronts._feasible(totals, c.cg_start, c.gN, c.H, c.ch_start) & (f.obj > best)
            if ok.any():
                j = int(np.flatnonzero(ok)[np.argmax(f.obj[ok])])
                found = (float(f.obj[j]), f.tree(j))
                self.tau = max(self.tau, found[0] + unit)
        if depth <= 2:
            return _result(found, self.explored)
        order = []
        for g in self._splits(S):
            right = self.goes_right[:, g]
            u0 = self._ub(_Member(S[~right], depth - 1))[0] + self._ub(_Member(S[right], depth - 1))[0] - self.pen
            order.append((-u0, int(g)))
        order.sort()
        for neg_u0, g in order:
            if -neg_u0 < self.tau - _eps(self.tau):
                break
            right = self.goes_right[:, g]
            L, R = S[~right], S[right]
            uLv = self._ub(_Member(L, depth - 1))[1]
            uRv = self._ub(_Member(R, depth - 1))[1]
            if self.dpv is not None and uLv + uRv - self.pen + self.const < self.tau - _eps(self.tau):
                continue
            FL = self.front(L, depth - 1, (_Member(R, depth - 1),), 1)
            if not len(FL):
                continue
            FR = self.front(R, depth - 1, (_Member(L, depth - 1, FL),), 1)
            if not len(FR):
                continue
            low = self.tau - (0.5 if unit else _eps(self.tau))
            if found is not None:
                low = max(low, found[0])
            # the smaller front looked up in an index of the larger one
            A, B = (FL, FR) if len(FL) <= len(FR) else (FR, FL)
            v, ia, ib, done = fronts._pair_best(A.keys, A.obj, self._order(A.obj), B.keys, B.obj,
                                                self.pen, low, c.ga_start, c.ga_atoms, c.cg_start, c.gN, c.H,
                                                c.ch_start, self.flag, self.limit)
            if not done:
                raise SearchStopped
            if A is FR:
                ia, ib = ib, ia
            if ia >= 0:
                found = (float(v), (g, FL.tree(ia), FR.tree(ib)))
                self.tau = max(self.tau, found[0] + unit)
        return _result(found, self.explored)


def clock_limit(at: float) -> int:
    """The deadline ``at`` (:func:`time.perf_counter`) in nanoseconds of the monotonic clock the
    kernels read (``fronts._halted``); 0: none (no deadline, or no such clock: the flag alone)."""
    now = monotonic_ns()
    if not math.isfinite(at) or now < 0:
        return 0
    return max(1, now + int(max(0.0, at - time.perf_counter()) * 1e9))


def _result(found, explored: int) -> CountResult:
    if found is None:
        return CountResult(NEG, None, explored)
    return CountResult(found[0], found[1], explored)


def _eps(t: float) -> float:
    return SLACK * max(1.0, abs(t)) if math.isfinite(t) else 0.0


def _chunks(n: int, check: Callable[[], None]):
    """``(lo, hi)`` ranges of at most :data:`CHUNK` of ``range(n)``, ``check()`` before each."""
    for lo in range(0, n, CHUNK):
        check()
        yield lo, min(n, lo + CHUNK)


def _gather(a: np.ndarray, idx: np.ndarray, check: Callable[[], None], cols: np.ndarray | None = None) -> np.ndarray:
    """``a[idx]`` (``a[idx][:, cols]`` with ``cols``), C-contiguous, chunk by chunk."""
    out = np.empty((idx.size,) + (a.shape[1:] if cols is None else (len(cols),)), dtype=a.dtype)
    for lo, hi in _chunks(idx.size, check):
        out[lo:hi] = a[idx[lo:hi]] if cols is None else a[np.ix_(idx[lo:hi], cols)]
    return out


def _head(a: np.ndarray, n: int, check: Callable[[], None]) -> np.ndarray:
    """A copy of ``a[:n]``, chunk by chunk."""
    out = np.empty((n,) + a.shape[1:], dtype=a.dtype)
    for lo, hi in _chunks(n, check):
        out[lo:hi] = a[lo:hi]
    return out


def _never() -> None:
    """The check of a computation without a deadline."""


def _best_per_row(rows: np.ndarray, values: np.ndarray, flag: np.ndarray | None = None, limit: int = 0,
                  check: Callable[[], None] = _never) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows with the best value of each, best first; raises SearchStopped once ``flag`` is
    raised or the clock passes ``limit`` (``check()``: the same test, in Python)."""
    if rows.shape[0] == 0:
        return np.zeros((0, rows.shape[1]), dtype=np.int64), np.zeros(0)
    flag = np.zeros(1, dtype=np.uint8) if flag is None else flag
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    first, _, best = fronts._distinct_rows(rows, values, _MULT, flag, limit)
    if flag[0]:
        raise SearchStopped
    order, done = fronts._order(best, flag, limit)
    if not done:
        raise SearchStopped
    return _gather(rows, first[order], check), best[order]


def _oplus(parts: list[tuple[np.ndarray, np.ndarray]], k: int, flag: np.ndarray | None = None, limit: int = 0,
           check: Callable[[], None] = _never) -> tuple[np.ndarray, np.ndarray]:
    """Every sum of one state of each part, with the best value per vector, best first (one zero
    state of value 0 for no part); stopped as :func:`_best_per_row` is."""
    keys, vals = np.zeros((1, k), dtype=np.int64), np.zeros(1)
    for pk, pv in parts:
        check()
        sums = (keys[:, None, :] + pk[None, :, :]).reshape(-1, k)
        tot = (vals[:, None] + pv[None, :]).ravel()
        keys, vals = _best_per_row(sums, tot, flag, limit, check)
    return keys, vals


class _Table:
    """A front being built: the kernels' open-addressing table.  Each step raises SearchStopped once
    ``flag`` is raised or the clock passes ``limit`` (the kernels' deadline; ``check()``: the same
    test in Python, between chunks of a copy)."""

    def __init__(self, nt: int, flag: np.ndarray, limit: int, check: Callable[[], None]) -> None:
        self.slots = np.full(1024, -1, dtype=np.int64)
        self.hs = np.zeros(512, dtype=np.uint64)
        self.keys = np.zeros((512, nt), dtype=np.int32)
        self.obj = np.zeros(512)
        self.back = np.zeros((512, 3), dtype=np.int64)
        self.n = 0
        self.flag, self.limit, self.check = flag, limit, check

    def merge(self, A: Front, Apv: np.ndarray, B: Front, Bpv: np.ndarray, pen: float, t0: float, tv: float, g: int,
              order: np.ndarray) -> None:
        """Every pair of states of ``A`` and ``B`` (``order``: ``B``'s by value, best first) that reaches
        the thresholds."""
        (self.slots, self.hs, self.keys, self.obj, self.back, self.n, done) = fronts._merge(
            A.keys, A.obj, np.ascontiguousarray(Apv), B.keys, B.obj, np.ascontiguousarray(Bpv), order, pen, t0, tv,
            int(g), self.slots, self.hs, self.keys, self.obj, self.back, self.n, _MULT, self.flag, self.limit)
        if not done:
            raise SearchStopped

    def put_all(self, keys: np.ndarray, obj: np.ndarray, back: np.ndarray) -> None:
        (self.slots, self.hs, self.keys, self.obj, self.back, self.n, done) = fronts._put_all(
            np.ascontiguousarray(keys, dtype=np.int32), np.ascontiguousarray(obj, dtype=np.float64),
            np.ascontiguousarray(back, dtype=np.int64), self.slots, self.hs, self.keys, self.obj, self.back, self.n,
            _MULT, self.flag, self.limit)
        if not done:
            raise SearchStopped

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n, check = self.n, self.check
        return _head(self.keys, n, check), _head(self.obj, n, check), _head(self.back, n, check)


#: How the search that proved a tree optimal, or proved that there is none, is named in the
#: fitted record (``SolveRecord.choice``).
PROVED_BY_COUNTS = "dynamic programming over the groups' counts"
#: The widths of the passes, in steps of the objective below the proven bound (then growing by half).
FIRST_WIDTHS = (1, 2, 4)
#: A found tree that breaks a constraint when measured again: a bookkeeping error, never a result.
BROKEN_TREE = ("The search over the groups' counts returned a tree that breaks a fairness constraint when its "
               "predictions are measured again; please report this with your data. Use formulation='flow' meanwhile.")


class Passes:
    """The passes of the module docstring, run on behalf of the exact search (``accel/search.py``),
    which keeps the incumbent and the bound.

    ``run`` has ``best`` (a :class:`~strongtree_core.accel.lagrange.TreeQuantities` or None),
    ``best_value``, ``bound``, ``lowest`` (below every tree's value), ``explored``,
    ``offer(m) -> bool``, ``prove(bound)`` and ``say(message)``.
    """

    def __init__(self, run, problem: LinearProblem, counts: GroupCounts, deadline: Deadline,
                 prices: Prices | None) -> None:
        self.run = run
        self.p = problem
        self.search = CountSearch(problem, counts, deadline, prices)
        self.n_passes = 0

    def solve(self) -> str:
        """Pass after pass until the incumbent is proven optimal ("optimal") or no tree is proven
        feasible ("infeasible"); raises SearchStopped at the deadline (the bound proven so far
        stays with ``run``)."""
        from strongtree_core.accel.lagrange import measure_tree, satisfies

        run, p = self.run, self.p
        unit = 1.0 if p.integral else 0.0
        step = 1.0 if p.integral else 1e-3 * max(1.0, abs(run.bound))
        widths = list(FIRST_WIDTHS)
        while True:
            floor = run.best_value if run.best is not None else NEG
            width = widths.pop(0) if widths else math.ceil(1.5 * last)
            last = width
            target = run.bound - width * step
            if p.integral:
                target = math.floor(target + 1e-9)
            final = target <= (floor + unit if run.best is not None else run.lowest) or not math.isfinite(target)
            if final:
                target = floor + unit if run.best is not None else NEG
            run.say(f"searching the groups' counts for a tree of value {target:g} or more" if math.isfinite(target)
                    else "searching the groups' counts for any feasible tree")
            before = self.search.explored
            found = self.search.best_tree(target, floor)
            self.n_passes += 1
            run.explored += self.search.explored - before
            if found.tree is not None:
                m = measure_tree(p, found.tree)
                if not satisfies(p, m) or not run.offer(m):
                    raise RuntimeError(BROKEN_TREE)
                run.prove(run.best_value)
                return "optimal"
            if final:
                if run.best is None:
                    return "infeasible"
                run.prove(run.best_value)
                return "optimal"
            run.prove(target - unit if p.integral else target)

    def words(self) -> str:
        n = self.search.explored
        return (f"{PROVED_BY_COUNTS} ({self.n_passes} {'pass' if self.n_passes == 1 else 'passes'}, "
                f"{n:,} {'front' if n == 1 else 'fronts'})")
