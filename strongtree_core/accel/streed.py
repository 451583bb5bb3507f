"""Exact trees by dynamic programming (pystreed), for the problems it solves exactly.

:func:`streed_solve` hands a :class:`TreeSpec` to pystreed when
:func:`~strongtree_core.accel.support.plan_for` finds a task with the same
optimum, converts pystreed's tree to a :class:`TreeStructure`, re-scores it
on the patterns (objective in the MIO's units, every enforced constraint
re-measured) and reports the re-scored value, never pystreed's own number.
pystreed's claimed value is compared with the re-scored one as a guard on
the conventions (binary feature 1 goes right, class and feature indices).

The paper's lambda with non-unit weights or a fairness constraint is handled
by enumeration: with ``C*(s)`` the best weighted number of correct rows over
trees with at most ``s`` branching nodes,

    max_tree (1 - lambda) * correct - lambda * b  =  max_s (1 - lambda) * C*(s) - lambda * s,

since the tree reaching ``C*(s)`` has ``b <= s`` branching nodes.  Bounds
``s`` whose best possible value ``(1 - lambda) * C*(S) - lambda * s`` cannot
beat the incumbent are skipped.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np

from strongtree_core.accel.fairness_task import BOUND_SLACK
from strongtree_core.accel.rescore import tree_objective, violations
from strongtree_core.accel.support import AccelPlan, cost_complexity_for, plan_for
from strongtree_core.encoding.patterns import PatternData
from strongtree_core.formulation.spec import TreeSpec
from strongtree_core.structure import LEAF, PRUNED, TreeGraph, TreeStructure

AccelStatus = Literal["optimal", "feasible", "infeasible", "no_tree", "unsupported", "error"]

NO_ROWS = "error: there are no training rows"
BAD_TIME_LIMIT = "time_limit must be a positive number of seconds, got {value!r}"
MIN_LEAF_INFEASIBLE = (
    "infeasible: every leaf must hold at least {min_leaf} rows, but there are only {n_rows} training rows"
)
NO_TREE_IN_TIME = "no tree: pystreed found no tree within the time limit of {limit:g} s"
CLAIM_MISMATCH = (
    "error: pystreed claimed {claimed:.12g} but its tree re-scores to {rescored:.12g}; the tree is not trusted"
)
TREE_BREAKS = "error: pystreed's tree breaks the constraints: {what}"
TREE_TOO_DEEP = "error: pystreed returned a tree deeper than {depth}"
TRIVIAL = "a single leaf is optimal ({why})"
NOT_PROVEN = "pystreed stopped at the time limit before proving optimality"

#: Relative tolerance when comparing pystreed's claimed value with the re-scored one.
CLAIM_TOLERANCE = 1e-7


@dataclass(frozen=True)
class SubSolve:
    """One pystreed run: the bound on branching nodes it had and what it returned.

    Examples
    --------
    >>> from strongtree_core.accel import SubSolve
    >>> SubSolve(max_branching=3, seconds=0.2, proven=True, objective=41.0).proven
    True
    """

    max_branching: int
    seconds: float
    proven: bool
    objective: float | None


EOPP_NOT_CERTIFIED = (
    "pystreed's equal-opportunity optimum was seen to miss a better feasible tree, so its tree "
    "is a feasible start, not a certificate"
)


@dataclass(frozen=True)
class AccelResult:
    """What the exact search found.

    Attributes
    ----------
    status : {"optimal", "feasible", "infeasible", "no_tree", "unsupported", "error"}
    structure : TreeStructure or None
        The tree (depth = ``spec.depth``; a row with value 1 goes right).
    objective : float or None
        The re-scored objective of ``structure``, in the units of the MIO
        objective of the same spec.
    certified : bool
        ``structure`` is proven optimal (or ``status`` "infeasible" is proven).
    runtime : float
        Wall seconds of the whole call.
    reason : str
        Why the problem is (un)supported and how it was solved.
    method : str
        Always "dp".
    task : str or None
        The pystreed task used.
    solves : tuple of SubSolve

    Examples
    --------
    >>> from strongtree_core.accel import streed_solve
    >>> result = streed_solve(data, TreeSpec(depth=2), time_limit=10)  # doctest: +SKIP
    >>> type(result).__name__  # doctest: +SKIP
    'AccelResult'
    """

    status: AccelStatus
    structure: TreeStructure | None
    objective: float | None
    certified: bool
    runtime: float
    reason: str
    method: str = "dp"
    task: str | None = None
    solves: tuple[SubSolve, ...] = ()

    @property
    def supported(self) -> bool:
        """pystreed solves this problem exactly (whether or not it finished)."""
        return self.status not in ("unsupported", "error")


def streed_solve(data: PatternData, spec: TreeSpec, *, time_limit: float) -> AccelResult:
    """Solve ``spec`` on ``data`` with pystreed if it can do so exactly.

    Parameters
    ----------
    data : PatternData
    spec : TreeSpec
    time_limit : float
        Seconds for all pystreed runs together.

    Returns
    -------
    AccelResult
        ``status == "unsupported"`` with the reason when pystreed has no exact task.

    Examples
    --------
    >>> from strongtree_core.accel import streed_solve  # needs pystreed (the crosscheck extra, GPL)
    >>> result = streed_solve(data, TreeSpec(depth=2), time_limit=10)  # doctest: +SKIP
    >>> result.status  # doctest: +SKIP
    'optimal'
    """
    if not (isinstance(time_limit, (int, float)) and time_limit > 0):
        raise ValueError(BAD_TIME_LIMIT.format(value=time_limit))
    t0 = time.perf_counter()
    plan = plan_for(data, spec)
    if isinstance(plan, str):
        return AccelResult("unsupported", None, None, False, time.perf_counter() - t0, plan)
    if data.n_rows == 0:
        return AccelResult("error", None, None, False, time.perf_counter() - t0, NO_ROWS, task=plan.task)
    if spec.min_leaf > data.n_rows:
        why = MIN_LEAF_INFEASIBLE.format(min_leaf=spec.min_leaf, n_rows=data.n_rows)
        return AccelResult("infeasible", None, None, True, time.perf_counter() - t0, why, task=plan.task)
    trivial = _trivial_reason(data, spec)
    if trivial:
        tree = _best_single_leaf(data, spec, plan)
        value = tree_objective(data, spec, tree)
        why = TRIVIAL.format(why=trivial)
        return AccelResult("optimal", tree, value, True, time.perf_counter() - t0, why, task=plan.task)
    return _Run(data, spec, plan, t0, float(time_limit)).execute()


def _trivial_reason(data: PatternData, spec: TreeSpec) -> str:
    if spec.depth == 0:
        return "depth 0"
    if data.n_features == 0:
        return "no features to split on"
    if np.count_nonzero(np.bincount(data.y, weights=data.count, minlength=data.n_classes)) <= 1:
        return "every row has the same class"
    return ""


def _best_single_leaf(data: PatternData, spec: TreeSpec, plan: AccelPlan) -> TreeStructure:
    # A constant prediction has a fairness gap of 0, so the best leaf is always feasible.
    gain = np.bincount(data.y, weights=plan.per_row, minlength=data.n_classes)
    return TreeStructure.single_leaf(spec.depth, int(np.argmax(gain)))


class _Run:
    """One call of :func:`streed_solve` on a supported, non-trivial problem."""

    def __init__(self, data: PatternData, spec: TreeSpec, plan: AccelPlan, t0: float, time_limit: float) -> None:
        self.data, self.spec, self.plan = data, spec, plan
        self.t0, self.time_limit = t0, time_limit
        self.full = TreeGraph(spec.depth).n_branching
        self.cap = self.full if spec.max_branching is None else min(spec.max_branching, self.full)
        self.inputs = _PystreedInputs.build(data, spec, plan)
        self.model = None
        self.solves: list[SubSolve] = []

    def execute(self) -> AccelResult:
        best: tuple[float, TreeStructure] | None = None
        proven = True
        bounds = [self.cap]
        if self.plan.enumerate_branching:
            bounds += list(range(self.cap))
        top_correct = float(self.plan.per_row.sum())
        lam = self.spec.lambda_
        for s in bounds:
            if best is not None and (1 - lam) * top_correct - lam * s <= best[0] + 1e-12 * max(1.0, abs(best[0])):
                break  # the best possible value only falls as s grows
            remaining = self.time_limit - (time.perf_counter() - self.t0)
            if remaining <= 0:
                proven = False
                break
            outcome = self._fit(s, remaining)
            if isinstance(outcome, AccelResult):
                return outcome
            tree, sub_proven = outcome
            proven &= sub_proven
            if tree is None:
                continue
            value = tree_objective(self.data, self.spec, tree)
            self.solves[-1] = SubSolve(s, self.solves[-1].seconds, sub_proven, value)
            if s == self.cap and sub_proven:
                # C*(cap): no bound s can reach more weighted correct rows.
                top_correct = float(self.plan.per_row[tree.predict(self.data.X) == self.data.y].sum())
            if best is None or value > best[0]:
                best = (value, tree)
        if best is None:
            return self._result("no_tree", None, None, False, NO_TREE_IN_TIME.format(limit=self.time_limit))
        certified = proven
        reason = self.plan.reason
        if not proven:
            reason += "; " + NOT_PROVEN
        fair = self.plan.fairness
        if fair is not None and fair.kind == "equal_opportunity":
            # German credit (split 1, depth 1, bound 0.05): pystreed's equal-opportunity
            # task returned 527 correct rows as optimal where a feasible tree has 535
            # (brute force and FlowOCT agree): its tree is only offered as a start.
            certified = False
            reason += "; " + EOPP_NOT_CERTIFIED
        elif fair is not None and not fair.exact_comparisons:
            certified = False
            reason += "; " + fair.certification_note()
        return self._result("optimal" if certified else "feasible", best[1], best[0], certified, reason)

    def _result(self, status: AccelStatus, tree, value, certified: bool, reason: str) -> AccelResult:
        return AccelResult(
            status, tree, value, certified, time.perf_counter() - self.t0, reason,
            task=self.plan.task, solves=tuple(self.solves),
        )

    def _fit(self, max_branching: int, remaining: float):
        """Run pystreed once; (tree or None, proven) or an error result."""
        start = time.perf_counter()
        model = self._model(max_branching, remaining)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(*self.inputs.fit_args)
        seconds = time.perf_counter() - start
        if not model.is_fitted():
            self.solves.append(SubSolve(max_branching, seconds, False, None))
            return None, False
        proven = bool(model.fit_result.is_optimal())
        self.solves.append(SubSolve(max_branching, seconds, proven, None))
        tree = self.inputs.structure(model.tree_, self.spec.depth)
        if tree is None:
            return self._result("error", None, None, False, TREE_TOO_DEEP.format(depth=self.spec.depth))
        broken = violations(self.data, self.spec, tree, self.plan.fairness)
        if max_branching < self.full and tree.n_branching > max_branching:
            broken.append(f"{tree.n_branching} branching nodes > {max_branching}")
        if broken:
            return self._result("error", None, None, False, TREE_BREAKS.format(what="; ".join(broken)))
        claimed, rescored = self.inputs.claim(model.fit_result.score(), self.data, tree)
        if abs(claimed - rescored) > CLAIM_TOLERANCE * max(1.0, abs(rescored)):
            return self._result("error", None, None, False, CLAIM_MISMATCH.format(claimed=claimed, rescored=rescored))
        return tree, proven

    def _model(self, max_branching: int, remaining: float):
        """The pystreed estimator, reused across bounds so that its cache is kept."""
        if self.model is None:
            self.model = self.inputs.estimator(self.spec, self.plan)
        if max_branching != self.full and getattr(self.model, "cost_complexity", 0.0) >= 1e-6:
            # pystreed would end the whole process (exit(1)) on this combination.
            raise RuntimeError("a branching bound below 2^d - 1 cannot be combined with pystreed's cost complexity")
        self.model.set_params(max_num_nodes=int(max_branching), time_limit=float(remaining))
        return self.model


@dataclass(frozen=True)
class _PystreedInputs:
    """The data in pystreed's terms and the maps back.

    ``classes[k]`` is the project's class index of pystreed label ``k``;
    ``feature_offset`` is 1 when the sensitive attribute is prepended as
    pystreed's feature 0.
    """

    task: str
    fit_args: tuple
    classes: np.ndarray
    feature_offset: int
    n_rows: int

    @staticmethod
    def build(data: PatternData, spec: TreeSpec, plan: AccelPlan) -> "_PystreedInputs":
        # Rows are expanded from patterns: pystreed counts instances for the
        # minimum leaf size, the misclassification count and the group sizes.
        reps = data.count.astype(np.int64)
        X = np.repeat(data.X.astype(np.intc), reps, axis=0)
        y = np.repeat(data.y, reps)
        n_rows = int(reps.sum())
        if plan.task == "instance-cost-sensitive":
            per_unit = np.repeat(plan.per_row / np.maximum(reps, 1), reps)
            # cost of predicting k: the row's objective weight when k is not its class
            costs = np.where(np.arange(data.n_classes)[None, :] == y[:, None], 0.0, per_unit[:, None])
            return _PystreedInputs(plan.task, (X, costs), np.arange(data.n_classes), 0, n_rows)
        if plan.fairness is not None:
            fair = plan.fairness
            g = np.repeat(data.group, reps)
            sensitive = (g == fair.levels[1]).astype(np.intc)
            y01 = (y == fair.positive).astype(np.intc)
            classes = np.array([1 - fair.positive, fair.positive])
            return _PystreedInputs(plan.task, (np.hstack([sensitive[:, None], X]), y01), classes, 1, n_rows)
        classes = np.flatnonzero(np.bincount(y, minlength=data.n_classes) > 0)
        compact = np.searchsorted(classes, y).astype(np.intc)
        return _PystreedInputs(plan.task, (X, compact), classes, 0, n_rows)

    def estimator(self, spec: TreeSpec, plan: AccelPlan):
        import pystreed

        common = dict(
            max_depth=int(spec.depth),
            min_leaf_node_size=max(1, int(spec.min_leaf)),
            time_limit=1.0,
        )
        if self.task == "instance-cost-sensitive":
            return pystreed.STreeDInstanceCostSensitiveClassifier(**common)
        if plan.fairness is not None:
            # pystreed's depth-two terminal solver splits on the sensitive feature 0
            # (seen on monk1 at depth 3), which its fairness tasks forbid elsewhere;
            # without it the search never does.
            return pystreed.STreeDGroupFairnessClassifier(
                optimization_task=self.task,
                sensitive_feature=0,
                discrimination_limit=min(1.0, plan.fairness.bound + BOUND_SLACK),
                use_terminal_solver=False,
                **common,
            )
        alpha = cost_complexity_for(spec.lambda_, self.n_rows) if self.task == "cost-complex-accuracy" else 0.0
        return pystreed.STreeDClassifier(optimization_task=self.task, cost_complexity=alpha, **common)

    def structure(self, root, depth: int) -> TreeStructure | None:
        """pystreed's tree as breadth-first arrays; None if it is deeper than ``depth``.

        pystreed sends a row with feature value 0 to ``left_child`` and 1 to
        ``right_child``, like :meth:`TreeStructure.apply` (left ``2n``, right ``2n + 1``).
        """
        graph = TreeGraph(depth)
        feature = np.full(graph.n_nodes, PRUNED, dtype=np.int64)
        prediction = np.full(graph.n_nodes, -1, dtype=np.int64)
        stack = [(root, 1)]
        while stack:
            node, n = stack.pop()
            if n > graph.n_nodes:
                return None
            if node.is_leaf_node():
                feature[n - 1] = LEAF
                prediction[n - 1] = int(self.classes[int(node.label)])
            else:
                if n > graph.n_branching:
                    return None
                feature[n - 1] = int(node.feature) - self.feature_offset
                stack += [(node.left_child, 2 * n), (node.right_child, 2 * n + 1)]
        return TreeStructure(depth, feature, prediction)

    def claim(self, score: float, data: PatternData, tree: TreeStructure) -> tuple[float, float]:
        """(pystreed's claimed training score, the same quantity re-counted from ``tree``).

        Instance-cost-sensitive reports its total cost; the other tasks report
        the fraction of rows classified correctly.
        """
        wrong = tree.predict(data.X) != data.y
        if self.task == "instance-cost-sensitive":
            costs = self.fit_args[1]
            return float(score), float(_row_cost(costs, self.fit_args[0], tree, self.feature_offset))
        correct_rows = float(data.count[~wrong].sum())
        return float(score) * self.n_rows, correct_rows


def _row_cost(costs: np.ndarray, X: np.ndarray, tree: TreeStructure, offset: int) -> float:
    pred = tree.predict(X[:, offset:])
    return float(costs[np.arange(costs.shape[0]), pred].sum())
