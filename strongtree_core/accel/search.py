"""Exact trees of any depth under every objective and side constraint:
dynamic programming, a Lagrangian bound and branch-and-bound.

:func:`exact_solve` returns a certified optimum, a proven infeasibility, or
(stopped by the time limit or a stop request) the best tree found with a
proven upper bound.

1. Without side constraints and with a weighted-accuracy objective the
   problem is a sum of per-pattern gains: the dynamic program
   (:class:`~strongtree_core.accel.dp.GainDP`) solves it outright.
2. Otherwise the constraints are priced (``accel/lagrange.py``): for prices
   ``y`` the best tree under the priced gains has value ``L(y) >=`` the
   constrained optimum, and the dual search for good prices also meets
   feasible trees (incumbents).
3. Branch-and-bound closes the gap.  With the prices fixed, every tree ``T``
   has a relaxed value ``L(T) = (priced gains of its leaves) - pen * b(T) +
   const``, and ``f(T) <= L(T)`` for every feasible ``T``.  Partial trees
   are extended top-down (a node becomes a leaf or splits on a feature);
   the relaxed value of the best completion is the fixed part plus, for
   every open node, the dynamic program's best subtree there, which is exact.
   A partial tree whose best completion cannot reach the value we look for
   is dropped, as is one whose constraint quantities can no longer get back
   within their rows (interval bounds: each open node adds between the sums
   of the per-pattern minima and maxima).  Nodes with at most two levels
   left are completed from lists of all their subtrees of depth <= 2 that
   can still reach that value (``accel/subtrees.py``), the last one for all
   its subtrees at once.
4. The search runs in passes with a falling target ``t``: a pass visits
   every tree with ``L(T) >= max(t, incumbent + one step)``; when it ends,
   either the incumbent reaches ``t`` and is optimal, or no feasible tree
   reaches ``t``, which is a new proven bound.  The bound on screen moves
   down pass by pass.

Every tree reported is measured again by the caller on its predictions.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, replace
from typing import Callable, Literal

import numpy as np

from strongtree_core.accel import count_search, kernels, polish
from strongtree_core.accel.dp import (
    NEG,
    Deadline,
    GainDP,
    SearchStopped,
    Tree,
    structure_to_tree,
    subset_key,
    tree_to_structure,
)
from strongtree_core.accel.ladder import Rung, climb, ladder_applies
from strongtree_core.accel.lagrange import (
    Prices,
    TreeQuantities,
    leaf_sizes_ok,
    measure_tree,
    optimize_dual,
    satisfies,
)
from strongtree_core.accel.group_counts import GroupCounts, group_counts
from strongtree_core.accel.problem import LinearProblem, linear_problem
from strongtree_core.accel.relabel import best_labels
from strongtree_core.accel.subtrees import Subtrees, subtree_list
from strongtree_core.accel.threads import one_blas_thread
from strongtree_core.encoding.patterns import PatternData
from strongtree_core.formulation.spec import TreeSpec
from strongtree_core.structure import TreeStructure

ExactStatus = Literal["optimal", "infeasible", "stopped"]

#: Relative slack on relaxed values (float sums in another order).
TOLERANCE = 1e-7
#: Share of the remaining time for the problem one level shallower (a start).
SHALLOWER_SHARE = 0.25
#: Share of the remaining time for tuning the Lagrangian prices.
DUAL_SHARE = 0.4
#: Seconds the branch-and-bound has, where the search over the groups' counts applies, before the
#: counts take over: where the groups are large it often closes at once, while their fronts are wide.
COUNTS_AFTER_SECONDS = 0.5


@dataclass(frozen=True)
class ExactResult:
    """What the exact search found.

    Attributes
    ----------
    status : {"optimal", "infeasible", "stopped"}
    structure : TreeStructure or None
        The best tree found (optimal when ``status`` is "optimal").
    objective : float or None
        Its value (the caller re-scores it).
    bound : float or None
        No feasible tree has a larger value (proven).
    runtime : float
    reason : str
        How it was solved, in words.
    n_explored : int
        Partial trees and subproblems visited.
    features : tuple of int or None
        When set, ``status`` and ``bound`` hold over these features only: the
        thresholds of the last rung of the ladder the search certified
        (``accel/ladder.py``); None: over every feature.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from strongtree_core.encoding import TableEncoder, collapse_patterns
    >>> X = pd.DataFrame({'a': [0, 1, 0, 1, 1, 0], 'b': [1, 1, 0, 0, 1, 0]})
    >>> y = np.array([0, 1, 0, 1, 1, 1])
    >>> plan = TableEncoder().fit(X)
    >>> data = collapse_patterns(plan.transform(X), y, 2)
    >>> from strongtree_core.formulation import TreeSpec, build_model
    >>> from strongtree_core.accel import exact_solve
    >>> type(exact_solve(data, TreeSpec(depth=1), time_limit=10)).__name__
    'ExactResult'
    """

    status: ExactStatus
    structure: TreeStructure | None
    objective: float | None
    bound: float | None
    runtime: float
    reason: str
    n_explored: int = 0
    features: tuple[int, ...] | None = None

    @property
    def certified(self) -> bool:
        """Whether the search proved its answer: an optimum, or that no tree is feasible."""
        return self.status in ("optimal", "infeasible")


#: ``report(objective, bound, explored, tree, message)``
Report = Callable[[float | None, float | None, int, TreeStructure | None, str], None]


def exact_solve(
    data: PatternData,
    spec: TreeSpec,
    *,
    time_limit: float = 60.0,
    stop: threading.Event | None = None,
    report: Report | None = None,
    starts: tuple[TreeStructure, ...] = (),
    n_jobs: int = 1,
    ladder: bool = True,
    certificate: Callable[[ExactResult], None] | None = None,
) -> ExactResult:
    """The optimal tree of depth ``spec.depth`` for ``spec`` on ``data``.

    Parameters
    ----------
    starts : TreeStructures to try first as incumbents (checked here).
    report : called with every new incumbent and bound, and now and then while searching.
    n_jobs : threads for the dynamic program over all patterns at depth >= 4.
    ladder : climb from few thresholds of continuous columns to all of them
        when the problem is large (``accel/ladder.py``); the result may then
        hold over a subset of the features (``ExactResult.features``).
    certificate : called, on the ladder, with the result this call would return if
        it were stopped now, each time a rung is certified: a caller that gives up
        a search still at work (a set-up on a million rows answers no clock) keeps
        the certificate of the last rung.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from strongtree_core.encoding import TableEncoder, collapse_patterns
    >>> X = pd.DataFrame({'a': [0, 1, 0, 1, 1, 0], 'b': [1, 1, 0, 0, 1, 0]})
    >>> y = np.array([0, 1, 0, 1, 1, 1])
    >>> plan = TableEncoder().fit(X)
    >>> data = collapse_patterns(plan.transform(X), y, 2)
    >>> from strongtree_core.formulation import TreeSpec, build_model
    >>> from strongtree_core.accel import exact_solve
    >>> found = exact_solve(data, TreeSpec(depth=1), time_limit=10)
    >>> found.status, found.objective
    ('optimal', 5.0)
    """
    t0 = time.perf_counter()
    if ladder and ladder_applies(data, spec):
        return _climb(data, spec, time_limit, stop, report, starts, t0, n_jobs, certificate)
    deadline = Deadline(t0 + float(time_limit), stop)
    problem = linear_problem(data, spec)
    run = _Run(problem, deadline, report, t0, n_jobs, group_counts(data, spec))
    # The matrix products are small: one BLAS thread each avoids threads that
    # wait on each other when the machine is busy (seen: 30x slower).
    try:
        with one_blas_thread(data.n_patterns * data.n_features):
            try:
                return run.solve(starts)
            except SearchStopped:
                return run.result("stopped", "stopped by the time limit or a stop request")
    finally:
        deadline.close()


def _climb(data: PatternData, spec: TreeSpec, time_limit: float, stop, report: Report | None,
           starts: tuple[TreeStructure, ...], t0: float, n_jobs: int = 1,
           certificate: Callable[[ExactResult], None] | None = None) -> ExactResult:
    """The ladder of ``accel/ladder.py``: rungs solved by the exact search on merged patterns."""
    deadline = Deadline(t0 + float(time_limit), stop)
    explored = [0]
    best = [None]

    def solve(sub: PatternData, sub_starts: tuple, seconds: float) -> ExactResult:
        full = sub is data
        forward = report if full else None
        found = exact_solve(sub, spec, time_limit=seconds, stop=stop, report=forward, starts=sub_starts,
                            n_jobs=n_jobs, ladder=False)
        explored[0] += found.n_explored
        return found

    def say(k: int, n_features: int, found: ExactResult, on_full: TreeStructure | None) -> None:
        if on_full is not None and (best[0] is None or found.objective > best[0]):
            best[0] = found.objective
            if report is not None:
                word = "optimal" if found.status == "optimal" else "best"
                report(found.objective, None, explored[0], on_full,
                       f"{word} tree over {n_features} of the {data.n_features} features "
                       + ("(the first start's rung of the ladder)" if k < 0 else f"(rung {k} of the ladder)"))

    def on_certified(rung: Rung, best_found) -> None:
        if certificate is not None:
            certificate(_rung_answer(data, rung, None, best_found, time.perf_counter() - t0, explored[0]))

    try:
        certified, full, best_found = climb(data, spec, solve, tuple(starts), deadline, say, on_certified)
    except SearchStopped:
        certified, full, best_found = None, None, None
    runtime = time.perf_counter() - t0
    if full is not None and (full.certified or certified is None):
        return replace(full, runtime=runtime, n_explored=explored[0],
                       reason=full.reason + "; climbed a ladder of thresholds to all of them")
    if certified is None:
        value, tree = (None, None) if best_found is None else best_found
        return ExactResult("stopped", tree, value, None, runtime,
                           "stopped before a rung of the ladder of thresholds was certified", explored[0])
    return _rung_answer(data, certified, full, best_found, runtime, explored[0])


def _rung_answer(data: PatternData, certified: Rung, full: ExactResult | None, best_found, runtime: float,
                 explored: int) -> ExactResult:
    """The answer of a ladder whose finest certified rung is ``certified``: optimal over its features."""
    found, on_full = certified.result
    n = certified.features.size
    words = (f"optimal among the trees over {n} of the {data.n_features} features, the thresholds of continuous "
             f"columns thinned to the finest set certified within the time ({found.reason})")
    if full is not None and full.objective is not None and full.objective > found.objective:
        words += f"; over all features the search reached {full.objective:g} without a proof"
    elif best_found is not None and best_found[0] > found.objective:
        words += f"; over more thresholds the search reached {best_found[0]:g} without a proof"
    return ExactResult("optimal", on_full, found.objective, found.objective, runtime, words, explored,
                       tuple(int(f) for f in certified.features))


class _Run:
    def __init__(self, problem: LinearProblem, deadline: Deadline, report: Report | None, t0: float,
                 n_jobs: int = 1, counts: GroupCounts | None = None) -> None:
        self.p = problem
        self.counts = counts  # the fairness rows as groups' counts (accel/group_counts.py), when they are
        self.n_jobs = n_jobs
        self.deadline = deadline
        self._report = report
        self.t0 = t0
        self.best: TreeQuantities | None = None
        self.best_value = NEG
        # Every row at its best class: no tree does better.
        self.bound = (1.0 - problem.lambda_) * float(problem.G.max(axis=1).sum(axis=0).min())
        # A bound of every row right says nothing: not reported (see shown_bound).
        self._says_nothing = (1.0 - problem.lambda_) * float(problem.G.sum(axis=(0, 1)).min()) \
            - problem.lambda_ * (2 ** problem.depth - 1)
        self._alike: float | None = None  # alike_rows_bound, when first reported
        self.explored = 0
        self.detail = ""
        self._reported: TreeQuantities | None = None
        self._polished: TreeQuantities | None = None
        self._polisher: polish.Polisher | None = None

    # -- bookkeeping ----------------------------------------------------------
    def value(self, m: TreeQuantities) -> float:
        return self.p.value(m.parts, m.n_branching)

    def offer(self, m: TreeQuantities) -> bool:
        """Keep ``m`` if it is feasible and better than the incumbent."""
        if not satisfies(self.p, m) or not leaf_sizes_ok(self.p, m.tree):
            return False
        v = self.value(m)
        if v > self.best_value + 1e-12 * max(1.0, abs(v)):
            self.best, self.best_value = m, v
            self.say("new incumbent")
            return True
        return False

    def polish(self) -> None:
        """Improve the incumbent one subtree at a time until no node improves
        (``accel/polish.py``): better trees to prune with, and to return at a limit.
        Called where the search would otherwise go on with the incumbent it has (after
        the dual, after a pass of the branch-and-bound), not for every new one: a search
        that closes at once pays nothing."""
        if self.best is None or self.best is self._polished or self.closed() or not polish.applies(self.p):
            return
        if self._polisher is None:
            self._polisher = polish.Polisher(self.p, self.deadline)
        while True:
            better = self._polisher.better_tree(self.best)
            if better is None or not self.offer(better):
                break
        self._polished = self.best

    def adopt(self, m: TreeQuantities) -> None:
        """Keep the dynamic program's optimum ``m`` over an incumbent of the same value, so that the
        tree returned does not depend on which starts were offered (a start as good as the optimum
        is an optimum too, but another one)."""
        if not self.offer(m) and satisfies(self.p, m) and leaf_sizes_ok(self.p, m.tree) \
                and self.value(m) >= self.best_value - TOLERANCE * max(1.0, abs(self.best_value)) \
                and m.tree != self.best.tree:
            self.best, self.best_value = m, self.value(m)
            self.say("new incumbent")

    def offer_shape(self, m: TreeQuantities, leaves: list | None = None) -> None:
        """Offer ``m`` and the best feasible relabelling of its leaves (``leaves``: their
        patterns, left to right, when known)."""
        self.offer(m)
        relabelled = best_labels(self.p, m.tree, m.n_branching, leaves)
        if relabelled is not None and relabelled != m.tree:  # the same tree again would change nothing
            self.offer(measure_tree(self.p, relabelled))

    def prove(self, bound: float) -> None:
        if self.p.integral and math.isfinite(bound):
            bound = math.floor(bound + TOLERANCE * max(1.0, abs(bound)))
        if bound < self.bound:
            self.bound = bound
            if bound >= self.lowest:  # below every tree's value it proves no tree fits: the result says so, no number
                self.say("bound")

    def say(self, message: str) -> None:
        """Report the incumbent, the bound and the work done; the tree only when it changed."""
        if self._report is None:
            return
        tree = None
        if self.best is not None and self.best is not self._reported:
            tree = tree_to_structure(self.best.tree, self.p.depth)
            self._reported = self.best
        objective = None if self.best is None else self.best_value
        self._report(objective, self.shown_bound(), self.explored, tree, message)

    def shown_bound(self) -> float | None:
        """The bound to report: the search's, or the rows' alike (:func:`alike_rows_bound`),
        whichever is lower; None while neither is below every row right (a bound of all the
        rows says nothing: "no bound yet")."""
        nothing = self._says_nothing - TOLERANCE * max(1.0, abs(self._says_nothing))
        bound = self.bound
        if bound >= nothing:  # (counted only then: a search that proves a bound pays nothing)
            if self._alike is None:
                self._alike = (1.0 - self.p.lambda_) * alike_rows_bound(self.p)
            bound = min(bound, self._alike)
        if not math.isfinite(bound) or bound >= nothing:
            return None
        return max(bound, self.best_value)

    def closed(self) -> bool:
        """The incumbent meets the bound, or the bound is below every tree's value (infeasible)."""
        if self.bound < self.lowest:
            return True
        return self.best is not None and self.best_value >= self.bound - TOLERANCE * max(1.0, abs(self.bound))

    @property
    def lowest(self) -> float:
        """Below the value of any tree: no correct row and every node branching."""
        return -self.p.lambda_ * (2 ** self.p.depth - 1) - 1e-6

    def result(self, status: str, reason: str) -> ExactResult:
        structure = None if self.best is None else tree_to_structure(self.best.tree, self.p.depth)
        objective = None if self.best is None else self.best_value
        bound = objective if status == "optimal" else self.shown_bound()
        if status == "infeasible":
            structure, objective, bound = None, None, None
        return ExactResult(status, structure, objective, bound, time.perf_counter() - self.t0,
                           reason + self.detail, self.explored)

    def infeasible(self) -> bool:
        """No feasible tree is known: find one (False) or prove there is none (True).

        The objective is set aside: with prices ``y`` on the constraints alone,
        ``y . slack(T) >= 0`` for every feasible tree ``T``.  The prices that make
        the best relaxed value smallest come from the dual; if even that value is
        below 0 no tree is feasible, else branch-and-bound visits the trees
        whose relaxed value reaches 0 until one is feasible.
        """
        slack_only = replace(self.p, lambda_=0.0)
        remaining = self.deadline.at - time.perf_counter()
        dual = optimize_dual(slack_only, self.deadline, feasibility=True, on_tree=self.offer_shape,
                             enough=lambda: self.best is not None, seconds=DUAL_SHARE * remaining)
        self.explored += dual.n_solves
        if dual.stopped:
            raise SearchStopped
        if self.best is not None:
            return False
        if dual.bound < -TOLERANCE:
            return True
        try:
            _BranchAndBound(self, dual.prices, problem=slack_only, first_feasible=True).run(0.0)
        except _FoundFeasible:
            return False
        return self.best is None

    def count_passes(self, prices) -> ExactResult:
        """Close the Lagrangian bound's gap with the search over the groups' counts
        (``accel/count_search.py``), after polishing the incumbent."""
        self.polish()
        if self.closed():
            return self.result("optimal", "the Lagrangian bound meets a feasible tree")
        passes = count_search.Passes(self, self.p, self.counts, self.deadline, prices)
        try:
            status = passes.solve()
        except SearchStopped:
            self.detail += f"; {passes.words()}"
            raise
        if status == "infeasible":
            return self.result("infeasible", f"no tree satisfies the constraints (proven by {passes.words()})")
        return self.result("optimal", f"optimal by {passes.words()}")

    def shallower(self, starts: tuple[TreeStructure, ...]) -> None:
        """The same problem one level shallower, within a share of the time: its
        best tree is a tree of this depth too, and often a strong incumbent."""
        now = time.perf_counter()
        budget = SHALLOWER_SHARE * (self.deadline.at - now)
        sub_deadline = Deadline(min(self.deadline.at, now + budget), self.deadline.stop)
        sub = _Run(replace(self.p, depth=self.p.depth - 1), sub_deadline, None, now, self.n_jobs, self.counts)
        try:
            sub.solve(tuple(t for t in starts if t.depth < self.p.depth))
        except SearchStopped:
            pass
        finally:
            sub_deadline.close()
        self.deadline.check()
        if sub.best is not None:
            self.offer(sub.best)
        self.explored += sub.explored

    # -- the route ------------------------------------------------------------
    def solve(self, starts: tuple[TreeStructure, ...]) -> ExactResult:
        p = self.p
        all_rows = np.arange(p.n_patterns)
        if p.count.sum() < p.min_leaf:
            return self.result("infeasible", f"every leaf must hold {p.min_leaf} rows, more than the {int(p.count.sum())} there are")
        for s in starts:
            if s.depth <= p.depth:
                leaves: list = []
                m = measure_tree(p, structure_to_tree(s), leaves)
                self.offer_shape(m, leaves[::-1])
        if not p.constrained or _branching_bound_only(p):
            # Accuracy-like objectives with at most a bound on branching nodes: the
            # dynamic program alone, the bound counted in its states (eq. 8).
            dp = GainDP(p.X, p.count, (1.0 - p.lambda_) * p.G[:, :, 0], p.lambda_, p.min_leaf, self.deadline, p.ones,
                        p.ordered, n_jobs=self.n_jobs)

            def anytime(value: float, tree: Tree, bound: float) -> None:
                self.explored = dp.n_solved
                if value > self.best_value:
                    self.offer(measure_tree(p, tree))
                self.prove(bound)

            dp.root_hook = anytime
            value, tree = dp.exact(all_rows, p.depth, p.max_branching)
            self.explored = dp.n_solved
            self.adopt(measure_tree(p, tree))
            self.prove(value)
            return self.result("optimal", f"dynamic programming over every tree of depth <= {p.depth} asking the encoded questions "
                                          f"({dp.n_solved:,} {'subproblem' if dp.n_solved == 1 else 'subproblems'} solved)")
        if p.depth >= 3:
            self.shallower(starts)
        remaining = self.deadline.at - time.perf_counter()
        dual = optimize_dual(p, self.deadline, on_tree=self.offer_shape, on_bound=self.prove, enough=self.closed,
                             seconds=DUAL_SHARE * remaining)
        self.explored += dual.n_solves
        self.detail = f"; Lagrangian bound from {dual.n_solves} dynamic programs"
        if dual.stopped:
            raise SearchStopped
        if not math.isfinite(dual.bound):
            return self.result("infeasible", f"no tree of depth <= {p.depth} keeps every leaf at {p.min_leaf} rows")
        if self.bound < self.lowest:
            return self.result("infeasible", "the Lagrangian bound proves that no tree satisfies the constraints")
        if count_search.applies(p, self.counts):
            first = self.brief_branch_and_bound(dual.prices, COUNTS_AFTER_SECONDS)
            return first if first is not None else self.count_passes(dual.prices)
        return self.branch_and_bound(dual.prices)

    def brief_branch_and_bound(self, prices, seconds: float) -> ExactResult | None:
        """The branch-and-bound for at most ``seconds`` (it closes at once where the groups are large
        and the prices fit them), or None when it has not closed by then; the bounds it proved and
        its incumbent stay."""
        if seconds <= 0:
            return None
        whole = self.deadline
        brief = Deadline(min(whole.at, time.perf_counter() + seconds), whole.stop)
        self.deadline = brief
        try:
            return self.branch_and_bound(prices)
        except SearchStopped:
            whole.check()
            return None
        finally:
            brief.close()
            self.deadline = whole
            if self._polisher is not None and self._polisher.deadline is brief:
                self._polisher = None  # made under the brief deadline: made again under the whole one

    def branch_and_bound(self, prices) -> ExactResult:
        """Passes of the branch-and-bound on the Lagrangian bound until the incumbent is proven optimal."""
        p = self.p
        if self.best is None and self.infeasible():
            return self.result("infeasible", "no tree satisfies the constraints (proven by branch-and-bound on the "
                                             "constraints' slack)")
        self.polish()
        if self.closed():
            return self.result("optimal", "the Lagrangian bound meets a feasible tree")
        search = _BranchAndBound(self, prices)
        step = p.unit if p.integral else 1e-3 * max(1.0, abs(self.bound))
        width = max(step, 0.002 * max(1.0, abs(self.bound)))
        while True:
            target = self.bound - width
            if self.p.integral:
                target = math.floor(target)
            if target <= self.lowest:
                target = NEG
            search.run(target)
            if target == NEG:
                # Every tree was visited: nothing feasible beats the incumbent.
                if self.best is None:
                    return self.result("infeasible", "branch-and-bound: no tree satisfies the constraints")
                self.prove(self.best_value)
                return self.result("optimal", f"branch-and-bound on the Lagrangian bound, {self.explored:,} nodes")
            # The pass visited every tree whose relaxed value reaches the target or
            # beats the incumbent: no feasible tree does better than either.
            self.prove(max(self.best_value, target - p.unit if p.integral else target))
            if self.bound < self.lowest:
                return self.result("infeasible", "branch-and-bound: no tree satisfies the constraints")
            self.polish()
            if self.closed():
                return self.result("optimal", f"branch-and-bound on the Lagrangian bound, {self.explored:,} nodes")
            width *= 2


