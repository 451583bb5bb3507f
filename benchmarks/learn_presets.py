"""The Learn page's presets and the Solve page's live MIO, measured as the pages run them.

For each preset (``strongtree_studio.learn.presets``): the comparison the Learn page
submits (same sample, same encoding, same time per run), its wall-clock time, every
formulation's LP bound and how much tighter FlowOCT's is than OCT's and BinOCT's (in
rows and in % of the rows), each run's status, time, nodes and cuts.  Then the live MIO
(``strongtree_studio.learn.mio_live``): FlowOCT on HiGHS, BendersOCT on SCIP, the exact
search, each with its time, nodes and the bound's first and last report.

    python -m benchmarks.learn_presets            # every preset, then the live MIO
    python -m benchmarks.learn_presets --quick    # the default preset and the live MIO only
    python -m benchmarks.learn_presets --presets tighter bigm --no-live
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

from strongtree_core.compare.formulations import compare_formulations
from strongtree_studio.learn import mio_live
from strongtree_core.compare.root_lp import READABLE, root_relaxations
from strongtree_studio.jobs.comparison_job import N_BUCKETS, ROOT_LP_SECONDS
from strongtree_studio.learn.presets import BY_KEY, DEFAULT, PRESETS
from strongtree_studio.learn.comparison_view import builtin_sample


def _fmt(value, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def measure_preset(preset) -> None:
    choice = preset.choice
    sample = builtin_sample(choice.table, choice.rows)
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # As the page's job does: the root LPs first (their own time box), then the runs.
        root = root_relaxations(sample.X, sample.y, depth=choice.depth, formulations=READABLE,
                                time_limit=ROOT_LP_SECONDS, regularization=choice.regularization, n_buckets=N_BUCKETS)
        root_seconds = time.perf_counter() - t0
        runs = compare_formulations(sample.X, sample.y, depth=choice.depth, time_limit=choice.time_limit,
                                    regularization=choice.regularization, n_buckets=N_BUCKETS, root_lp=root)
    wall = time.perf_counter() - t0
    rows = {r.formulation: r.row() for r in runs}
    n = len(sample.y)
    lp = {w: rows[w].get("lp_bound") for w in ("oct", "binoct", "flow", "benders")}
    print(f"\n### {preset.key}: {preset.title} ({choice.table}, {n} rows, depth {choice.depth}, "
          f"lambda {choice.regularization}, {choice.time_limit:.0f} s per run)")
    print(f"wall {wall:.1f} s (root LPs {root_seconds:.1f} s), load average at start {load:.1f}")
    print("fractional split choices at the root: " + ", ".join(
        f"{r.formulation} {r.fractional_splits}" for r in root.relaxations))
    print("| run | status | LP bound | best tree | bound | s | nodes | cuts | vars x rows |")
    print("|---|---|---|---|---|---|---|---|---|")
    for word, row in rows.items():
        size = f"{row.get('variables')} x {row.get('constraints')}" if row.get("variables") else "-"
        print(f"| {word} | {row['status']} | {_fmt(row.get('lp_bound'))} | {_fmt(row.get('objective'))} | "
              f"{_fmt(row.get('bound'))} | {_fmt(row.get('seconds'), 1)} | {row.get('nodes', '-')} | "
              f"{row.get('cuts') if row.get('cuts') is not None else '-'} | {size} |")
    flow = lp["flow"]
    for other in ("oct", "binoct"):
        if flow is not None and lp[other] is not None:
            print(f"FlowOCT tighter than {other} by {lp[other] - flow:.2f} rows = {100 * (lp[other] - flow) / n:.2f} % "
                  "of the rows")


def measure_live() -> None:
    spec = mio_live.live_spec()
    points: dict[str, list] = {}

    def progress(word, event) -> None:
        points.setdefault(word, []).append(event)

    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = compare_formulations(spec.X, spec.y, depth=spec.depth, formulations=spec.formulations,
                                    time_limit=spec.time_limit, solvers=dict(spec.solvers), progress=progress)
    wall = time.perf_counter() - t0
    print(f"\n### live MIO ({mio_live.LIVE.table}, {len(spec.y)} rows, depth {spec.depth}, "
          f"{spec.time_limit:.0f} s per run)")
    print(f"wall {wall:.1f} s, load average at start {load:.1f}")
    print("| run | backend | status | LP bound | best tree | s | nodes | cuts | reports | first bound | "
          "bound steps |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for run in runs:
        row = run.row()
        events = points.get(run.formulation, [])
        bounds = [e.bound for e in events if e.bound is not None]
        steps = sum(1 for a, b in zip(bounds, bounds[1:]) if b < a - 1e-9)
        print(f"| {run.formulation} | {row.get('backend')} | {row['status']} | {_fmt(row.get('lp_bound'))} | "
              f"{_fmt(row.get('objective'))} | {_fmt(row.get('seconds'), 1)} | {row.get('nodes')} | "
              f"{row.get('cuts') if row.get('cuts') is not None else '-'} | {len(events)} | "
              f"{_fmt(bounds[0] if bounds else None)} | {steps} |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the default preset and the live MIO only")
    parser.add_argument("--presets", nargs="*", choices=list(BY_KEY), help="these presets only")
    parser.add_argument("--no-live", action="store_true", help="leave out the live MIO")
    args = parser.parse_args(argv)
    chosen = [DEFAULT] if args.quick else [BY_KEY[k] for k in args.presets] if args.presets else list(PRESETS)
    for preset in chosen:
        measure_preset(preset)
    if not args.no_live:
        measure_live()


if __name__ == "__main__":
    main()
