"""Where the time of ``StrongTreeClassifier.fit`` goes on small tables: the fixed cost around the search.

Each step of a fit is timed by wrapping the function that does it (wall and CPU
time of this process; CPU time is what a busy machine does not distort), on the
paper's 12 datasets at depth 3 (accuracy), after a warm-up fit.  ``--tables
frame`` (the default) fits each CSV as a DataFrame; ``--tables array`` fits the
same 0/1 table as an int8 array with ``time_limit=30``, as the race of
``dp_against_streed.py`` does.  Steps:

validation      parameters, X, y, weights, protected and legitimate columns, groups
encoding        the binary features (fit and transform of the encoding plan, CART on raw columns)
patterns        identical rows merged into weighted patterns
spec            side constraints and the tree specification
engine set-up   memory check, thread limits, the search's arrays (gains and constraint
                rows of the patterns)
starts          the cheap starts (CART plain and class-balanced, single leaves), ranked
search          the exact search itself (dynamic program, bound, branch-and-bound)
re-scoring      the engine's re-scoring of the tree it returns
tree            per-node counts and the fitted tree value
record          the record's notes, the changed leaves, the settings kept in the tree's context
majority        the majority-class baseline and the trivial-tree test
checks          constraint checks on the training predictions
other           the rest of fit (its own lines)

The fixed cost is every step but ``search``.

    python -m benchmarks.fit_overhead --repeats 20
    python -m benchmarks.fit_overhead --repeats 20 --tables array --depth 4
    python -m benchmarks.fit_overhead --profile monk2   # pyinstrument's tree of one dataset
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import defaultdict
from contextlib import contextmanager

from benchmarks.common import CATEGORICAL, DATASETS, require_data

#: step -> (module, attribute) pairs; a pair that does not exist in this version is skipped.
STEPS: dict[str, tuple[tuple[str, str], ...]] = {
    "validation": (
        ("strongtree_core.estimator.classifier", "StrongTreeClassifier._check_params"),
        ("strongtree_core.estimator.classifier", "StrongTreeClassifier._fairness_list"),
        ("strongtree_core.estimator.classifier", "StrongTreeClassifier._training_table"),
        ("strongtree_core.estimator.classifier", "StrongTreeClassifier._columns"),
        ("strongtree_core.estimator.classifier", "classes_of"),
        ("strongtree_core.estimator.classifier", "checked_weights"),
        ("strongtree_core.estimator.classifier", "encode_groups"),
        ("strongtree_core.estimator.classifier", "check_comparable"),
        ("strongtree_core.estimator.classifier", "StrongTreeClassifier._validated"),
        ("strongtree_core.estimator.classifier", "StrongTreeClassifier._check_inputs"),
    ),
    "encoding": (
        ("strongtree_core.encoding.binarize", "TableEncoder.fit"),
        ("strongtree_core.encoding.binarize", "TableEncoder.fit_with_reference"),
        ("strongtree_core.encoding.binarize", "TableEncoder.fit_transform_with_reference"),
        ("strongtree_core.encoding.binarize", "TableEncoder.fit_transform_flags"),
        ("strongtree_core.encoding.binarize", "EncodingPlan.transform"),
    ),
    "patterns": (("strongtree_core.estimator.classifier", "collapse_patterns"),),
    "spec": (
        ("strongtree_core.estimator.classifier", "StrongTreeClassifier._side_constraints"),
        ("strongtree_core.estimator.classifier", "TreeSpec"),
    ),
    "engine set-up": (
        ("strongtree_core.accel.search", "threadpool_limits"),
        ("strongtree_core.accel.search", "one_blas_thread"),
        ("strongtree_core.accel.search", "linear_problem"),
        ("strongtree_core.engine.routes", "default_memory_limit"),
        ("strongtree_core.engine.routes", "_check_exact_memory"),
    ),
    "starts": (("strongtree_core.engine.routes", "candidate_starts"),),
    "search": (("strongtree_core.engine.routes", "exact_solve"),),
    "re-scoring": (("strongtree_core.engine.routes", "tree_objective"),),
    "tree": (
        ("strongtree_core.tree.fitted", "FittedTree.from_training"),
        ("strongtree_core.tree.fitted", "FittedTree.from_patterns"),
    ),
    "record": (
        ("strongtree_core.estimator.classifier", "changed_leaves"),
        ("strongtree_core.estimator.classifier", "json_value"),
        ("strongtree_core.estimator.classifier", "FitContext"),
    ),
    "majority": (
        ("strongtree_core.estimator.classifier", "baseline_accuracy"),
        ("strongtree_core.estimator.classifier", "trivial_reason"),
        ("strongtree_core.estimator.classifier", "_training_predictions"),
    ),
    "checks": (("strongtree_core.estimator.classifier", "StrongTreeClassifier._verify"),),
}


class Clock:
    """Wall and CPU seconds per step, each timed function's own time (a timed call
    inside another counts in its own step, not twice)."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = defaultdict(float)
        self.cpu: dict[str, float] = defaultdict(float)
        self.stack: list[list[float]] = []  # per open call: [wall, cpu] of its timed callees

    def wrap(self, step: str, func):
        clock = self

        def timed(*args, **kwargs):
            clock.stack.append([0.0, 0.0])
            w, c = time.perf_counter(), time.process_time()
            try:
                return func(*args, **kwargs)
            finally:
                dw, dc = time.perf_counter() - w, time.process_time() - c
                inner_w, inner_c = clock.stack.pop()
                clock.wall[step] += dw - inner_w
                clock.cpu[step] += dc - inner_c
                if clock.stack:
                    clock.stack[-1][0] += dw
                    clock.stack[-1][1] += dc

        timed.__wrapped__ = func
        return timed


