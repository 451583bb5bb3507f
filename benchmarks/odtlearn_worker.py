"""Fit one instance with ODTlearn and print what happened as one JSON line.

Run by ``paper_benchmark.py --odtlearn-python PY`` under an interpreter that
has ODTlearn (see ``requirements-bench.txt``); this file imports nothing from
the project, so it works in that separate environment.

    PY benchmarks/odtlearn_worker.py INSTANCE.npz --method benders --depth 2 --time-limit 125

``INSTANCE.npz`` holds ``X`` (0/1 rows) and ``y`` (labels).  The JSON carries
the solver's status, objective and bound (python-mip's view), the build and
optimize times measured separately, and the tree's predictions on the
training rows so that the caller can re-score the tree itself.
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("instance")
    ap.add_argument("--method", choices=["flow", "benders"], required=True)
    ap.add_argument("--depth", type=int, required=True)
    ap.add_argument("--time-limit", type=float, required=True)
    ap.add_argument("--lambda", dest="lambda_", type=float, default=0.0)
    ap.add_argument("--solver", default="cbc")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)

    import numpy as np
    from odtlearn.flow_oct import BendersOCT, FlowOCT

    data = np.load(args.instance)
    X, y = data["X"].astype(int), data["y"]
    cls = {"flow": FlowOCT, "benders": BendersOCT}[args.method]
    clf = cls(solver=args.solver, depth=args.depth, time_limit=int(round(args.time_limit)),
              _lambda=args.lambda_, num_threads=args.threads, verbose=bool(int(__import__("os").environ.get("ODT_VERBOSE", "0"))))

    # Time ODTlearn's model build and its optimize call separately: the paper's
    # time limit applies to the solve, and ODTlearn builds its model in Python.
    timing = {}
    solver = clf._solver
    original = solver.optimize

    def timed_optimize():
        timing["build_end"] = time.perf_counter()
        original()
        timing["solve_end"] = time.perf_counter()

    solver.optimize = timed_optimize
    t0 = time.perf_counter()
    out: dict = {"status": "error"}
    try:
        clf.fit(X, y)
        model = solver.model
        out["status"] = str(getattr(model.status, "name", model.status)).lower()
        out["objective"] = _number(getattr(model, "objective_value", None))
        out["bound"] = _number(getattr(model, "objective_bound", None))
        try:
            out["predictions"] = [int(v) for v in clf.predict(X)]
            b = clf.b_value  # ODTlearn keeps b[n, f] in a dict
            values = b.values() if isinstance(b, dict) else np.ravel(b)
            out["n_branching"] = int(sum(float(v) > 0.5 for v in values))
        except Exception as err:  # no tree was found in the time limit
            out["predict_error"] = f"{type(err).__name__}: {err}"
    except Exception as err:
        out["error"] = f"{type(err).__name__}: {err}"
    t1 = time.perf_counter()
    out["total_seconds"] = t1 - t0
    out["build_seconds"] = timing.get("build_end", t1) - t0
    out["solve_seconds"] = timing.get("solve_end", t1) - timing.get("build_end", t1)
    sys.stdout.write("\nODTLEARN_RESULT " + json.dumps(out) + "\n")
    return 0


def _number(v):
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if v == v and abs(v) != float("inf") else None


if __name__ == "__main__":
    sys.exit(main())
