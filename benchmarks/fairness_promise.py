"""Fairness on new rows: the population study of ``fairness_confidence`` and of the intervals.

A dataset is taken as the population.  Each draw takes ``n_train`` training rows at
random; the other rows are "the rest of the population", on which the tree's gap is
the gap on new rows.  Per draw, dataset, depth and notion (statistical parity,
equalized odds; delta = 5 pp):

* ``today``: the tree fitted at the training bound delta (``fairness_confidence=None``);
  its gap on the rest minus its training gap is the true optimism of the fit, against
  which the methods' estimates are checked;
* ``today_half``: the same fit on the first half of the training rows (the true
  optimism at n/2 rows: with ``today`` it measures the rate at which it shrinks with n);
* one row per method of ``--methods``: ``fairness_confidence=0.9`` with that method.

Each tree's gap on the rest is compared with delta, and ``fairness_intervals`` at 90 %
on 900 rows drawn from the rest is checked for holding the rest's gap (interval coverage).
One CSV row per tree, written and flushed as it goes; a run skips the rows its CSV
already has, so an interrupted study resumes where it stopped.  The summary gives each
share of draws above delta with its Clopper-Pearson 95 % interval.

Examples
--------
python -m benchmarks.fairness_promise --draws 100 --methods subsample bootstrap
python -m benchmarks.fairness_promise --datasets compas --draws 3 --depths 2 --methods holdout
python -m benchmarks.fairness_promise --summary benchmarks/results/fairness_promise.csv
python -m benchmarks.fairness_promise --summary benchmarks/results/fairness_promise_100.csv --summary-draws 40 \
    --summary-settings subsample
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
from strongtree_core import StrongTreeClassifier, StrongTreeError
from strongtree_core.metrics import fairness_intervals
from strongtree_core.metrics.intervals import clopper_pearson_interval
from strongtree_core.metrics.promise import excess, tree_differences
from strongtree_core.vocabulary import PROMISE_METHODS

#: name -> (file, protected column, positive label, training rows)
POPULATIONS = {
    "adult": ("adult/adult_enc.csv", "sex.1", 2, 3600),
    "compas": ("compas/compas_binrace_enc.csv", "race.1", 1, 2000),
}
NOTIONS = ("statistical_parity", "equalized_odds")
DELTA = 0.05
CONFIDENCE = 0.9
INTERVAL_ROWS = 900
KEY = ("dataset", "draw", "depth", "notion", "setting")
COLUMNS = KEY + (
    "training_bound", "constant", "status", "train_gap", "population_gap", "population_gap_all", "exceeds",
    "excess_directed", "train_accuracy", "population_accuracy", "baseline_accuracy", "optimism", "optimism_sd",
    "optimism_at_resample", "smallest_delta", "interval_low", "interval_high", "covered", "seconds", "message",
)


def _diffs(tree, X: pd.DataFrame, y: np.ndarray, group: np.ndarray, notion: str, positive):
    pred = np.asarray(tree.predict(X))
    return tree_differences([notion], y == positive, pred == positive, group, 2)


def _done(out: Path) -> set[tuple]:
    if not out.exists():
        return set()
    df = pd.read_csv(out, usecols=list(KEY))
    return {tuple(r) for r in df.astype({"draw": int, "depth": int}).itertuples(index=False, name=None)}


def _fit(Xt, yt, protected, positive, depth, notion, method, time_limit, rows=None) -> tuple[StrongTreeClassifier, float]:
    clf = StrongTreeClassifier(
        depth=depth, fairness=notion, fairness_bound=DELTA, pos_label=positive, time_limit=time_limit,
        fairness_confidence=None if method is None else CONFIDENCE,
        **({} if method is None else {"fairness_confidence_method": method}),
    )
    if rows is not None:
        Xt, yt = Xt.iloc[rows].reset_index(drop=True), yt[rows]
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(Xt, yt, sensitive_features=protected)
    return clf, time.perf_counter() - t0


def run(args) -> None:
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = _done(out)
    new = not out.exists()
    with out.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        if new:
            writer.writeheader()
        tables = {name: pd.read_csv(FAIRNESS_DATA / POPULATIONS[name][0]) for name in args.datasets}
        for draw in range(args.first_draw, args.first_draw + args.draws):
            for name in args.datasets:
                file, protected, positive, n_train = POPULATIONS[name]
                df = tables[name]
                X_all = df.drop(columns="target")
                y_all = df["target"].to_numpy()
                g_all = df[protected].to_numpy().astype(int)
                rng = np.random.default_rng(1000 + draw)
                order = rng.permutation(len(df))
                train, rest = order[:n_train], order[n_train:]
                held = rng.choice(rest, size=INTERVAL_ROWS, replace=False)
                Xt, yt, gt = X_all.iloc[train].reset_index(drop=True), y_all[train], g_all[train]
                Xr, yr, gr = X_all.iloc[rest].reset_index(drop=True), y_all[rest], g_all[rest]
                Xh, yh, gh = X_all.iloc[held].reset_index(drop=True), y_all[held], g_all[held]
                baseline = max(np.mean(yt == c) for c in np.unique(yt))
                half = np.arange(n_train // 2)
                for depth in args.depths:
                    for notion in args.notions:
                        settings = ["today", "today_half"] + list(args.methods)
                        for setting in settings:
                            if (name, draw, depth, notion, setting) in done:
                                continue
                            method = None if setting.startswith("today") else setting
                            try:
                                clf, seconds = _fit(Xt, yt, protected, positive, depth, notion, method,
                                                    args.time_limit, rows=half if setting == "today_half" else None)
                            except StrongTreeError as err:  # refused (e.g. holdout on too few held-out rows)
                                writer.writerow({**dict.fromkeys(COLUMNS, ""), "dataset": name, "draw": draw,
                                                 "depth": depth, "notion": notion, "setting": setting,
                                                 "status": "refused", "message": str(err)})
                                handle.flush()
                                print(name, draw, depth, notion, setting, "refused:", err, flush=True)
                                continue
                            fit_rows = half if setting == "today_half" else np.arange(n_train)
                            tree = clf.tree_
                            promise = getattr(clf, "fairness_promise_", None)
                            inside = _diffs(tree, Xt.iloc[fit_rows], yt[fit_rows], gt[fit_rows], notion, positive)
                            on_rest = _diffs(tree, Xr, yr, gr, notion, positive)
                            on_all = _diffs(tree, X_all, y_all, g_all, notion, positive)
                            pred_h = np.asarray(tree.predict(Xh))
                            table = fairness_intervals(yh, pred_h, sensitive_features=gh, pos_label=positive,
                                                       notions=notion, confidence=CONFIDENCE)
                            low, high = float(table["gap_low"].iloc[0]), float(table["gap_high"].iloc[0])
                            pop = on_rest.gap
                            leaves = tree.structure.leaves
                            row = dict(
                                dataset=name, draw=draw, depth=depth, notion=notion, setting=setting,
                                training_bound=DELTA if promise is None else promise.training_bound,
                                constant=bool(np.unique(tree.structure.prediction[leaves - 1]).size == 1),
                                status=tree.record.status, train_gap=inside.gap,
                                population_gap=pop, population_gap_all=on_all.gap, exceeds=bool(pop > DELTA),
                                excess_directed=excess(inside, on_rest),
                                train_accuracy=float(np.mean(np.asarray(tree.predict(Xt.iloc[fit_rows])) == yt[fit_rows])),
                                population_accuracy=float(np.mean(np.asarray(tree.predict(Xr)) == yr)),
                                baseline_accuracy=baseline,
                                optimism="" if promise is None else promise.optimism,
                                optimism_sd="" if promise is None else promise.optimism_sd,
                                optimism_at_resample="" if promise is None else promise.optimism_at_resample,
                                smallest_delta="" if promise is None or promise.smallest_delta is None
                                else promise.smallest_delta,
                                interval_low=low, interval_high=high,
                                covered=bool(low - 1e-12 <= pop <= high + 1e-12),
                                seconds=round(seconds, 2), message="" if promise is None else promise.message,
                            )
                            writer.writerow(row)
                            handle.flush()
                            print(name, draw, depth, notion, setting, f"bound {100 * row['training_bound']:.2f}",
                                  f"gap train {100 * inside.gap:.2f} rest {100 * pop:.2f}",
                                  f"acc {100 * row['train_accuracy']:.1f}", f"{seconds:.1f}s", flush=True)


def _share(k: int, n: int) -> str:
    low, high = clopper_pearson_interval(k, n, 0.95)
    return f"{k} ({100 * k / n:.0f} %; {100 * float(low):.0f}-{100 * float(high):.0f} %)"


def summary(path: str, draws: int | None = None, settings: list[str] | None = None) -> str:
    """The tables of RESULTS sections 14 and 24: the promise per cell, and the optimism against the truth
    (``draws``: only draws 0 .. draws - 1, so that methods run on different numbers of draws compare
    on the same ones; ``settings``: only these methods, besides ``today``)."""
    df = pd.read_csv(path)
    df["draw"] = df["draw"].astype(int)
    if draws is not None:
        df = df[df["draw"] < draws]
    refused = df[df["status"] == "refused"]
    df = df[df["status"] != "refused"].astype({"population_gap": float, "train_gap": float})
    today = df[df.setting == "today"].set_index(["dataset", "depth", "notion", "draw"]).sort_index()
    lines = ["| data | depth | notion | setting | draws | gap > 5 pp on the rest (95 % CI) | on all rows | worst gap | "
             "training bound (median) | acc. on the rest | cost, train / rest (worst) | constant trees | "
             "not proven | 90 % interval holds |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (name, depth, notion, setting), part in refused.groupby(["dataset", "depth", "notion", "setting"]):
        lines.append(f"| {name} | {depth} | {notion.replace('_', ' ')} | {setting} | {len(part)} | refused in {len(part)} "
                     f"draws: {part['message'].iloc[0].split(':')[0]} |  |  |  |  |  |  |  |  |")
    shown = {m for m in PROMISE_METHODS if m in set(df.setting) and (settings is None or m in settings)}
    order = ["today"] + [m for m in PROMISE_METHODS if m in shown]
    for (name, depth, notion), cell in df.groupby(["dataset", "depth", "notion"], sort=True):
        for setting in order:
            part = cell[cell.setting == setting]
            n = len(part)
            if not n:
                continue
            joined = part.merge(today.loc[(name, depth, notion)].reset_index()[["draw", "train_accuracy", "population_accuracy"]],
                                on="draw", suffixes=("", "_today"))
            cost_t = 100 * (joined["train_accuracy_today"] - joined["train_accuracy"])
            cost_r = 100 * (joined["population_accuracy_today"] - joined["population_accuracy"])
            cost = "" if setting == "today" else f"{cost_t.mean():.2f} / {cost_r.mean():.2f} ({cost_r.max():.2f})"
            lines.append(
                f"| {name} | {depth} | {notion.replace('_', ' ')} | {setting} | {n} | "
                f"{_share(int(part['exceeds'].sum()), n)} | {int((part['population_gap_all'] > DELTA).sum())} | "
                f"{100 * part['population_gap'].max():.1f} pp | {100 * part['training_bound'].median():.2f} pp | "
                f"{100 * part['population_accuracy'].mean():.2f} % | {cost} | {int(part['constant'].sum())} | "
                f"{int((part['status'] != 'optimal').sum())} | {int(part['covered'].sum())} of {n} |"
            )
    lines += ["", "Optimism of the fit at delta (pp): the truth is the mean over draws of (gap on the rest - training gap)"
              " of `today` (n rows) and `today_half` (n/2 rows), folded and directed; the estimates are the methods' "
              "(rescaled to n rows / as measured at n/2 rows), mean and standard deviation over draws.", "",
              "| data | depth | notion | draws | truth n: folded / directed (se) | truth n/2: directed (se) | "
              "ratio n/2 : n | " + " | ".join(f"{m}: estimate (sd) / at n/2" for m in ("subsample", "bootstrap")
                                              if m in shown) + " |",
              "|---|---|---|---|---|---|---|" + "---|" * len([m for m in ("subsample", "bootstrap") if m in shown])]
    for (name, depth, notion), cell in df.groupby(["dataset", "depth", "notion"], sort=True):
        t = cell[cell.setting == "today"]
        h = cell[cell.setting == "today_half"]
        folded = 100 * (t["population_gap"] - t["train_gap"])
        directed = 100 * t["excess_directed"]
        directed_h = 100 * h["excess_directed"]
        se = directed.std(ddof=1) / np.sqrt(max(1, len(directed)))
        se_h = directed_h.std(ddof=1) / np.sqrt(max(1, len(directed_h)))
        ratio = directed_h.mean() / directed.mean() if directed.mean() else float("nan")
        cols = []
        for m in ("subsample", "bootstrap"):
            if m not in shown:
                continue
            e = cell[cell.setting == m]
            cols.append(f"{100 * e['optimism'].mean():.2f} ({100 * e['optimism'].std(ddof=1):.2f}) / "
                        f"{100 * e['optimism_at_resample'].mean():.2f}")
        lines.append(f"| {name} | {depth} | {notion.replace('_', ' ')} | {len(t)} | {folded.mean():.2f} / "
                     f"{directed.mean():.2f} ({se:.2f}) | {directed_h.mean():.2f} ({se_h:.2f}) | {ratio:.2f} | "
                     + " | ".join(cols) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(POPULATIONS), choices=list(POPULATIONS))
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--first-draw", type=int, default=0, help="draws first-draw .. first-draw + draws - 1")
    parser.add_argument("--depths", nargs="+", type=int, default=[2, 3])
    parser.add_argument("--time-limit", type=float, default=120.0, help="seconds per promise (shared by its fits)")
    parser.add_argument("--methods", nargs="+", default=[next(iter(PROMISE_METHODS))], choices=list(PROMISE_METHODS),
                        help="methods of fairness_confidence to run")
    parser.add_argument("--notions", nargs="+", default=list(NOTIONS), choices=list(NOTIONS))
    parser.add_argument("--out", default="benchmarks/results/fairness_promise.csv")
    parser.add_argument("--summary", help="print the summary tables of a CSV and stop")
    parser.add_argument("--summary-draws", type=int, default=None, help="summarise draws 0 .. N - 1 only")
    parser.add_argument("--summary-settings", nargs="+", default=None, choices=list(PROMISE_METHODS),
                        help="summarise these methods only (besides today)")
    args = parser.parse_args(argv)
    if args.summary:
        print(summary(args.summary, args.summary_draws, args.summary_settings))
        return 0
    run(args)
    print(summary(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
