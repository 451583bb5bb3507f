"""FlowOCT model build time on COMPAS at depth 3: ours against ODTlearn, in one run.

Ours: the arrays of FlowOCT built with numpy (``build_model``), on the weighted
patterns the library uses, and on the raw rows (one pattern per row: the same
model ODTlearn builds).  Both the balanced formulation (1), which the library
uses at lambda = 0, and the imbalanced formulation (7), which is ODTlearn's
``FlowOCT``, are timed.  ODTlearn (when importable) builds its model through
its own fit path up to, not including, the solve; the solver package is only
used as its modelling layer.

python -m benchmarks.build_time [--repeats 5] [--depth 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
import pandas as pd

from benchmarks.common import DATA
from strongtree_core.encoding.patterns import PatternData, collapse_patterns
from strongtree_core.formulation import TreeSpec, build_model
from strongtree_core.formulation.flow_oct import build_flow_oct

COMPAS = DATA / "fairness" / "compas" / "compas_enc.csv"
NOT_INSTALLED = "not installed ({why}); install the extras with `pip install -r requirements-bench.txt`"


def _median_seconds(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def ours(X: np.ndarray, y: np.ndarray, depth: int, repeats: int) -> list[tuple[str, float, int, int, int]]:
    rows = []
    n_classes = int(y.max()) + 1
    raw = PatternData(X.astype(np.uint8), y, np.ones(len(y)), np.ones(len(y), dtype=np.int64), n_classes)
    spec = TreeSpec(depth=depth)
    for label, make_data in (("patterns", lambda: collapse_patterns(X, y, n_classes)), ("raw rows", lambda: raw)):
        data = make_data()
        for form, build in (
            ("balanced (1)", lambda d=data: build_model(d, spec).arrays),
            ("imbalanced (7)", lambda d=data: build_flow_oct(d, spec, balanced=False)),
        ):
            seconds, arrays = _median_seconds(build, repeats)
            if label == "patterns":
                # the library's path includes collapsing rows into patterns
                seconds += _median_seconds(make_data, repeats)[0]
            rows.append((f"ours, {form}, {label} ({data.n_patterns})", seconds, arrays.n_cols, arrays.n_rows, int(arrays.A.nnz)))
    return rows


def odtlearn_build(X: pd.DataFrame, y: np.ndarray, depth: int, solver: str, repeats: int):
    """ODTlearn's FlowOCT model, built as its ``fit`` does before it optimizes."""
    from odtlearn.flow_oct import FlowOCT
    from odtlearn.utils.validation import check_binary
    from sklearn.utils.validation import check_X_y

    def build():
        clf = FlowOCT(solver=solver, depth=depth, time_limit=60)
        clf._extract_metadata(X, y)
        check_binary(X)
        Xc, yc = check_X_y(X, y)
        clf._classes = np.unique(yc)
        clf.weights = np.ones(len(yc))
        clf._create_main_problem()
        return clf

    seconds, clf = _median_seconds(build, repeats)
    model = clf._solver.model
    if solver == "cbc":
        return seconds, model.num_cols, model.num_rows, model.num_nz
    model.update()
    return seconds, model.NumVars, model.NumConstrs, model.NumNZs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--odtlearn-repeats", type=int, default=1, help="ODTlearn takes about 100 s per build")
    args = ap.parse_args(argv)
    if not COMPAS.exists():
        raise SystemExit(f"COMPAS not found at {COMPAS}")
    df = pd.read_csv(COMPAS)
    y_raw = df.pop("target").to_numpy()
    _, y = np.unique(y_raw, return_inverse=True)
    X = df.to_numpy()
    print(f"# COMPAS {X.shape[0]} rows x {X.shape[1]} binary features, depth {args.depth}, "
          f"median of {args.repeats} builds (ODTlearn: {args.odtlearn_repeats})")
    results = ours(X, y, args.depth, args.repeats)
    for solver in ("cbc", "gurobi"):
        try:
            import odtlearn  # noqa: F401
            seconds, n_vars, n_cons, nnz = odtlearn_build(df, y, args.depth, solver, args.odtlearn_repeats)
            results.append((f"ODTlearn FlowOCT (7) via {solver}, raw rows", seconds, n_vars, n_cons, nnz))
        except ImportError as err:
            results.append((f"ODTlearn FlowOCT via {solver}: " + NOT_INSTALLED.format(why=err), float("nan"), 0, 0, 0))
    print(f"{'model':58} {'seconds':>9} {'variables':>10} {'constraints':>12} {'nonzeros':>10}")
    for name, seconds, n_vars, n_cons, nnz in results:
        print(f"{name:58} {seconds:>9.3f} {n_vars:>10} {n_cons:>12} {nnz:>10}")
    same = {r[0]: r[1] for r in results}
    ours_same = same.get("ours, imbalanced (7), raw rows (%d)" % X.shape[0])
    for name, seconds, *_ in results:
        if name.startswith("ODTlearn") and np.isfinite(seconds) and ours_same:
            print(f"ratio ODTlearn / ours on the same model (imbalanced (7), raw rows), {name.split('via ')[1]}: "
                  f"{seconds / ours_same:.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
