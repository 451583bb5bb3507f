"""Teaching the paper: OCT, BinOCT, FlowOCT and BendersOCT side by side, and
the local search against the optimum.

On the 12 categorical datasets (the paper's 50 % training part of sample 1),
depths 2 and 3, lambda = 0, for every instance:

* ``exact``: the optimum, by the exact search (certified, seconds);
* ``lp``: the LP relaxation of each formulation (integrality dropped, HiGHS,
  the value in correct rows), with the model's size: Theorem 1 says FlowOCT's
  is never larger than OCT's or BinOCT's (BendersOCT's, the master with every
  cut-set inequality, equals FlowOCT's: ``formulation.relaxation_arrays``);
* ``mio``: each formulation alone on a backend (no warm start, no cap, 1
  thread, ``--time-limit`` seconds): certified or not, time, nodes, cuts; every
  certified value is checked against the optimum;
* ``local``: the local search (``heuristics/local_search.py``): its value
  against the optimum, and its time.

One CSV row per run, written after each (``--out``; a rerun skips what the
CSV has); the tables print at the end, or from a CSV with ``--summarize``,
next to the paper's OCT, BinOCT, FlowOCT and BendersOCT figures (Gurobi /
CPLEX, 3600 s, the same instances) and its LST summary.

Examples
--------
python -m benchmarks.formulations_benchmark
python -m benchmarks.formulations_benchmark --datasets monk1 monk3 --depths 2 --time-limit 10
python -m benchmarks.formulations_benchmark --summarize benchmarks/out/formulations.csv
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import statistics
import sys
import time
from pathlib import Path

import pandas as pd

from benchmarks.common import DATASETS, PAPER_TRAIN, REPO, TOL, in_sample_part, load_table, patterns, require_data
from strongtree_core.accel.search import exact_solve
from strongtree_core.formulation import TreeSpec, build_model, relaxation_arrays
from strongtree_core.formulation.objectives import tree_objective
from strongtree_core.heuristics import local_search
from strongtree_core.solvers import SolveOptions, SolverUnavailableError, solve
from strongtree_core.solvers.relaxation import lp_relaxation
from strongtree_core.engine.starts import candidate_starts

FORMULATIONS = ("flow", "benders", "oct", "binoct")
LABELS = {"flow": "FlowOCT", "benders": "BendersOCT", "oct": "OCT", "binoct": "BinOCT"}
CONFIGS = ("flow/highs", "oct/highs", "binoct/highs", "benders/highs", "benders/scip")
#: The paper's names and its codes for a proven optimum (Gurobi 2; CPLEX 101, 102 for BinOCT).
PAPER_APPROACHES = {"oct": "OCT", "binoct": "BinOCT", "flow": "FlowOCT", "benders": "BendersOCT"}
PAPER_OPTIMAL = {2, 101, 102}
PAPER_TEX = REPO.parent / "shared" / "paper" / "strong-optimal-classification-trees.tex"
#: The paper's LST summary (Section 5, "Comparing with LST"): 240 instances, depths 2-5, samples 1-5.
PAPER_LST = dict(optimal=117, of=143, seconds=0.52, gap_points=1.0)
FIELDS = ("kind", "dataset", "depth", "config", "n_rows", "status", "certified", "seconds", "value", "bound",
          "nodes", "n_cuts", "n_variables", "n_constraints", "nonzeros", "check", "note")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS, metavar="NAME")
    ap.add_argument("--depths", nargs="+", type=int, default=[2, 3])
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS), metavar="FORMULATION/SOLVER")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per MIO run (default 60)")
    ap.add_argument("--lp-time-limit", type=float, default=300.0, help="seconds per LP relaxation (default 300)")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/out/formulations.csv"))
    ap.add_argument("--summarize", type=Path, nargs="+", metavar="CSV", help="print the tables of these CSVs and exit")
    return ap.parse_args(argv)


# --- runs -----------------------------------------------------------------------------------------------


def run_lp(data, spec: TreeSpec, formulation: str, limit: float) -> dict:
    built = build_model(data, spec, formulation)
    relaxed = relaxation_arrays(data, built)
    t0 = time.perf_counter()
    value = lp_relaxation(relaxed, time_limit=limit)
    return dict(kind="lp", config=formulation, seconds=time.perf_counter() - t0, value=value,
                status="optimal" if value is not None else "not solved", n_variables=built.arrays.n_cols,
                n_constraints=built.arrays.n_rows, nonzeros=built.arrays.A.nnz,
                note="FlowOCT's LP with the master's rows (every cut-set inequality)" if formulation == "benders" else "")


def run_mio(data, spec: TreeSpec, config: str, limit: float, optimum: float | None) -> dict:
    formulation, solver = config.split("/")
    built = build_model(data, spec, formulation)
    arrays = built.arrays
    row = dict(kind="mio", config=config, n_variables=arrays.n_cols, n_constraints=arrays.n_rows,
               nonzeros=arrays.A.nnz)
    try:
        result = solve(arrays, solver, SolveOptions(time_limit=limit, threads=1))
    except SolverUnavailableError as err:
        return {**row, "status": "unavailable", "note": str(err)}
    row.update(status=result.status.value, seconds=result.runtime, bound=result.bound, nodes=result.nodes,
               n_cuts=result.n_cuts if arrays.separator is not None else None, certified=False, check="")
    if result.x is not None:
        value = tree_objective(data, spec, built.decode(result.x))
        row["value"] = value
        row["certified"] = result.status.value == "optimal"
        if row["certified"] and optimum is not None:
            row["check"] = "ok" if abs(value - optimum) <= TOL * max(1.0, optimum) else "FAILED"
            row["certified"] = row["check"] == "ok"
    return row


def run_instance(name: str, depth: int, args, done: dict, out: Path) -> None:
    part = in_sample_part(load_table(name), 1)
    data = patterns(part)
    spec = TreeSpec(depth=depth)
    base = dict(dataset=name, depth=depth, n_rows=data.n_rows)

    def emit(row: dict) -> None:
        row = {**base, **row}
        append_csv(row, out)
        print(_line(row), flush=True)

    optimum = None
    if ("exact", "exact") not in done:
        t0 = time.perf_counter()
        found = exact_solve(data, spec, time_limit=600)
        optimum = tree_objective(data, spec, found.structure) if found.status == "optimal" else None
        emit(dict(kind="exact", config="exact", status=found.status, certified=found.status == "optimal",
                  seconds=time.perf_counter() - t0, value=optimum, bound=found.bound))
    else:
        optimum = done[("exact", "exact")]
    for formulation in FORMULATIONS:
        if ("lp", formulation) not in done:
            emit(run_lp(data, spec, formulation, args.lp_time_limit))
    if ("local", "local_search") not in done:
        t0 = time.perf_counter()
        found = local_search(data, spec, starts=[t for _, t in candidate_starts(data, depth)], time_limit=600)
        value = tree_objective(data, spec, found.structure)
        emit(dict(kind="local", config="local_search", status="heuristic", seconds=time.perf_counter() - t0,
                  value=value, nodes=found.n_moves, note=found.reason))
    for config in args.configs:
        if ("mio", config) not in done:
            emit(run_mio(data, spec, config, args.time_limit, optimum))


def append_csv(row: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists()
    with path.open("a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        if new:
            w.writeheader()
        w.writerow({k: row.get(k, "") for k in FIELDS})


def _line(row: dict) -> str:
    value = row.get("value")
    shown = "-" if value in (None, "") else f"{float(value):.2f}"
    seconds = row.get("seconds")
    took = "" if seconds in (None, "") else f" {float(seconds):.2f}s"
    return f"{row['dataset']} d{row['depth']} {row['kind']:5} {row['config']:14} {row.get('status', '')} {shown}{took}"


def done_runs(path: Path) -> dict[tuple[str, int], dict]:
    """(dataset, depth) -> {(kind, config): value} of the runs the CSV already has."""
    if not path.exists():
        return {}
    out: dict = {}
    for r in pd.read_csv(path).itertuples():
        value = None if pd.isna(r.value) else float(r.value)
        out.setdefault((r.dataset, int(r.depth)), {})[(r.kind, r.config)] = value
    return out


# --- the paper's figures --------------------------------------------------------------------------------


def paper_runs() -> pd.DataFrame:
    """The paper's runs at lambda = 0, sample 1: approach, dataset, depth, proven, seconds, correct rows."""
    if not PAPER_TRAIN.exists():
        return pd.DataFrame()
    p = pd.read_csv(PAPER_TRAIN)
    p = p[(p["lambda"] == 0) & (p["sample"].astype(str) == "1")].copy()
    p["depth"] = p["depth"].astype(int)
    p["proven"] = p["status"].isin(PAPER_OPTIMAL)
    p["correct"] = (p["train_acc"] * p["nrow"]).round()
    return p[["approach", "dataset", "depth", "proven", "solving_time", "correct", "nrow"]]


