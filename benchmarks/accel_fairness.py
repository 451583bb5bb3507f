"""The exact search on fairness-constrained trees: COMPAS with a binary race attribute.

Statistical parity and equal opportunity (bound 0.05, positive class = label 1)
at depths 2 and 3 on the full ``compas_binrace_enc.csv`` (the protected column
``race.1`` is the group, not a feature).  For each: status, whether pystreed's
answer is certified, time, correct rows, and the gap re-measured by the
project's own fairness classes.

python -m benchmarks.accel_fairness [--time-limit 120]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from benchmarks.common import DATA
from strongtree_core.accel import streed_solve
from strongtree_core.encoding.patterns import collapse_patterns
from strongtree_core.formulation import TreeSpec
from strongtree_core.formulation.fairness_constraints import EqualOpportunity, StatisticalParity

COMPAS = DATA / "fairness" / "compas" / "compas_binrace_enc.csv"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--bound", type=float, default=0.05)
    args = ap.parse_args(argv)
    df = pd.read_csv(COMPAS)
    y = np.unique(df.pop("target").to_numpy(), return_inverse=True)[1]
    group = df.pop("race.1").to_numpy()
    data = collapse_patterns(df.to_numpy(), y, 2, group=group)
    import pystreed  # noqa: F401  (imported once, outside the timed solves)

    print(f"# COMPAS {data.n_rows} rows, {data.n_features} features, {data.n_patterns} patterns; group race.1")
    print(f"{'d':>1} {'constraint':>18} {'status':>9} {'certified':>9} {'time s':>7} {'correct':>7} {'gap':>7} reason")
    for depth in (2, 3):
        for notion in (StatisticalParity, EqualOpportunity):
            constraint = notion(args.bound)
            spec = TreeSpec(depth=depth, pos_label=1, side_constraints=(constraint,))
            res = streed_solve(data, spec, time_limit=args.time_limit)
            gap = "-"
            if res.structure is not None:
                (check,) = constraint.measure(data.y, res.structure.predict(data.X), group=data.group, positive=1, count=data.count)
                gap = f"{check.measured:.4f}" + ("" if check.satisfied else " BROKEN")
            print(f"{depth:>1} {notion.name:>18} {res.status:>9} {res.certified!s:>9} {res.runtime:>7.2f} "
                  f"{res.objective if res.objective is not None else float('nan'):>7.0f} {gap:>7} {res.reason}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
