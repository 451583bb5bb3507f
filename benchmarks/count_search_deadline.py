"""Does the exact search answer at its deadline?  How late past its own time limit the exact
search (with the search over the groups' counts, ``strongtree_core/accel/count_search.py``)
returns, against the engine's grace (``engine.routes.EXACT_GRACE``), and where it was when
it should have stopped.

Every fit runs in a fresh process on the source tree given by ``--trees`` (before first, the
trees alternating instance by instance), through ``StrongTreeClassifier`` as a user calls it,
conditional statistical parity ``--bound`` at depth ``--depth`` on training split 1 of
``--datasets``, each time limit of ``--limits``.  ``--counts-max-rows`` sends larger tables
(Adult's 2,700 training rows) to the counts' search (``count_search.MAX_ROWS``).

The engine's call of the exact search is wrapped: the wrapper notes when it returns against
its deadline (its start plus the limit it was given), in wall seconds and in CPU seconds of the
search's thread (read by a timer thread woken at the deadline: a little less when it wakes late), whether the engine gave it up (the fit's
``choice``), and, from the deadline until it returns, samples every 5 ms where the search's
thread is (its innermost frame in ``strongtree_core``: a compiled kernel shows as the line
that called it).  One JSON line per fit goes to ``--out``; ``--summarize`` prints the table.

    python -m benchmarks.count_search_deadline --trees /tmp/before . --limits 5 10 20 40 --counts-max-rows 100000
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve()


def _where(frame) -> str:
    """The innermost frame of ``strongtree_core`` on a thread's stack, as ``file:function:line``
    (a compiled kernel: its name, then the line that called it)."""
    kernel = ""
    while frame is not None:
        name = frame.f_code.co_filename
        if name.endswith("compiled.py") and frame.f_code.co_name == "__call__":
            kernel = f"{frame.f_locals['self'].name} < "
        elif "strongtree_core" in name:
            return f"{kernel}{Path(name).name}:{frame.f_code.co_name}:{frame.f_lineno}"
        frame = frame.f_back
    return kernel + "elsewhere"


def _runs(trail: list) -> list:
    """The places of a trail of samples as runs: (place, first and last seconds past the deadline)."""
    out: list = []
    for t, place in trail:
        if out and out[-1][0] == place:
            out[-1][2] = round(t, 3)
        else:
            out.append([place, round(t, 3), round(t, 3)])
    return out


def fit_one(job: dict) -> dict:
    from benchmarks.fairness_benchmark import DATASETS, load_part
    from strongtree_core import StrongTreeClassifier
    from strongtree_core.accel import count_search
    from strongtree_core.engine import routes

    if job.get("counts_max_rows"):
        count_search.MAX_ROWS = job["counts_max_rows"]
    seen: dict = {}
    inner = routes.exact_solve

    def timed(*args, **kw):
        start = time.perf_counter()
        seen["deadline"] = start + float(kw["time_limit"])
        seen["clock"] = time.pthread_getcpuclockid(threading.get_ident())
        seen["thread"] = threading.get_ident()
        seen["ended"] = threading.Event()
        try:
            return inner(*args, **kw)
        finally:
            seen["returned"] = time.perf_counter()
            seen["cpu_returned"] = time.thread_time()
            seen["ended"].set()

    def at_deadline() -> None:  # the search thread's CPU clock when the deadline passes
        while "ended" not in seen:
            time.sleep(0.005)
        if not seen["ended"].wait(max(0.0, seen["deadline"] - time.perf_counter())):
            seen["cpu_deadline"] = time.clock_gettime(seen["clock"])

    def sampler() -> None:
        while "ended" not in seen:
            time.sleep(0.005)
        trail: list = []  # (seconds past the deadline, place) every 5 ms, kept from 1 s before it
        while not seen["ended"].wait(0.005):
            now = time.perf_counter() - seen["deadline"]
            if now > -1.0:
                trail.append((now, _where(sys._current_frames().get(seen["thread"]))))
        seen["places"] = _runs(trail)

    routes.exact_solve = timed
    watch = threading.Thread(target=sampler, daemon=True)
    watch.start()
    timer = threading.Thread(target=at_deadline, daemon=True)
    timer.start()
    ds = DATASETS[job["dataset"]]
    part = load_part(ds, "train", 1)
    clf = StrongTreeClassifier(depth=job["depth"], fairness="conditional_statistical_parity",
                               fairness_bound=job["bound"], pos_label=ds.positive, time_limit=job["limit"])
    t0 = time.perf_counter()
    clf.fit(part.X, part.y, sensitive_features=part.group, legitimate_features=part.legit)
    fit_seconds = time.perf_counter() - t0
    if "ended" in seen:
        seen["ended"].wait(120)
    watch.join(5)
    timer.join(5)
    cpu_late = seen["cpu_returned"] - seen["cpu_deadline"] if "cpu_deadline" in seen else None
    r = clf.record_
    return dict(job, fit_seconds=round(fit_seconds, 3), late=round(seen["returned"] - seen["deadline"], 3),
                cpu_late=None if cpu_late is None else round(cpu_late, 3),
                given_up=r.choice.startswith("exact search: given up"), certified=bool(r.certified),
                objective=r.objective, bound=r.bound, choice=r.choice[:120], places=seen.get("places", []),
                load=os.getloadavg()[0])


def run_in(tree: str, job: dict) -> dict:
    # here, not at the top: a fit runs this file on another tree's library, whose benchmarks may lack it
    from benchmarks.count_search_benchmark import run_script

    row = run_script(HERE, tree, job)
    return row if isinstance(row, dict) else dict(job, error=row[-400:])


def summarize(path: str) -> str:
    """One line per dataset, limit and tree: how late the search returned past its deadline (each
    run), how many the engine gave up, the load (1-minute average) at the fits."""
    with open(path) as fh:
        rows = [json.loads(line) for line in fh]
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["dataset"], r["limit"], r["tree"]), []).append(r)
    head = ("| data | limit s | code | late past the deadline, s wall (each run) | CPU s of the search past it | "
            "given up | certified | load |")
    lines = [head, "|---|---|---|---|---|---|---|---|"]
    for (ds, limit, tree), part in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        ok = [r for r in part if "error" not in r]
        lates = ", ".join(f"{r['late']:.2f}" for r in ok)
        cpus = ", ".join("-" if r.get("cpu_late") is None else f"{r['cpu_late']:.2f}" for r in ok)
        loads = [r["load"] for r in ok] or [0.0]
        lines.append(f"| {ds} | {limit:g} | {tree} | {lates} | {cpus} | {sum(r['given_up'] for r in ok)} of {len(ok)} | "
                     f"{sum(r['certified'] for r in ok)} | {min(loads):.1f}-{max(loads):.1f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--trees", nargs="+", default=["."], help="source trees, interleaved (before first)")
    ap.add_argument("--datasets", nargs="+", default=["adult", "german", "compas"])
    ap.add_argument("--limits", nargs="+", type=float, default=[5.0, 10.0, 20.0, 40.0])
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--bound", type=float, default=0.01)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--counts-max-rows", type=int, default=0,
                    help="most rows the counts' search takes (count_search.MAX_ROWS; 0: the library's own)")
    ap.add_argument("--out", default="benchmarks/out/count_search_deadline.jsonl")
    ap.add_argument("--summarize", default=None)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(fit_one(json.loads(args.one))))
        return 0
    if args.summarize:
        print(summarize(args.summarize))
        return 0
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    i = 0
    with open(args.out, "a") as fh:
        for _ in range(args.repeat):
            for ds in args.datasets:
                for limit in args.limits:
                    job = dict(dataset=ds, limit=limit, depth=args.depth, bound=args.bound,
                               counts_max_rows=args.counts_max_rows)
                    order = args.trees if i % 2 == 0 else args.trees[::-1]
                    i += 1
                    for tree in order:
                        row = dict(run_in(tree, job), tree=Path(tree).resolve().name)
                        fh.write(json.dumps(row) + "\n")
                        fh.flush()
                        row = dict(row, places=[p for p in row.get("places", []) if p[2] >= -0.05])
                        print(json.dumps({k: row.get(k) for k in ("dataset", "limit", "tree", "late", "cpu_late", "given_up",
                                                                   "certified", "places", "load", "error")}),
                              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
