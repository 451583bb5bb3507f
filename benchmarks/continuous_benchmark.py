"""Continuous columns at full resolution: our fit against CART (and pystreed) on a
generated table with a known rule.

The table (:func:`continuous_table`): ``columns`` independent standard normal
columns ``x0, x1, ...``; the true class is

    if x2 <= 0.6:  (x0 > 0) XOR (x1 > 0)        (no single split on x0 or x1 helps)
    else:          x3 + 0.5 x4 > 0.2            (oblique: only approximated by splits)

and each label is flipped with probability ``noise`` (default 0.1).  The
training table uses seed ``seed``, the test table ``seed + 1``, both ``rows``
rows.  Every other column is noise.

For each depth, in one run and interleaved (CART, ours, ours with the earlier
5-bucket rule, pystreed when installed and asked for), the script prints the
training rows classified correctly, the test errors, the status and the
bound, wall and CPU seconds.  ``--csv`` keeps the rows.

    python -m benchmarks.continuous_benchmark --rows 200000 --columns 30 --depths 4 --limit 60
"""

from __future__ import annotations

import argparse
import csv
import time

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

from strongtree_core import StrongTreeClassifier
from strongtree_core.encoding import TableEncoder, collapse_patterns
from strongtree_core.formulation import TreeSpec

FIELDS = ["rows", "columns", "depth", "method", "thresholds", "train_correct", "test_errors", "status", "certified",
          "bound", "first_tree", "wall_s", "cpu_s", "note"]


def continuous_table(rows: int, columns: int = 30, seed: int = 0, noise: float = 0.1) -> tuple[pd.DataFrame, np.ndarray]:
    """The generated table of the module docstring: features and 0/1 labels."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(rows, columns)), columns=[f"x{j}" for j in range(columns)])
    xor = (X["x0"] > 0) ^ (X["x1"] > 0)
    oblique = X["x3"] + 0.5 * X["x4"] > 0.2
    truth = np.where(X["x2"] <= 0.6, xor, oblique)
    flip = rng.random(rows) < noise
    return X, np.where(flip, ~truth, truth).astype(int)


def _timed(work):
    w0, c0 = time.perf_counter(), time.process_time()
    out = work()
    return out, time.perf_counter() - w0, time.process_time() - c0


def run_cart(X, y, Xt, yt, depth: int) -> dict:
    model, wall, cpu = _timed(lambda: DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y))
    return dict(method="CART (scikit-learn)", thresholds="every midpoint", train_correct=int((model.predict(X) == y).sum()),
                test_errors=int((model.predict(Xt) != yt).sum()), status="greedy", certified=False, bound=None,
                first_tree=None, wall_s=wall, cpu_s=cpu, note="")


def run_ours(X, y, Xt, yt, depth: int, limit: float, label: str, **params) -> dict:
    first = []
    t0 = time.perf_counter()

    def progress(ev) -> None:
        if ev.objective is not None and not first:
            first.append((ev.objective, time.perf_counter() - t0))

    model, wall, cpu = _timed(lambda: StrongTreeClassifier(depth=depth, time_limit=limit, **params).fit(X, y, progress=progress))
    record = model.record_
    n = model.encoding_.n_binary
    return dict(method=label, thresholds=f"{n} binary features", train_correct=int((model.predict(X) == y).sum()),
                test_errors=int((model.predict(Xt) != yt).sum()), status=record.status, certified=record.certified,
                bound=record.bound, first_tree=None if not first else f"{first[0][0]:.0f} at {first[0][1]:.1f} s",
                wall_s=wall, cpu_s=cpu, note=record.choice[:160])


def run_streed(X, y, Xt, yt, depth: int, limit: float, max_thresholds: int) -> dict:
    from strongtree_core.accel import streed_solve

    plan, _ = TableEncoder(max_thresholds=max_thresholds).fit_with_reference(X, target=y, reference_depth=depth)
    data = collapse_patterns(plan.transform(X), y, 2)
    found, wall, cpu = _timed(lambda: streed_solve(data, TreeSpec(depth=depth), time_limit=limit))
    if found.structure is None:
        return dict(method="pystreed (same features)", thresholds=f"{plan.n_binary} binary features", train_correct=None,
                    test_errors=None, status=found.status, certified=found.certified, bound=None, first_tree=None,
                    wall_s=wall, cpu_s=cpu, note=found.reason[:160])
    pred, pred_t = found.structure.predict(plan.transform(X)), found.structure.predict(plan.transform(Xt))
    return dict(method="pystreed (same features)", thresholds=f"{plan.n_binary} binary features",
                train_correct=int((pred == y).sum()), test_errors=int((pred_t != yt).sum()), status=found.status,
                certified=found.certified, bound=None, first_tree=None, wall_s=wall, cpu_s=cpu, note=found.reason[:160])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--columns", type=int, default=30)
    ap.add_argument("--depths", type=int, nargs="+", default=[4])
    ap.add_argument("--limit", type=float, default=60.0, help="seconds per fit (ours and pystreed)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--noise", type=float, default=0.1)
    ap.add_argument("--streed", action="store_true", help="also pystreed on our binary features (if installed)")
    ap.add_argument("--csv", default=None)
    args = ap.parse_args(argv)
    X, y = continuous_table(args.rows, args.columns, args.seed, args.noise)
    Xt, yt = continuous_table(args.rows, args.columns, args.seed + 1, args.noise)
    rows = []
    for depth in args.depths:
        runs = [
            lambda: run_cart(X, y, Xt, yt, depth),
            lambda: run_ours(X, y, Xt, yt, depth, args.limit, "ours, max_thresholds=16 (default)"),
            lambda: run_ours(X, y, Xt, yt, depth, args.limit, "ours, n_buckets=5 (earlier rule)", n_buckets=5),
        ]
        if args.streed:
            runs.append(lambda: run_streed(X, y, Xt, yt, depth, args.limit, 16))
        for run in runs:
            row = dict(rows=args.rows, columns=args.columns, depth=depth, **run())
            rows.append(row)
            print(_line(row), flush=True)
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=FIELDS)
            writer.writeheader()
            writer.writerows(rows)
    return 0


def _line(r: dict) -> str:
    bound = "" if r["bound"] is None else f"{r['bound']:.0f}"
    return (f"| {r['rows']:,} x {r['columns']} | {r['depth']} | {r['method']} | {r['thresholds']} | "
            f"{'' if r['train_correct'] is None else format(r['train_correct'], ',')} | "
            f"{'' if r['test_errors'] is None else format(r['test_errors'], ',')} | {r['status']} | {bound} | "
            f"{r['first_tree'] or ''} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['note']} |")


if __name__ == "__main__":
    raise SystemExit(main())
