"""Fair trees from tables too large for memory: the CLI on 10 million rows, a Dask cluster on 100 million.

``single``: the generated table of ``outofcore_data.py`` (16 flags, 4 numbers, a protected group) at
``--rows`` rows (10 million by default) in Parquet parts under ``--data`` (made when absent), fitted by
``strongtree fit`` (depth 3, statistical parity 5 pp, two threads, ``--memory-limit-gb``) in a child
process whose wall time and peak resident memory are measured (``/usr/bin/time -v``).

``cluster``: the same table at ``--rows`` rows (100 million) through a local Dask cluster of two
single-thread workers (``fit_table(scheduler=...)``): wall time, each worker's peak resident memory
(``getrusage`` in the worker), the tree; then the first ``--subset`` rows (10 million: the first parts)
through the cluster and through this machine alone, whose trees must be the same.

    python -m benchmarks.outofcore_benchmark single --data /tmp/strongtree-10m
    nice python -m benchmarks.outofcore_benchmark cluster --rows 100000000 --data /tmp/strongtree-100m --delete

The data lives under ``--data`` (never in the repository); ``--delete`` removes it afterwards.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.outofcore_data import PART_ROWS, write

FIT = ["--target", "approved", "--protected", "group", "--fairness", "statistical_parity", "--fairness-bound", "0.05",
       "--pos-label", "1", "--depth", "3"]


def ensure(rows: int, data: Path, flags: str = "sparse") -> None:
    parts = -(-rows // PART_ROWS)
    if len(list(data.glob("part-*.parquet"))) != parts:
        shutil.rmtree(data, ignore_errors=True)
        began = time.perf_counter()
        write(rows, data, flags=flags)
        print(f"generated {rows:,} rows in {parts} parts under {data} ({time.perf_counter() - began:.0f} s, "
              f"{sum(p.stat().st_size for p in data.glob('*.parquet')) / 2**20:,.0f} MB)", flush=True)


def single(args) -> None:
    ensure(args.rows, args.data, args.flags)
    command = ["/usr/bin/time", "-v", sys.executable, "-m", "strongtree_core", "fit", str(args.data), *FIT,
               "--n-jobs", "2", "--time-limit", str(args.time_limit), "--memory-limit-gb", str(args.memory_limit_gb),
               "--json"]
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - began
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1)) / 2**20
    result = json.loads(done.stdout)
    reading = result["reading"]
    print(f"command: strongtree fit {args.data} {' '.join(FIT)} --n-jobs 2 --time-limit {args.time_limit} "
          f"--memory-limit-gb {args.memory_limit_gb}")
    print(f"| rows | wall s | peak GB | status | certified | correct | bound | thresholds kept | patterns | SP measured |")
    print(f"|---|---|---|---|---|---|---|---|---|---|")
    checks = result["constraint_checks"][0]
    print(f"| {reading['rows']:,} | {wall:.1f} | {peak:.2f} | {result['status']} | {result['certified']} | "
          f"{result['objective']:,.0f} | {result['bound'] if result['bound'] is None else format(result['bound'], ',.0f')} | "
          f"{reading['thresholds_kept']} of {reading['thresholds_total']} | "
          f"{reading['rungs'][-1]['patterns']:,} | {100 * checks['measured']:.2f} pp |")
    print("rungs:", json.dumps(reading["rungs"]))
    print("ended:", reading["ended"])
    print("choice:", result["tree"]["record"]["choice"])
    print("message:", result["tree"]["record"]["message"])


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def cluster(args) -> None:
    from dask.distributed import Client, LocalCluster

    from strongtree_core import StrongTreeClassifier

    ensure(args.rows, args.data)
    fit = dict(depth=3, fairness="statistical_parity", fairness_bound=0.05, pos_label=1, time_limit=args.time_limit,
               n_jobs=2, memory_limit=int(args.memory_limit_gb * 2**30))
    roles = dict(target="approved", sensitive_features="group")
    subset = sorted(args.data.glob("part-*.parquet"))[: args.subset // PART_ROWS]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as lc, \
            Client(lc) as client:
        out = {}
        runs = (("cluster, all rows", str(args.data), lc.scheduler_address),
                ("cluster, subset", [str(p) for p in subset], lc.scheduler_address),
                ("this machine, subset", [str(p) for p in subset], None))
        for name, source, scheduler in runs[1:] if args.only_subset else runs:
            client.restart()
            began = time.perf_counter()
            clf = StrongTreeClassifier(**fit).fit_table(source, scheduler=scheduler, **roles)
            wall = time.perf_counter() - began
            workers = sorted(v / 2**30 for v in client.run(_peak_rss).values())
            out[name] = clf
            r = clf.reading_
            print(f"| {name} | {r['rows']:,} | {wall:.1f} | {', '.join(f'{w:.2f}' for w in workers)} | "
                  f"{_peak_rss() / 2**30:.2f} | {clf.record_.status} | {clf.record_.objective:,.0f} | "
                  f"{r['thresholds_kept']} of {r['thresholds_total']} | {r['rungs'][-1]['patterns']:,} |", flush=True)
            print("  rungs:", json.dumps(r["rungs"]), flush=True)
            print(f"  ended: {r['ended']}; {clf.record_.message}", flush=True)
            print("  " + clf.tree_.to_text().replace("\n", "\n  "), flush=True)
        a, b = out["cluster, subset"], out["this machine, subset"]  # the tree, its counts, its encoding (not the times)
        same = (a.tree_.to_dict()["structure"] == b.tree_.to_dict()["structure"] and a.encoding_ == b.encoding_
                and a.tree_.node_counts.tolist() == b.tree_.node_counts.tolist()
                and a.record_.objective == b.record_.objective and a.record_.bound == b.record_.bound)
        print(f"the subset's tree through the cluster and through this machine alone: {'the same' if same else 'DIFFERENT'}")
    if args.delete:
        shutil.rmtree(args.data)
        print(f"deleted {args.data}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["single", "cluster"])
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--subset", type=int, default=10_000_000)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--memory-limit-gb", type=float, default=3.0)
    parser.add_argument("--delete", action="store_true")
    parser.add_argument("--only-subset", action="store_true",
                        help="cluster: only the subset, through the cluster and through this machine")
    parser.add_argument("--flags", choices=["sparse", "dense"], default="sparse",
                        help="the flags' prevalence (outofcore_data.py); a table already under --data is used as it is")
    args = parser.parse_args()
    if args.rows is None:
        args.rows = 10_000_000 if args.mode == "single" else 100_000_000
    if args.time_limit is None:
        args.time_limit = 170.0 if args.mode == "single" else 1800.0
    (single if args.mode == "single" else cluster)(args)


if __name__ == "__main__":
    main()
