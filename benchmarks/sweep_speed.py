"""Wall time of a 40-point sweep: serial, 2 process workers, a 2-worker Dask LocalCluster.

The grid: one of the paper's fair-tree datasets (training file of split 1),
statistical parity and equal opportunity, 10 bounds from 0.01 to 0.2, two depths
(2 and 3 unless ``--depths``): 40 points, each a certified fair tree (``time_limit`` 60 s).  Each backend
starts from nothing (a new pool or cluster, counted in the wall time, as a user
running ``sweep`` once pays it).  Repeats are interleaved (serial, processes,
dask, serial, ...; the order rotates each repeat) so that a busy machine weighs on
all three alike; ratios are serial wall / backend wall within the same repeat.

    python -m benchmarks.sweep_speed --datasets german compas --repeats 3
    python -m benchmarks.sweep_speed --warm      # workers started before the clock

``--warm``: the process pool and the Dask cluster are started once, before any
clock, and every worker has imported the library (as in a second sweep of the
same session, whose reusable pool is still up, or a Dask cluster the user keeps
running and passes as ``scheduler=``); without it each sweep starts its own.

``--worker-start N``: instead, N times, a new process pool of one worker (loky, as a sweep starts
it) runs one fair point as its first task, a German point whose bound comes from the Lagrangian
dual (statistical parity 0.01, depth 2), and the worker reports its own CPU seconds: as loky
started it, then for the engine and its kernels, then for that point (and what the point loaded).

The compiled kernels are built first (``python -m strongtree_core.accel.prepare``),
as on any machine after its first run.  Also printed: the CPU seconds of every
process of the sweep (this one and its finished workers), which a machine shared
with other users' work does not inflate as it does the wall time.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

from benchmarks.common import require_data
from benchmarks.fairness_benchmark import DATASETS, load_part
from strongtree_core import StrongTreeClassifier
from strongtree_core.sweep import sweep

BACKENDS = ("serial", "processes", "dask")
NOTIONS = ("statistical_parity", "equal_opportunity")
BOUNDS = tuple(np.round(np.linspace(0.01, 0.2, 10), 4))
DEPTHS = (2, 3)


def cpu_seconds() -> float:
    """CPU time of this process and of its finished (reaped) child processes."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def _imported() -> int:
    """Run in a worker: the library imported and its kernels loaded; the worker's process id."""
    import strongtree_core.sweep.point  # noqa: F401
    from strongtree_core.accel import kernels, ordered, treedp

    for module in (kernels, ordered, treedp):
        module.library.ready()
    time.sleep(0.5)  # so that each worker takes one of these tasks
    return os.getpid()


def _first_task(payload: bytes) -> tuple[float, float, float, str, bool, bool]:
    """Run in a new worker: its CPU seconds at the start, for the engine and kernels, for the point; the
    point's route; whether scipy.optimize and highspy were loaded."""
    import pickle

    def cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    at_start = cpu()
    import strongtree_core.engine.worker as worker
    from strongtree_core.accel import kernels, ordered, treedp

    for module in (kernels, ordered, treedp):
        module.library.ready()
    engine = cpu()
    task, relay = pickle.loads(payload)
    answer = worker.solve_task(task, relay, 1)
    point = cpu()
    return (at_start, engine - at_start, point - engine, answer.solved.record.choice, "scipy.optimize" in sys.modules,
            "highspy" in sys.modules)


def worker_start(repeats: int) -> None:
    """A cold worker's CPU seconds on a first point that needs the Lagrangian dual (see ``--worker-start``)."""
    import pickle
    import tempfile

    from joblib.externals.loky import get_reusable_executor

    from strongtree_core.relays import FileRelay
    from strongtree_core.sweep.point import plan_point
    from strongtree_core.sweep.run import plan

    ds = DATASETS["german"]
    part = load_part(ds, "train", 1)
    problem, points = plan(StrongTreeClassifier(time_limit=60, pos_label=ds.positive, depth=2), part.X, part.y,
                           sensitive_features=part.group,
                           grid={"fairness": ["statistical_parity"], "fairness_bound": [0.01]})
    with tempfile.TemporaryDirectory() as folder:
        payload = pickle.dumps((plan_point(problem, points[0]).task, FileRelay(os.path.join(folder, "stop"))))
        print("\n| repeat | load | worker as loky starts it | engine and kernels | the fair point | total CPU s "
              "| scipy.optimize loaded | highspy loaded |")
        print("|---|---|---|---|---|---|---|---|")
        for r in range(repeats):
            pool = get_reusable_executor(max_workers=1, reuse=False)
            start, engine, point, choice, scipy_optimize, highspy = pool.submit(_first_task, payload).result()
            pool.shutdown(wait=True)
            assert "Lagrangian bound" in choice, choice  # the point needed the dual's cutting planes
            print(f"| {r + 1} | {os.getloadavg()[0]:.1f} | {start:.3f} | {engine:.3f} | {point:.3f} | "
                  f"{start + engine + point:.3f} | {scipy_optimize} | {highspy} |", flush=True)


