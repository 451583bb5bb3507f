"""Shared pieces of the benchmark scripts: the paper's datasets and splits,
the known optima, the paper's own results, and one solve of one instance
(MIO or dynamic program) with its tree re-scored."""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from strongtree_core.accel import streed_solve
from strongtree_core.accel.rescore import tree_objective
from strongtree_core.encoding.patterns import PatternData, collapse_patterns
from strongtree_core.formulation import TreeSpec, build_model

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "datasets"
CATEGORICAL = DATA / "categorical"
ORACLE = DATA / "oracle_optimal.csv"
PAPER_TRAIN = DATA / "paper_results" / "strongtree_paper_train.csv"
FAIRNESS_DATA = DATA / "fairness"

#: The paper's 12 datasets, smallest first.
DATASETS = (
    "soybean-small", "monk3", "monk1", "hayes-roth", "monk2", "house-votes-84",
    "spect", "breast-cancer", "balance-scale", "tic-tac-toe", "car-evaluation", "kr-vs-kp",
)
#: random_state of samples 1..5 in the paper's code.
SAMPLE_SEEDS = {1: 41, 2: 23, 3: 45, 4: 36, 5: 19}
#: ODTlearn's approaches, run on CBC through ``odtlearn_worker.py``.
ODTLEARN_METHODS = ("odtlearn-flow", "odtlearn-benders")
#: python-mip's status names -> ours.
_MIP_STATUS = {"optimal": "optimal", "feasible": "time_limit", "no_solution_found": "time_limit_no_tree",
               "infeasible": "infeasible"}
#: Largest objective difference (in rows) still counted as equal.
TOL = 1e-6

MISSING_DATA = "the shared datasets were not found at {path}: run from a checkout next to ../shared"


def require_data() -> None:
    if not CATEGORICAL.exists():
        raise SystemExit(MISSING_DATA.format(path=DATA))


def load_table(name: str) -> pd.DataFrame:
    return pd.read_csv(CATEGORICAL / f"{name}.csv")


def load_fairness_table(relative: str) -> pd.DataFrame:
    """A CSV under ``fairness/`` (e.g. ``"german/splits/german_binary_train_enc_1.csv"``)
    without its unnamed row-index column, if it has one."""
    df = pd.read_csv(FAIRNESS_DATA / relative)
    return df.drop(columns=[c for c in df.columns if str(c).startswith("Unnamed:")])


def in_sample_part(df: pd.DataFrame, sample: int) -> pd.DataFrame:
    """The 50 % training part of the paper's split for ``sample`` (1..5).

    ``train_test_split(data, test_size=0.25, random_state=rs)``, then the
    training part again with ``test_size=0.33`` and the same ``rs``; this
    reproduces the paper's ``nrow`` for all 12 datasets.
    """
    rs = SAMPLE_SEEDS[sample]
    train, _ = train_test_split(df, test_size=0.25, random_state=rs)
    part, _ = train_test_split(train, test_size=0.33, random_state=rs)
    return part


def patterns(df: pd.DataFrame) -> PatternData:
    """Binary features and the label column ``target`` mapped to 0..K-1."""
    y_raw = df["target"].to_numpy()
    classes, y = np.unique(y_raw, return_inverse=True)
    return collapse_patterns(df.drop(columns="target").to_numpy(), y, classes.size)


def oracle_table() -> dict[tuple[str, int], int]:
    """(dataset, depth) -> optimal misclassified rows on the full data."""
    if not ORACLE.exists():
        return {}
    o = pd.read_csv(ORACLE)
    return {(r.dataset, int(r.depth)): int(r.optimal_misclassified) for r in o.itertuples()}


@dataclass(frozen=True)
class PaperRun:
    """The paper's result for one instance: the best certified approach, else the best found."""

    approach: str
    status: int
    misclassified: float
    objective: float  # in our units: (1 - lambda) * correct - lambda * branchings
    seconds: float


def paper_table() -> dict[tuple[str, int, float, int], dict[str, PaperRun]]:
    """(dataset, depth, lambda, sample) -> {"FlowOCT": run, "BendersOCT": run}.

    The paper's ``obj_value`` is ``-[(1 - lambda) * misclassified + lambda * branchings]``,
    so ours is ``obj_value + (1 - lambda) * nrow``.
    """
    if not PAPER_TRAIN.exists():
        return {}
    p = pd.read_csv(PAPER_TRAIN)
    p = p[p.approach.isin(["FlowOCT", "BendersOCT"])].rename(columns={"lambda": "lam"})
    out: dict = {}
    for r in p.itertuples():
        lam = round(float(r.lam), 4)
        key = (r.dataset, int(r.depth), lam, int(r.sample))
        ours = float(r.obj_value) + (1 - lam) * int(r.nrow)
        miscl = float(round(int(r.nrow) * (1 - float(r.train_acc))))
        out.setdefault(key, {})[r.approach] = PaperRun(r.approach, int(r.status), miscl, ours, float(r.solving_time))
    return out


@dataclass
class Outcome:
    """One solve of one instance, with its tree re-scored."""

    method: str
    solver: str
    status: str
    certified: bool
    seconds: float
    objective: float | None = None  # re-scored
    reported: float | None = None  # what the solver or dynamic program said
    bound: float | None = None
    gap: float | None = None
    misclassified: int | None = None
    branching: int | None = None
    build_seconds: float = 0.0
    n_variables: int = 0
    n_constraints: int = 0
    note: str = ""
    extra: dict = field(default_factory=dict)


