"""Side-by-side (A/B) measurements of changes that might speed up the MIO.

On a fixed set of instances the MIO proves in seconds to a minute (the
paper's 50 % training parts, lambda = 0, CART warm start, 1 solver thread
unless a variant says otherwise), every variant of a configuration
(formulation on a backend) solves every instance; the variants are
interleaved per instance (A B C A B C ...) so that load on the shared
machine hits them alike.  Printed per run: status, time to proof, nodes,
the LP bound of the model as given to the solver (before the solver's own
cuts); per variant: instances proven, median time and the median and
geometric-mean ratio to the baseline (unproven runs count at the time limit).
Every certified value is checked against the dynamic program's optimum.

Variants
--------
baseline     weighted patterns, no symmetry-breaking rows (the library's FlowOCT;
             its Benders master adds the rows of ``symmetry`` since they were kept).
no-patterns  one pattern per data row, weight 1 (identical rows not merged).
priority     branch on split variables b before leaf variables w (SCIP, Gurobi).
root-cuts    Remark 3: before the solve, cut-set inequalities (4b) separated at
             fractional LP solutions of the Benders master, as rows (Benders only).
symmetry     balanced trees: a subtree whose leaves all predict one class
             splits on feature 0 at every node (``add_single_class_subtree_rows``).
symmetry+root-cuts  both (Benders only).
threads-2    2 solver threads (HiGHS, Gurobi).

Examples
--------
python -m benchmarks.mio_speedups --configs benders/scip --variants baseline root-cuts
python -m benchmarks.mio_speedups --repeats 2 --time-limit 60
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from benchmarks.common import (
    TOL,
    in_sample_part,
    load_table,
    patterns,
    require_data,
    run_dp,
)
from strongtree_core.encoding.patterns import PatternData
from strongtree_core.formulation import BuiltModel, TreeSpec, build_model
from strongtree_core.formulation.arrays import ModelArrays
from strongtree_core.formulation.objectives import tree_objective
from strongtree_core.engine.starts import cart_structure
from strongtree_core.structure import TreeGraph

#: (dataset, depth): the paper's sample-1 training parts the MIO proves in about a minute or less.
INSTANCES = (
    ("soybean-small", 2), ("monk3", 2), ("monk1", 2), ("hayes-roth", 2), ("monk2", 2),
    ("house-votes-84", 2), ("spect", 2), ("breast-cancer", 2), ("balance-scale", 2),
    ("monk3", 3), ("monk1", 3),
)
CONFIGS = ("flow/highs", "flow/scip", "benders/scip", "benders/gurobi")
#: Largest violation of a fractional cut-set inequality still counted as satisfied.
CUT_TOLERANCE = 1e-6
#: Rounds of LP solve + separation for the root cuts of Remark 3.
ROOT_ROUNDS = 30


# --- variants -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prepared:
    """A model ready for one variant, with the seconds spent preparing it
    beyond the library's build (counted in the time to proof)."""

    built: BuiltModel
    data: PatternData
    threads: int = 1
    prep_seconds: float = 0.0
    note: str = ""


def one_row_per_pattern(data: PatternData) -> PatternData:
    """The rows behind ``data`` again, one pattern per row with weight 1."""
    rows = np.repeat(np.arange(data.n_patterns), data.count)
    ones = np.ones(rows.size)
    return PatternData(X=data.X[rows], y=data.y[rows], weight=ones, count=ones.astype(np.int64), n_classes=data.n_classes)


def with_rows(model: ModelArrays, A: sp.spmatrix, lower: np.ndarray, upper: np.ndarray) -> ModelArrays:
    return replace(
        model,
        A=sp.vstack([model.A, sp.csr_matrix(A)]).tocsr(),
        row_lower=np.concatenate([model.row_lower, lower]),
        row_upper=np.concatenate([model.row_upper, upper]),
    )


def split_priority(model: ModelArrays) -> ModelArrays:
    """Priority 1 on every split variable b (others 0): b is branched on first."""
    priority = np.zeros(model.n_cols, dtype=np.int64)
    priority[np.ravel(model.index["b"])] = 1
    return replace(model, branch_priority=priority)


