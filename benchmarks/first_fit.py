"""The first fit of a process against its second: compiled kernels built once per installation.

Every measurement is a fresh Python process that imports the library, then fits
the same table three times (``depth=3``, accuracy) and reports the wall and CPU
time of the import and of each fit, and which kernels ran (``aot``: the library
built ahead of time; ``jit``: numba's JIT; ``-``: the numpy path).  Scenarios,
interleaved repeat by repeat:

``new folders``
    a new ``STRONGTREE_CACHE_DIR`` and ``NUMBA_CACHE_DIR``: the first process after
    an installation (its background build is stopped when the process ends, so
    that every repeat starts from nothing);
``installed``
    the library built once (by ``python -m strongtree_core.accel.prepare`` at the
    start of this script), a new ``NUMBA_CACHE_DIR``: every later process, a CLI
    run, a sweep worker;
``jit, new cache`` / ``jit, numba cache``
    ``STRONGTREE_KERNELS=jit``: numba compiles in the process, with an empty or
    a filled numba cache (how every process worked before);
``before`` / ``before, installed``
    with ``--before PATH``: another checkout of the library (e.g. the commit
    before this change, ``git archive``), with new cache folders, or with the
    library built above (when the kernels' sources are the same).

Also, per scenario, ``time_limit=0.5`` on the first fit of a process on a fit that
needs longer (German credit split 1, depth 4, statistical parity 0.01): the wall
time of that ``fit`` call, compilation and lazy imports included.

    python -m benchmarks.first_fit --repeats 5
    python -m benchmarks.first_fit --before /tmp/before --datasets monk2
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from benchmarks.common import CATEGORICAL, REPO, require_data

CHILD = """
import json, os, sys, time
w0, c0 = time.perf_counter(), time.process_time()
import pandas as pd
from strongtree_core import StrongTreeClassifier
w1, c1 = time.perf_counter(), time.process_time()
df = pd.read_csv(sys.argv[1])
X, y = df.drop(columns="target"), df["target"]
from strongtree_core.accel import kernels
library = getattr(kernels, "library", None)
if library is not None:
    tier_of = lambda: library.tier or "-"
else:  # a checkout from before the kernel library: numba's JIT whenever numba is installed
    tier_of = lambda: "jit" if kernels.available() else "-"
fits = []
for _ in range(3):
    a, b = time.perf_counter(), time.process_time()
    StrongTreeClassifier(depth=3).fit(X, y)
    fits.append((time.perf_counter() - a, time.process_time() - b, tier_of()))
if os.environ.get("STOP_BUILD"):  # this process's background builds: stopped, so that the next repeat starts anew
    import importlib
    for name in ("kernels", "ordered", "treedp"):
        built = getattr(importlib.import_module(f"strongtree_core.accel.{name}"), "library", None)
        if built is not None and hasattr(built, "stop_build"):
            built.stop_build()
        elif built is not None and built._builder is not None:  # an older checkout
            built._builder.kill()
            built._builder.wait()
print(json.dumps({"import": [w1 - w0, c1 - c0], "fits": fits}))
"""

LIMIT_CHILD = """
import json, os, sys, time
import pandas as pd
from strongtree_core import StrongTreeClassifier
from benchmarks.fairness_benchmark import DATASETS, load_part
part = load_part(DATASETS["german"], "train", 1)
positive = "pos_label" if "pos_label" in StrongTreeClassifier().get_params() else "positive_class"  # older checkouts
a = time.perf_counter()
m = StrongTreeClassifier(depth=4, time_limit=0.5, fairness="statistical_parity", fairness_bound=0.01,
                         **{positive: 2}).fit(part.X, part.y, sensitive_features=part.group)
wall = time.perf_counter() - a
from strongtree_core.accel import kernels
library = getattr(kernels, "library", None)
if os.environ.get("STOP_BUILD"):
    import importlib
    for name in ("kernels", "ordered", "treedp"):
        built = getattr(importlib.import_module(f"strongtree_core.accel.{name}"), "library", None)
        if built is not None and hasattr(built, "stop_build"):
            built.stop_build()
        elif built is not None and built._builder is not None:  # an older checkout
            built._builder.kill()
            built._builder.wait()
