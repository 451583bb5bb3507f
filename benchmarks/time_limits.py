"""Is the time limit a contract?  Wall time of ``fit`` against ``time_limit`` on
large and wide tables, on every route (the exact search, FlowOCT on HiGHS and on
SCIP, BendersOCT on SCIP).

Cases: 300 rows x 10,000 binary columns, depth 2; 351 rows x 445 binary columns, depth 4; 200,000 rows of 8 continuous
columns, depth 4; German credit (split 1) depth 3 with statistical parity 0.1;
100,000 rows depth 3 with statistical parity 0.05 and three groups; 1,000,000 rows
of 8 continuous columns, depth 4; the dashboard's hiring table at 1,000,000 rows, depth 3,
statistical parity 0.05.  A CSV row after every fit (``--out``).

    python -m benchmarks.time_limits --limits 5 60
    python -m benchmarks.time_limits --limits 5 3 --routes auto/auto --cases 1M --busy 2
    python -m benchmarks.time_limits --summarize benchmarks/out/time_limits.csv

``--busy N`` keeps N other processes spinning for the whole run (a loaded machine: on 2
cores, ``--busy 2`` leaves the fit a share of the cores, as a second user's work would).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import csv
import multiprocessing
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from strongtree_core import StrongTreeClassifier, StrongTreeError

ROUTES = [("auto", "auto"), ("flow", "highs"), ("flow", "scip"), ("benders", "scip")]


def cases():
    """(name, X, y, fit keyword arguments, estimator keyword arguments, depth)."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.integers(0, 2, (300, 10_000), dtype=np.uint8), columns=[f"c{j}" for j in range(10_000)])
    yield "300 x 10,000 binary (a 4 MB upload)", X, (X.c0 ^ X.c1).astype(int), {}, {}, 2
    X = pd.DataFrame(rng.integers(0, 2, (351, 445)), columns=[f"f{j}" for j in range(445)])
    yield "351 x 445 binary", X, ((X.f0 ^ X.f1) | (rng.random(351) < 0.1)).astype(int), {}, {}, 4
    n = 200_000
    X = pd.DataFrame(rng.normal(size=(n, 8)), columns=list("abcdefgh"))
    yield "200k x 8 continuous", X, (X.a + X.b * X.c + rng.normal(0, 1, n) > 0.3).astype(int), {}, {}, 4
    from benchmarks.fairness_benchmark import DATASETS, load_part

    part = load_part(DATASETS["german"], "train", 1)
    yield ("German split 1, SP 0.1", part.X, part.y, {"sensitive_features": part.group},
           {"fairness": "statistical_parity", "fairness_bound": 0.1, "pos_label": 2}, 3)
    n = 100_000
    X = pd.DataFrame(rng.normal(size=(n, 8)), columns=list("abcdefgh"))
    g = pd.Series(rng.integers(0, 3, n).astype(str), name="group")
    yield ("100k, SP 0.05, 3 groups", X, (X.a + X.b + 0.4 * g.astype(int) + rng.normal(0, 1, n) > 0.5).astype(int),
           {"sensitive_features": g}, {"fairness": "statistical_parity", "fairness_bound": 0.05, "pos_label": 1}, 3)
    n = 1_000_000
    X = pd.DataFrame(rng.normal(size=(n, 8)), columns=list("abcdefgh"))
    yield "1M x 8 continuous", X, (X.a + X.b * X.c + rng.normal(0, 1, n) > 0.3).astype(int), {}, {}, 4
    from strongtree_studio.data.demo_tables import make_hiring

    table = make_hiring(1_000_000)
    yield ("1M hiring rows, SP 0.05", table.drop(columns=["hired"]), table["hired"], {"sensitive_features": "gender"},
           {"fairness": "statistical_parity", "fairness_bound": 0.05, "pos_label": "yes"}, 3)


def _spin() -> None:
    while True:
        pass


@contextlib.contextmanager
def busy(n: int):
    """``n`` processes that spin until the block ends."""
    workers = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(n)]
    for w in workers:
        w.start()
    try:
        yield
    finally:
        for w in workers:
            w.terminate()
            w.join()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limits", nargs="+", type=float, default=[5.0, 60.0])
    ap.add_argument("--routes", nargs="+", default=[f"{f}/{s}" for f, s in ROUTES])
    ap.add_argument("--out", default="benchmarks/out/time_limits.csv")
    ap.add_argument("--summarize", metavar="CSV", help="print the Markdown table of this CSV and exit")
    ap.add_argument("--cases", nargs="+", help="only the cases whose name contains one of these words")
    ap.add_argument("--busy", type=int, default=0, help="other processes kept spinning during the run (load)")
    args = ap.parse_args(argv)
    if args.summarize:
        print(summarize(pd.read_csv(args.summarize)))
        return 0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fields = ["case", "route", "limit", "wall", "over", "status", "objective", "bound", "note", "busy", "load"]
    new = not out.exists()
    with out.open("a", newline="") as fh, busy(args.busy):
        writer = csv.DictWriter(fh, fieldnames=fields)
        if new:
            writer.writeheader()
        for name, X, y, fit_kw, est_kw, depth in cases():
            if args.cases and not any(word in name for word in args.cases):
                continue
            for route in args.routes:
                formulation, solver = route.split("/")
                if formulation == "benders" and "fairness" in est_kw:
                    continue  # BendersOCT cannot enforce constraints that couple datapoints
                for limit in args.limits:
                    clf = StrongTreeClassifier(depth=depth, formulation=formulation, solver=solver, time_limit=limit,
                                               **est_kw)
                    t0 = time.perf_counter()
                    note, status, objective, bound = "", "", None, None
                    try:
                        clf.fit(X, y, **fit_kw)
                        status, objective, bound = clf.record_.status, clf.record_.objective, clf.record_.bound
                    except StrongTreeError as exc:
                        status, note = "refused", str(exc)[:120]
                    wall = time.perf_counter() - t0
                    row = dict(case=name, route=route, limit=limit, wall=round(wall, 2), over=round(wall - limit, 2),
                               status=status, objective=objective, bound=bound, note=note, busy=args.busy,
                               load=round(os.getloadavg()[0], 1))
                    writer.writerow(row)
                    fh.flush()
                    print(" | ".join(str(row[k]) for k in fields), flush=True)
    return 0


def summarize(frame: pd.DataFrame) -> str:
    """One Markdown row per fit: case, route, limit, wall, seconds over, status."""
    lines = ["| case | route | limit s | wall s | over s | status |", "|---|---|---|---|---|---|"]
    for r in frame.itertuples():
        status = r.status if r.status != "refused" else f"refused: {str(r.note)[:70]}…"
        lines.append(f"| {r.case} | {r.route} | {r.limit:g} | {r.wall:.2f} | {r.over:+.2f} | {status} |")
    fits = frame[frame.status != "refused"]
    lines.append("")
    lines.append(f"{len(frame)} fits, {len(frame) - len(fits)} refused before building; "
                 f"largest excess {fits.over.max():+.2f} s; over by more than 1 s: {(fits.over > 1).sum()}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
