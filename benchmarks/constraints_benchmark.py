"""Depth 4 under many constraint rows, and statistical parity on a million rows: our fit
against pystreed where it has the task, interleaved in one run.

Instances (``--instances``):

* ``german-csp``, ``adult-csp``: conditional statistical parity, delta 0.01, depth 4,
  training split 1 of the fair-tree paper's German credit (binary age, legitimate
  factor: credit history) and Adult (sex; education); pystreed has no conditional task;
* ``sp-1m``: statistical parity 0.05, depth 3, a generated million-row table
  (:func:`synthetic_sp`: 12 standard normal columns and a 5-level category, two
  groups, ``y = [x0 + x1 - x2 + 0.5 g + N(0, 1) > 0.5]``, seed 0), the same rows for
  pystreed (its group-fairness task on our binary features, two groups);
* ``hiring-1m`` / ``hiring-100k``: the dashboard's hiring table at a million / 100,000
  rows, statistical parity 0.05 on gender, depth 3.

Each of ours is run twice when ``--encodings both``: with the default thresholds
(``max_thresholds=16``) and with the earlier 5 quantile buckets (``n_buckets=5``, the
encoding the issue measured).  Every tree is re-measured on its predictions
(``constraint_checks_``).

    python -m benchmarks.constraints_benchmark --instances german-csp adult-csp sp-1m --limit 60
"""

from __future__ import annotations

import argparse
import csv
import time

import numpy as np
import pandas as pd

from benchmarks.fairness_benchmark import DATASETS as FAIR, load_part
from strongtree_core import StrongTreeClassifier

FIELDS = ["instance", "method", "encoding", "rows", "status", "certified", "objective", "bound", "gap_pct", "wall_s",
          "cpu_s", "first_tree_s", "checks_ok", "note"]