def fractional_cut_rows(
    x: np.ndarray, data: PatternData, idx: dict, n_cols: int, depth: int, *, balanced: bool,
) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Most violated cut-set inequality (4b) of each pattern at a fractional (b, w, g).

    The flow graph of pattern i is a tree with every node also joined to the
    sink, so its minimum s-t cut below node n is, bottom up,

        C(n) = w[n, y_i]                                             n in L (balanced) / T
        C(n) = [imbalanced] w[n, y_i] + min(cap_left, C(l(n))) + min(cap_right, C(r(n)))   n in B

    with cap_left = sum_{f: x_if = 0} b[n, f] and cap_right = sum_{f: x_if = 1} b[n, f];
    the cut takes the arc into a child when its capacity is the smaller term.
    A row ``g[i] - (arcs of the cut) <= 0`` is returned for each pattern with
    g[i] > C(1) + tolerance.
    """
    graph = TreeGraph(depth)
    b_col, w_col, g_col = idx["b"], idx["w"], idx["g"]
    X, y = data.X.astype(bool), data.y
    P = data.n_patterns
    bx = x[b_col]  # (|B|, F)
    cap_right = X.astype(float) @ bx.T  # (P, |B|)
    cap_left = (~X).astype(float) @ bx.T
    n_nodes = graph.n_nodes
    first_leaf = graph.n_branching + 1

    def w_index(node: int) -> int:
        return node - first_leaf if balanced else node - 1

    wy = lambda node: x[w_col[w_index(node), y]]
    C = np.zeros((P, n_nodes + 1))
    take_arc = np.zeros((P, n_nodes + 1), dtype=bool)  # cut the arc into this node
    for n in range(n_nodes, 0, -1):
        if n >= first_leaf:
            C[:, n] = wy(n)
            continue
        own = np.zeros(P) if balanced else wy(n)
        total = own
        for child, cap in ((2 * n, cap_left[:, n - 1]), (2 * n + 1, cap_right[:, n - 1])):
            take_arc[:, child] = cap <= C[:, child]
            total = total + np.minimum(cap, C[:, child])
        C[:, n] = total
    g = x[g_col]
    violated = np.flatnonzero(g > C[:, 1] + CUT_TOLERANCE)
    if violated.size == 0:
        return sp.csr_matrix((0, n_cols)), np.zeros(0), np.zeros(0)
    rows, cols, vals = [], [], []
    for r, i in enumerate(violated):
        rows.append(r), cols.append(g_col[i]), vals.append(1.0)
        stack = [1]
        while stack:
            n = stack.pop()
            if n >= first_leaf or not balanced:
                rows.append(r), cols.append(w_col[w_index(n), y[i]]), vals.append(-1.0)
            if n >= first_leaf:
                continue
            for child, side in ((2 * n, False), (2 * n + 1, True)):
                if take_arc[i, child]:
                    feats = np.flatnonzero(X[i] == side)
                    rows += [r] * feats.size
                    cols += list(b_col[n - 1, feats])
                    vals += [-1.0] * feats.size
                else:
                    stack.append(child)
    A = sp.csr_matrix((vals, (rows, cols)), shape=(violated.size, n_cols))
    A.sum_duplicates()
    return A, np.full(violated.size, -np.inf), np.zeros(violated.size)


def lp_relaxation(model: ModelArrays) -> tuple[float, np.ndarray]:
    """Optimum and solution of the LP relaxation (scipy's HiGHS)."""
    sign = -1.0 if model.sense == "max" else 1.0
    res = milp(
        sign * model.c,
        constraints=LinearConstraint(model.A, model.row_lower, model.row_upper),
        bounds=Bounds(model.col_lower, model.col_upper),
    )
    if res.x is None:
        raise RuntimeError(f"LP relaxation failed: {res.message}")
    return float(model.objective(res.x)), res.x


def root_cuts(built: BuiltModel, data: PatternData, time_budget: float) -> tuple[ModelArrays, str]:
    """Remark 3: add cut-set inequalities separated at the master's LP optimum,
    round after round, until none is violated (the LP bound is then that of
    FlowOCT), ``ROOT_ROUNDS`` rounds or ``time_budget`` seconds."""
    model = built.arrays
    t0 = time.perf_counter()
    n_cuts, rounds = 0, 0
    bound, x = lp_relaxation(model)
    first = bound
    while rounds < ROOT_ROUNDS and time.perf_counter() - t0 < time_budget:
        A, lo, up = fractional_cut_rows(x, data, model.index, model.n_cols, built.spec.depth, balanced=built.balanced)
        if A.shape[0] == 0:
            break
        model = with_rows(model, A, lo, up)
        n_cuts += A.shape[0]
        rounds += 1
        bound, x = lp_relaxation(model)
    return model, f"{n_cuts} root cuts in {rounds} rounds, LP bound {first:.4g} -> {bound:.4g}"


@dataclass(frozen=True)
class Variant:
    name: str
    applies: Callable[[str, str, TreeSpec], bool]
    prepare: Callable[[PatternData, TreeSpec, str, float], Prepared]


def _build(data: PatternData, spec: TreeSpec, method: str, *, symmetry: bool = False, **kw) -> Prepared:
    built = build_model(data, spec, method, single_class_rows=symmetry)  # type: ignore[arg-type]
    return Prepared(built, data, **kw)


def _with_arrays(p: Prepared, arrays: ModelArrays, **kw) -> Prepared:
    return replace(p, built=replace(p.built, arrays=arrays), **kw)


def _prepare_priority(base: Prepared) -> Prepared:
    return _with_arrays(base, split_priority(base.built.arrays))


def _prepare_root_cuts(data: PatternData, spec: TreeSpec, method: str, limit: float, *, symmetry: bool = False) -> Prepared:
    base = _build(data, spec, method, symmetry=symmetry)
    t0 = time.perf_counter()
    arrays, note = root_cuts(base.built, data, limit / 4)
    return _with_arrays(base, arrays, prep_seconds=time.perf_counter() - t0, note=note)


VARIANTS = {
    v.name: v
    for v in (
        Variant("baseline", lambda m, s, spec: True, lambda d, spec, m, t: _build(d, spec, m)),
        Variant("no-patterns", lambda m, s, spec: True, lambda d, spec, m, t: _build(one_row_per_pattern(d), spec, m)),
        Variant(
            "priority", lambda m, s, spec: s in ("scip", "gurobi"),
            lambda d, spec, m, t: _prepare_priority(_build(d, spec, m)),
        ),
        Variant("root-cuts", lambda m, s, spec: m == "benders", _prepare_root_cuts),
        Variant(
            "symmetry", lambda m, s, spec: not spec.needs_imbalanced and spec.max_features_used is None,
            lambda d, spec, m, t: _build(d, spec, m, symmetry=True),
        ),
        Variant(
            "symmetry+root-cuts", lambda m, s, spec: m == "benders" and not spec.needs_imbalanced,
            lambda d, spec, m, t: _prepare_root_cuts(d, spec, m, t, symmetry=True),
        ),
        Variant("threads-2", lambda m, s, spec: s in ("highs", "gurobi"), lambda d, spec, m, t: _build(d, spec, m, threads=2)),
    )
}


# --- runs -----------------------------------------------------------------------------------------


@dataclass
class Run:
    instance: str
    config: str
    variant: str
    repeat: int
    status: str
    certified: bool
    seconds: float
    nodes: int
    n_cuts: int
    lp_bound: float | None
    objective: float | None
    bound: float | None
    optimum: float | None
    n_cols: int
    n_rows: int
    check: str
    note: str


def solve_prepared(p: Prepared, spec: TreeSpec, solver: str, time_limit: float):
    """Solve with a CART warm start; return (SolveResult or None, re-scored value, note)."""
    from strongtree_core.solvers import SolveOptions, SolverUnavailableError, solve

    x0 = p.built.start(cart_structure(p.data, spec.depth), p.data)
    x0 = x0 if p.built.arrays.max_violation(x0) <= 1e-6 else None
    options = SolveOptions(time_limit=max(time_limit - p.prep_seconds, 1e-3), threads=p.threads, warm_start=x0)
    try:
        result = solve(p.built.arrays, solver, options)
    except SolverUnavailableError as err:
        return None, None, str(err)
    value = None if result.x is None else tree_objective(p.data, spec, p.built.decode(result.x))
    return result, value, "" if x0 is not None else "warm start rejected"


def check_run(certified: bool, value: float | None, bound: float | None, optimum: float | None) -> str:
    problems = []
    if optimum is not None:
        tol = TOL * max(1.0, abs(optimum))
        if certified and (value is None or abs(value - optimum) > tol):
            problems.append(f"certified {value} but the optimum is {optimum:.6g}")
        if value is not None and value > optimum + tol:
            problems.append(f"tree value {value:.6g} beats the optimum {optimum:.6g}")
        if bound is not None and bound < optimum - tol:
            problems.append(f"bound {bound:.6g} is below the optimum {optimum:.6g}")
    return "; ".join(problems) or "ok"


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instances", nargs="+", default=[f"{n}:{d}" for n, d in INSTANCES], metavar="NAME:DEPTH")
    ap.add_argument("--sample", type=int, default=1)
    ap.add_argument("--lambda", dest="lambda_", type=float, default=0.0)
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS), metavar="METHOD/SOLVER")
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/out/mio_speedups.csv"))
    ap.add_argument("--reference", default="baseline", choices=list(VARIANTS), help="variant the ratios are taken against")
    ap.add_argument("--summarize", nargs="+", type=Path, metavar="CSV",
                    help="print the summary of earlier runs' CSVs (merged) and exit")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.summarize:
        runs = [r for path in args.summarize for r in read_csv(path)]
        print(summary(runs, args.time_limit, args.reference))
        return 0
    require_data()
    import pystreed  # noqa: F401  (imported once, outside the timed solves)

    runs: list[Run] = []
    print(f"# MIO speed-ups: sample {args.sample}, lambda {args.lambda_:g}, time limit {args.time_limit:g} s, "
          f"{args.repeats} repeat(s), variants interleaved per instance")
    print(f"{'instance':18} {'config':15} {'variant':18} {'r':>1} {'status':>10} {'time':>7} {'nodes':>8} "
          f"{'cuts':>6} {'LP bound':>9} {'value':>7} {'bound':>8} {'opt':>6} check / note")
    for item in args.instances:
        name, depth = item.split(":")
        data = patterns(in_sample_part(load_table(name), args.sample))
        spec = TreeSpec(depth=int(depth), lambda_=args.lambda_)
        reference = run_dp(data, spec, time_limit=60.0)
        optimum = reference.objective if reference.certified else None
        label = f"{name} d{depth}"
        for config in args.configs:
            method, solver = config.split("/")
            chosen = [VARIANTS[v] for v in args.variants if VARIANTS[v].applies(method, solver, spec)]
            prepared = {v.name: v.prepare(data, spec, method, args.time_limit) for v in chosen}
            lp = {name_: _lp_bound(p.built.arrays) for name_, p in prepared.items()}
            for rep in range(args.repeats):
                for v in chosen:
                    p = prepared[v.name]
                    if "root-cuts" in v.name and rep > 0:  # the cut loop is timed again on each repeat
                        p = v.prepare(data, spec, method, args.time_limit)
                    result, value, note = solve_prepared(p, spec, solver, args.time_limit)
                    run = _record(label, config, v.name, rep, p, result, value, lp[v.name], optimum, note)
                    runs.append(run)
                    print(_line(run), flush=True)
                    write_csv(runs, args.out)  # after every run, so an interrupted run keeps its rows
    print()
    print(summary(runs, args.time_limit, args.reference))
    bad = [r for r in runs if r.check != "ok"]
    print(f"\n{len(runs)} runs, {len(bad)} with a failed check; CSV: {args.out}")
    for r in bad:
        print(f"  FAILED CHECK: {r.instance} {r.config} {r.variant} rep {r.repeat}: {r.check}")
    return 1 if bad else 0