class Warm:
    """A process pool and a Dask cluster of 2 workers started before the clock, the library imported in each."""

    def __init__(self) -> None:
        from distributed import Client

        from strongtree_core.sweep.backends import process_pool
        from strongtree_core.sweep.dask_backend import local_cluster

        pool = process_pool(2)
        pids = {f.result() for f in [pool.submit(_imported) for _ in range(2)]}
        self.cluster = local_cluster(2)  # the cluster a sweep would start, kept up
        self.client = Client(self.cluster)
        dask_pids = self.client.run(_imported)
        print(f"# warm: process workers {sorted(pids)}, Dask workers {sorted(dask_pids.values())}", file=sys.stderr)

    def close(self) -> None:
        self.client.close()
        self.cluster.close()


def run_once(dataset: str, backend: str, time_limit: float, depths: tuple[int, ...] = DEPTHS,
             warm: Warm | None = None) -> tuple[float, float, int, int, float]:
    """(wall s, sum of the fits' times s, points, certified, CPU s of every process) of one sweep."""
    from joblib.externals.loky import get_reusable_executor

    ds = DATASETS[dataset]
    part = load_part(ds, "train", 1)
    grid = {"fairness": list(NOTIONS), "fairness_bound": list(BOUNDS), "depth": list(depths)}
    estimator = StrongTreeClassifier(time_limit=time_limit, pos_label=ds.positive)
    cpu = cpu_seconds()
    started = time.perf_counter()
    table = sweep(estimator, part.X, part.y, sensitive_features=part.group, grid=grid, backend=backend,
                  n_jobs=None if backend == "serial" else 2,
                  scheduler=warm.client if warm is not None and backend == "dask" else None)
    wall = time.perf_counter() - started
    if warm is not None:  # workers stay up: the CPU column counts this process only
        return wall, float(table["time"].sum()), len(table), int(table["certified"].sum()), cpu_seconds() - cpu
    if backend == "processes":  # its workers end here, so that their CPU time is counted (not in the wall time)
        get_reusable_executor().shutdown(wait=True)
    return wall, float(table["time"].sum()), len(table), int(table["certified"].sum()), cpu_seconds() - cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["german"], choices=sorted(DATASETS))
    ap.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--depths", nargs=2, type=int, default=list(DEPTHS), help="the grid's two depths (default 2 3)")
    ap.add_argument("--warm", action="store_true", help="start the workers before the clock (see above)")
    ap.add_argument("--worker-start", type=int, default=0, metavar="N",
                    help="instead: N cold workers' CPU seconds on a first fair point (see above)")
    args = ap.parse_args(argv)
    require_data()
    subprocess.run([sys.executable, "-m", "strongtree_core.accel.prepare"], check=True)
    if args.worker_start:
        worker_start(args.worker_start)
        return 0
    warm = Warm() if args.warm else None
    results: dict[tuple[str, str], list[tuple[float, float, int, int, float]]] = {}
    print(f"# load average at the start: {os.getloadavg()}", file=sys.stderr)
    for r in range(args.repeats):
        order = args.backends[r % len(args.backends):] + args.backends[:r % len(args.backends)]
        for dataset in args.datasets:
            for backend in order:
                out = run_once(dataset, backend, args.time_limit, tuple(args.depths), warm)
                results.setdefault((dataset, backend), []).append(out)
                print(f"# repeat {r + 1} {dataset} {backend}: {out[0]:.1f} s wall, {out[1]:.1f} s of fits, "
                      f"{out[3]}/{out[2]} certified, {out[4]:.1f} CPU s, load {os.getloadavg()[0]:.1f}",
                      file=sys.stderr, flush=True)
    print("\n| dataset | backend | points | certified | wall s (each repeat) | median wall s | sum of fits s "
          f"| CPU s, {'this process' if warm else 'all processes'} | speed-up vs serial (median of per-repeat ratios) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for dataset in args.datasets:
        serial = results.get((dataset, "serial"))
        for backend in args.backends:
            runs = results[(dataset, backend)]
            walls = [w for w, *_ in runs]
            ratio = "-"
            if serial and backend != "serial":
                ratio = f"{statistics.median(s[0] / w for s, w in zip(serial, walls)):.2f}"
            print(f"| {dataset} | {backend}{'' if backend == 'serial' else ' (2 workers)'} | {runs[0][2]} | "
                  f"{runs[0][3]} | {', '.join(f'{w:.1f}' for w in walls)} | {statistics.median(walls):.1f} | "
                  f"{statistics.median(f for _, f, *_ in runs):.1f} | {statistics.median(r[4] for r in runs):.1f} "
                  f"| {ratio} |")
    if warm is not None:
        warm.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
