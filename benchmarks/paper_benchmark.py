"""The paper's in-sample experiment (Section 5, Figure 2) on this machine.

For every dataset, depth, lambda and sample (the 50 % training part of the
paper's split, which reproduces its ``nrow``), each requested method
(``flow``, ``benders`` on each requested backend, ``dp`` = pystreed) solves
the instance under a time limit.  Every tree is re-scored; every certified
value is checked against the dynamic program's certified optimum (and, on the
full data at lambda = 0, against ``oracle_optimal.csv``); the paper's own
count is printed next to ours.

Examples
--------
python -m benchmarks.paper_benchmark --quick
python -m benchmarks.paper_benchmark --methods dp --lambdas 0 0.1 0.5 0.9
python -m benchmarks.paper_benchmark --methods flow benders --solvers highs scip --time-limit 125
python -m benchmarks.paper_benchmark --methods odtlearn-flow --odtlearn-python /path/to/venv/bin/python
python -m benchmarks.paper_benchmark --summarize benchmarks/out/a.csv benchmarks/out/b.csv

ODTlearn (methods ``odtlearn-flow`` and ``odtlearn-benders``, CBC) runs in a
separate interpreter that has it installed (``requirements-bench.txt``), one
subprocess per instance (``odtlearn_worker.py``), on the same rows; its tree is
re-scored from its predictions like ours.  Two invocations started together
with different ``--methods`` (one core each) measure side by side;
``--summarize`` merges their CSVs into one Figure-2 table.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from dataclasses import asdict
from pathlib import Path

from benchmarks.common import (
    ODTLEARN_METHODS, DATASETS, SAMPLE_SEEDS, TOL, Outcome, in_sample_part, load_table, oracle_table, paper_table,
    patterns, require_data, run_dp, run_mio, run_odtlearn,
)
from strongtree_core.formulation import TreeSpec

QUICK = dict(datasets=["soybean-small", "monk3", "monk1"], depths=[2], samples=[1], time_limit=10.0)
GAP_LEVELS = (0.01, 0.05, 0.10, 0.25)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="3 datasets x depth 2 x sample 1, 10 s")
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS, metavar="NAME")
    ap.add_argument("--depths", nargs="+", type=int, default=[2, 3, 4, 5])
    ap.add_argument("--lambdas", nargs="+", type=float, default=[0.0])
    ap.add_argument("--samples", nargs="+", type=int, default=list(SAMPLE_SEEDS), choices=list(SAMPLE_SEEDS))
    ap.add_argument("--split", choices=["insample", "full"], default="insample",
                    help="the paper's 50%% training part (default) or the full data (checked against the oracle)")
    ap.add_argument("--methods", nargs="+", default=["flow", "benders", "dp"],
                    choices=["flow", "benders", "dp", *ODTLEARN_METHODS])
    ap.add_argument("--odtlearn-python", default=None, metavar="PY",
                    help="interpreter with ODTlearn installed (for the odtlearn-* methods; default: this one)")
    ap.add_argument("--odtlearn-grace", type=float, default=120.0,
                    help="an ODTlearn run is killed after 2 x time limit + this many seconds (CBC can overrun its limit)")
    ap.add_argument("--summarize", nargs="+", type=Path, default=None, metavar="CSV",
                    help="print the Figure-2 table of earlier runs' CSVs and exit")
    ap.add_argument("--solvers", nargs="+", default=["highs", "scip"], choices=["highs", "scip", "gurobi"])
    ap.add_argument("--time-limit", type=float, default=125.0, help="seconds per instance and method")
    ap.add_argument("--warm-start", choices=["none", "cart"], default="none")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--thresholds", nargs="+", type=float, default=[1, 5, 10, 30, 60, 125, 600, 3600])
    ap.add_argument("--out", type=Path, default=Path("benchmarks/out/paper_benchmark.csv"))
    args = ap.parse_args(argv)
    if any(m in ODTLEARN_METHODS for m in args.methods) and not args.odtlearn_python and not args.summarize:
        import importlib.util

        if importlib.util.find_spec("odtlearn") is None:
            ap.error("the odtlearn-* methods need ODTlearn: install requirements-bench.txt here, "
                     "or pass --odtlearn-python PY (an interpreter that has it)")
        args.odtlearn_python = sys.executable
    if args.quick:
        for key, value in QUICK.items():
            setattr(args, key, value)
    return args


def instances(args):
    for name in args.datasets:
        table = load_table(name)
        for sample in (args.samples if args.split == "insample" else [0]):
            part = in_sample_part(table, sample) if args.split == "insample" else table
            data = patterns(part)
            for depth in args.depths:
                for lam in args.lambdas:
                    yield name, sample, part, data, depth, lam


def _fmt(v, digits: int = 1) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def check(out: Outcome, reference: Outcome, oracle: int | None) -> str:
    """Problems with ``out`` against the certified optimum and the oracle ("" when none)."""
    problems = []
    if out.objective is not None and out.reported is not None and abs(out.objective - out.reported) > TOL * max(1, abs(out.objective)):
        problems.append("reported value differs from the re-scored tree")
    if reference.certified and reference.objective is not None:
        opt = reference.objective
        if out.certified and out.objective is not None and abs(out.objective - opt) > TOL * max(1, abs(opt)):
            problems.append(f"certified {out.objective:.6g} but the optimum is {opt:.6g}")
        if out.objective is not None and out.objective > opt + TOL * max(1, abs(opt)):
            problems.append(f"tree value {out.objective:.6g} beats the optimum {opt:.6g}")
        if out.bound is not None and out.bound < opt - TOL * max(1, abs(opt)):
            problems.append(f"bound {out.bound:.6g} is below the optimum {opt:.6g}")
    if oracle is not None and out.certified and out.misclassified != oracle:
        problems.append(f"certified {out.misclassified} misclassified, oracle says {oracle}")
    return "; ".join(problems)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.summarize:
        return print_summary(args)
    require_data()
    import pystreed  # noqa: F401  (imported once, outside the timed solves)

    oracle = oracle_table()
    paper = paper_table()
    combos = [("dp", "pystreed")] if "dp" in args.methods else []
    combos = [(m, s) for m in args.methods if m in ("flow", "benders") for s in args.solvers] + combos
    combos = [(m, "cbc") for m in args.methods if m in ODTLEARN_METHODS] + combos
    rows: list[dict] = []
    paper_by_instance: dict = {}
    print(f"# paper benchmark: split={args.split} time_limit={args.time_limit:g}s warm_start={args.warm_start} "
          f"threads={args.threads}")
    header = f"{'dataset':15} {'s':>1} {'n':>5} {'d':>1} {'lam':>4} {'method':>14} {'status':>18} {'time':>7} " \
             f"{'objective':>10} {'bound':>10} {'gap%':>6} {'miscl':>5} {'optimum':>8} {'paper':>12} check"
    print(header)
    print("(objective: re-scored (1 - lambda) * correct - lambda * branchings; paper: misclassified rows at lambda = 0, "
          "else the objective in our units; * = the paper proved it optimal, ~ = time limit)")
    for name, sample, part, data, depth, lam in instances(args):
        spec = TreeSpec(depth=depth, lambda_=lam)
        reference = run_dp(data, spec, time_limit=max(60.0, args.time_limit))
        orc = oracle.get((name, depth)) if args.split == "full" and lam == 0 else None
        runs = paper.get((name, depth, round(lam, 4), sample), {}) if args.split == "insample" else {}
        paper_by_instance[(name, sample, depth, lam)] = runs
        for method, solver in combos:
            if method == "dp":
                out = reference
            elif method in ODTLEARN_METHODS:
                out = run_odtlearn(part, spec, method, args.time_limit, python=args.odtlearn_python,
                                   threads=args.threads, grace=args.odtlearn_grace)
            else:
                out = run_mio(data, spec, method, solver, args.time_limit, warm_start=args.warm_start, threads=args.threads)
            problem = check(out, reference, orc)
            paper_run = runs.get("BendersOCT" if method.endswith("benders") else "FlowOCT")
            paper_text, paper_check = "-", ""
            if paper_run is not None and paper_run.status == 2 and out.certified and out.objective is not None:
                if abs(paper_run.objective - out.objective) > TOL * max(1, abs(out.objective)):
                    paper_check = f"paper certified {paper_run.objective:.6g}, we certified {out.objective:.6g}"
            if paper_run is not None:
                value = paper_run.misclassified if lam == 0 else paper_run.objective
                paper_text = f"{value:g}{'*' if paper_run.status == 2 else '~'}"
            row = dict(
                dataset=name, sample=sample, n_rows=data.n_rows, n_patterns=data.n_patterns, depth=depth, lambda_=lam,
                **{k: v for k, v in asdict(out).items() if k != "extra"},
                optimum=reference.objective if reference.certified else None,
                oracle_misclassified=orc,
                paper_status=None if paper_run is None else paper_run.status,
                paper_misclassified=None if paper_run is None else paper_run.misclassified,
                paper_objective=None if paper_run is None else paper_run.objective,
                paper_seconds=None if paper_run is None else paper_run.seconds,
                check=problem or "ok",
                paper_check=paper_check or ("agrees" if paper_run is not None and paper_run.status == 2 and out.certified else "-"),
            )
            rows.append(row)
            write_csv(rows, args.out)  # after every run: a long run stopped early keeps what it measured
            label = _label(method, solver)
            gap = None if out.gap is None else 100 * out.gap
            value = out.misclassified if lam == 0 else out.objective
            print(f"{name:15} {sample:>1} {data.n_rows:>5} {depth:>1} {lam:>4g} {label:>14} {out.status:>18} "
                  f"{out.seconds:>7.2f} {_fmt(out.objective):>10} {_fmt(out.bound):>10} {_fmt(gap):>6} "
                  f"{_fmt(out.misclassified):>5} {_fmt(row['optimum']):>8} {paper_text:>12} {row['check']}"
                  + (f" | {paper_check}" if paper_check else "")
                  + (f" | {out.note[-200:]}" if out.status in ("error", "killed", "unavailable") else ""), flush=True)
    print()
    print(summary(rows, args, combos, paper_by_instance))
    bad = [r for r in rows if r["check"] != "ok"]
    compared = [r for r in rows if r["paper_check"] != "-"]
    differ = [r for r in compared if r["paper_check"] != "agrees"]
    print(f"\n{len(rows)} runs, {len(bad)} with a failed check; {len(compared)} certified by both us and the paper, "
          f"{len(differ)} with a different optimum; CSV: {args.out}")
    return 1 if bad else 0


def _label(method: str, solver: str) -> str:
    return method if method == "dp" else f"{method}/{solver}"


def print_summary(args) -> int:
    """The Figure-2 table of runs written earlier (one CSV per concurrent stream)."""
    import pandas as pd

    frame = pd.concat([pd.read_csv(path) for path in args.summarize], ignore_index=True)
    frame = frame.astype(object).where(frame.notna(), None)
    rows = frame.to_dict("records")
    combos = list(dict.fromkeys((r["method"], r["solver"]) for r in rows))
    # Compare like with like: only the instances every method has finished.
    key = lambda r: (r["dataset"], int(r["sample"]), int(r["depth"]), float(r["lambda_"]))  # noqa: E731
    done = [{key(r) for r in rows if (r["method"], r["solver"]) == c} for c in combos]
    common = set.intersection(*done) if done else set()
    if any(len(d) != len(common) for d in done):
        print(f"(runs of different lengths: the table counts the {len(common)} instances every method finished)")
    rows = [r for r in rows if key(r) in common]
    paper = paper_table()
    paper_by_instance = {k: paper.get((k[0], k[2], round(k[3], 4), k[1]), {}) for k in common}
    print(summary(rows, args, combos, paper_by_instance))
    bad = [r for r in rows if r["check"] != "ok"]
    print(f"\n{len(rows)} runs from {len(args.summarize)} file(s), {len(bad)} with a failed check")
    for r in bad:
        print(f"  {r['dataset']} s{r['sample']} d{r['depth']} {_label(r['method'], r['solver'])}: {r['check']}")
    return 1 if bad else 0


def write_csv(rows: list[dict], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not rows:
        return
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def summary(rows: list[dict], args, combos, paper_runs: dict) -> str:
    """Figure 2 as a table: instances certified within t seconds, and the gap of the rest."""
    ts = [t for t in args.thresholds if t <= args.time_limit] or [args.time_limit]
    if ts[-1] < args.time_limit:
        ts.append(args.time_limit)
    lines = ["Instances certified optimal within t seconds (Figure 2, left; 'at all': within the run's own limit,",
             "3600 s for the paper's rows), and the optimality gap at the time limit of the others",
             "(Figure 2, right; gap = |bound - objective| / objective):", ""]
    head = f"{'method':24} {'n':>4} " + " ".join(f"{'<=' + format(t, 'g') + 's':>7}" for t in ts)
    head += f" {'at all':>7} " + " ".join(f"{'gap<=' + format(100 * g, 'g') + '%':>9}" for g in GAP_LEVELS) + f" {'larger':>7} {'no tree':>7}"
    lines.append(head)
    keyset = {(r["dataset"], r["sample"], r["depth"], r["lambda_"]) for r in rows}
    for method, solver in combos:
        mine = [r for r in rows if r["method"] == method and (method == "dp" or r["solver"] == solver)]
        label = _label(method, solver)
        lines.append(_figure_row(label, [(r["certified"], r["seconds"], r["gap"], r["objective"]) for r in mine], ts))
    for approach in ("FlowOCT", "BendersOCT"):
        entries = [
            (run.status == 2, run.seconds, None, run.objective)
            for key, runs in sorted(paper_runs.items()) if key in keyset and (run := runs.get(approach)) is not None
        ]
        if entries:
            lines.append(_figure_row(f"paper {approach} (3600s)", entries, ts, gaps=False))
    return "\n".join(lines)


def _figure_row(label: str, entries, ts, *, gaps: bool = True) -> str:
    n = len(entries)
    cells = [sum(1 for c, sec, _, _ in entries if c and sec <= t) for t in ts]
    text = f"{label:24} {n:>4} " + " ".join(f"{c:>7}" for c in cells) + f" {sum(1 for e in entries if e[0]):>7}"
    rest = [(g, obj) for c, _, g, obj in entries if not c]
    if gaps:
        with_tree = [g for g, obj in rest if obj is not None and g is not None]
        counts = [sum(1 for g in with_tree if g <= level) for level in GAP_LEVELS]
        larger = len(with_tree) - counts[-1]
        no_tree = len(rest) - len(with_tree)
        text += " " + " ".join(f"{c:>9}" for c in counts) + f" {larger:>7} {no_tree:>7}"
    return text


if __name__ == "__main__":
    sys.exit(main())