def synthetic_sp(rows: int, seed: int = 0) -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    """The generated statistical-parity table of the module docstring: X, y, group."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(rows, 12)), columns=[f"x{j}" for j in range(12)])
    X["kind"] = rng.choice(list("abcde"), size=rows)
    group = pd.Series(rng.integers(0, 2, rows).astype(str), name="group")
    y = ((X["x0"] + X["x1"] - X["x2"] + group.astype(int) * 0.5 + rng.normal(0, 1, rows)) > 0.5).astype(int)
    return X, y, group


def instance(name: str):
    """(X, y, fit keywords, estimator keywords, depth) of an instance."""
    if name in ("german-csp", "adult-csp"):
        ds = FAIR[name.split("-")[0]]
        part = load_part(ds, "train", 1)
        return (part.X, part.y, dict(sensitive_features=part.group, legitimate_features=part.legit),
                dict(fairness="conditional_statistical_parity", fairness_bound=0.01, pos_label=ds.positive), 4)
    if name == "sp-1m":
        X, y, group = synthetic_sp(1_000_000)
        return X, y, dict(sensitive_features=group), dict(fairness="statistical_parity", fairness_bound=0.05,
                                                          pos_label=1), 3
    if name.startswith("hiring"):
        from strongtree_studio.data.demo_tables import make_hiring

        df = make_hiring(n_rows=1_000_000 if name == "hiring-1m" else 100_000)
        X, y = df.drop(columns="hired"), df["hired"]
        return X, y, dict(sensitive_features="gender"), dict(fairness="statistical_parity", fairness_bound=0.05,
                                                             pos_label="yes"), 3
    raise SystemExit(f"unknown instance {name!r}")


def run_ours(name: str, X, y, fit_kw, est_kw, depth: int, limit: float, encoding: str) -> dict:
    params = dict(est_kw)
    if encoding == "5 buckets":
        params["n_buckets"] = 5
    first = []
    w0, c0 = time.perf_counter(), time.process_time()

    def progress(ev) -> None:
        if ev.tree is not None and not first:
            first.append(time.perf_counter() - w0)

    model = StrongTreeClassifier(depth=depth, time_limit=limit, **params).fit(X, y, progress=progress, **fit_kw)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    r = model.record_
    return dict(instance=name, method="ours", encoding=encoding, rows=len(y), status=r.status, certified=r.certified,
                objective=r.objective, bound=r.bound, gap_pct=None if r.gap is None else 100 * r.gap, wall_s=wall,
                cpu_s=cpu, first_tree_s=None if not first else first[0],
                checks_ok=all(c["satisfied"] for c in model.constraint_checks_), note=r.choice[:200])


def run_streed(name: str, X, y, fit_kw, est_kw, depth: int, limit: float, encoding: str) -> dict:
    """pystreed's group-fairness task on the same binary features (two groups only)."""
    from strongtree_core.accel import streed_solve
    from strongtree_core.encoding import TableEncoder, collapse_patterns
    from strongtree_core.encoding.groups import encode_groups
    from strongtree_core.formulation.fairness_constraints import FAIRNESS_NOTIONS
    from strongtree_core.formulation.spec import TreeSpec

    if est_kw["fairness"] != "statistical_parity":
        return dict(instance=name, method="pystreed", encoding=encoding, rows=len(y), status="unsupported",
                    certified=False, objective=None, bound=None, gap_pct=None, wall_s=0.0, cpu_s=0.0,
                    first_tree_s=None, checks_ok=True, note="pystreed has no conditional statistical parity task")
    group = fit_kw["sensitive_features"]
    group = X[group] if isinstance(group, str) else group
    features = X.drop(columns=[group.name]) if group.name in X.columns else X
    classes, y_idx = np.unique(np.asarray(y), return_inverse=True)
    encoder = TableEncoder(n_buckets=5) if encoding == "5 buckets" else TableEncoder(max_thresholds=16)
    if encoding == "5 buckets":
        plan = encoder.fit(features)
    else:
        plan, _ = encoder.fit_with_reference(features, target=y_idx, reference_depth=depth)
    coding = encode_groups(pd.DataFrame({"g": np.asarray(group)}), role="protected")
    data = collapse_patterns(plan.transform(features), y_idx, classes.size, group=coding.codes)
    positive = int(np.flatnonzero(classes == est_kw["pos_label"])[0])
    constraint = FAIRNESS_NOTIONS["statistical_parity"](est_kw["fairness_bound"], positive, group_levels=coding.levels)
    spec = TreeSpec(depth=depth, pos_label=positive, side_constraints=(constraint,))
    w0, c0 = time.perf_counter(), time.process_time()
    found = streed_solve(data, spec, time_limit=limit)
    return dict(instance=name, method="pystreed", encoding=encoding, rows=len(y), status=found.status,
                certified=found.certified, objective=found.objective, bound=None, gap_pct=None,
                wall_s=time.perf_counter() - w0, cpu_s=time.process_time() - c0, first_tree_s=None, checks_ok=True,
                note=found.reason[:200])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", nargs="+", default=["german-csp", "adult-csp", "sp-1m", "hiring-100k", "hiring-1m"])
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--encodings", choices=["default", "5 buckets", "both"], default="both")
    ap.add_argument("--streed", action="store_true", help="pystreed side by side where it has the task")
    ap.add_argument("--csv", default=None)
    ap.add_argument("--n-jobs", type=int, nargs="+", default=[1],
                    help="threads of our exact search; several values run each instance once per value, interleaved")
    args = ap.parse_args(argv)
    encodings = ["default", "5 buckets"] if args.encodings == "both" else [args.encodings]
    rows = []
    for name in args.instances:
        X, y, fit_kw, est_kw, depth = instance(name)
        binary_only = name.endswith("-csp")  # German and Adult come one-hot encoded: one encoding
        for encoding in (["default"] if binary_only else encodings):
            runs = [(run_ours, {**est_kw, "n_jobs": n}) for n in args.n_jobs]
            if args.streed:
                runs.append((run_streed, est_kw))
            for run, kw in runs:  # interleaved: ours (each n_jobs), then pystreed on the same features
                row = run(name, X, y, fit_kw, kw, depth, args.limit, encoding)
                if run is run_ours:
                    row["method"] = f"ours, n_jobs={kw['n_jobs']}"
                rows.append(row)
                print(_line(row), flush=True)
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=FIELDS)
            writer.writeheader()
            writer.writerows(rows)
    return 0


def _line(r: dict) -> str:
    num = lambda v, fmt: "" if v is None else format(v, fmt)  # noqa: E731
    return (f"| {r['instance']} | {r['method']} | {r['encoding']} | {r['rows']:,} | {r['status']} | "
            f"{num(r['objective'], ',.0f')} | {num(r['bound'], ',.0f')} | {num(r['gap_pct'], '.2f')} | "
            f"{r['wall_s']:.1f} | {r['cpu_s']:.1f} | {num(r['first_tree_s'], '.2f')} | {r['checks_ok']} | {r['note']} |")


if __name__ == "__main__":
    raise SystemExit(main())
