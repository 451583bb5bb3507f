"""Sweeps at scale (strongtree_core.sweep): frontiers, wall time per backend, the paper's calibration, a lost worker.

Three parts, each writing its CSV after every point and printing markdown tables:

``frontiers``
    COMPAS (binary race and 4-level race), German and Adult, statistical parity and
    equalized odds, 10 bounds from 0 to 0.2, depths 2 and 3: one sweep of 160 points
    (split 1: trees fitted on its training file, measured on its test file), run three
    times: serial, 2 local process workers, a 2-worker Dask LocalCluster.  Printed: the
    frontier of every dataset, notion and depth (train and test accuracy and gap), the
    share certified, the wall time of each backend and the speed-up; the frontiers
    drawn in an SVG file.
``calibration``
    The paper's out-of-sample protocol on its 12 datasets: 5 splits (its seeds; 50 %
    training, 25 % calibration, 25 % test), depths 2-5, lambda 0, 0.1, ..., 0.9 chosen by
    calibration accuracy, refit on training + calibration, test accuracy; next to the
    paper's FlowOCT and BendersOCT (``paper_results/strongtree_paper_test.csv``).
    Depth by depth (all datasets at depth 2 first); rows already in the CSV are kept
    and not run again, so a stopped run can be continued.
``killed``
    200 points through a 2-worker Dask LocalCluster; once a quarter of them are done,
    and again at three quarters (``--kill-at``), a worker process is killed (SIGKILL)
    while it runs points, optionally with every core kept busy (``--burners``).
    Printed: every point accounted for once, and the points the killed workers were
    running, run again elsewhere.

Examples
--------
python -m benchmarks.sweep_benchmark frontiers
nohup python -m benchmarks.sweep_benchmark calibration --time-limit 60 > benchmarks/out/calibration.log 2>&1 &
python -m benchmarks.sweep_benchmark calibration --markdown-only
python -m benchmarks.sweep_benchmark killed --time-limit 20 --burners 4
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import signal
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from benchmarks.common import DATA, DATASETS, SAMPLE_SEEDS, load_table, require_data
from benchmarks.fairness_benchmark import DATASETS as FAIR_DATASETS
from benchmarks.fairness_benchmark import load_part
from strongtree_core import StrongTreeClassifier
from strongtree_core.sweep import (
    PAPER_LAMBDAS,
    best_per_bound,
    calibrate,
    iter_sweep,
    pareto_front,
    sweep,
)

OUT = Path("benchmarks/out")
FIGURE = Path("benchmarks/figures/sweep_frontiers.svg")
PAPER_TEST = DATA / "paper_results" / "strongtree_paper_test.csv"
FRONTIER_DATASETS = ("compas", "compas4", "german", "adult")
NOTIONS = ("statistical_parity", "equalized_odds")
SHORT = {"statistical_parity": "SP", "equalized_odds": "EOdds"}
BOUNDS = tuple(float(b) for b in np.round(np.linspace(0, 0.2, 10), 4))
DEPTHS = (2, 3)


def _fmt(v, spec: str = ".3f") -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


class CsvLog:
    """Appends rows to a CSV file as they come (the header from the first row)."""

    def __init__(self, path: Path, fresh: bool = True) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        if fresh and path.exists():
            path.unlink()
        self.fields: list[str] | None = None
        if path.exists():
            with path.open() as fh:
                self.fields = next(csv.reader(fh), None)

    def write(self, row: dict) -> None:
        new = self.fields is None
        if new:
            self.fields = list(row)
        with self.path.open("a", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=self.fields, extrasaction="ignore")
            if new:
                writer.writeheader()
            writer.writerow(row)


# ------------------------------------------------------------------ frontiers
def frontier_data(name: str):
    """Split 1 of a fairness dataset: training and test rows together, and (train, test) positions."""
    ds = FAIR_DATASETS[name]
    train, test = load_part(ds, "train", 1), load_part(ds, "test", 1)
    X = pd.concat([train.X, test.X], ignore_index=True)
    y = pd.concat([train.y, test.y], ignore_index=True)
    group = pd.concat([train.group, test.group], ignore_index=True)
    rows = np.arange(len(X))
    return ds, X, y, group, [(rows[: len(train.X)], rows[len(train.X):])]


def run_frontiers(args) -> int:
    results: dict[str, list[pd.DataFrame]] = {}
    walls: dict[str, float] = {}
    for backend in args.backends:
        log = CsvLog(OUT / f"sweep_frontiers_{backend}.csv")
        tables = []
        started = time.perf_counter()
        with ExitStack() as stack:
            scheduler = None
            if backend == "dask":  # one cluster for the four datasets, its start counted in the wall time
                from dask.distributed import Client, LocalCluster

                cluster = stack.enter_context(LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                                           dashboard_address=":0"))
                scheduler = stack.enter_context(Client(cluster))
                print(f"# dask LocalCluster of 2 process workers started in {time.perf_counter() - started:.1f} s")
            tables = sweep_datasets(backend, scheduler, log, args, started)
        walls[backend] = time.perf_counter() - started
        results[backend] = tables
    serial = pd.concat(results[args.backends[0]], ignore_index=True)
    for backend in args.backends[1:]:
        other = pd.concat(results[backend], ignore_index=True)
        same = [c for c in serial.columns if c not in ("time", "tree")]
        agree = serial[same].equals(other[same])
        print(f"# {backend} table equal to {args.backends[0]} (all columns but time and the tree's record): {agree}")
    print("\n" + frontier_markdown(serial))
    print("\n" + certified_markdown(serial))
    fit_seconds = {b: float(pd.concat(results[b])["time"].sum()) for b in results}
    print("\n" + wall_markdown(walls, len(serial), fit_seconds))
    write_svg(serial, FIGURE)
    print(f"\nfigure: {FIGURE}")
    return 0


def sweep_datasets(backend: str, scheduler, log: CsvLog, args, started: float) -> list[pd.DataFrame]:
    """One sweep per dataset (dataset after dataset), each row written to the CSV as it finishes."""
    tables = []
    for name in FRONTIER_DATASETS:
        ds, X, y, group, cv = frontier_data(name)
        est = StrongTreeClassifier(pos_label=ds.positive, time_limit=args.time_limit)

        def progress(ev, name=name) -> None:
            log.write({"dataset": name, "backend": backend, **{k: v for k, v in ev.row.items() if k != "tree"}})

        table = sweep(est, X, y, sensitive_features=group, grid={"depth": list(DEPTHS), "fairness": list(NOTIONS),
                      "fairness_bound": list(BOUNDS)}, cv=cv, backend=backend,
                      n_jobs=None if backend == "serial" else 2, scheduler=scheduler, progress=progress)
        tables.append(table.assign(dataset=name))
        print(f"# {backend:9} {name:8} {len(table)} points, {table['certified'].mean():.0%} certified, "
              f"{time.perf_counter() - started:.1f} s so far", flush=True)
    return tables


def frontiers_of(table: pd.DataFrame, measure: str = "train") -> pd.DataFrame:
    parts = []
    for (name, depth), rows in table.groupby(["dataset", "depth"], sort=False):
        front = pareto_front(best_per_bound(rows, measure), measure)
        parts.append(front.assign(dataset=name, depth=depth))
    return pd.concat(parts, ignore_index=True)


def frontier_markdown(table: pd.DataFrame) -> str:
    front = frontiers_of(table)
    lines = ["| dataset | notion | d | kept bounds δ | train acc | train gap | test acc | test gap | certified |",
             "|---|---|---|---|---|---|---|---|---|"]
    for (name, notion, depth), rows in front.groupby(["dataset", "fairness", "depth"], sort=False):
        rows = rows.sort_values("train_gap")
        cell = lambda col, spec=".3f": " / ".join(_fmt(v, spec) for v in rows[col])  # noqa: E731
        lines.append(f"| {name} | {SHORT[notion]} | {depth} | {cell('fairness_bound', '.3f')} | {cell('train_accuracy')} "
                     f"| {cell('train_gap')} | {cell('test_accuracy')} | {cell('test_gap')} "
                     f"| {int(rows['certified'].sum())}/{len(rows)} |")
    return "\n".join(lines)


def certified_markdown(table: pd.DataFrame) -> str:
    lines = ["| dataset | d | points | certified | time median s | time max s |", "|---|---|---|---|---|---|"]
    for (name, depth), rows in table.groupby(["dataset", "depth"], sort=False):
        lines.append(f"| {name} | {depth} | {len(rows)} | {rows['certified'].mean():.0%} "
                     f"| {rows['time'].median():.2f} | {rows['time'].max():.2f} |")
    return "\n".join(lines)


def wall_markdown(walls: dict[str, float], n: int, fit_seconds: dict[str, float]) -> str:
    base = walls.get("serial")
    lines = ["| backend | points | wall s | sum of the fits' times s | speed-up vs serial |", "|---|---|---|---|---|"]
    for backend, wall in walls.items():
        lines.append(f"| {backend}{'' if backend == 'serial' else ' (2 workers)'} | {n} | {wall:.1f} "
                     f"| {fit_seconds[backend]:.1f} | {_fmt(base / wall if base else None, '.2f')} |")
    return "\n".join(lines)


def write_svg(table: pd.DataFrame, path: Path) -> None:
    """Small multiples: one panel per dataset and notion, accuracy against measured gap, depth 2 and 3,
    training (filled) and test (hollow) points of the frontier (the bounds δ are in the frontier table, not drawn)."""
    front = frontiers_of(table)
    panels = [(d, n) for d in FRONTIER_DATASETS for n in NOTIONS]
    w, h, pad = 260, 200, 40
    colours = {2: "#1f77b4", 3: "#d62728"}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * w}" height="{len(FRONTIER_DATASETS) * h + 30}" '
             'font-family="sans-serif" font-size="11">',
             '<rect width="100%" height="100%" fill="white"/>',
             f'<text x="10" y="16">Frontier: accuracy vs measured gap; ● train, ○ test; '
             f'<tspan fill="{colours[2]}">depth 2</tspan>, <tspan fill="{colours[3]}">depth 3</tspan></text>']
    for k, (name, notion) in enumerate(panels):
        x0, y0 = (k % 2) * w, 30 + (k // 2) * h
        rows = front[(front["dataset"] == name) & (front["fairness"] == notion)]
        accs = pd.concat([rows["train_accuracy"], rows["test_accuracy"]]).dropna()
        lo, hi = (accs.min() - 0.01, accs.max() + 0.01) if len(accs) else (0, 1)
        gx = lambda g: x0 + pad + (w - pad - 10) * min(max(g, 0), 0.25) / 0.25  # noqa: E731
        gy = lambda a: y0 + h - pad + 10 - (h - pad - 10) * (a - lo) / max(hi - lo, 1e-9)  # noqa: E731
        parts.append(f'<rect x="{x0 + pad}" y="{y0}" width="{w - pad - 10}" height="{h - pad - 10 + 10}" '
                     'fill="none" stroke="#999"/>')
        parts.append(f'<text x="{x0 + pad + 4}" y="{y0 + 13}">{name} {SHORT[notion]}</text>')
        parts.append(f'<text x="{x0 + pad}" y="{y0 + h - 14}">gap 0</text>'
                     f'<text x="{x0 + w - 40}" y="{y0 + h - 14}">0.25</text>')
        parts.append(f'<text x="{x0 + 2}" y="{gy(hi) + 4:.1f}">{hi:.2f}</text>'
                     f'<text x="{x0 + 2}" y="{gy(lo):.1f}">{lo:.2f}</text>')
        for depth, colour in colours.items():
            mine = rows[rows["depth"] == depth].sort_values("train_gap")
            pts = " ".join(f"{gx(g):.1f},{gy(a):.1f}" for g, a in zip(mine["train_gap"], mine["train_accuracy"]))
            if pts:
                parts.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
            for g, a, tg, ta in zip(mine["train_gap"], mine["train_accuracy"], mine["test_gap"], mine["test_accuracy"]):
                parts.append(f'<circle cx="{gx(g):.1f}" cy="{gy(a):.1f}" r="3" fill="{colour}"/>')
                if not (math.isnan(tg) or math.isnan(ta)):
                    parts.append(f'<circle cx="{gx(tg):.1f}" cy="{gy(ta):.1f}" r="3" fill="none" stroke="{colour}"/>')
    parts.append("</svg>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")


# ---------------------------------------------------------------- calibration
def paper_splits(n: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The paper's 5 splits: test 25 % (seed rs), then 33 % of the rest for calibration (same rs)."""
    rows = np.arange(n)
    out = []
    for sample in sorted(SAMPLE_SEEDS):
        rs = SAMPLE_SEEDS[sample]
        rest, test = train_test_split(rows, test_size=0.25, random_state=rs)
        train, calibration = train_test_split(rest, test_size=0.33, random_state=rs)
        out.append((np.sort(train), np.sort(calibration), np.sort(test)))
    return out