print(json.dumps({"wall": wall, "status": m.record_.status}))
"""


def run_child(script: str, args: list[str], env: dict[str, str]) -> dict:
    # not from the checkout's folder: ``python -c`` puts the working folder first on the path
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args], capture_output=True, text=True,
                         env=env, cwd=tempfile.gettempdir(), timeout=600)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def scenario_env(name: str, scratch: Path, built: Path, numba_warm: Path, before: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("STRONGTREE_KERNELS", None)
    fresh = Path(tempfile.mkdtemp(dir=scratch))
    env["PYTHONPATH"] = str(REPO)
    env["NUMBA_CACHE_DIR"] = str(fresh / "numba")
    env["STRONGTREE_CACHE_DIR"] = str(fresh / "strongtree")
    env["STOP_BUILD"] = "1"
    if name == "installed":
        env["STRONGTREE_CACHE_DIR"] = str(built)
    elif name.startswith("jit"):
        env["STRONGTREE_KERNELS"] = "jit"
        if name == "jit, numba cache":
            env["NUMBA_CACHE_DIR"] = str(numba_warm)
    elif name.startswith("before"):
        env["PYTHONPATH"] = os.pathsep.join([before or "", str(REPO)])
        if name == "before, installed":  # the kernels' sources are the same: the library built above serves both
            env["STRONGTREE_CACHE_DIR"] = str(built)
    return env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["monk2", "tic-tac-toe", "kr-vs-kp"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--before", help="a checkout of the library to compare with (its folder)")
    ap.add_argument("--no-limit", action="store_true", help="skip the time_limit=0.5 runs")
    args = ap.parse_args(argv)
    require_data()
    scenarios = ["new folders", "installed", "jit, new cache", "jit, numba cache"] + (["before", "before, installed"] if args.before else [])
    with tempfile.TemporaryDirectory(prefix="first-fit-") as tmp:
        scratch = Path(tmp)
        built, numba_warm = scratch / "built", scratch / "numba-warm"
        env = dict(os.environ, PYTHONPATH=str(REPO), STRONGTREE_CACHE_DIR=str(built), NUMBA_CACHE_DIR=str(numba_warm))
        subprocess.run([sys.executable, "-m", "strongtree_core.accel.prepare"], env=env, check=True, cwd=str(REPO))
        # fill numba's cache for "jit, numba cache"
        run_child(CHILD, [str(CATEGORICAL / "monk2.csv")], dict(env, STRONGTREE_KERNELS="jit"))
        rows: dict[tuple[str, str], list[dict]] = {}
        limits: dict[str, list[dict]] = {}
        for r in range(args.repeats):
            for dataset in args.datasets:
                for name in scenarios:
                    e = scenario_env(name, scratch, built, numba_warm, args.before)
                    rows.setdefault((dataset, name), []).append(run_child(CHILD, [str(CATEGORICAL / f"{dataset}.csv")], e))
            if not args.no_limit:
                for name in scenarios:
                    e = scenario_env(name, scratch, built, numba_warm, args.before)
                    limits.setdefault(name, []).append(run_child(LIMIT_CHILD, [], e))
            print(f"repeat {r + 1} of {args.repeats} done", file=sys.stderr)
    med = statistics.median
    print("\n| dataset | scenario | import s | fit 1 ms | fit 2 ms | fit 3 ms | fit 1 / fit 2 | fit 1 CPU / fit 2 CPU "
          "| kernels (fits 1, 2, 3) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (dataset, name), runs in rows.items():
        f = [[run["fits"][i] for run in runs] for i in range(3)]
        ratio = med(run["fits"][0][0] / run["fits"][1][0] for run in runs)
        cpu_ratio = med(run["fits"][0][1] / max(run["fits"][1][1], 1e-9) for run in runs)
        tiers = ", ".join(runs[-1]["fits"][i][2] for i in range(3))
        print(f"| {dataset} | {name} | {med(run['import'][0] for run in runs):.2f} | "
              + " | ".join(f"{1e3 * med(x[0] for x in fi):.1f}" for fi in f)
              + f" | {ratio:.2f} | {cpu_ratio:.2f} | {tiers} |")
    if limits:
        print("\n| scenario | time_limit=0.5 on the first fit: wall s (each repeat) | status |")
        print("|---|---|---|")
        for name, runs in limits.items():
            walls = ", ".join(f"{run['wall']:.2f}" for run in runs)
            print(f"| {name} | {walls} | {runs[-1]['status']} |")
    print(f"\n(median of {args.repeats} interleaved repeats; fresh process each)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
