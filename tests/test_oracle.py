"""'Optimal' means optimal: every solve reported optimal on the paper's datasets
has exactly the misclassification count of an independent exact method
(`../shared/datasets/oracle_optimal.csv`), on every installed backend, for
FlowOCT and BendersOCT, and the two agree.

Each solve has a short time limit (``STRONGTREE_ORACLE_SECONDS``, default
2.5 s, so the suite stays short; `benchmarks/` runs the long version): solves
that stop at the limit are not claims of optimality and are only checked to be
no better than the optimum; cases no backend proves within the short limit run
only with a longer one (``LIMIT_ONLY``).  soybean-small must be proven by every backend,
and proofs must be common enough overall that the check is not vacuous.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from strongtree_core.encoding.patterns import collapse_patterns
from strongtree_core.formulation import TreeSpec, build_model
from strongtree_core.solvers import (
    BACKENDS,
    SolveOptions,
    SolverUnavailableError,
    Status,
    choose_backend,
    solve,
)
from strongtree_core.engine.starts import cart_structure

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
ORACLE = DATA / "oracle_optimal.csv"
TIME_LIMIT = float(os.environ.get("STRONGTREE_ORACLE_SECONDS", "2.5"))
#: (dataset, depth) every backend must prove optimal within the limit.
MUST_PROVE = {("soybean-small", 3)}
#: Cases no backend proves within the default limit (each of their 4-5 solves ran to 2.5 s, on HiGHS, SCIP and
#: size-limited Gurobi, FlowOCT and BendersOCT alike: 63 s of a run that proved nothing): run only when
#: STRONGTREE_ORACLE_SECONDS gives the solvers at least :data:`LONG_LIMIT` seconds.
LIMIT_ONLY = {("monk3", 3), ("hayes-roth", 3), ("breast-cancer", 2), ("tic-tac-toe", 2), ("car-evaluation", 2),
              ("kr-vs-kp", 2)}
LONG_LIMIT = 10.0
#: Proofs seen across the parametrized cases (checked by the last test).
PROOFS: list[tuple[str, int, str, str]] = []
#: The oracle cases run so far in this session (the proof count is checked once all ran).
RAN: list = []

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not ORACLE.exists(), reason=f"shared datasets not found at {DATA}")]


def _load(name: str):
    df = pd.read_csv(DATA / "categorical" / f"{name}.csv")
    y_raw = df.pop("target").to_numpy()
    classes, y = np.unique(y_raw, return_inverse=True)
    return collapse_patterns(df.to_numpy(), y, classes.size)


def _cases():
    if not ORACLE.exists():
        return []
    oracle = pd.read_csv(ORACLE)
    cases = []
    for row in oracle.itertuples():
        # Depth 3 on the smaller tables (at most 150 rows), where the MIOs prove within the limit
        # often enough to mean something; the larger ones ran to the limit in 12 s each.
        if (row.dataset, row.depth) in LIMIT_ONLY and TIME_LIMIT < LONG_LIMIT:
            continue
        if row.depth == 2 or (row.depth == 3 and row.n_rows <= 150):
            cases.append(pytest.param(row.dataset, int(row.depth), int(row.optimal_misclassified), int(row.n_rows), id=f"{row.dataset}-d{row.depth}"))
    return cases


def _fits(arrays, backend: str) -> bool:
    try:
        choose_backend(arrays, backend)
    except SolverUnavailableError:
        return False
    return True


@pytest.mark.parametrize("dataset,depth,optimum_wrong,n_rows", _cases())
def test_reported_optimal_equals_the_oracle(dataset, depth, optimum_wrong, n_rows):
    RAN.append((dataset, depth))
    data = _load(dataset)
    assert data.n_rows == n_rows
    best_correct = n_rows - optimum_wrong
    spec = TreeSpec(depth=depth)
    proven = {}
    tried = 0
    for method in ("flow", "benders"):
        built = build_model(data, spec, method)
        start = built.start(cart_structure(data, depth), data)
        for name in BACKENDS:
            if not _fits(built.arrays, name):
                continue  # not installed, or the licence does not fit this model
            tried += 1
            result = solve(built.arrays, name, SolveOptions(time_limit=TIME_LIMIT, warm_start=start))
            assert result.status in (Status.OPTIMAL, Status.TIME_LIMIT), (name, method, result.message)
            tree = built.decode(result.x)
            correct = int(data.count[tree.predict(data.X) == data.y].sum())
            assert correct <= best_correct, (name, method)
            if result.status == Status.OPTIMAL:
                assert correct == best_correct, (name, method, correct, best_correct)
                assert result.objective == pytest.approx(best_correct, abs=1e-4)
                proven[(name, method)] = correct
                PROOFS.append((dataset, depth, name, method))
    assert tried >= 2
    if (dataset, depth) in MUST_PROVE:
        assert len(proven) == tried, f"not proven within {TIME_LIMIT}s: {tried - len(proven)} of {tried}"
    # FlowOCT and BendersOCT agree wherever both proved optimality.
    assert len(set(proven.values())) <= 1


@pytest.fixture(scope="module", autouse=True)
def proofs_are_common_enough_to_mean_something():
    """After the module's last test, whatever the order: when every oracle case ran, at least 12 solves
    proved optimality, with both formulations (a run of a few cases, under -k, checks nothing here)."""
    yield
    if not _cases() or len(RAN) < len(_cases()):
        return
    print(f"{len(PROOFS)} proofs:", PROOFS)
    assert len(PROOFS) >= 12, PROOFS
    assert {m for *_, m in PROOFS} == {"flow", "benders"}