def run_calibration(args) -> int:
    path = OUT / "sweep_calibration.csv"
    log = CsvLog(path, fresh=False)
    done = set()
    if path.exists() and path.stat().st_size:
        old = pd.read_csv(path)
        done = {(r.dataset, int(r.depth)) for r in old[old["stage"] == "chosen"].itertuples()}
    for depth in args.depths:
        for name in args.datasets:
            if (name, depth) in done:
                continue
            df = load_table(name)
            X, y = df.drop(columns="target"), df["target"]
            est = StrongTreeClassifier(depth=depth, time_limit=args.time_limit)
            started = time.perf_counter()

            def progress(ev, name=name, depth=depth) -> None:
                row = ev.row
                if row["n_calibration"] > 0:  # a point of the choice (a refit has no calibration rows)
                    log.write({"dataset": name, "depth": depth, "stage": "point", "split": row["fold"],
                               **{k: row.get(k) for k in KEEP}})

            result = calibrate(est, X, y, grid={"regularization": list(PAPER_LAMBDAS)}, cv=paper_splits(len(df)),
                               backend=args.backend, n_jobs=args.n_jobs, progress=progress)
            for row in result.chosen.to_dict("records"):
                log.write({"dataset": name, "depth": depth, "stage": "chosen", "split": row["split"],
                           **{k: row.get(k) for k in KEEP}})
            print(f"# {name:15} d={depth} test acc {result.chosen['test_accuracy'].mean():.4f} "
                  f"(lambda {list(result.chosen['regularization'])}), certified "
                  f"{result.points['certified'].mean():.0%} of {len(result.points)} points + "
                  f"{int(result.chosen['certified'].sum())}/{len(result.chosen)} refits, "
                  f"{time.perf_counter() - started:.0f} s", flush=True)
    print("\n" + calibration_markdown(pd.read_csv(path)))
    return 0


