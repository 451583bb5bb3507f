"""The exact search against STreeD (pystreed), interleaved, instance by instance.

Sections (``--sections``):

``race``
    36 instances: the paper's 12 categorical datasets (full data) and 6 mixed
    UCI tables binarized in the style of DL8.5's published benchmark files, at
    depths 3 and 4, accuracy objective.  Per instance and repeat, in turn: the
    exact search alone (``exact_solve`` on the table's distinct rows, built once
    outside the clock), the whole ``StrongTreeClassifier.fit`` on the 0/1 table
    (checks, encoding, starts, search, re-scoring: the search plus the fixed
    cost of a fit), and ``pystreed.STreeDClassifier.fit`` on the same 0/1 table.
    Medians over the repeats; ratios of medians; both optima (correct rows) and
    the oracle's where it has one.
``wide``
    Tables of 100-900 binary features at depths 3 and 4: sonar, wdbc and
    ionosphere cut in 5 quantile buckets (the library's thermometer encoding,
    240 / 120 / 126 features) and DL8.5-style tables; the search with a 10 s
    limit (certified or not), pystreed once with ``--streed-limit``.
``jobs``
    One depth-4 search with ``n_jobs=1`` and ``n_jobs=2``, interleaved, with
    the machine's load average before and after.

DL8.5-style binarization (``dl85_binarize``): DL8.5's files give each
numerical attribute seven thresholds, each as two complementary 0/1 columns
(``x <= t`` and ``x > t``); here the thresholds are the attribute's octiles
(distinct values only), and a categorical attribute is one-hot.

The compiled kernels are built first (``python -m strongtree_core.accel.prepare``)
so that no timed fit runs the numpy program while a build is under way.

    python -m benchmarks.dp_against_streed --repeats 5
    python -m benchmarks.dp_against_streed --sections wide --streed-limit 60
    python -m benchmarks.dp_against_streed --write      # a section of RESULTS.md
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import DATASETS, REPO, load_table, oracle_table, require_data
from benchmarks.exact_benchmark import mixed_tables
from strongtree_core import StrongTreeClassifier
from strongtree_core.accel.search import exact_solve
from strongtree_core.encoding import TableEncoder
from strongtree_core.encoding.patterns import collapse_patterns
from strongtree_core.formulation.spec import TreeSpec

#: The six mixed tables of the race, binarized DL8.5-style.
RACE_MIXED = ("iris", "wine", "seeds", "transfusion", "banknote", "ilpd")
#: Wide tables: (name, encoding), encoding "buckets5" or "dl85".
WIDE = (("sonar", "buckets5"), ("wdbc", "buckets5"), ("ionosphere", "buckets5"), ("climate", "dl85"),
        ("parkinsons", "dl85"), ("wdbc", "dl85"), ("ionosphere", "dl85"), ("sonar", "dl85"))
OCTILES = np.arange(1, 8) / 8
#: The clock of the timed calls: wall time, or (``--clock cpu``) the process's CPU time, which
#: a busy machine's other work does not add to (a small fit preempted once took 4 ms more).
CLOCK = [time.perf_counter]
RESULTS = REPO / "benchmarks" / "RESULTS.md"
BEGIN = "<!-- dp_against_streed: begin -->"
END = "<!-- dp_against_streed: end -->"


# ------------------------------------------------------------------ data
def dl85_binarize(X: pd.DataFrame) -> np.ndarray:
    """Each numerical column: its octiles (distinct values) as thresholds, each as two
    complementary 0/1 columns ``x <= t`` and ``x > t``; other columns one-hot."""
    cols = []
    for c in X.columns:
        v = X[c]
        if pd.api.types.is_numeric_dtype(v) and v.nunique() > 2:
            x = v.to_numpy(dtype=float)
            for t in np.unique(np.quantile(x, OCTILES, method="lower")):
                if t < x.max():
                    below = (x <= t).astype(np.int8)
                    cols += [below, 1 - below]
        else:
            for level in pd.unique(v):
                cols.append((v == level).to_numpy().astype(np.int8))
    return np.column_stack(cols)


def table(name: str, encoding: str = "dl85") -> tuple[np.ndarray, np.ndarray, int]:
    """A 0/1 feature matrix, labels 0..K-1 and K."""
    if name in DATASETS:
        df = load_table(name)
        classes, y = np.unique(df.pop("target").to_numpy(), return_inverse=True)
        return df.to_numpy().astype(np.int8), y, classes.size
    X, labels = mixed_tables()[name]
    classes, y = np.unique(labels, return_inverse=True)
    if encoding == "buckets5":
        Xb = np.asarray(TableEncoder(n_buckets=5).fit(X).transform(X)).astype(np.int8)
    else:
        Xb = dl85_binarize(pd.DataFrame(X))
    return Xb, y, classes.size


# -------------------------------------------------------------- one of each
def streed_fit(X, y, depth: int, limit: float) -> tuple[float, int, bool]:
    import pystreed

    model = pystreed.STreeDClassifier(max_depth=depth, time_limit=limit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = CLOCK[0]()
        model.fit(X.astype(np.intc), y.astype(np.intc))
        seconds = CLOCK[0]() - t0
    correct = int(round(model.fit_result.score() * len(y)))
    return seconds, correct, bool(model.fit_result.is_optimal())


def search(data, depth: int, limit: float, n_jobs: int = 1) -> tuple[float, int | None, bool]:
    t0 = CLOCK[0]()
    res = exact_solve(data, TreeSpec(depth=depth), time_limit=limit, n_jobs=n_jobs)
    seconds = CLOCK[0]() - t0
    value = None if res.objective is None else int(round(res.objective))
    return seconds, value, res.status == "optimal"


def whole_fit(X, y, depth: int, limit: float) -> tuple[float, int, bool]:
    t0 = CLOCK[0]()
    model = StrongTreeClassifier(depth=depth, time_limit=limit).fit(X, y)
    seconds = CLOCK[0]() - t0
    return seconds, int((model.predict(X) == y).sum()), model.record_.status == "optimal"


# ------------------------------------------------------------------ sections
def run_race(args, write) -> None:
    oracle = oracle_table()
    names = [(n, "categorical") for n in DATASETS] + [(n, "dl85") for n in RACE_MIXED]
    for name, encoding in names:
        if args.datasets and name not in args.datasets:
            continue
        X, y, K = table(name, encoding)
        data = collapse_patterns(X, y, K)
        for depth in args.depths:
            times = {"search": [], "fit": [], "streed": []}
            outcome = {}
            for _ in range(args.repeats):
                s, v, c = search(data, depth, args.limit)
                times["search"].append(s)
                outcome["search"] = (v, c)
                f, v2, c2 = whole_fit(X, y, depth, args.limit)
                times["fit"].append(f)
                outcome["fit"] = (v2, c2)
                t, v3, c3 = streed_fit(X, y, depth, args.limit)
                times["streed"].append(t)
                outcome["streed"] = (v3, c3)
            med = {k: statistics.median(v) for k, v in times.items()}
            optimum = None if (name, depth) not in oracle else data.n_rows - oracle[(name, depth)]
            write(dict(section="race", dataset=name, encoding=encoding, rows=data.n_rows, patterns=data.n_patterns,
                       features=data.n_features, depth=depth, search_s=med["search"], fit_s=med["fit"],
                       fixed_s=med["fit"] - med["search"], streed_s=med["streed"],
                       search_ratio=med["search"] / med["streed"], fit_ratio=med["fit"] / med["streed"],
                       ours=outcome["search"][0], ours_fit=outcome["fit"][0], streed=outcome["streed"][0],
                       oracle=optimum, certified=outcome["search"][1] and outcome["fit"][1],
                       streed_certified=outcome["streed"][1], repeats=args.repeats, load=os.getloadavg()[0]))


def run_wide(args, write) -> None:
    for name, encoding in WIDE:
        if args.datasets and name not in args.datasets:
            continue
        X, y, K = table(name, encoding)
        data = collapse_patterns(X, y, K)
        for depth in args.depths:
            s, v, c = search(data, depth, args.wide_limit, args.n_jobs)
            t, v3, c3 = streed_fit(X, y, depth, args.streed_limit)
            write(dict(section="wide", dataset=name, encoding=encoding, rows=data.n_rows, patterns=data.n_patterns,
                       features=data.n_features, depth=depth, search_s=s, streed_s=t, search_ratio=s / t, ours=v,
                       streed=v3, certified=c, streed_certified=c3, repeats=1, load=os.getloadavg()[0],
                       n_jobs=args.n_jobs, limit=args.wide_limit))


def run_jobs(args, write) -> None:
    for name, encoding in (("kr-vs-kp", "categorical"), ("wdbc", "buckets5")):
        if args.datasets and name not in args.datasets:
            continue
        X, y, K = table(name, encoding)
        data = collapse_patterns(X, y, K)
        load_before = os.getloadavg()
        times = {1: [], 2: []}
        values = set()
        for _ in range(args.repeats):
            for n_jobs in (1, 2):
                s, v, c = search(data, 4, args.wide_limit * 6, n_jobs)
                times[n_jobs].append(s)
                values.add((v, c))
        load_after = os.getloadavg()
        one, two = statistics.median(times[1]), statistics.median(times[2])
        write(dict(section="jobs", dataset=name, encoding=encoding, rows=data.n_rows, patterns=data.n_patterns,
                   features=data.n_features, depth=4, one_s=one, two_s=two, speedup=one / two,
                   same=len(values) == 1, load=f"{load_before[0]:.1f} -> {load_after[0]:.1f}",
                   repeats=args.repeats))


# ------------------------------------------------------------------ tables
def _f(x, digits=3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10, method="inclusive")[-1] if len(values) > 1 else values[0]


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


def markdown(rows: list[dict], loads: tuple[str, str] | None = None) -> str:
    out = []
    race = [r for r in rows if r["section"] == "race"]
    if race:
        out += ["| dataset | encoding | rows | features | depth | search s | fit s | fixed s | STreeD s | "
                "search / STreeD | fit / STreeD | ours | STreeD | oracle | certified (ours / STreeD) |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in race:
            out.append(f"| {r['dataset']} | {r['encoding']} | {r['rows']} | {r['features']} | {r['depth']} | "
                       f"{_f(r['search_s'])} | {_f(r['fit_s'])} | {_f(r['fixed_s'])} | {_f(r['streed_s'])} | "
                       f"{_f(r['search_ratio'], 2)} | {_f(r['fit_ratio'], 2)} | {_f(r['ours'])} | {_f(r['streed'])} | "
                       f"{_f(r['oracle'])} | {'yes' if r['certified'] else 'NO'} / "
                       f"{'yes' if r['streed_certified'] else 'no'} |")
        s = [r["search_ratio"] for r in race]
        f = [r["fit_ratio"] for r in race]
        equal = sum(r["ours"] == r["streed"] == r["ours_fit"] for r in race)
        out += ["", f"{len(race)} instances: search / STreeD median {statistics.median(s):.2f}, 90th percentile "
                    f"{_p90(s):.2f}, worst {max(s):.2f}; fit / STreeD median {statistics.median(f):.2f}, 90th "
                    f"percentile {_p90(f):.2f}, worst {max(f):.2f}; optima equal on "
                    f"{equal} of {len(race)}; certified {sum(r['certified'] for r in race)} of {len(race)} "
                    f"({'CPU' if CLOCK[0] is time.process_time else 'wall'} seconds)."]
    wide = [r for r in rows if r["section"] == "wide"]
    if wide:
        out += ["", f"| dataset | encoding | rows | features | depth | search s (limit {float(wide[0].get('limit', 10.0)):g} s, "
                    f"n_jobs={wide[0].get('n_jobs', 1)}) "
                    "| certified | ours | STreeD s | STreeD certified | STreeD |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in wide:
            out.append(f"| {r['dataset']} | {r['encoding']} | {r['rows']} | {r['features']} | {r['depth']} | "
                       f"{_f(r['search_s'], 2)} | {'yes' if r['certified'] else 'NO'} | {_f(r['ours'])} | "
                       f"{_f(r['streed_s'], 2)} | {'yes' if r['streed_certified'] else 'no'} | {_f(r['streed'])} |")
    if loads is not None:
        out += ["", f"Load average (1, 5, 15 min) at the start: {loads[0]}; at the end: {loads[1]}."]
    jobs = [r for r in rows if r["section"] == "jobs"]
    if jobs:
        out += ["", "| dataset | features | depth | n_jobs=1 s | n_jobs=2 s | speed-up | same optimum | load average |",
                "|---|---|---|---|---|---|---|---|"]
        for r in jobs:
            out.append(f"| {r['dataset']} ({r['encoding']}) | {r['features']} | 4 | {_f(r['one_s'])} | {_f(r['two_s'])} | "
                       f"{_f(r['speedup'], 2)} | {'yes' if r['same'] else 'NO'} | {r['load']} |")
    return "\n".join(out)


def write_results(text: str, heading: str) -> None:
    """Put ``text`` in RESULTS.md between this script's markers (a new section the first time)."""
    body = RESULTS.read_text()
    block = f"{BEGIN}\n{heading}\n\n{text}\n{END}"
    if BEGIN in body:
        start, end = body.index(BEGIN), body.index(END) + len(END)
        body = body[:start] + block + body[end:]
    else:
        body = body.rstrip("\n") + "\n\n" + block + "\n"
    RESULTS.write_text(body)


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sections", nargs="+", default=["race", "wide", "jobs"], choices=["race", "wide", "jobs"])
    p.add_argument("--datasets", nargs="+", default=None)
    p.add_argument("--depths", nargs="+", type=int, default=[3, 4])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--limit", type=float, default=60.0, help="time limit of the race's fits (both sides)")
    p.add_argument("--wide-limit", type=float, default=10.0, help="our time limit on the wide tables")
    p.add_argument("--streed-limit", type=float, default=60.0, help="pystreed's time limit on the wide tables")
    p.add_argument("--n-jobs", type=int, default=1, help="threads of our search on the wide tables")
    p.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                   help="time the calls by the wall clock or by the process's CPU time")
    p.add_argument("--out", type=Path, default=Path("benchmarks/out/dp_against_streed.csv"))
    p.add_argument("--write", action="store_true", help="put the tables in benchmarks/RESULTS.md")
    p.add_argument("--heading", default="## 23. The exact search against STreeD (`dp_against_streed.py`)")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse(argv)
    CLOCK[0] = time.process_time if args.clock == "cpu" else time.perf_counter
    require_data()
    from strongtree_core.accel import prepare

    prepare.main([])  # compiled kernels in place before anything is timed
    warm_X, warm_y, warm_K = table("monk1")
    for d in (3, 4):  # first calls (imports, lazy loads) outside the clock
        search(collapse_patterns(warm_X, warm_y, warm_K), d, 10)
        whole_fit(warm_X, warm_y, d, 10)
        streed_fit(warm_X, warm_y, d, 10)
    rows: list[dict] = []
    fields: list[str] = []
    load_start = _load()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="") as handle:
        writer = None

        def write(row: dict) -> None:
            nonlocal writer, fields
            rows.append(row)
            if writer is None or any(k not in fields for k in row):
                fields = list(dict.fromkeys([*fields, *row]))
                writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
                writer.writeheader()
            writer.writerow(row)
            handle.flush()
            print(" ".join(f"{k}={_f(v) if isinstance(v, float) else v}" for k, v in row.items()), flush=True)

        for section in args.sections:
            {"race": run_race, "wide": run_wide, "jobs": run_jobs}[section](args, write)
    text = markdown(rows, (load_start, _load()))
    print(text)
    if args.write:
        write_results(text, args.heading)
    return 0


if __name__ == "__main__":
    sys.exit(main())
