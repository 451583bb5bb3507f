"""The exact search (dynamic programming) on the paper's 12 datasets (full data).

Depths 2-4 and four accuracy problems: lambda = 0, lambda = 0.01, minimum
leaf size 5, at most 3 branching nodes.  For each: status, wall time, the
re-scored objective, misclassified rows and branching nodes; at lambda = 0
the certified count must equal ``oracle_optimal.csv``.  Each tree is also
written as a solution of the MIO of the same spec (``start_vector``): it
must be feasible there and have the same objective value (same units).

python -m benchmarks.accel_certify [--depths 2 3 4] [--time-limit 60]
"""

from __future__ import annotations

import argparse
import sys
import time

from benchmarks.common import DATASETS, TOL, load_table, oracle_table, patterns, require_data
from strongtree_core.accel import streed_solve
from strongtree_core.formulation import TreeSpec, build_model

PROBLEMS = {
    "lambda=0": dict(),
    "lambda=0.01": dict(lambda_=0.01),
    "min_leaf=5": dict(min_leaf=5),
    "max_branching=3": dict(max_branching=3),
}
#: Check the tree inside the MIO only when formulation (11) stays small enough to build quickly.
MAX_MIO_CELLS = 400_000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS, metavar="NAME")
    ap.add_argument("--depths", nargs="+", type=int, default=[2, 3, 4])
    ap.add_argument("--time-limit", type=float, default=60.0)
    args = ap.parse_args(argv)
    require_data()
    import pystreed  # noqa: F401  (imported once, outside the timed solves)

    oracle = oracle_table()
    failures = 0
    print(f"{'dataset':15} {'rows':>5} {'d':>1} {'problem':>16} {'status':>8} {'time s':>7} {'objective':>10} "
          f"{'miscl':>5} {'b':>2} {'oracle':>6} {'MIO value':>10} {'task':>22} check")
    cells: dict[tuple[str, int, str], str] = {}
    t_all = time.perf_counter()
    for name in args.datasets:
        data = patterns(load_table(name))
        for depth in args.depths:
            for label, extra in PROBLEMS.items():
                spec = TreeSpec(depth=depth, **extra)
                res = streed_solve(data, spec, time_limit=args.time_limit)
                problems = []
                miscl = b = None
                mio_value = None
                if res.structure is not None:
                    miscl = int(data.count[res.structure.predict(data.X) != data.y].sum())
                    b = res.structure.n_branching
                    if data.n_patterns * (2 ** (depth + 1)) * data.n_classes <= MAX_MIO_CELLS:
                        model = build_model(data, spec)
                        x = model.start(res.structure, data)
                        if model.arrays.max_violation(x) > 1e-6:
                            problems.append("tree infeasible in the MIO")
                        mio_value = model.arrays.objective(x)
                        if abs(mio_value - res.objective) > TOL * max(1, abs(mio_value)):
                            problems.append(f"MIO value {mio_value:.6g} != {res.objective:.6g}")
                orc = oracle.get((name, depth)) if label == "lambda=0" else None
                if not res.certified:
                    problems.append("not certified")
                if orc is not None and miscl != orc:
                    problems.append(f"oracle {orc}")
                failures += bool(problems)
                cells[(name, depth, label)] = f"{res.runtime:.3f}s/{miscl}" + (f"/b{b}" if label != "lambda=0" else "")
                print(f"{name:15} {data.n_rows:>5} {depth:>1} {label:>16} {res.status:>8} {res.runtime:>7.3f} "
                      f"{res.objective if res.objective is not None else float('nan'):>10.4f} {miscl!s:>5} {b!s:>2} "
                      f"{orc if orc is not None else '-':>6} {mio_value if mio_value is not None else float('nan'):>10.4f} "
                      f"{res.task!s:>22} {'; '.join(problems) or 'ok'}", flush=True)
    print()
    print("time / misclassified rows (/ branching nodes) per problem:")
    print(f"{'dataset':15} {'d':>1} " + " ".join(f"{p:>20}" for p in PROBLEMS))
    for name in args.datasets:
        for depth in args.depths:
            print(f"{name:15} {depth:>1} " + " ".join(f"{cells[(name, depth, p)]:>20}" for p in PROBLEMS))
    total = len(args.datasets) * len(args.depths) * len(PROBLEMS)
    print(f"\n{total} solves in {time.perf_counter() - t_all:.1f} s, {failures} with a failed check")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