def paper_lp_table() -> dict[tuple[str, int], dict[str, float]]:
    """The paper's LO relaxation at lambda = 0 (its appendix table, mean of 5 samples), in
    misclassified rows: (dataset, depth) -> {"oct": .., "binoct": .., "flow": ..}."""
    if not PAPER_TEX.exists():
        return {}
    tex = PAPER_TEX.read_text(encoding="utf-8")
    start = tex.find(r"\label{tab:LO_relaxation_no_regularization}")
    body = tex[start: tex.find(r"\end{tabular}", start)]
    out = {}
    for line in body.splitlines():
        m = re.match(r"\s*([a-z0-9\-]+)&(\d)&(.*)\\\\", line)
        if not m:
            continue
        numbers = [float(v) for v in re.findall(r"(-?\d+\.\d+)\$\\pm", m.group(3))]
        if len(numbers) >= 5:  # OCT obj, RI | BinOCT obj, RI | FlowOCT obj, RI (times are integers)
            out[(m.group(1), int(m.group(2)))] = {"oct": 0.0 - numbers[0], "binoct": 0.0 - numbers[2],
                                                  "flow": 0.0 - numbers[4]}
    return out


# --- tables ---------------------------------------------------------------------------------------------


def _num(v) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) or v == "" else float(v)


