"""The live demo's solve alone, in CPU seconds: what the click-to-proof time would be on an idle
machine, measured on a shared one.

The wall-clock time of the demo (``benchmarks/demo_timing.py``) depends on everyone else's
load; the CPU time of the solve hardly does.  Each run is a fresh process that imports the
engine (as the app's spare worker does before the click), then fits the demo's preset
(:data:`strongtree_studio.data.demo_tables.DEMO`: the 10,000-row hiring table, depth 4, equalized
odds within 1 pp, one thread) on the demo's training rows, and records the process's CPU time
and the wall-clock time at each event of the progress stream:

``first report``  the first progress event with a best tree and a bound;
``bound moves``   the bound first differs from its first value;
``best moves``    the best tree's value first differs from its first value;
``proof``         the best tree meets the bound (gap 0).

``--before PATH`` also runs another checkout (e.g. ``git worktree add /tmp/before main``),
one run of each in turn, so that both meet the same load.  ``--every-cut`` runs this checkout's
demo as it stands in turn with the same demo over every distinct cut of its numeric columns
(``encoding="data"``, ``max_thresholds`` = the preset fit's ``record_.scope.widest_column``): the
price of a banner that says "Proven optimal" rather than "Optimal over kept thresholds"
(``--quantiles N``: the first side at N quantile cuts per number instead of the preset's).

    python -m benchmarks.demo_solve --runs 3
    python -m benchmarks.demo_solve --runs 3 --before /tmp/before
    python -m benchmarks.demo_solve --runs 4 --every-cut
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVENTS = ("first report", "bound moves", "best moves", "proof", "end")

#: Run in a fresh process with the checkout on its path; prints one JSON line.
CHILD = r"""
import dataclasses, json, os, sys, time
import strongtree_core.estimator.classifier  # noqa: F401  (the spare worker imports the engine before the click)
from strongtree_core import StrongTreeClassifier
from strongtree_core.tree.claim import claim
from strongtree_studio.data.choices import Roles, split_table
from strongtree_studio.data.demo_tables import DEMO, DEMOS

demo = DEMOS[DEMO.table]
frame = demo.load()
roles = Roles(target=demo.target, pos_label=demo.pos_label, protected=demo.protected, legitimate=demo.legitimate,
              ignored=demo.ignored)
train = split_table(frame, roles, DEMO.split).train
X, y = train[roles.model_columns(train)], train[roles.target]
seen, first = {}, {}
cpu0, wall0 = time.process_time(), time.perf_counter()

def mark(name):
    if name not in seen:
        seen[name] = {"cpu": time.process_time() - cpu0, "wall": time.perf_counter() - wall0}

def progress(p):
    if p.objective is None or p.bound is None:
        return
    mark("first report")
    first.setdefault("objective", p.objective)
    first.setdefault("bound", p.bound)
    if p.bound != first["bound"]:
        mark("bound moves")
    if p.objective != first["objective"]:
        mark("best moves")
    if p.gap is not None and p.gap <= 1e-9:
        mark("proof")

config = dataclasses.replace(DEMO.model, **json.loads(os.environ.get("DEMO_MODEL") or "{}"))
model = StrongTreeClassifier(**config.estimator_params(roles))
model.fit(X, y, sensitive_features=list(roles.protected), legitimate_features=list(roles.legitimate) or None,
          progress=progress)
mark("end")
record = model.tree_.record
scope = record.scope
print(json.dumps({"events": seen, "status": record.status, "objective": record.objective,
                  "load": os.getloadavg()[0], "claim": claim(record).label,
                  "kept": f"{scope.thresholds} of {scope.distinct_thresholds}", "widest": scope.widest_column}))
"""


def one_run(repo: Path, model: dict | None = None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(repo), DEMO_MODEL=json.dumps(model or {}))
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=900)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", type=Path, default=None, help="another checkout, run in turn with this one")
    parser.add_argument("--every-cut", action="store_true", help="also the demo over every distinct cut, in turn")
    parser.add_argument("--quantiles", type=int, default=None,
                        help="with --every-cut: the other side is the demo at this many quantile cuts per number")
    args = parser.parse_args(argv)
    if args.every_cut and args.before:
        parser.error("--every-cut compares two settings of this checkout: leave out --before")
    if args.quantiles is not None and not args.every_cut:
        parser.error("--quantiles goes with --every-cut")
    checkouts: list[tuple[str, Path, dict]] = [("this", REPO, {})]
    if args.before:
        checkouts.append(("before", args.before.resolve(), {}))
    if args.every_cut:
        quantiles = {} if args.quantiles is None else {"encoding": "thermometer", "n_buckets": args.quantiles}
        widest = one_run(REPO, {**quantiles, "time_limit": 5.0})["widest"]  # the scope's count alone
        checkouts = [("quantile" if quantiles else "this", REPO, quantiles),
                     ("every", REPO, {"encoding": "data", "max_thresholds": widest})]
    rows: dict[str, list[dict]] = {name: [] for name, _, _ in checkouts}
    for i in range(args.runs):
        for label, repo, model in checkouts:
            row = one_run(repo, model)
            rows[label].append(row)
            cells = "  ".join(f"{name} {row['events'][name]['cpu']:5.1f} cpu / {row['events'][name]['wall']:5.1f} wall"
                              if name in row["events"] else f"{name}  —" for name in EVENTS)
            print(f"{label:<8} run {i + 1}  load {row['load']:4.1f}  {row['claim']} ({row['kept']} thresholds) "
                  f"{row['objective']:g}  {cells}", flush=True)
    print("\nseconds from the start of the fit: CPU (median, min-max over the runs), wall-clock median")
    print(f"{'checkout':<9} {'event':<13} {'cpu':>6} {'min':>6} {'max':>6} {'wall':>7}  runs")
    for label, _, _ in checkouts:
        for name in EVENTS:
            cpu = [r["events"][name]["cpu"] for r in rows[label] if name in r["events"]]
            wall = [r["events"][name]["wall"] for r in rows[label] if name in r["events"]]
            if cpu:
                print(f"{label:<9} {name:<13} {statistics.median(cpu):6.1f} {min(cpu):6.1f} {max(cpu):6.1f} "
                      f"{statistics.median(wall):7.1f}  {len(cpu)}/{len(rows[label])}")


if __name__ == "__main__":
    main()