#: Features up to which rows alike are found exactly (each row's features as one 64-bit number).
ALIKE_FEATURES = 64


def alike_rows_bound(p: LinearProblem) -> float:
    """A bound on every tree's objective part (the lowest part's), before any search: rows alike
    in every feature land in the same leaf, so of each set of alike rows at most those of one
    class can be right (``sum over the sets of max_k``; a pattern holds the rows of one class,
    so alike rows of several classes are several patterns).  Counted exactly for up to
    ``ALIKE_FEATURES`` features; above that every pattern at its best class."""
    P, F = p.X.shape
    if F > ALIKE_FEATURES or P == 0:
        return float(p.G.max(axis=1).sum(axis=0).min())
    packed = np.packbits(p.X > 0.5, axis=1)
    keys = np.zeros(P, dtype=np.uint64)
    for b in range(packed.shape[1]):
        keys = (keys << np.uint64(8)) | packed[:, b].astype(np.uint64)
    _, same = np.unique(keys, return_inverse=True)
    K, J = p.G.shape[1], p.G.shape[2]
    best = np.zeros((same.max() + 1, J))
    for j in range(J):
        best[:, j] = np.max([np.bincount(same, weights=p.G[:, k, j], minlength=best.shape[0]) for k in range(K)], axis=0)
    return float(best.sum(axis=0).min())


