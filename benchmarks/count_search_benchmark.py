"""Fair trees where the Lagrangian bound leaves a gap: the search over the groups' counts
(``strongtree_core/accel/count_search.py``) against the code before it, interleaved.

Every fit runs in a fresh process on the source tree given by ``--trees`` (a checkout
without the counts' search, then this one), the trees alternating instance by instance,
through ``StrongTreeClassifier`` as a user calls it.  Sections (``--sections``):

* ``csp``: German and Adult, conditional statistical parity 0.01, depth 4, training split 1;
* ``tiny``: random tables of 45-48 rows and 5 binary features, two groups and a 3-level
  legitimate factor, depth 4, conditional parity 0 and equalized odds 0.005 (seeds ``--seeds``);
* ``groups``: random tables of 46 rows and 5 binary features, every notion, 2-6 groups,
  depth 4, bound 0.05;
* ``milp``: random tables of 30 rows and 4 binary features, every notion, 2 and 4 groups,
  depth 3, bound 0.05 (with ``--milp``: the optimum checked against scipy's MILP);
* ``grid``: German, COMPAS and Adult (training split 1), the five notions, bounds
  ``--bounds``, depths ``--depths``.

``--counts-max-rows`` sends larger tables (Adult's 2,700 training rows) to the counts' search
too (``count_search.MAX_ROWS`` in each fit's process).

Each tree is checked from outside the library: its fairness measured from its predictions
in exact fractions (``tests/brute_force.holds``), its correct rows counted from its
predictions; with ``--milp`` the random tables' optimum is compared with scipy's MILP
(HiGHS) on FlowOCT.  One JSON line per fit goes to ``--out``; ``--summarize`` prints
the tables of RESULTS.md from it.

    python -m benchmarks.count_search_benchmark --trees /path/to/before . --sections csp tiny
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()
NOTIONS = ("statistical_parity", "conditional_statistical_parity", "predictive_equality", "equal_opportunity",
           "equalized_odds")
SHORT = dict(zip(NOTIONS, ("SP", "CSP", "PE", "EOpp", "EOdds")))


# ------------------------------------------------------------------------------------ one fit (worker)
def random_table(seed: int, n: int, n_features: int, n_groups: int):
    """Random rows, binary features, ``n_groups`` groups, three legitimate levels."""
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, n_features))
    group = rng.integers(0, n_groups, n)
    group[:n_groups] = np.arange(n_groups)
    legit = rng.integers(0, 3, n)
    y = ((X[:, 0] + X[:, 1] * (group == 0) + X[:, 2] * legit / 2 + rng.random(n) * 1.5) > 1.4).astype(int)
    return X, y, group, legit


def milp_optimum(X, y, group, legit, notion: str, delta: float, depth: int, seconds: float):
    """Correct rows of FlowOCT's optimum by scipy's MILP, or None when it does not finish."""
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp

    from strongtree_core.encoding.patterns import collapse_patterns
    from strongtree_core.formulation import build_model
    from strongtree_core.formulation.fairness_constraints import FAIRNESS_NOTIONS
    from strongtree_core.formulation.spec import TreeSpec

    data = collapse_patterns(X, y, 2, group=group, legit=legit)
    spec = TreeSpec(depth=depth, pos_label=1, side_constraints=(FAIRNESS_NOTIONS[notion](delta, 1),))
    m = build_model(data, spec, "flow").arrays
    sign = -1.0 if m.sense == "max" else 1.0
    res = milp(sign * m.c, constraints=LinearConstraint(m.A, m.row_lower, m.row_upper),
               integrality=m.integrality.astype(int), bounds=Bounds(m.col_lower, m.col_upper),
               options=dict(time_limit=seconds))
    return None if res.status != 0 else float(np.round(m.objective(res.x), 6))


def fit_one(job: dict) -> dict:
    import numpy as np

    sys.path.insert(0, str(HERE.parents[1] / "tests"))
    from brute_force import holds

    from strongtree_core import StrongTreeClassifier

    notion, delta, depth = job["notion"], job["delta"], job["depth"]
    if job["kind"] == "random":
        X, y, group, legit = random_table(job["seed"], job["n"], job["features"], job["groups"])
        fit_kw = dict(sensitive_features=group)
        if notion == "conditional_statistical_parity":
            fit_kw["legitimate_features"] = legit
        pos, y_true, group_v, legit_v = 1, y, group, legit
    else:
        from benchmarks.fairness_benchmark import DATASETS, load_part

        ds = DATASETS[job["dataset"]]
        part = load_part(ds, "train", 1)
        X, y = part.X, part.y
        fit_kw = dict(sensitive_features=part.group)
        if notion == "conditional_statistical_parity":
            fit_kw["legitimate_features"] = part.legit
        pos, y_true = ds.positive, np.asarray(part.y)
        group_v = np.unique(np.asarray(part.group).astype(str), return_inverse=True)[1]
        legit_v = np.unique(np.asarray(part.legit).astype(str), return_inverse=True)[1]
    if job.get("counts_max_rows"):
        from strongtree_core.accel import count_search

        count_search.MAX_ROWS = job["counts_max_rows"]  # the counts' route for larger tables too
    clf = StrongTreeClassifier(depth=depth, fairness=notion, fairness_bound=delta, pos_label=pos,
                               time_limit=job["limit"])
    t0, c0 = time.perf_counter(), time.process_time()
    clf.fit(X, y, **fit_kw)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    r = clf.record_
    pred = np.asarray(clf.predict(X))
    out = dict(job, status=r.status, certified=bool(r.certified), objective=r.objective, bound=r.bound,
               seconds=round(seconds, 3), cpu_seconds=round(cpu, 3), choice=r.choice[:160],
               correct=int((pred == y_true).sum()),
               measured_ok=bool(holds(notion, delta, y_true, pred, group_v, legit_v, pos)),
               checks_ok=all(c["satisfied"] for c in clf.constraint_checks_), load=os.getloadavg()[0])
    if job["kind"] == "random":
        out["majority"] = int(np.bincount(y).max())
    out["milp"] = None
    if job.get("milp") and job["kind"] == "random":
        t1 = time.perf_counter()
        out["milp"] = milp_optimum(X, y, group, legit, notion, delta, depth, job["milp"])
        out["milp_seconds"] = round(time.perf_counter() - t1, 2)
    return out


# ------------------------------------------------------------------------------------------ the jobs
def jobs(args) -> list[dict]:
    out = []
    if "csp" in args.sections:
        for ds in ("german", "adult"):
            out.append(dict(section="csp", kind="fair", dataset=ds, notion="conditional_statistical_parity",
                            delta=0.01, depth=4, limit=args.csp_limit))
    if "tiny" in args.sections:
        for seed in args.seeds:
            for notion, delta in (("conditional_statistical_parity", 0.0), ("equalized_odds", 0.005)):
                out.append(dict(section="tiny", kind="random", seed=seed, n=45 + seed % 4, features=5, groups=2,
                                notion=notion, delta=delta, depth=4, limit=args.tiny_limit, milp=args.milp))
    if "groups" in args.sections:
        for groups in (2, 3, 4, 5, 6):
            for notion in NOTIONS:
                out.append(dict(section="groups", kind="random", seed=100 + groups, n=46, features=5, groups=groups,
                                notion=notion, delta=0.05, depth=4, limit=args.grid_limit, milp=args.milp))
    if "milp" in args.sections:
        for groups in (2, 4):
            for notion in NOTIONS:
                out.append(dict(section="milp", kind="random", seed=200 + groups, n=30, features=4, groups=groups,
                                notion=notion, delta=0.05, depth=3, limit=args.grid_limit, milp=args.milp))
    if "grid" in args.sections:
        for depth in args.depths:
            for ds in ("german", "compas", "adult"):
                for notion in NOTIONS:
                    for delta in args.bounds:
                        out.append(dict(section="grid", kind="fair", dataset=ds, notion=notion, delta=delta,
                                        depth=depth, limit=args.grid_limit))
    return out


def run_script(script: Path, tree: str, job: dict) -> dict | str:
    """``script --one job`` in a fresh interpreter on the library of the source tree ``tree``: the row its
    last line prints, or its standard error when it failed."""
    env = dict(os.environ, PYTHONPATH=str(Path(tree).resolve()))
    done = subprocess.run([sys.executable, str(script), "--one", json.dumps(job)], cwd=tree, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return done.stderr.strip()
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_in(tree: str, job: dict) -> dict:
    row = run_script(HERE, tree, job)
    return row if isinstance(row, dict) else dict(job, status="error", certified=False, seconds=None, note=row[-300:])


# --------------------------------------------------------------------------------------- the summary
def summarize(path: str) -> str:
    """One line per section and tree: certified share, median and worst seconds (wall; CPU beside),
    trees whose fairness breaks when measured, optima that differ from the other tree's certified
    one or from the MILP, and the load (1-minute average) seen at the fits."""
    import statistics

    with open(path) as fh:
        rows = [json.loads(line) for line in fh]
    trees = list(dict.fromkeys(r["tree"] for r in rows))
    sections: dict = {}
    for r in rows:
        key = f"{r['section']} d{r['depth']}"
        sections.setdefault(key, []).append(r)
    certified: dict = {}
    for r in rows:
        if r.get("certified"):
            job = json.dumps({k: r.get(k) for k in ("section", "dataset", "seed", "groups", "notion", "delta", "depth")})
            certified.setdefault(job, set()).add(r["correct"])
    disagree = {job for job, values in certified.items() if len(values) > 1}

    def med(v: list) -> str:
        return f"{statistics.median(v):.2f}" if v else "-"

    def top(v: list) -> str:
        return f"{max(v):.2f}" if v else "-"

    lines = []
    for key, part in sections.items():
        for tree in trees:
            mine = [r for r in part if r["tree"] == tree]
            if not mine:
                continue
            cert = [r for r in mine if r.get("certified")]
            wall = [r["seconds"] for r in cert]
            cpu = [r["cpu_seconds"] for r in cert if r.get("cpu_seconds") is not None]
            bad = [r for r in mine if r.get("status") != "error" and not (r.get("measured_ok") and r.get("checks_ok"))]
            other = [r for r in cert if json.dumps({k: r.get(k) for k in ("section", "dataset", "seed", "groups", "notion",
                                                                            "delta", "depth")}) in disagree]
            milp = [r for r in cert if r.get("milp_seconds") is not None and r.get("milp") is not None]
            wrong = [r for r in milp if abs(r["milp"] - r["correct"]) > 1e-6]
            loads = [r.get("load", 0) for r in mine]
            lines.append(f"| {key} | {tree} | {len(cert)} of {len(mine)} | {med(wall)} / {med(cpu)} | "
                         f"{top(wall)} / {top(cpu)} | {max(r['seconds'] or 0 for r in mine):.2f} | {len(bad)} | "
                         f"{len(other)} | {len(wrong)} of {len(milp)} | {min(loads):.1f}-{max(loads):.1f} |")
    head = ("| section | code | certified | median s, wall / CPU (certified) | worst s, wall / CPU (certified) | "
            "worst wall s (all) | fairness broken when measured | optimum differs between the codes | "
            "optimum differs from the MILP | load |")
    return "\n".join([head, "|---|---|---|---|---|---|---|---|---|---|", *lines])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--trees", nargs="+", default=["."], help="source trees, interleaved (before first)")
    ap.add_argument("--sections", nargs="+", default=["csp", "tiny", "groups", "grid"],
                    choices=["csp", "tiny", "groups", "milp", "grid"])
    ap.add_argument("--seeds", nargs="+", type=int, default=list(range(10)))
    ap.add_argument("--bounds", nargs="+", type=float, default=[0.01, 0.05, 0.1])
    ap.add_argument("--depths", nargs="+", type=int, default=[3, 4])
    ap.add_argument("--csp-limit", type=float, default=60.0)
    ap.add_argument("--tiny-limit", type=float, default=60.0)
    ap.add_argument("--grid-limit", type=float, default=20.0)
    ap.add_argument("--milp", type=float, default=0.0, help="seconds for scipy's MILP on the random tables (0: none)")
    ap.add_argument("--counts-max-rows", type=int, default=0,
                    help="most rows the counts' search takes (count_search.MAX_ROWS; 0: the library's own)")
    ap.add_argument("--out", default="benchmarks/out/count_search.jsonl")
    ap.add_argument("--summarize", default=None)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(fit_one(json.loads(args.one))))
        return 0
    if args.summarize:
        print(summarize(args.summarize))
        return 0
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "a") as fh:
        for i, job in enumerate(jobs(args)):
            if args.counts_max_rows:
                job["counts_max_rows"] = args.counts_max_rows
            order = args.trees if i % 2 == 0 else args.trees[::-1]
            for tree in order:
                row = dict(run_in(tree, dict(job, milp=job.get("milp") if tree == args.trees[-1] else 0)),
                           tree=Path(tree).resolve().name)
                fh.write(json.dumps(row) + "\n")
                fh.flush()
                print(json.dumps({k: row.get(k) for k in ("section", "dataset", "seed", "groups", "notion", "delta",
                                                           "depth", "tree", "status", "correct", "bound", "seconds",
                                                           "measured_ok", "milp")}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
