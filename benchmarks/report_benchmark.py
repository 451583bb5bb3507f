"""The HTML report: how long it takes to make, how large it is, and the costs it states.

For each table (the generated hiring table, COMPAS with its race codes named, German credit), the
rows are split 75/25 (seed 0, stratified) as the dashboard does, a depth-2 tree with statistical
parity at 5 pp and the same tree without the constraint are solved, then the report is made with
Graphviz's ``dot`` and with the built-in layout, alternately (``ROUNDS`` each, interleaved so the
shared machine's load falls on both alike).  Prints one table row per table: rows, the seconds of
each drawing route (median), the file's size, and the cost of fairness and of readability the
report states.

    python -m benchmarks.report_benchmark
"""

from __future__ import annotations

import shutil
import statistics
import time

import pandas as pd

from strongtree_core import StrongTreeClassifier
from strongtree_core.datasets import make_hiring
from strongtree_core.report.build import ReportInput, build_report, compared_models, comparison_rows
from strongtree_core.report.cost import cost_of_fairness
from strongtree_core.report.rows import split_rows
from strongtree_core.tree.context import apply_codes

from benchmarks.common import FAIRNESS_DATA

ROUNDS = 3
BOUND = 0.05
RACE = {"race": {"kind": "auto", "labels": {"1": "African-American", "2": "Caucasian", "3": "Hispanic",
                                            "4": "Other"}}}


def tables() -> list[tuple[str, pd.DataFrame, str, str, object]]:
    """(name, table, target, protected column, positive class)."""
    out = [("hiring (generated)", make_hiring(800, seed=0), "hired", "gender", "yes")]
    compas = FAIRNESS_DATA / "compas" / "compas.csv"
    if compas.exists():
        out.append(("COMPAS (race named)", apply_codes(pd.read_csv(compas), RACE), "target", "race", 1))
    german = FAIRNESS_DATA / "german" / "german.csv"
    if german.exists():
        out.append(("German credit", pd.read_csv(german), "target", "age", 2))
    return out


def main() -> None:
    print(f"dot installed: {shutil.which('dot') is not None}; {ROUNDS} rounds per route, interleaved\n")
    print("| table | rows (train / test) | fair tree | report, dot (s) | report, built-in (s) | HTML (KB) | "
          "stated on the test rows |")
    print("|---|---|---|---|---|---|---|")
    for name, frame, target, protected, pos in tables():
        rows = split_rows(frame, target, 0.25, 0, True)
        X = rows.train.drop(columns=[target])
        params = dict(depth=2, time_limit=60, pos_label=pos)
        fair = StrongTreeClassifier(**params, fairness="statistical_parity", fairness_bound=BOUND).fit(
            X, rows.train[target], sensitive_features=[protected]).tree_
        free = StrongTreeClassifier(**params).fit(X.drop(columns=[protected]), rows.train[target]).tree_
        inp = ReportInput(fair, rows.train, rows.test, name, pos_label=pos, protected=(protected,),
                          fairness=("statistical_parity",), fairness_bound=BOUND, settings=fair.context.settings,
                          unconstrained=free)
        times: dict[str, list[float]] = {"graphviz": [], "builtin": []}
        size = 0
        for _ in range(ROUNDS):
            for engine in times:
                start = time.perf_counter()
                html = build_report(inp, engine=engine)
                times[engine].append(time.perf_counter() - start)
                size = max(size, len(html.encode("utf-8")))
        cost = cost_of_fairness(comparison_rows(inp, compared_models(inp), "statistical_parity"),
                                "statistical_parity", "Statistical parity", True)
        print(f"| {name} | {len(rows.train):,} / {len(rows.test):,} | {fair.record.status} | "
              f"{statistics.median(times['graphviz']):.2f} | {statistics.median(times['builtin']):.2f} | "
              f"{size / 1024:.0f} | {cost.headline().removeprefix('On the test rows, ')} |")


if __name__ == "__main__":
    main()