def _lp_bound(model: ModelArrays) -> float | None:
    try:
        return lp_relaxation(model)[0]
    except RuntimeError:
        return None


def _record(label, config, variant, rep, p: Prepared, result, value, lp_bound, optimum, note) -> Run:
    arrays = p.built.arrays
    if result is None:
        return Run(label, config, variant, rep, "unavailable", False, math.nan, 0, 0, lp_bound, None, None, optimum,
                   arrays.n_cols, arrays.n_rows, "ok", note)
    certified = result.status.value == "optimal"
    if value is not None and result.objective is not None and abs(value - result.objective) > TOL * max(1.0, abs(value)):
        certified = False
        note += f" solver reported {result.objective:.6g}, tree re-scores to {value:.6g}"
    notes = "; ".join(s for s in (p.note, note.strip()) if s)
    return Run(
        label, config, variant, rep, result.status.value, certified, result.runtime + p.prep_seconds, result.nodes,
        result.n_cuts, lp_bound, value, result.bound, optimum, arrays.n_cols, arrays.n_rows,
        check_run(certified, value, result.bound, optimum), notes,
    )


def _fmt(v, digits: int = 1) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def _line(r: Run) -> str:
    return (f"{r.instance:18} {r.config:15} {r.variant:18} {r.repeat:>1} {r.status:>10} {_fmt(r.seconds, 2):>7} "
            f"{r.nodes:>8} {r.n_cuts:>6} {_fmt(r.lp_bound):>9} {_fmt(r.objective):>7} {_fmt(r.bound):>8} "
            f"{_fmt(r.optimum):>6} {r.check}" + (f" | {r.note}" if r.note else ""))