def summarize(frame: pd.DataFrame) -> str:
    frame = frame.drop_duplicates(["kind", "dataset", "depth", "config"], keep="last")
    instances = frame[frame.kind == "exact"][["dataset", "depth", "n_rows", "value"]].rename(columns={"value": "optimum"})
    order = {name: i for i, name in enumerate(DATASETS)}
    instances = instances.sort_values(["depth", "dataset"], key=lambda s: s.map(order) if s.name == "dataset" else s)
    out = [lp_table(frame, instances), mio_table(frame, instances), local_table(frame, instances)]
    return "\n\n".join(out)


def lp_table(frame: pd.DataFrame, instances: pd.DataFrame) -> str:
    lp = frame[frame.kind == "lp"].set_index(["dataset", "depth", "config"])
    paper = paper_lp_table()
    head = ("| dataset | d | rows | misclassified at the optimum | FlowOCT | BendersOCT | OCT | BinOCT "
            "| FlowOCT never looser | paper, mean of 5 samples: OCT / BinOCT / FlowOCT "
            "| vars x rows: FlowOCT / OCT / BinOCT |")
    lines = ["LP relaxations as lower bounds on the misclassified rows (rows - LP value; 0 is the trivial bound "
             "of every row correct); the optimum by the exact search", "", head, "|" + "---|" * (head.count("|") - 1)]
    never_looser = total = 0
    nontrivial = dict.fromkeys(FORMULATIONS, 0)
    for r in instances.itertuples():
        vals = {f: _num(lp.loc[(r.dataset, r.depth, f), "value"]) if (r.dataset, r.depth, f) in lp.index else None
                for f in FORMULATIONS}
        size = {f: lp.loc[(r.dataset, r.depth, f)] if (r.dataset, r.depth, f) in lp.index else None for f in FORMULATIONS}
        ok = None
        if all(vals[f] is not None for f in ("flow", "oct", "binoct")):
            tol = 1e-6 * max(1.0, vals["flow"])
            ok = vals["flow"] <= vals["oct"] + tol and vals["flow"] <= vals["binoct"] + tol
            never_looser += ok
            total += 1
        for f in FORMULATIONS:
            nontrivial[f] += vals[f] is not None and vals[f] < r.n_rows - 0.5
        p = paper.get((r.dataset, int(r.depth)))
        shown_paper = "-" if p is None else f"{p['oct']:.2f} / {p['binoct']:.2f} / {p['flow']:.2f}"
        sizes = " / ".join("-" if size[f] is None else f"{int(size[f].n_variables)}x{int(size[f].n_constraints)}"
                           for f in ("flow", "oct", "binoct"))
        cells = [_fmt(None if vals[f] is None else r.n_rows - vals[f] + 0.0) for f in FORMULATIONS]
        optimum = _num(r.optimum)
        lines.append(f"| {r.dataset} | {r.depth} | {int(r.n_rows)} | {_fmt(None if optimum is None else r.n_rows - optimum, 0)} | "
                     + " | ".join(cells) + f" | {'yes' if ok else ('-' if ok is None else 'NO')} | {shown_paper} | {sizes} |")
    lines += ["", f"FlowOCT's LP never looser than OCT's and BinOCT's: {never_looser} of {total} instances. "
              "Non-trivial (a bound of at least half a misclassified row): "
              + ", ".join(f"{LABELS[f]} {nontrivial[f]}" for f in FORMULATIONS) + f" of {len(instances)}."]
    return "\n".join(lines)


