"""The baselines of Theorem 1, OCT (Bertsimas and Dunn 2017, formulation (24)) and
BinOCT (Verwer and Zhang 2019), against brute force; their refusals; the LP
relaxations in the order Theorem 1 states (FlowOCT's is never looser)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from brute_force import all_trees, milp_solve
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from strongtree_core import StrongTreeClassifier, StrongTreeError
from strongtree_core.encoding.patterns import collapse_patterns
from strongtree_core.formulation import TreeSpec, build_model, relaxation_arrays
from strongtree_core.formulation.binoct import BINOCT_REFUSED
from strongtree_core.formulation.oct import OCT_REFUSED
from strongtree_core.formulation.quality_constraints import MinRecall
from strongtree_core.solvers import BACKENDS, SolveOptions, Status, gurobi_licence
from strongtree_core.solvers.licence import gurobi_model_size
from strongtree_core.solvers.relaxation import lp_relaxation
from strongtree_core.structure import TreeGraph

INSTALLED = [name for name, backend in BACKENDS.items() if backend.available()[0]]


def _instance(seed: int, n: int = 14, F: int = 3, K: int = 2):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, F))
    y = rng.integers(0, K, n)
    return X, y, collapse_patterns(X, y, K)


def _brute(X, y, spec: TreeSpec, K: int, *, balanced: bool = False) -> float:
    """Best objective over every tree (every balanced tree with ``balanced``)."""
    best = -np.inf
    for t in all_trees(spec.depth, X.shape[1], K):
        if balanced and t.leaves.min() <= TreeGraph(spec.depth).n_branching:
            continue
        if spec.min_leaf:
            sizes = np.bincount(t.apply(X), minlength=t.feature.size + 1)[t.leaves]
            if sizes.min() < spec.min_leaf:
                continue
        best = max(best, (1 - spec.lambda_) * (t.predict(X) == y).sum() - spec.lambda_ * t.n_branching)
    return best


def _rescored(tree, X, y, spec: TreeSpec) -> float:
    return (1 - spec.lambda_) * (tree.predict(X) == y).sum() - spec.lambda_ * tree.n_branching


CASES = [
    ("oct", dict()),
    ("oct", dict(lambda_=0.15)),
    ("oct", dict(min_leaf=3)),
    ("oct", dict(lambda_=0.1, min_leaf=2)),
    ("binoct", dict()),
]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("method, extra", CASES, ids=lambda v: v if isinstance(v, str) else ",".join(f"{k}={x}" for k, x in v.items()) or "plain")
@pytest.mark.parametrize("depth", [1, 2])
def test_baselines_match_brute_force(seed, method, extra, depth):
    K = 2 + seed % 2
    X, y, data = _instance(seed, K=K)
    spec = TreeSpec(depth=depth, **extra)
    truth = _brute(X, y, spec, K)
    built = build_model(data, spec, method)
    x = milp_solve(built.arrays)
    assert x is not None
    assert built.arrays.objective(x) == pytest.approx(truth, abs=1e-6)
    tree = built.decode(x)
    assert tree.is_valid()
    assert _rescored(tree, X, y, spec) == pytest.approx(truth, abs=1e-6)
    # The decoded tree written back is a feasible solution with the same value (a warm start).
    start = built.start(tree, data)
    assert built.arrays.max_violation(start) <= 1e-9
    assert built.arrays.objective(start) == pytest.approx(truth, abs=1e-6)


@pytest.mark.parametrize("method", ["oct", "binoct"])
def test_every_tree_is_a_feasible_start_with_its_own_value(method):
    """Brute force the other way: every tree written as a solution is feasible and keeps
    its predictions (BinOCT: the tree padded to full depth; OCT: every leaf relabelled to
    its majority class, as rows (b)-(c) demand), with the objective it re-scores to."""
    X, y, data = _instance(5, n=10, F=2, K=3)
    spec = TreeSpec(depth=2, lambda_=0.1 if method == "oct" else 0.0)
    built = build_model(data, spec, method)
    n = 0
    for tree in all_trees(2, 2, 3):
        x = built.start(tree, data)
        assert built.arrays.max_violation(x) <= 1e-9
        decoded = built.decode(x)
        if method == "binoct":
            np.testing.assert_array_equal(decoded.predict(data.X), tree.predict(data.X))
        else:
            assert (decoded.predict(X) == y).sum() >= (tree.predict(X) == y).sum()
            assert decoded.n_branching <= tree.n_branching
        assert built.arrays.objective(x) == pytest.approx(_rescored(decoded, X, y, spec), abs=1e-9)
        n += 1
    assert n > 100


def _takes(name: str, model) -> bool:
    return name in INSTALLED and (name != "gurobi" or gurobi_licence().fits(*gurobi_model_size(model)))


def _backend_cases():
    X, y, data = _instance(7, n=20, F=4)
    for method, extra in (("oct", dict()), ("oct", dict(lambda_=0.2)), ("binoct", dict())):
        spec = TreeSpec(depth=2, **extra)
        built = build_model(data, spec, method)
        for name in BACKENDS:
            if _takes(name, built.arrays):
                yield pytest.param(name, built, X, y, id=f"{name}-{method}-{'-'.join(extra) or 'plain'}")


@pytest.mark.parametrize("name, built, X, y", list(_backend_cases()))
def test_every_backend_proves_the_baselines(name, built, X, y):
    result = BACKENDS[name].solve(built.arrays, SolveOptions(time_limit=60))
    truth = _brute(X, y, built.spec, 2)
    assert result.status == Status.OPTIMAL, result.message
    assert result.objective == pytest.approx(truth, abs=1e-6)
    assert _rescored(built.decode(result.x), X, y, built.spec) == pytest.approx(truth, abs=1e-6)


def test_the_estimator_runs_the_baselines_alone_and_proves_the_optimum():
    X, y, _ = _instance(3, n=30, F=4)
    truth = _brute(X, y, TreeSpec(depth=2), 2)
    for formulation in ("oct", "binoct"):
        clf = StrongTreeClassifier(depth=2, formulation=formulation, exact_search=False, time_limit=60).fit(X, y)
        record = clf.record_
        assert (record.method, record.status, record.certified) == (formulation, "optimal", True)
        assert record.objective == pytest.approx(truth)
        assert "exact search" not in record.choice  # the MIO alone
        assert record.lp_bound is not None and record.lp_bound >= truth - 1e-6
        assert record.n_cuts is None
    lam = StrongTreeClassifier(depth=2, formulation="oct", regularization=0.1, min_leaf=3, time_limit=60).fit(X, y)
    assert lam.record_.certified
    assert lam.record_.objective == pytest.approx(_brute(X, y, TreeSpec(depth=2, lambda_=0.1, min_leaf=3), 2))


@pytest.mark.parametrize(
    "formulation, params, message",
    [
        ("oct", dict(max_branching=2), OCT_REFUSED.format(names="at most 2 branching nodes")),
        ("oct", dict(objective="balanced_accuracy", max_features_used=1),
         OCT_REFUSED.format(names="the objective balanced_accuracy, at most 1 features")),
        ("oct", dict(min_recall=0.5), OCT_REFUSED.format(names=MinRecall(0.5, 1).name)),
        ("binoct", dict(regularization=0.1),
         BINOCT_REFUSED.format(names="the branching penalty lambda = 0.1 (imbalanced trees)")),
        ("binoct", dict(min_leaf=3, max_branching=2), BINOCT_REFUSED.format(names="at most 2 branching nodes, min leaf 3")),
    ],
)
def test_what_a_baseline_cannot_express_is_refused(formulation, params, message):
    X, y, _ = _instance(1, n=20)
    with pytest.raises(StrongTreeError) as err:
        StrongTreeClassifier(depth=2, formulation=formulation, time_limit=5, **params).fit(X, y)
    assert str(err.value) == message


def _lp(model) -> float:
    """LP relaxation by scipy (an independent solver call)."""
    sign = -1.0 if model.sense == "max" else 1.0
    up, lo = np.isfinite(model.row_upper), np.isfinite(model.row_lower)
    res = linprog(sign * model.c, A_ub=sp.vstack([model.A[up], -model.A[lo]]),
                  b_ub=np.concatenate([model.row_upper[up], -model.row_lower[lo]]),
                  bounds=list(zip(model.col_lower, model.col_upper)), method="highs")
    assert res.status == 0
    return sign * res.fun + model.obj_offset


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), depth=st.integers(1, 3), n_classes=st.sampled_from([2, 2, 3]),
       weighted=st.booleans())
def test_theorem_1_flowoct_relaxation_is_never_looser(seed, depth, n_classes, weighted):
    rng = np.random.default_rng(seed)
    n, F = int(rng.integers(6, 30)), int(rng.integers(1, 5))
    X = rng.integers(0, 2, (n, F))
    y = rng.integers(0, n_classes, n)
    data = collapse_patterns(X, y, n_classes, sample_weight=rng.uniform(0.5, 2, n) if weighted else None)
    spec = TreeSpec(depth=depth)
    bound = {m: lp_relaxation(relaxation_arrays(data, build_model(data, spec, m)), time_limit=30)
             for m in ("flow", "oct", "binoct")}
    tol = 1e-6 * max(1.0, bound["flow"])
    assert bound["flow"] <= bound["oct"] + tol
    assert bound["flow"] <= bound["binoct"] + tol
    # Every relaxation bounds the optimum from above; HiGHS's value is scipy's.
    flow = build_model(data, spec, "flow").arrays
    optimum = flow.objective(milp_solve(flow))
    assert min(bound.values()) >= optimum - tol
    assert bound["flow"] == pytest.approx(_lp(flow), abs=tol)


def _min_cut_rows(master, x: np.ndarray, data) -> list[tuple[np.ndarray, np.ndarray]]:
    """Violated cut-set inequalities (4b) at a fractional master solution, by a min cut on
    each datapoint's flow graph (a tree: the cut below node n costs its sink arc plus, per
    child, the cheaper of the arc to it and the cut below it)."""
    idx = master.index
    depth = int(np.log2(idx["b"].shape[0] + 1))
    g = TreeGraph(depth)
    balanced = "p" not in idx
    out = []
    for i in range(data.n_patterns):
        xi, yi = data.X[i], data.y[i]

        def sink(n):
            if balanced:
                return [idx["w"][n - g.n_branching - 1, yi]] if n > g.n_branching else []
            return [idx["w"][n - 1, yi]]

        def below(n):  # (value, columns of the cut)
            cols = list(sink(n))
            if n <= g.n_branching:
                for child, side in ((2 * n, 0), (2 * n + 1, 1)):
                    arc = [idx["b"][n - 1, f] for f in range(data.n_features) if xi[f] == side]
                    sub_value, sub_cols = below(child)
                    cols += arc if x[arc].sum() <= sub_value else sub_cols
            return float(x[cols].sum()), cols

        value, cols = below(1)
        if x[idx["g"][i]] > value + 1e-7:
            out.append((np.array([idx["g"][i]] + cols), np.array([1.0] + [-1.0] * len(cols))))
    return out


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("extra", [dict(), dict(lambda_=0.1)], ids=["balanced", "imbalanced"])
def test_the_benders_master_with_every_cut_has_flowocts_relaxation(seed, extra):
    """The reported Benders LP bound (FlowOCT's) equals the master's LP relaxation with
    cut-set inequalities separated at fractional points until none is violated."""
    X, y, data = _instance(seed, n=16, F=3, K=2 + seed % 2)
    built = build_model(data, TreeSpec(depth=2, **extra), "benders")
    master = built.arrays
    A, lo, up = master.A, master.row_lower, master.row_upper
    for _ in range(500):
        model = type(master)(**{**master.__dict__, "A": A, "row_lower": lo, "row_upper": up, "separator": None})
        sign = -1.0
        ub, lb = np.isfinite(up), np.isfinite(lo)
        res = linprog(sign * model.c, A_ub=sp.vstack([A[ub], -A[lb]]), b_ub=np.concatenate([up[ub], -lo[lb]]),
                      bounds=list(zip(model.col_lower, model.col_upper)), method="highs")
        cuts = _min_cut_rows(master, res.x, data)
        if not cuts:
            break
        rows = sp.csr_matrix((np.concatenate([c for _, c in cuts]),
                              (np.repeat(np.arange(len(cuts)), [len(c) for c, _ in cuts]),
                               np.concatenate([c for c, _ in cuts]))), shape=(len(cuts), master.n_cols))
        A, lo, up = sp.vstack([A, rows]).tocsr(), np.append(lo, np.full(len(cuts), -np.inf)), np.append(up, np.zeros(len(cuts)))
    else:
        raise AssertionError("separation did not converge")
    master_lp = -res.fun + master.obj_offset
    assert master_lp == pytest.approx(lp_relaxation(relaxation_arrays(data, built), time_limit=30), abs=1e-6)
    trivial = (1 - built.spec.lambda_) * float(data.weight.sum())  # the master without cuts
    assert master_lp < trivial - 1e-6


def _record_cases():
    X, y, data = _instance(11, n=24, F=3)
    for formulation in ("flow", "benders", "oct", "binoct"):
        built = build_model(data, TreeSpec(depth=1), formulation)
        for name in BACKENDS:
            if _takes(name, built.arrays):
                yield pytest.param(formulation, name, X, y, data, id=f"{formulation}-{name}")


@pytest.mark.parametrize("formulation, solver, X, y, data", list(_record_cases()))
def test_every_mio_records_its_lp_bound_and_cuts_on_every_backend(formulation, solver, X, y, data):
    clf = StrongTreeClassifier(depth=1, formulation=formulation, solver=solver, exact_search=False,
                               heuristic_start=False, time_limit=60).fit(X, y)
    record = clf.record_
    assert record.certified and record.backend == solver
    built = build_model(data, TreeSpec(depth=1), formulation)
    # The recorded bound is the formulation's LP relaxation, solved again here by scipy.
    assert record.lp_bound == pytest.approx(_lp(relaxation_arrays(data, built)), abs=1e-6)
    assert record.lp_bound >= record.objective - 1e-6
    assert isinstance(record.nodes, int)
    if formulation == "benders":
        # No depth-1 tree classifies every row: the master's first answers needed cuts.
        assert record.objective < len(y) and isinstance(record.n_cuts, int) and record.n_cuts > 0
    else:
        assert record.n_cuts is None


def test_routes_without_a_relaxation_record_none():
    X, y, _ = _instance(11, n=24, F=3)
    for route in ("auto", "local_search"):
        record = StrongTreeClassifier(depth=1, formulation=route, time_limit=30).fit(X, y).record_
        assert (record.lp_bound, record.n_cuts) == (None, None)