@contextmanager
def instrumented(clock: Clock):
    import importlib

    undo = []
    for step, places in STEPS.items():
        for module_name, attr in places:
            module = importlib.import_module(module_name)
            owner, name = module, attr
            if "." in attr:
                cls_name, name = attr.split(".")
                owner = getattr(module, cls_name, None)
            if owner is None or not hasattr(owner, name):
                continue
            original = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name)
            if original is None:
                continue
            if isinstance(original, (staticmethod, classmethod)):
                inner = clock.wrap(step, original.__func__)
                setattr(owner, name, type(original)(inner))
            else:
                setattr(owner, name, clock.wrap(step, original))
            undo.append((owner, name, original))
    try:
        yield
    finally:
        for owner, name, original in reversed(undo):
            setattr(owner, name, original)


#: Keyword arguments of the fits per ``--tables``: the race of dp_against_streed.py fits with a 30 s limit.
FIT_OPTIONS = {"frame": {}, "array": {"time_limit": 30.0}}


def load(name: str, tables: str = "frame"):
    """The dataset as a DataFrame and its target, or (``tables="array"``) as the race's int8 0/1 array and class codes."""
    import numpy as np
    import pandas as pd

    df = pd.read_csv(CATEGORICAL / f"{name}.csv")
    if tables == "array":
        classes, y = np.unique(df.pop("target").to_numpy(), return_inverse=True)
        return df.to_numpy().astype(np.int8), y
    return df.drop(columns="target"), df["target"]


def measure(name: str, repeats: int, depth: int, tables: str = "frame") -> dict[str, tuple[float, float]]:
    """Median wall and CPU milliseconds of each step (and ``total``) over ``repeats`` fits."""
    from strongtree_core import StrongTreeClassifier

    X, y = load(name, tables)
    options = FIT_OPTIONS[tables]
    StrongTreeClassifier(depth=depth, **options).fit(X, y)  # warm-up
    per_fit: list[tuple[dict, dict, float, float]] = []
    for _ in range(repeats):
        clock = Clock()
        with instrumented(clock):
            w, c = time.perf_counter(), time.process_time()
            StrongTreeClassifier(depth=depth, **options).fit(X, y)
            wall, cpu = time.perf_counter() - w, time.process_time() - c
        per_fit.append((dict(clock.wall), dict(clock.cpu), wall, cpu))
    out = {}
    for step in [*STEPS, "other", "total", "fixed"]:
        walls, cpus = [], []
        for sw, sc, wall, cpu in per_fit:
            if step == "total":
                walls.append(wall), cpus.append(cpu)
            elif step == "other":
                walls.append(wall - sum(sw.values())), cpus.append(cpu - sum(sc.values()))
            elif step == "fixed":
                walls.append(wall - sw.get("search", 0.0)), cpus.append(cpu - sc.get("search", 0.0))
            else:
                walls.append(sw.get(step, 0.0)), cpus.append(sc.get(step, 0.0))
        out[step] = (1e3 * statistics.median(walls), 1e3 * statistics.median(cpus))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--tables", choices=sorted(FIT_OPTIONS), default="frame",
                    help="frame: each CSV as a DataFrame; array: the race's int8 0/1 array, time_limit=30")
    ap.add_argument("--profile", metavar="DATASET", help="print pyinstrument's call tree of 50 fits of one dataset")
    args = ap.parse_args(argv)
    require_data()
    if args.profile:
        from pyinstrument import Profiler

        from strongtree_core import StrongTreeClassifier

        X, y = load(args.profile, args.tables)
        options = FIT_OPTIONS[args.tables]
        StrongTreeClassifier(depth=args.depth, **options).fit(X, y)
        profiler = Profiler(interval=0.0002)
        profiler.start()
        for _ in range(50):
            StrongTreeClassifier(depth=args.depth, **options).fit(X, y)
        profiler.stop()
        print(profiler.output_text(unicode=False, color=False))
        return 0
    columns = [*STEPS, "other"]
    load_before = os.getloadavg()
    rows = {name: measure(name, args.repeats, args.depth, args.tables) for name in args.datasets}
    load_after = os.getloadavg()
    print(f"tables: {args.tables}; load average (1 min) {load_before[0]:.2f} at start, {load_after[0]:.2f} at end")
    for kind, index in (("CPU", 1), ("wall", 0)):
        print(f"\n{kind} ms per fit (median of {args.repeats}), depth {args.depth}\n")
        print("| dataset | " + " | ".join(columns) + " | total | fixed (all but search) |")
        print("|---|" + "---|" * (len(columns) + 2))
        for name, out in rows.items():
            print(f"| {name} | " + " | ".join(f"{out[c][index]:.2f}" for c in columns)
                  + f" | {out['total'][index]:.2f} | {out['fixed'][index]:.2f} |")
        fixed = [out["fixed"][index] for out in rows.values()]
        print(f"\nfixed cost, {kind}: median {statistics.median(fixed):.2f} ms, largest {max(fixed):.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