def _branching_bound_only(p: LinearProblem) -> bool:
    """One objective part, no constraint rows, no feature bound: the dynamic
    program counts a bound on branching nodes itself."""
    return p.n_rows == 0 and p.n_parts == 1 and p.max_features_used is None and GainDP.counts_budgets(p.X, p.G.shape[1])


@dataclass(frozen=True)
class _Open:
    node: int
    idx: np.ndarray
    depth: int
    ub: float  # the dynamic program's best relaxed value of a subtree here
    qlo: np.ndarray
    qhi: np.ndarray
    parent: "_Open | None" = None  # the node split into this one and ...
    sibling: np.ndarray | None = None  # ... the patterns of its other side


@dataclass(frozen=True)
class _Fixed:
    score: float
    parts: np.ndarray
    q: np.ndarray
    nb: int
    feats: frozenset
    decisions: tuple


class _FoundFeasible(Exception):
    """A search for any feasible tree found one."""


#: Largest pair-sum array (entries) a list of subtrees is counted into at once.
MAX_PAIR_SUMS = 1 << 22
#: Pair sums kept by a branch-and-bound (entries, 8 bytes each), for the sides of later splits.
MAX_KEPT_SUMS = 1 << 25


class _BranchAndBound:
    """Depth-first branch-and-bound with the priced dynamic program as bound.

    ``problem`` (default: the run's) gives the quantities the prices apply to;
    with ``first_feasible`` the search visits the trees whose relaxed value
    reaches the target, whatever the incumbent, and stops at the first
    feasible tree.
    """

    def __init__(self, run: _Run, prices: Prices, problem: LinearProblem | None = None, first_feasible: bool = False) -> None:
        p = run.p if problem is None else problem
        self.first_feasible = first_feasible
        self.run_ = run
        self.p = p
        self.theta = prices.theta(p)
        self.pen = prices.penalty(p)
        self.const = prices.constant(p)
        self.scores = prices.scores(p)
        self.dp = GainDP(p.X, p.count, self.scores, self.pen, p.min_leaf, run.deadline, p.ones, p.ordered)
        self.umin = p.U.min(axis=1)
        self.umax = p.U.max(axis=1)
        self.lists: dict[bytes, Subtrees] = {}
        self._with_rows: np.ndarray | None = None
        self._columns = self._width = None
        self._sums: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}
        self.target = NEG
        self._limit_of: tuple = (None, None)
        self._ticks = 0
        self._limit = NEG
        self.last_report = time.perf_counter()

    # -- thresholds -----------------------------------------------------------
    def limit(self) -> float:
        """A completion must reach this relaxed value to be worth visiting (recomputed
        only when the target or the incumbent changed: it is asked at every node)."""
        best = NEG if self.first_feasible else self.run_.best_value
        if best == self._limit_of[0] and self.target == self._limit_of[1]:
            return self._limit
        self._limit_of = (best, self.target)
        if math.isfinite(best):
            best = best + (self.p.unit if self.p.integral else 0.0)
        want = max(self.target, best)
        self._limit = want - TOLERANCE * max(1.0, abs(want)) if math.isfinite(want) else NEG
        return self._limit

    def open_item(self, node: int, idx: np.ndarray, depth: int, ub: float, parent: _Open | None = None,
                  sibling: np.ndarray | None = None) -> _Open:
        return _Open(node, idx, depth, ub, self.umin[idx].sum(axis=0), self.umax[idx].sum(axis=0), parent, sibling)

    def can_meet_rows(self, q: np.ndarray, qlo: np.ndarray, qhi: np.ndarray) -> bool:
        return bool(np.all(q + qhi >= self.p.lo - 1e-9) and np.all(q + qlo <= self.p.hi + 1e-9))

    def tick(self) -> None:
        self.run_.explored += 1
        self._ticks += 1
        if self._ticks % 256 == 0:  # its own count: ``explored`` also grows by whole lists
            self.run_.deadline.check()
            now = time.perf_counter()
            if now - self.last_report > 0.5:
                self.last_report = now
                self.run_.say("searching")

    # -- the search -----------------------------------------------------------
    def run(self, target: float) -> None:
        self.target = target
        p = self.p
        root = np.arange(p.n_patterns)
        found = self.dp.value(root, p.depth, self.limit() - self.const)
        if found is None:
            return
        item = self.open_item(1, root, p.depth, found)
        fixed = _Fixed(self.const, np.zeros(p.n_parts), np.zeros(p.n_rows), 0, frozenset(), ())
        self.branch(fixed, (item,), self.const + found)

    def branch(self, fixed: _Fixed, items: tuple, bound: float) -> None:
        self.tick()
        qlo = sum((o.qlo for o in items), np.zeros(self.p.n_rows))
        qhi = sum((o.qhi for o in items), np.zeros(self.p.n_rows))
        if not self.can_meet_rows(fixed.q, qlo, qhi):
            return
        deep = next((j for j, o in enumerate(items) if o.depth >= 3 and o.idx.size > 1), None)
        if deep is None:
            self.complete(fixed, items, bound)
            return
        o = items[deep]
        rest = items[:deep] + items[deep + 1:]
        rest_bound = bound - o.ub
        p = self.p
        options: list[tuple] = []
        idx = o.idx
        if p.count[idx].sum() >= p.min_leaf:
            sums = self.scores[idx].sum(axis=0)
            for k in range(p.n_classes):
                options.append((rest_bound + float(sums[k]), "leaf", k))
        may_split = p.max_branching is None or fixed.nb + 1 <= p.max_branching
        if may_split:
            options += self.split_options(o, fixed, rest_bound)
        options.sort(key=lambda t: -t[0])
        for opt in options:
            if opt[0] < self.limit():
                break
            if opt[1] == "leaf":
                k = opt[2]
                parts = fixed.parts + p.G[idx, k].sum(axis=0)
                q = fixed.q + p.U[idx, k].sum(axis=0)
                nxt = _Fixed(fixed.score + float(self.scores[idx, k].sum()), parts, q, fixed.nb, fixed.feats,
                             fixed.decisions + ((o.node, k),))
                self.branch(nxt, rest, opt[0])
            else:
                _, _, f, left, right = opt
                nxt = _Fixed(fixed.score - self.pen, fixed.parts, fixed.q, fixed.nb + 1, fixed.feats | {f},
                             fixed.decisions + ((o.node, ("split", f)),))
                self.branch(nxt, rest + (left, right), opt[0])

    def split_options(self, o: _Open, fixed: _Fixed, rest_bound: float) -> list[tuple]:
        p = self.p
        idx = o.idx
        Xd = p.X[idx]
        c = p.count[idx]
        need = max(1, p.min_leaf)
        right_rows = Xd.T @ c
        ok = (right_rows >= need) & (c.sum() - right_rows >= need)
        if p.max_features_used is not None and len(fixed.feats) >= p.max_features_used:
            allowed = np.zeros(p.n_features, dtype=bool)
            allowed[list(fixed.feats)] = True
            ok &= allowed
        smax = self.dp.smax[idx]
        ub_r = Xd.T @ smax
        ub_l = smax.sum() - ub_r
        loose = np.where(ok, rest_bound + ub_l + ub_r - self.pen, NEG)
        order = np.argsort(-loose, kind="stable")
        goes_right = Xd > 0.5
        out = []
        for f in order:
            limit = self.limit()
            if loose[f] < limit:
                break
            left_idx, right_idx = idx[~goes_right[:, f]], idx[goes_right[:, f]]
            need_left = limit - rest_bound + self.pen - min(float(ub_r[f]), self.dp.upper(right_idx, o.depth - 1))
            lft = self.dp.value(left_idx, o.depth - 1, need_left - TOLERANCE)
            if lft is None:
                continue
            rgt = self.dp.value(right_idx, o.depth - 1, limit - rest_bound + self.pen - lft - TOLERANCE)
            if rgt is None:
                continue
            value = rest_bound + lft + rgt - self.pen
            left = self.open_item(2 * o.node, left_idx, o.depth - 1, lft, o, right_idx)
            right = self.open_item(2 * o.node + 1, right_idx, o.depth - 1, rgt, o, left_idx)
            out.append((value, "split", int(f), left, right))
        return out

    # -- the last levels: lists of subtrees -----------------------------------------
    def subtrees(self, o: _Open, tau: float) -> Subtrees:
        key = subset_key(o.idx, o.depth)
        have = self.lists.get(key)
        if have is not None and have.tau <= tau:
            return have.head(tau)
        p = self.p
        if kernels.available() and p.n_features ** 2 * (p.V.shape[1] * p.V.shape[2] + 1) <= MAX_PAIR_SUMS:
            M, T = self.pair_sums(o, key[:-1])
            got = subtree_list(None, None, None, o.depth, self.theta, self.pen, p.min_leaf, p.n_parts, tau,
                               keep_features=p.max_features_used is not None, check=self.run_.deadline.check,
                               sums=(M, T, p.V.shape[1]))
        else:
            got = subtree_list(p.X[o.idx], p.V[o.idx], p.count[o.idx], o.depth, self.theta, self.pen, p.min_leaf,
                               p.n_parts, tau, keep_features=p.max_features_used is not None,
                               check=self.run_.deadline.check)
        self.lists[key] = got
        return got

    def pair_sums(self, o: _Open, key: bytes | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The sums of each pattern's quantities and rows over ``o``'s patterns with both
        features of each pair set, and over all of them (``subtree_list``'s ``sums``):
        counted (:func:`kernels.pattern_pair_sums`), or, for a side of a split, the split
        node's sums less those of the other side when that side has fewer patterns (the
        split node's counted once serve all its splits).  They do not depend on the prices:
        kept for every list of this search."""
        key = subset_key(o.idx, 0)[:-1] if key is None else key
        got = self._sums.get(key)
        if got is not None:
            return got
        if o.parent is not None and o.sibling is not None and o.sibling.size < o.idx.size:
            M, T = self.pair_sums(o.parent)
            sibling = subset_key(o.sibling, 0)[:-1]
            Ms, Ts = self._sums.get(sibling) or self._counted(o.sibling, sibling)
            got = (M - Ms, T - Ts)
        else:
            return self._counted(o.idx, key)
        self._keep_sums(key, got)
        return got

    def _counted(self, idx: np.ndarray, key: bytes) -> tuple[np.ndarray, np.ndarray]:
        p = self.p
        if self._with_rows is None:  # each pattern's quantities and rows, in one row; the columns not all zero
            W = np.concatenate([p.V.reshape(p.n_patterns, -1), p.count[:, None]], axis=1)
            self._columns = np.flatnonzero(np.any(W != 0, axis=0))
            self._width = W.shape[1]
            self._with_rows = np.ascontiguousarray(W[:, self._columns])
        Mc, Tc = kernels.pattern_pair_sums(idx, p.ones[0], p.ones[1], self._with_rows, p.n_features)
        M = np.zeros((p.n_features, p.n_features, self._width))
        M[:, :, self._columns] = Mc
        T = np.zeros(self._width)
        T[self._columns] = Tc
        self._keep_sums(key, (M, T))
        return M, T

    def _keep_sums(self, key: bytes, sums: tuple) -> None:
        if len(self._sums) * sums[0].size > MAX_KEPT_SUMS:
            self._sums.clear()
        self._sums[key] = sums

    def complete(self, fixed: _Fixed, items: tuple, bound: float) -> None:
        """Every open node has at most two levels left: choose a subtree for each.

        A list holds every subtree of its node that can still reach the limit, so
        the constraint quantities any completion adds lie between the sums of
        the lists' smallest and largest quantities (tighter than each pattern's
        extremes): completions that cannot get back within the rows are cut."""
        limit = self.limit()
        lists = []
        for o in items:
            lst = self.subtrees(o, limit - (bound - o.ub))
            if len(lst) == 0:
                return
            lists.append((o, lst))
        lists.sort(key=lambda t: len(t[1]))
        lo = np.array([lst.q.min(axis=0) for _, lst in lists]).reshape(len(lists), self.p.n_rows)
        hi = np.array([lst.q.max(axis=0) for _, lst in lists]).reshape(len(lists), self.p.n_rows)
        # rest_lo[j] / rest_hi[j]: the lists after j together
        rest_lo = np.vstack([np.cumsum(lo[::-1], axis=0)[::-1][1:], np.zeros((1, self.p.n_rows))])
        rest_hi = np.vstack([np.cumsum(hi[::-1], axis=0)[::-1][1:], np.zeros((1, self.p.n_rows))])
        if not self.can_meet_rows(fixed.q, lo.sum(axis=0), hi.sum(axis=0)):
            return
        self.choose(fixed, lists, 0, bound, rest_lo, rest_hi)

    def choose(self, fixed: _Fixed, lists: list, j: int, bound: float, rest_lo: np.ndarray, rest_hi: np.ndarray) -> None:
        p = self.p
        if j == len(lists):
            self.finish(fixed)
            return
        o, lst = lists[j]
        rest_bound = bound - o.ub
        head = lst.head(self.limit() - rest_bound)
        if j == len(lists) - 1:
            self.last(fixed, o, head, rest_bound)
            return
        if len(head) == 0:
            return
        # Filter every subtree of the list at once; visit the survivors best first.
        q = fixed.q[None, :] + head.q
        ok = np.all(q + rest_hi[j] >= p.lo - 1e-9, axis=1) & np.all(q + rest_lo[j] <= p.hi + 1e-9, axis=1)
        nbs = fixed.nb + head.nb
        if p.max_branching is not None:
            ok &= nbs <= p.max_branching
        self.run_.explored += int(len(head) - ok.sum())
        used = head.features()
        for c in np.flatnonzero(ok):
            self.tick()
            if rest_bound + head.score[c] < self.limit():
                break
            feats = fixed.feats | {int(f) for f in used[c] if f >= 0}
            if p.max_features_used is not None and len(feats) > p.max_features_used:
                continue
            nxt = _Fixed(fixed.score + float(head.score[c]), fixed.parts + head.parts[c], q[c], int(nbs[c]), feats,
                         fixed.decisions + ((o.node, ("sub", head.tree(c))),))
            self.choose(nxt, lists, j + 1, rest_bound + float(head.score[c]), rest_lo, rest_hi)

    def last(self, fixed: _Fixed, o: _Open, head: Subtrees, rest_bound: float) -> None:
        """All subtrees of the last open node at once."""
        p = self.p
        if len(head) == 0:
            return
        self.run_.explored += len(head)
        q = fixed.q[None, :] + head.q
        ok = np.all(q >= p.lo - 1e-9, axis=1) & np.all(q <= p.hi + 1e-9, axis=1)
        nb = fixed.nb + head.nb
        if p.max_branching is not None:
            ok &= nb <= p.max_branching
        if p.max_features_used is not None:
            feats = head.features()
            fresh = (feats >= 0) & ~np.isin(feats, list(fixed.feats))
            # distinct new features per subtree
            f_sorted = np.sort(np.where(fresh, feats, -1), axis=1)
            distinct = (f_sorted >= 0) & np.concatenate([np.ones((len(head), 1), bool), f_sorted[:, 1:] != f_sorted[:, :-1]], axis=1)
            ok &= len(fixed.feats) + distinct.sum(axis=1) <= p.max_features_used
        if not ok.any():
            return
        parts = fixed.parts[None, :] + head.parts
        value = (1.0 - p.lambda_) * parts.min(axis=1) - p.lambda_ * nb
        value = np.where(ok, value, NEG)
        c = int(np.argmax(value))
        if value[c] <= self.run_.best_value:
            return
        decisions = fixed.decisions + ((o.node, ("sub", head.tree(c))),)
        self.offer(decisions)

    def finish(self, fixed: _Fixed) -> None:
        self.offer(fixed.decisions)

    def offer(self, decisions: tuple) -> None:
        tree = _assemble(decisions)
        if self.run_.offer(measure_tree(self.p, tree)) and self.first_feasible:
            raise _FoundFeasible


def _assemble(decisions: tuple) -> Tree:
    """The nested tree of the decisions (node number -> leaf class, split or subtree)."""
    at = dict(decisions)

    def build(n: int) -> Tree:
        d = at[n]
        if isinstance(d, tuple) and d[0] == "split":
            return (d[1], build(2 * n), build(2 * n + 1))
        if isinstance(d, tuple) and d[0] == "sub":
            return d[1]
        return int(d)

    return build(1)
