"""What a stopped depth-4 fit says about how far it may be: the bound at 0.5, 1 and 5 s.

Per table (the DL8.5-style tables of ``dp_against_streed`` and the paper's 12 categorical
tables), ``StrongTreeClassifier(depth=4, time_limit=L).fit`` on the 0/1 table for each limit
``L``: status, correct rows, the bound reported (None: "no bound yet") and whether it says
more than "every row right".  Every bound is checked against the optimum: the oracle's
(``oracle_optimal.csv``) where it has the table, else a fit certified with ``--reference``
seconds (none: not checked).  A bound below the optimum is an error and makes the run exit 1.

    python -m benchmarks.stopped_bounds
    python -m benchmarks.stopped_bounds --tables ionosphere wdbc --limits 0.5 1 5
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

from benchmarks.common import DATASETS, oracle_table, require_data
from benchmarks.dp_against_streed import RACE_MIXED, WIDE, table
from strongtree_core import StrongTreeClassifier

DL85 = tuple(RACE_MIXED) + tuple(name for name, encoding in WIDE if encoding == "dl85")
DEPTH = 4


def load() -> str:
    return " ".join(f"{v:.1f}" for v in os.getloadavg())


def fit(X, y, limit: float):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        model = StrongTreeClassifier(depth=DEPTH, time_limit=limit).fit(X, y)
        seconds = time.perf_counter() - t0
    rec = model.record_
    return seconds, rec, int((model.predict(X) == y).sum())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", nargs="+", default=list(DL85) + list(DATASETS))
    ap.add_argument("--limits", nargs="+", type=float, default=[0.5, 1.0, 5.0])
    ap.add_argument("--reference", type=float, default=60.0,
                    help="seconds of the fit that gives the optimum where the oracle has none")
    args = ap.parse_args(argv)
    require_data()
    oracle = oracle_table()
    print("| table | rows | features | optimum (source) | limit s | wall s | status | correct | bound | "
          "below the rows | valid | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    errors = 0
    for name in args.tables:
        X, y, _ = table(name, "categorical" if name in DATASETS else "dl85")
        key = (name, DEPTH)
        runs = [(limit, *fit(X, y, limit), load()) for limit in args.limits]
        optimum, source = None, "unknown"
        if key in oracle:
            optimum, source = len(y) - oracle[key], "oracle"
        if optimum is None:
            certified = [rec for _, _, rec, _, _ in runs if rec.status == "optimal" and rec.objective is not None]
            if certified:
                optimum, source = int(round(certified[0].objective)), "certified above"
            else:
                _, rec, _ = fit(X, y, args.reference)
                if rec.status == "optimal":
                    optimum, source = int(round(rec.objective)), f"certified in {rec.runtime:.0f} s"
        for limit, seconds, rec, correct, lo in runs:
            bound = rec.bound
            says = "certified" if rec.status == "optimal" else \
                "yes" if bound is not None and bound < len(y) - 1e-9 else "no"
            if optimum is None or bound is None:
                valid = "–"
            else:
                ok = bound >= optimum - 1e-6
                errors += not ok
                valid = "yes" if ok else "**NO**"
            shown = "no bound yet" if bound is None else f"{bound:,.0f}"
            print(f"| {name} | {len(y):,} | {X.shape[1]} | {'–' if optimum is None else f'{optimum:,}'} ({source}) | "
                  f"{limit:g} | {seconds:.2f} | {rec.status} | {correct:,} | {shown} | {says} | "
                  f"{valid} | {lo} |", flush=True)
    if errors:
        print(f"{errors} bounds below the optimum", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