def _misclassified(data: PatternData, tree) -> int:
    return int(data.count[tree.predict(data.X) != data.y].sum())


def run_dp(data: PatternData, spec: TreeSpec, time_limit: float) -> Outcome:
    res = streed_solve(data, spec, time_limit=time_limit)
    out = Outcome("dp", "pystreed", res.status, res.certified, res.runtime, note=res.reason)
    if res.structure is not None:
        out.objective = tree_objective(data, spec, res.structure)
        out.reported = res.objective
        out.misclassified = _misclassified(data, res.structure)
        out.branching = res.structure.n_branching
        if res.certified:
            out.bound, out.gap = out.objective, 0.0
    return out


def run_mio(
    data: PatternData, spec: TreeSpec, method: str, solver: str, time_limit: float,
    *, warm_start: str = "none", threads: int = 1,
) -> Outcome:
    from strongtree_core.solvers import SolveOptions, SolverUnavailableError, solve
    from strongtree_core.engine.starts import cart_structure

    t0 = time.perf_counter()
    model = build_model(data, spec, method)  # type: ignore[arg-type]
    arrays = model.arrays
    x0 = None
    if warm_start == "cart":
        x = model.start(cart_structure(data, spec.depth), data)
        x0 = x if arrays.max_violation(x) <= 1e-6 else None
    out = Outcome(method, solver, "error", False, 0.0, build_seconds=model.build_seconds,
                  n_variables=arrays.n_cols, n_constraints=arrays.n_rows)
    try:
        result = solve(arrays, solver, SolveOptions(time_limit=time_limit, threads=threads, warm_start=x0))
    except SolverUnavailableError as err:
        out.status, out.note, out.seconds = "unavailable", str(err), time.perf_counter() - t0
        return out
    out.status = result.status.value
    out.certified = result.status.value == "optimal"
    out.seconds = result.runtime
    out.reported, out.bound, out.gap = result.objective, result.bound, result.gap
    out.note = str(result.extra.get("choice", ""))
    if result.x is not None:
        tree = model.decode(result.x)
        out.objective = tree_objective(data, spec, tree)
        out.misclassified = _misclassified(data, tree)
        out.branching = tree.n_branching
        if result.objective is not None and abs(out.objective - result.objective) > TOL * max(1.0, abs(out.objective)):
            out.note += f"; solver reported {result.objective:.6g}, tree re-scores to {out.objective:.6g}"
            out.certified = False
    return out


def run_odtlearn(
    part: pd.DataFrame, spec: TreeSpec, method: str, time_limit: float,
    *, python: str, threads: int = 1, grace: float = 120.0,
) -> Outcome:
    """ODTlearn's FlowOCT or BendersOCT (CBC) on the rows of ``part``, in the
    interpreter ``python``; its tree is re-scored from its predictions.

    ``seconds`` is the time of ODTlearn's optimize call (what the paper's limit
    bounds); its Python model build is kept in ``build_seconds``.  A run that
    does not return within ``2 * time_limit + grace`` is killed and counted as
    not certified.
    """
    approach = method.split("-", 1)[1]
    X = part.drop(columns="target").to_numpy()
    y_raw = part["target"].to_numpy()
    out = Outcome(method, "cbc", "error", False, 0.0)
    worker = Path(__file__).with_name("odtlearn_worker.py")
    with tempfile.TemporaryDirectory() as tmp:
        instance = Path(tmp) / "instance.npz"
        np.savez(instance, X=X, y=y_raw)
        cmd = [python, str(worker), str(instance), "--method", approach, "--depth", str(spec.depth),
               "--time-limit", str(time_limit), "--lambda", str(spec.lambda_), "--threads", str(threads)]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=2 * time_limit + grace)
        except subprocess.TimeoutExpired:
            out.status, out.seconds = "killed", time.perf_counter() - t0
            out.note = f"did not return within {2 * time_limit + grace:g} s (time limit {time_limit:g} s); killed"
            return out
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("ODTLEARN_RESULT ")), None)
    if line is None:
        out.seconds = time.perf_counter() - t0
        said = [ln.strip() for ln in (proc.stdout + proc.stderr).splitlines() if "error" in ln.lower()]
        out.note = f"no result (exit {proc.returncode}): {(said[0] if said else proc.stderr.strip()[-300:])}"
        return out
    res = json.loads(line.split(" ", 1)[1])
    out.seconds, out.build_seconds = res["solve_seconds"], res["build_seconds"]
    out.status = _MIP_STATUS.get(res["status"], res["status"])
    out.reported, out.bound = res.get("objective"), res.get("bound")
    out.note = res.get("error") or res.get("predict_error") or ""
    if "predictions" in res:
        pred = np.asarray(res["predictions"])
        correct = int((pred == y_raw).sum())
        out.misclassified = len(y_raw) - correct
        out.branching = res.get("n_branching")
        out.objective = (1 - spec.lambda_) * correct - spec.lambda_ * (out.branching or 0)
        if out.bound is not None and out.objective > 0:
            out.gap = abs(out.bound - out.objective) / out.objective
        out.certified = out.status == "optimal"
        if out.reported is not None and abs(out.objective - out.reported) > TOL * max(1.0, abs(out.objective)):
            out.note += f"; ODTlearn reported {out.reported:.6g}, tree re-scores to {out.objective:.6g}"
            out.certified = False
    elif out.status == "optimal":
        out.note += "; optimal but no tree to check"
    return out