def mio_table(frame: pd.DataFrame, instances: pd.DataFrame) -> str:
    mio = frame[frame.kind == "mio"]
    paper = paper_runs()
    keys = set(zip(instances.dataset, instances.depth.astype(int)))
    head = "| formulation / solver | runs | certified (d2 / d3) | median s to proof | max s to proof | nodes (median, certified) | cuts (median) | failed checks |"
    lines = ["MIO alone (no warm start, no cap, 1 thread), certified within the time limit", "", head,
             "|" + "---|" * (head.count("|") - 1)]
    for config in dict.fromkeys(mio.config):
        runs = mio[mio.config == config]
        cert = runs[runs.certified.astype(str) == "True"]
        by_depth = " / ".join(str(int((cert.depth == d).sum())) for d in (2, 3))
        secs = [float(s) for s in cert.seconds]
        nodes = [float(n) for n in cert.nodes if not pd.isna(n)]
        cuts = [float(n) for n in runs.n_cuts if not pd.isna(n) and n != ""]
        lines.append(f"| {config} | {len(runs)} | {len(cert)} ({by_depth}) | {_fmt(statistics.median(secs) if secs else None)} "
                     f"| {_fmt(max(secs) if secs else None)} | {_fmt(statistics.median(nodes) if nodes else None, 0)} "
                     f"| {_fmt(statistics.median(cuts) if cuts else None, 0)} | {int((runs.check == 'FAILED').sum())} |")
    if not paper.empty:
        lines += ["", "The paper's runs of the same instances (Gurobi 8.1; BinOCT on CPLEX; one core, 3600 s):", "",
                  "| paper approach | runs | certified within 60 s (d2 / d3) | within 3600 s | median s to proof (within 3600 s) |",
                  "|---|---|---|---|---|"]
        for f in FORMULATIONS:
            p = paper[(paper.approach == PAPER_APPROACHES[f])]
            p = p[[(d, int(t)) in keys for d, t in zip(p.dataset, p.depth)]]
            proven = p[p.proven]
            in60 = proven[proven.solving_time <= 60]
            by_depth = " / ".join(str(int((in60.depth == d).sum())) for d in (2, 3))
            lines.append(f"| {PAPER_APPROACHES[f]} | {len(p)} | {len(in60)} ({by_depth}) | {len(proven)} "
                         f"| {_fmt(proven.solving_time.median() if len(proven) else None)} |")
    lines += ["", "Per instance: seconds to proof, or the gap (bound - value) / value at the limit:", ""]
    configs = list(dict.fromkeys(mio.config))
    head = "| dataset | d | " + " | ".join(configs) + " | paper OCT / BinOCT / FlowOCT / BendersOCT (s) |"
    lines += [head, "|" + "---|" * (head.count("|") - 1)]
    indexed = mio.set_index(["dataset", "depth", "config"])
    for r in instances.itertuples():
        cells = []
        for c in configs:
            key = (r.dataset, r.depth, c)
            if key not in indexed.index:
                cells.append("-")
                continue
            run = indexed.loc[key]
            if str(run.certified) == "True":
                cells.append(f"{float(run.seconds):.1f} s")
            else:
                value, bound = _num(run.value), _num(run.bound)
                cells.append("no tree" if value is None else (f"gap {100 * (bound - value) / max(value, 1e-9):.0f}%"
                                                                if bound is not None else "no bound"))
        shown = []
        for f in FORMULATIONS[2:] + FORMULATIONS[:2]:
            p = paper[(paper.approach == PAPER_APPROACHES[f]) & (paper.dataset == r.dataset) & (paper.depth == r.depth)] \
                if not paper.empty else []
            shown.append("-" if len(p) == 0 else (f"{float(p.solving_time.iloc[0]):.0f}" if bool(p.proven.iloc[0]) else "3600+"))
        lines.append(f"| {r.dataset} | {r.depth} | " + " | ".join(cells) + " | " + " / ".join(shown) + " |")
    return "\n".join(lines)