def write_csv(runs: list[Run], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not runs:
        return
    fields = list(Run.__dataclass_fields__)
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows({k: getattr(r, k) for k in fields} for r in runs)


def read_csv(path: Path) -> list[Run]:
    types = {"repeat": int, "certified": lambda v: v == "True", "seconds": float, "nodes": int, "n_cuts": int,
             "n_cols": int, "n_rows": int}
    optional = {"lp_bound", "objective", "bound", "optimum"}
    with path.open() as fh:
        return [
            Run(**{k: (None if v == "" else float(v)) if k in optional else types.get(k, str)(v) for k, v in row.items()})
            for row in csv.DictReader(fh)
        ]


def summary(runs: list[Run], time_limit: float, reference: str = "baseline") -> str:
    """Per configuration and variant: instances proven, median time, ratios to ``reference``.

    A run not proven counts at the time limit; per instance the median over
    repeats is used; ratios are per instance, then their median and geometric mean.
    """
    head = (f"{'config':15} {'variant':18} {'inst':>4} {'proven':>6} {'median s':>8} {'ratio med':>9} "
            f"{'ratio geo':>9} {'nodes med':>9} {'faster':>6} {'slower':>6}")
    lines = [head]
    by_key: dict[tuple[str, str, str], list[Run]] = {}
    for r in runs:
        if r.status != "unavailable":
            by_key.setdefault((r.config, r.variant, r.instance), []).append(r)

    def time_of(rs: list[Run]) -> float:
        return statistics.median(r.seconds if r.certified else time_limit for r in rs)

    for config in dict.fromkeys(r.config for r in runs):
        for variant in dict.fromkeys(r.variant for r in runs if r.config == config):
            keys = [k for k in by_key if k[0] == config and k[1] == variant]
            if not keys:
                continue
            times = {k[2]: time_of(by_key[k]) for k in keys}
            proven = sum(1 for k in keys if statistics.median(int(r.certified) for r in by_key[k]) >= 0.5)
            nodes = statistics.median(statistics.median(r.nodes for r in by_key[k]) for k in keys)
            ratios = [
                times[inst] / max(time_of(by_key[(config, reference, inst)]), 1e-3)
                for inst in times if (config, reference, inst) in by_key
            ]
            med = statistics.median(ratios) if ratios else math.nan
            geo = math.exp(statistics.fmean(math.log(max(x, 1e-6)) for x in ratios)) if ratios else math.nan
            faster = sum(1 for x in ratios if x < 0.85)
            slower = sum(1 for x in ratios if x > 1.15)
            lines.append(f"{config:15} {variant:18} {len(keys):>4} {proven:>6} {statistics.median(times.values()):>8.2f} "
                         f"{med:>9.2f} {geo:>9.2f} {nodes:>9.0f} {faster:>6} {slower:>6}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
