"""What a fairness promise costs: ``fairness_confidence=0.9`` against the plain fit, side by side.

Adult (``adult_enc.csv``, protected ``sex.1``, positive label 2) as the population: each draw takes
``--n`` training rows at random (the draws of ``fairness_promise.py``), and for every depth and notion
fits the plain tree (``fairness_confidence=None``) and the promised one (the default method), one
after the other, in alternating order from draw to draw, each with the same ``n_jobs``.  The table
gives both times, their ratio, and the promise's training bound; the summary the median and worst
ratio per cell.  One CSV row per pair of fits, written as it goes (``--out``).

Examples
--------
python -m benchmarks.promise_cost --draws 3 --depths 2 3 --n-jobs 2
python -m benchmarks.promise_cost --draws 5 --notions statistical_parity --n 3600 --n-jobs 1 2
"""

from __future__ import annotations

import argparse
import csv
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import FAIRNESS_DATA
from strongtree_core import StrongTreeClassifier

FILE, PROTECTED, POSITIVE = "adult/adult_enc.csv", "sex.1", 2
DELTA, CONFIDENCE = 0.05, 0.9
COLUMNS = ("draw", "n", "depth", "notion", "n_jobs", "order", "plain_s", "promise_s", "ratio", "training_bound",
           "constant", "optimism")


def _fit(Xt, yt, depth: int, notion: str, n_jobs: int, promise: bool, time_limit: float):
    clf = StrongTreeClassifier(depth=depth, fairness=notion, fairness_bound=DELTA, pos_label=POSITIVE,
                               time_limit=time_limit, n_jobs=n_jobs,
                               fairness_confidence=CONFIDENCE if promise else None)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(Xt, yt, sensitive_features=PROTECTED)
    return clf, time.perf_counter() - t0


def run(args) -> list[dict]:
    df = pd.read_csv(FAIRNESS_DATA / FILE)
    X_all, y_all = df.drop(columns="target"), df["target"].to_numpy()
    rows = []
    out = Path(args.out) if args.out else None
    handle = out.open("w", newline="") if out else None
    writer = csv.DictWriter(handle, fieldnames=COLUMNS) if handle else None
    if writer:
        writer.writeheader()
    _fit(X_all.iloc[:300], y_all[:300], 1, "statistical_parity", 1, False, 30)  # load the kernels before timing
    for draw in range(args.first_draw, args.first_draw + args.draws):
        order = np.random.default_rng(1000 + draw).permutation(len(df))[:args.n]
        Xt, yt = X_all.iloc[order].reset_index(drop=True), y_all[order]
        for depth in args.depths:
            for notion in args.notions:
                for n_jobs in args.n_jobs:
                    plain_first = (draw + depth) % 2 == 0
                    times = {}
                    for promise in ((False, True) if plain_first else (True, False)):
                        clf, seconds = _fit(Xt, yt, depth, notion, n_jobs, promise, args.time_limit)
                        times[promise] = seconds
                        if promise:
                            kept = clf.fairness_promise_
                    row = dict(draw=draw, n=args.n, depth=depth, notion=notion, n_jobs=n_jobs,
                               order="plain first" if plain_first else "promise first",
                               plain_s=round(times[False], 3), promise_s=round(times[True], 3),
                               ratio=round(times[True] / times[False], 2),
                               training_bound=round(kept.training_bound, 5), constant=kept.constant,
                               optimism=round(kept.optimism, 5))
                    rows.append(row)
                    if writer:
                        writer.writerow(row)
                        handle.flush()
                    print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    if handle:
        handle.close()
    return rows


def summary(rows: list[dict]) -> str:
    table = pd.DataFrame(rows)
    lines = ["| n | depth | notion | n_jobs | draws | plain, median s | promise, median s | ratio, median | ratio, worst | constant |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for (n, depth, notion, n_jobs), cell in table.groupby(["n", "depth", "notion", "n_jobs"]):
        lines.append(f"| {n:,} | {depth} | {notion.replace('_', ' ')} | {n_jobs} | {len(cell)} | "
                     f"{cell.plain_s.median():.2f} | {cell.promise_s.median():.2f} | {cell.ratio.median():.1f} | "
                     f"{cell.ratio.max():.1f} | {int(cell.constant.sum())} of {len(cell)} |")
    for n_jobs, part in table.groupby("n_jobs"):
        lines.append(f"\nAll cells, n_jobs={n_jobs}: median ratio {part.ratio.median():.1f} over {len(part)} pairs "
                     f"(worst {part.ratio.max():.1f}).")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--draws", type=int, default=3)
    ap.add_argument("--first-draw", type=int, default=0)
    ap.add_argument("--n", type=int, default=3600)
    ap.add_argument("--depths", type=int, nargs="+", default=[2, 3])
    ap.add_argument("--notions", nargs="+", default=["statistical_parity", "equalized_odds"])
    ap.add_argument("--n-jobs", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--out", default="", help="CSV of one row per pair of fits (e.g. benchmarks/out/promise_cost.csv)")
    args = ap.parse_args()
    print(summary(run(args)))


if __name__ == "__main__":
    main()