def local_table(frame: pd.DataFrame, instances: pd.DataFrame) -> str:
    local = frame[frame.kind == "local"].set_index(["dataset", "depth"])
    rows, optimal, gaps, gaps_sub, secs = 0, 0, [], [], []
    detail = []
    for r in instances.itertuples():
        if (r.dataset, r.depth) not in local.index or _num(r.optimum) is None:
            continue
        run = local.loc[(r.dataset, r.depth)]
        value, opt = float(run.value), float(r.optimum)
        rows += 1
        hit = abs(value - opt) <= TOL * max(1.0, opt)
        optimal += hit
        gap = (opt - value) / max(opt, 1e-9)
        points = 100 * (opt - value) / r.n_rows
        gaps.append(gap)
        secs.append(float(run.seconds))
        if not hit:
            gaps_sub.append(points)
            detail.append(f"{r.dataset} d{r.depth}: {value:.0f} of optimum {opt:.0f} ({points:.1f} points)")
    if not rows:
        return "Local search: no runs."
    lines = ["Local search against the optimum (exact search)", "",
             "| | instances | optimal (no certificate) | mean gap to optimum | accuracy gap when suboptimal (points) | mean s |",
             "|---|---|---|---|---|---|",
             f"| local search (ours), depths 2-3, sample 1 | {rows} | {optimal} ({100 * optimal / rows:.0f} %) "
             f"| {100 * statistics.mean(gaps):.2f} % | {_fmt(statistics.mean(gaps_sub) if gaps_sub else 0.0)} "
             f"| {statistics.mean(secs):.2f} |",
             f"| LST (paper), depths 2-5, samples 1-5 | {PAPER_LST['of']} proven by BendersOCT | {PAPER_LST['optimal']} "
             f"({100 * PAPER_LST['optimal'] / PAPER_LST['of']:.0f} %) | - | about {PAPER_LST['gap_points']:.0f} "
             f"| {PAPER_LST['seconds']} (all 240) |", "", "Suboptimal: " + ("; ".join(detail) or "none") + "."]
    return "\n".join(lines)


def _fmt(v, digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.summarize:
        frame = pd.concat([pd.read_csv(p) for p in args.summarize], ignore_index=True)
        print(summarize(frame))
        return 0
    require_data()
    done = done_runs(args.out)
    for depth in args.depths:
        for name in args.datasets:
            run_instance(name, depth, args, done.get((name, depth), {}), args.out)
    print()
    print(summarize(pd.read_csv(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
