"""What ``max_thresholds=None`` keeps, and what keeping every cut costs.

    python -m benchmarks.threshold_scope [--depths 2 3] [--limit 60] [--repeats 3]

For each table of /work/shared/datasets/mixed and each depth, the estimator is fitted with its
default (``max_thresholds=None``: at most 16 thresholds per numeric column, CART's among them) and
with every distinct cut (``max_thresholds`` = the most distinct cuts of one column, read from the
default fit's ``record_.scope.widest_column``), interleaved ``--repeats`` times (the machine is shared:
the two are timed side by side, and the median is kept).  Printed per row: the thresholds the default
kept of the distinct cuts, both fits' wall times and outcomes, and whether the default's certificate
was beaten by the fit over every cut (its proven optimum above the default's bound): the cases the
words "optimal over the N of M thresholds kept" exist for.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

from benchmarks.exact_benchmark import mixed_tables
from strongtree_core import StrongTreeClassifier
from strongtree_core.tree.claim import claim

TABLES = ("iris", "wine", "transfusion", "banknote", "seeds", "ilpd", "wdbc", "ionosphere")


def fit(X, y, depth: int, limit: float, max_thresholds: int | None) -> tuple[float, StrongTreeClassifier]:
    clf = StrongTreeClassifier(depth=depth, time_limit=limit, max_thresholds=max_thresholds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        clf.fit(X, y)
        return time.perf_counter() - t0, clf


def outcome(clf: StrongTreeClassifier) -> str:
    record = clf.record_
    return f"{record.objective:g} / {'–' if record.bound is None else format(record.bound, 'g')} {claim(record).label}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--limit", type=float, default=60.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tables", nargs="+", default=list(TABLES))
    args = parser.parse_args()
    tables = mixed_tables()
    print("| table | rows | depth | thresholds kept (default) | default: s | every cut: s | ratio | default: "
          "objective / bound | every cut: objective / bound | default beaten |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.tables:
        X, y = tables[name]
        X = X.set_axis([f"c{j}" for j in range(X.shape[1])], axis=1)
        for depth in args.depths:
            _, first = fit(X, y, depth, args.limit, None)
            widest = first.record_.scope.widest_column
            times: dict[str, list[float]] = {"default": [], "every": []}
            last: dict[str, StrongTreeClassifier] = {}
            for _ in range(args.repeats):
                for key, value in (("default", None), ("every", widest)):
                    seconds, clf = fit(X, y, depth, args.limit, value)
                    times[key].append(seconds)
                    last[key] = clf
            scope = last["default"].record_.scope
            d, e = statistics.median(times["default"]), statistics.median(times["every"])
            beaten = (last["every"].record_.certified and last["default"].record_.bound is not None
                      and last["every"].record_.objective > last["default"].record_.bound + 1e-9)
            print(f"| {name} | {len(X):,} | {depth} | {scope.thresholds:,} of {scope.distinct_thresholds:,} | "
                  f"{d:.2f} | {e:.2f} | {e / d:.1f}x | {outcome(last['default'])} | {outcome(last['every'])} | "
                  f"{'yes' if beaten else 'no'} |", flush=True)


if __name__ == "__main__":
    main()
