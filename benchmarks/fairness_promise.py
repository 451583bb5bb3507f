"""Fairness on new rows: the population study of ``fairness_confidence`` and of the intervals.

A dataset is taken as the population.  Each draw takes ``n_train`` training rows at
random; the other rows are "the rest of the population", on which the tree's gap is
the population gap.  Per draw, notion (statistical parity, equalized odds, delta = 5 pp)
and depth:

* ``today``: the tree fitted at the training bound delta (``fairness_confidence=None``;
  it is the first round of the margin method, so it is not fitted twice);
* ``margin``: ``fairness_confidence=0.9`` with the margin method;
* ``bootstrap``: the margin method after a bootstrap estimate of the fit's optimism
  (``--methods margin bootstrap``);
* ``holdout``: ``fairness_confidence=0.9`` with the holdout method (``--holdout``).

Each tree's gap on the rest is compared with delta, and ``fairness_intervals`` at 90 %
on 900 rows drawn from the rest is checked for holding the rest's gap (interval coverage).
One CSV row per tree, written as it goes.

Examples
--------
python -m benchmarks.fairness_promise --out benchmarks/results/fairness_promise.csv
python -m benchmarks.fairness_promise --datasets compas --draws 3 --depths 2 --holdout
python -m benchmarks.fairness_promise --methods bootstrap --notions statistical_parity --out benchmarks/results/fairness_promise_bootstrap.csv
python -m benchmarks.fairness_promise --summary benchmarks/results/fairness_promise.csv
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import FAIRNESS_DATA
from strongtree_core import StrongTreeClassifier
from strongtree_core.metrics import fairness_intervals
from strongtree_core.promise import tree_differences

#: name -> (file, protected column, positive label, training rows)
POPULATIONS = {
    "adult": ("adult/adult_enc.csv", "sex.1", 2, 3600),
    "compas": ("compas/compas_binrace_enc.csv", "race.1", 1, 2000),
}
NOTIONS = ("statistical_parity", "equalized_odds")
DELTA = 0.05
CONFIDENCE = 0.9
INTERVAL_ROWS = 900
COLUMNS = ("dataset", "draw", "depth", "notion", "setting", "training_bound", "constant", "status", "train_gap",
           "population_gap", "exceeds", "train_accuracy", "population_accuracy", "baseline_accuracy",
           "interval_low", "interval_high", "covered", "seconds", "message")


def gap_of(tree, X: pd.DataFrame, y: np.ndarray, group: np.ndarray, notion: str, positive) -> float:
    pred = np.asarray(tree.predict(X))
    diffs = tree_differences([notion], y == positive, pred == positive, group, 2)
    return diffs.gap


def run(args) -> None:
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    new = not out.exists()
    with out.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        if new:
            writer.writeheader()
        for name in args.datasets:
            file, protected, positive, n_train = POPULATIONS[name]
            df = pd.read_csv(FAIRNESS_DATA / file)
            X_all = df.drop(columns="target")
            y_all = df["target"].to_numpy()
            g_all = df[protected].to_numpy().astype(int)
            for draw in range(args.draws):
                rng = np.random.default_rng(1000 + draw)
                order = rng.permutation(len(df))
                train, rest = order[:n_train], order[n_train:]
                held = rng.choice(rest, size=INTERVAL_ROWS, replace=False)
                Xt, yt = X_all.iloc[train].reset_index(drop=True), y_all[train]
                Xr, yr, gr = X_all.iloc[rest].reset_index(drop=True), y_all[rest], g_all[rest]
                Xh, yh, gh = X_all.iloc[held].reset_index(drop=True), y_all[held], g_all[held]
                baseline = max(np.mean(yt == c) for c in np.unique(yt))
                for depth in args.depths:
                    for notion in args.notions:
                        settings = list(args.methods) + (["holdout"] if args.holdout else [])
                        for setting in settings:
                            clf = StrongTreeClassifier(
                                depth=depth, fairness=notion, fairness_bound=DELTA, pos_label=positive,
                                fairness_confidence=CONFIDENCE, fairness_confidence_method=setting,
                                time_limit=args.time_limit,
                            )
                            t0 = time.perf_counter()
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore")
                                clf.fit(Xt, yt, sensitive_features=protected)
                            seconds = time.perf_counter() - t0
                            promise = clf.fairness_promise_
                            trees = [("today", DELTA, clf._promise_fits[0][1], "")] if setting == settings[0] else []
                            trees.append((setting, promise.training_bound, clf.tree_, promise.message))
                            for label, bound, tree, message in trees:
                                pred_h = np.asarray(tree.predict(Xh))
                                table = fairness_intervals(yh, pred_h, sensitive_features=gh, pos_label=positive,
                                                           notions=notion, confidence=CONFIDENCE)
                                pop = gap_of(tree, Xr, yr, gr, notion, positive)
                                low, high = float(table["gap_low"].iloc[0]), float(table["gap_high"].iloc[0])
                                leaves = tree.structure.leaves
                                row = dict(
                                    dataset=name, draw=draw, depth=depth, notion=notion, setting=label,
                                    training_bound=bound,
                                    constant=bool(np.unique(tree.structure.prediction[leaves - 1]).size == 1),
                                    status=tree.record.status,
                                    train_gap=gap_of(tree, Xt, yt, g_all[train], notion, positive),
                                    population_gap=pop, exceeds=bool(pop > DELTA),
                                    train_accuracy=float(np.mean(np.asarray(tree.predict(Xt)) == yt)),
                                    population_accuracy=float(np.mean(np.asarray(tree.predict(Xr)) == yr)),
                                    baseline_accuracy=baseline, interval_low=low, interval_high=high,
                                    covered=bool(low - 1e-12 <= pop <= high + 1e-12),
                                    seconds=round(seconds, 2) if label != "today" else "",
                                    message=message,
                                )
                                writer.writerow(row)
                                handle.flush()
                                print(name, draw, depth, notion, label, f"bound {100 * bound:.2f}",
                                      f"pop gap {100 * pop:.2f}", f"acc {100 * row['train_accuracy']:.1f}",
                                      f"{seconds:.1f}s", flush=True)


def summary(path: str) -> str:
    df = pd.read_csv(path)
    lines = ["| data | depth | notion | setting | draws | gap > 5 pp on the rest | worst gap | training bound (median) | "
             "training acc. | acc. on the rest | constant trees | 90 % interval holds the rest's gap |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key, part in df.groupby(["dataset", "depth", "notion", "setting"], sort=False):
        name, depth, notion, setting = key
        n = len(part)
        lines.append(
            f"| {name} | {depth} | {notion.replace('_', ' ')} | {setting} | {n} | "
            f"{int(part['exceeds'].sum())} ({100 * part['exceeds'].mean():.0f} %) | "
            f"{100 * part['population_gap'].max():.1f} pp | {100 * part['training_bound'].median():.2f} pp | "
            f"{100 * part['train_accuracy'].mean():.2f} % | {100 * part['population_accuracy'].mean():.2f} % | "
            f"{int(part['constant'].sum())} | {int(part['covered'].sum())} of {n} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(POPULATIONS), choices=list(POPULATIONS))
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--depths", nargs="+", type=int, default=[2, 3])
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--holdout", action="store_true", help="also the holdout method")
    parser.add_argument("--methods", nargs="+", default=["margin"], choices=["margin", "bootstrap", "crossfit", "holdout"],
                        help="methods of fairness_confidence to run (the first also gives the tree fitted at delta)")
    parser.add_argument("--notions", nargs="+", default=list(NOTIONS), choices=list(NOTIONS))
    parser.add_argument("--out", default="benchmarks/results/fairness_promise.csv")
    parser.add_argument("--summary", help="print the summary table of a CSV and stop")
    args = parser.parse_args(argv)
    if args.summary:
        print(summary(args.summary))
        return 0
    run(args)
    print(summary(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
