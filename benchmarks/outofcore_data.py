"""A generated administrative table on disk, in Parquet parts: the data of ``outofcore_benchmark.py``.

Each row is one application: 16 yes/no flags ``b00`` .. ``b15`` (prevalence 2 % to 25 %, as the
flags of administrative records mostly are: a prior claim, a disability, a dependant, ...), four
numbers (``age`` whole years 18-90, ``income`` log-normal with 2 % missing, ``score`` normal,
``tenure`` exponential), the protected ``group`` ("A" 40 %, "B" 60 %) and the label
``approved`` (0 / 1) drawn from a logistic model of a few flags, thresholds of the numbers and
the group, so that the best tree splits on numbers and parity binds.  Parts of one million rows
(``part-00000.parquet``, ...), each drawn from its own seed: the first k parts of a larger
table are the table of k million rows.

    python -m benchmarks.outofcore_data --rows 10000000 --out /tmp/strongtree-10m
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

PART_ROWS = 1_000_000
N_FLAGS = 16
#: The flags' prevalences: "sparse" (the default, 2-25 %) or "dense" (5-50 %: nearly every combination
#: of the 16 flags occurs, four times the patterns).
PREVALENCE = {"sparse": (0.02, 0.25), "dense": (0.05, 0.5)}


def make_part(rows: int, seed: int, flags: str = "sparse") -> pa.Table:
    rng = np.random.default_rng(seed)
    prevalence = np.linspace(*PREVALENCE[flags], N_FLAGS)
    flags = rng.random((rows, N_FLAGS)) < prevalence
    group_b = rng.random(rows) < 0.6
    age = rng.integers(18, 91, rows)
    income = np.exp(rng.normal(10.3, 0.6, rows)).round(2)
    income[rng.random(rows) < 0.02] = np.nan
    score = rng.normal(600, 80, rows).round(1)
    tenure = rng.exponential(5.0, rows).round(2)
    logit = (-1.2 + 1.1 * flags[:, 3] - 0.9 * flags[:, 9] + 0.7 * flags[:, 14]
             + 0.02 * (age - 45) + 1.0 * (np.nan_to_num(income, nan=20000) > 35000)
             + 0.012 * (score - 600) + 0.6 * (tenure > 3) + 0.5 * group_b)
    approved = (rng.random(rows) < 1 / (1 + np.exp(-logit))).astype(np.int8)
    columns = {f"b{j:02d}": flags[:, j].astype(np.int8) for j in range(N_FLAGS)}
    columns.update(age=age.astype(np.int16), income=income, score=score, tenure=tenure,
                   group=np.where(group_b, "B", "A"), approved=approved)
    return pa.table(columns)


def write(rows: int, out: Path, seed: int = 0, flags: str = "sparse") -> list[Path]:
    """The table of ``rows`` rows as Parquet parts under ``out`` (made if absent); their paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for k, start in enumerate(range(0, rows, PART_ROWS)):
        path = out / f"part-{k:05d}.parquet"
        pq.write_table(make_part(min(PART_ROWS, rows - start), seed * 100_003 + k, flags), path,
                       row_group_size=250_000)
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--flags", choices=list(PREVALENCE), default="sparse")
    args = parser.parse_args()
    paths = write(args.rows, args.out, args.seed, args.flags)
    print(f"{len(paths)} parts, {sum(p.stat().st_size for p in paths) / 2**20:.0f} MB under {args.out}")


if __name__ == "__main__":
    main()