KEEP = ("regularization", "status", "certified", "objective", "bound", "time", "n_train", "n_calibration", "n_test",
        "train_accuracy", "calibration_accuracy", "test_accuracy", "error")


def calibration_markdown(table: pd.DataFrame) -> str:
    ours = table[table["stage"] == "chosen"]
    points = table[table["stage"] == "point"]
    paper = pd.read_csv(PAPER_TEST)
    paper = paper[paper["approach"].isin(["FlowOCT", "BendersOCT"])]
    theirs = paper.groupby(["dataset", "depth", "approach"])["test_acc"].mean().unstack()
    lines = ["| dataset | d | splits | ours: test acc (mean) | ours: λ chosen | points certified | refits certified "
             "| paper FlowOCT | paper BendersOCT | ours − best paper |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    summary = []
    for name in DATASETS:
        for depth in sorted(ours["depth"].unique()):
            mine = ours[(ours["dataset"] == name) & (ours["depth"] == depth)]
            if mine.empty:
                continue
            pts = points[(points["dataset"] == name) & (points["depth"] == depth)]
            flow = theirs.loc[(name, depth), "FlowOCT"] if (name, depth) in theirs.index else math.nan
            benders = theirs.loc[(name, depth), "BendersOCT"] if (name, depth) in theirs.index else math.nan
            acc = mine["test_accuracy"].mean()
            lambdas = ", ".join(f"{v:g}" for v in mine["regularization"])
            lines.append(
                f"| {name} | {depth} | {len(mine)} | {acc:.4f} | {lambdas} | {pts['certified'].astype(bool).mean():.0%} "
                f"| {int(mine['certified'].astype(bool).sum())}/{len(mine)} | {_fmt(flow, '.4f')} | {_fmt(benders, '.4f')} "
                f"| {_fmt(acc - np.nanmax([flow, benders]), '+.4f')} |"
            )
            summary.append({"depth": depth, "ours": acc, "flow": flow, "benders": benders})
    lines += ["", "| d | datasets | ours: mean test acc | paper FlowOCT | paper BendersOCT | ours ≥ both | ours < both |",
              "|---|---|---|---|---|---|---|"]
    by_depth = pd.DataFrame(summary)
    for depth, rows in by_depth.groupby("depth"):
        best = rows[["flow", "benders"]].max(axis=1)
        worst = rows[["flow", "benders"]].min(axis=1)
        lines.append(f"| {depth} | {len(rows)} | {rows['ours'].mean():.4f} | {rows['flow'].mean():.4f} "
                     f"| {rows['benders'].mean():.4f} | {int((rows['ours'] >= best - 1e-9).sum())} "
                     f"| {int((rows['ours'] < worst - 1e-9).sum())} |")
    return "\n".join(lines)


# --------------------------------------------------------------------- killed
def run_killed(args) -> int:
    from dask.distributed import Client, LocalCluster

    ds, X, y, group, _ = frontier_data("german")
    bounds = [float(b) for b in np.round(np.linspace(0.0, 0.2, 20), 4)]
    notions = ["statistical_parity", "conditional_statistical_parity", "predictive_equality", "equal_opportunity",
               "equalized_odds"]
    legit = load_part(ds, "train", 1).legit
    legit = pd.concat([legit, load_part(ds, "test", 1).legit], ignore_index=True)
    grid = {"fairness": notions, "fairness_bound": bounds, "depth": [2, 3]}
    est = StrongTreeClassifier(pos_label=ds.positive, time_limit=args.time_limit)
    log = CsvLog(OUT / "sweep_killed.csv")
    kills: list[dict] = []
    seen: list[int] = []
    burners = [cpu_burner() for _ in range(args.burners)]
    try:
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
                Client(cluster) as client:
            started = time.perf_counter()
            for ev in iter_sweep(est, X, y, sensitive_features=group, legitimate_features=legit, grid=grid,
                                 backend="dask", scheduler=client):
                seen.append(ev.row["point"])
                log.write({k: v for k, v in ev.row.items() if k != "tree"})
                if len(kills) < len(args.kill_at) and ev.done >= args.kill_at[len(kills)] * ev.total:
                    kills.append({**kill_a_busy_worker(client), "after": ev.done})
                    print(f"# killed worker {kills[-1]['worker']} (pid {kills[-1]['pid']}) after {ev.done} of "
                          f"{ev.total} points, while it ran points {kills[-1]['points']}", flush=True)
            wall = time.perf_counter() - started
            total = ev.total
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    missing = sorted(set(range(total)) - set(seen))
    repeated = sorted({p for p in seen if seen.count(p) > 1})
    in_flight = [p for k in kills for p in k["points"]]
    retried = [p for p in in_flight if p in seen]
    table = pd.read_csv(OUT / "sweep_killed.csv")
    print(f"\n| points | kills (after rows) | rows returned | missing | returned twice | in flight on the killed workers "
          f"| of those returned | status counts | CPU burners | wall s |\n|---|---|---|---|---|---|---|---|---|---|\n"
          f"| {total} | {', '.join(str(k['after']) for k in kills)} | {len(seen)} | {len(missing)} | {len(repeated)} "
          f"| {len(in_flight)} | {len(retried)} "
          f"| {', '.join(f'{k} {int(v)}' for k, v in table['status'].value_counts().items())} | {args.burners} "
          f"| {wall:.1f} |")
    return 0 if not missing and not repeated and len(retried) == len(in_flight) else 1


def cpu_burner():
    """A process that keeps one core busy until it is killed (or this process ends)."""
    import subprocess

    return subprocess.Popen([sys.executable, "-c", f"import os\nwhile os.getppid() == {os.getpid()}: pass"])


def kill_a_busy_worker(client) -> dict:
    """SIGKILL the process of a worker that is running points right now; which points it was running."""
    for _ in range(200):
        busy = {w: keys for w, keys in client.processing().items() if keys}
        if busy:
            worker, keys = next(iter(busy.items()))
            pid = client.run(os.getpid, workers=[worker])[worker]
            running = client.run(lambda dask_worker: [str(ts.key) for ts in dask_worker.state.executing], workers=[worker])[worker]
            os.kill(pid, signal.SIGKILL)
            points = sorted(int(str(k).rsplit("-", 1)[1]) for k in running if str(k).startswith("strongtree-point-"))
            return {"worker": worker, "pid": pid, "points": points}
        time.sleep(0.05)
    raise RuntimeError("no worker was busy")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="part", required=True)
    f = sub.add_parser("frontiers")
    f.add_argument("--backends", nargs="+", default=["serial", "processes", "dask"])
    f.add_argument("--time-limit", type=float, default=60.0)
    c = sub.add_parser("calibration")
    c.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    c.add_argument("--depths", nargs="+", type=int, default=[2, 3, 4, 5])
    c.add_argument("--time-limit", type=float, default=60.0)
    c.add_argument("--backend", default="serial")
    c.add_argument("--n-jobs", type=int, default=None)
    c.add_argument("--markdown-only", action="store_true")
    k = sub.add_parser("killed")
    k.add_argument("--time-limit", type=float, default=60.0)
    k.add_argument("--kill-at", type=float, nargs="+", default=[0.25, 0.75],
                   help="kill a busy worker once this share of the points is done (one kill per value)")
    k.add_argument("--burners", type=int, default=0, help="processes that keep a core busy during the sweep")
    args = ap.parse_args(argv)
    require_data()
    if args.part == "frontiers":
        return run_frontiers(args)
    if args.part == "calibration":
        if args.markdown_only:
            print(calibration_markdown(pd.read_csv(OUT / "sweep_calibration.csv")))
            return 0
        return run_calibration(args)
    return run_killed(args)


if __name__ == "__main__":
    sys.exit(main())
