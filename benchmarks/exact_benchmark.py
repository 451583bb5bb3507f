"""The exact search (``strongtree_core/accel/search.py``) measured on the shared data.

Sections (``--sections``):

* ``accuracy``: the 12 categorical datasets and the mixed ones (5 quantile
  buckets), full data, depths 2-4, the accuracy objective plain (lambda = 0,
  checked against ``oracle_optimal.csv``), with lambda = 0.5, with a minimum
  leaf of 5 % of the rows and with at most 2^(d-1) branching nodes; pystreed
  side by side in the same run when it is installed (time ratio).
* ``german``: German credit (binary age), the five notions, the fair-tree
  paper's bounds 0.01-0.55, training splits 1-5, depth 3, through
  ``StrongTreeClassifier`` as a user calls it; next to the paper's 3-hour
  Gurobi runs of the same instances.
* ``compas``: COMPAS with binary and 4-level race, statistical parity 0.01 /
  0.05 / 0.10, depth 3: training splits 1-5, and the full table (6,172 rows,
  4-level race).
* ``adult``: Adult, depth 3, recall >= 0.7 with precision >= 0.6 (and 0.55),
  training splits 1-5.
* ``first``: time from ``fit`` to the first tree on 10k-100k-row tables with
  a fairness constraint, depth 3.

Every result is re-measured from predictions (``constraint_checks_``); a CSV
row is written after every instance (``--out``); ``--summarize`` prints the
tables of RESULTS.md from one or more CSV files.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import DATA, DATASETS, load_table, oracle_table, require_data
from benchmarks.fairness_benchmark import COMPAS_FULL, DATASETS as FAIR, load_part
from strongtree_core import StrongTreeClassifier
from strongtree_core.accel.search import exact_solve
from strongtree_core.encoding import TableEncoder
from strongtree_core.encoding.patterns import collapse_patterns
from strongtree_core.formulation.objectives import tree_objective
from strongtree_core.formulation.spec import TreeSpec

MIXED = DATA / "mixed"
FAIROCT = DATA / "paper_results"
NOTIONS = {
    "SP": "statistical_parity", "CSP": "conditional_statistical_parity", "PE": "predictive_equality",
    "EOpp": "equal_opportunity", "EOdds": "equalized_odds",
}
FIELDS = ["section", "dataset", "split", "depth", "variant", "bound", "rows", "features", "status", "certified",
          "objective", "upper", "seconds", "first_tree", "checks_ok", "reference", "reference_status",
          "reference_seconds", "note"]


# ------------------------------------------------------------------ data
def mixed_tables() -> dict[str, tuple[pd.DataFrame, np.ndarray]]:
    """The mixed-feature UCI files: features and labels."""
    def read(name, **kw):
        return pd.read_csv(MIXED / name, **kw)

    out = {}
    df = read("iris.data", header=None)
    out["iris"] = (df.iloc[:, :4], df.iloc[:, 4].to_numpy())
    df = read("wine.data", header=None)
    out["wine"] = (df.iloc[:, 1:], df.iloc[:, 0].to_numpy())
    df = read("transfusion.data")
    out["transfusion"] = (df.iloc[:, :4], df.iloc[:, 4].to_numpy())
    df = read("banknote.txt", header=None)
    out["banknote"] = (df.iloc[:, :4], df.iloc[:, 4].to_numpy())
    df = read("ionosphere.data", header=None)
    out["ionosphere"] = (df.iloc[:, :34], df.iloc[:, 34].to_numpy())
    df = read("sonar.all-data", header=None)
    out["sonar"] = (df.iloc[:, :60], df.iloc[:, 60].to_numpy())
    df = read("wdbc.data", header=None)
    out["wdbc"] = (df.iloc[:, 2:], df.iloc[:, 1].to_numpy())
    df = read("seeds.txt", header=None, sep=r"\s+")
    out["seeds"] = (df.iloc[:, :7], df.iloc[:, 7].to_numpy())
    df = read("climate.dat", sep=r"\s+")
    out["climate"] = (df.iloc[:, 2:-1], df.iloc[:, -1].to_numpy())
    df = read("parkinsons.data")
    out["parkinsons"] = (df.drop(columns=["name", "status"]), df["status"].to_numpy())
    df = read("ILPD.csv", header=None)
    out["ilpd"] = (df.iloc[:, :10], df.iloc[:, 10].to_numpy())
    return out


def accuracy_instances(names: list[str] | None):
    """(name, PatternData) for the categorical and mixed datasets."""
    for name in DATASETS:
        if names and name not in names:
            continue
        df = load_table(name)
        classes, y = np.unique(df.pop("target").to_numpy(), return_inverse=True)
        yield name, collapse_patterns(df.to_numpy(), y, classes.size)
    for name, (X, labels) in mixed_tables().items():
        if names and name not in names:
            continue
        classes, y = np.unique(labels, return_inverse=True)
        Xb = TableEncoder(n_buckets=5).fit(X).transform(X)
        yield name, collapse_patterns(Xb, y, classes.size)


def accuracy_specs(data, depth: int):
    yield "plain", TreeSpec(depth=depth)
    yield "lambda=0.5", TreeSpec(depth=depth, lambda_=0.5)
    yield "min leaf 5%", TreeSpec(depth=depth, min_leaf=max(1, math.ceil(0.05 * data.n_rows)))
    yield f"branching<={2 ** (depth - 1)}", TreeSpec(depth=depth, max_branching=2 ** (depth - 1))


# -------------------------------------------------------------- sections
def run_accuracy(args, write) -> None:
    oracle = oracle_table()
    try:
        from strongtree_core.accel import streed_solve
        import pystreed  # noqa: F401  (imported once, outside the timed solves)
    except ImportError:
        streed_solve = None
    for name, data in accuracy_instances(args.datasets):
        for depth in args.depths:
            for variant, spec in accuracy_specs(data, depth):
                if args.variants and variant.split("=")[0].split("<")[0] not in args.variants:
                    continue
                t0 = time.perf_counter()
                res = exact_solve(data, spec, time_limit=args.limit)
                seconds = time.perf_counter() - t0
                value = None if res.structure is None else tree_objective(data, spec, res.structure)
                note = ""
                ref, ref_status, ref_seconds = None, "", None
                if variant == "plain" and (name, depth) in oracle:
                    optimum = data.n_rows - oracle[(name, depth)]
                    if res.status == "optimal" and value != optimum:
                        note = f"ORACLE MISMATCH: optimum {optimum}"
                    ref, ref_status = optimum, "oracle"
                if streed_solve is not None:
                    t1 = time.perf_counter()
                    theirs = streed_solve(data, spec, time_limit=args.limit)
                    ref_seconds = time.perf_counter() - t1
                    if theirs.supported:
                        ref_status = "pystreed " + ("certified" if theirs.certified else theirs.status)
                        if theirs.certified and res.status == "optimal" and abs(theirs.objective - value) > 1e-6:
                            note += f" PYSTREED MISMATCH: {theirs.objective}"
                        if ref is None:
                            ref = theirs.objective
                    else:
                        ref_status, ref_seconds = "pystreed unsupported", None
                write(dict(section="accuracy", dataset=name, split="", depth=depth, variant=variant, bound="",
                           rows=data.n_rows, features=data.n_features, status=res.status,
                           certified=res.status == "optimal", objective=value, upper=res.bound, seconds=round(seconds, 3),
                           first_tree="", checks_ok=True, reference=ref, reference_status=ref_status,
                           reference_seconds=None if ref_seconds is None else round(ref_seconds, 3), note=note.strip()))


def fairoct_runs() -> dict[tuple, dict]:
    """The fair-tree paper's FlowOCT runs on German (Gurobi, 3 h): (notion, bound, split, depth) -> row."""
    header = [c.strip() for c in pd.read_csv(FAIROCT / "fairoct_header.csv").columns]
    df = pd.read_csv(FAIROCT / "fairoct_FlowOCT_german_binary.csv", header=None)
    df.columns = header
    out = {}
    for r in df.to_dict("records"):
        if isinstance(r["fair type"], str):
            out[(r["fair type"], round(float(r["fair bound"]), 2), int(r["sample"]), int(r["depth"]))] = r
    return out


def _fair_fit(ds_name: str, notion: str, delta: float, split: int, depth: int, limit: float, extra=None):
    ds = COMPAS_FULL if ds_name == COMPAS_FULL.name else FAIR[ds_name]
    part = load_part(ds, "train", split)
    kwargs = dict(fairness=notion, fairness_bound=delta) if notion else {}
    kwargs.update(extra or {})
    clf = StrongTreeClassifier(depth=depth, pos_label=ds.positive, time_limit=limit, **kwargs)
    first = []
    t0 = time.perf_counter()

    def progress(ev) -> None:
        if ev.tree is not None and not first:
            first.append(time.perf_counter() - t0)

    fit_kwargs = {}
    if notion:
        fit_kwargs["sensitive_features"] = part.group
    if notion == "conditional_statistical_parity":
        fit_kwargs["legitimate_features"] = part.legit
    try:
        clf.fit(part.X, part.y, progress=progress, **fit_kwargs)
    except Exception as exc:  # an infeasible problem, reported as such
        return dict(status="error", certified=False, objective=None, upper=None, seconds=round(time.perf_counter() - t0, 3),
                    first_tree=None, checks_ok=True, note=str(exc)[:160], rows=len(part.y), features=part.X.shape[1])
    seconds = time.perf_counter() - t0
    rec = clf.record_
    correct = int((clf.predict(part.X) == part.y.to_numpy()).sum())
    checks_ok = all(c["satisfied"] for c in clf.constraint_checks_)
    return dict(status=rec.status, certified=rec.certified, objective=correct, upper=rec.bound, seconds=round(seconds, 3),
                first_tree=None if not first else round(first[0], 3), checks_ok=checks_ok, note="",
                rows=len(part.y), features=part.X.shape[1])


def run_german(args, write) -> None:
    paper = fairoct_runs()
    short = {v: k for k, v in NOTIONS.items()}
    deltas = args.deltas or [round(0.01 * k, 2) for k in range(1, 56)]
    for split in args.splits:
        for notion in args.notions:
            for delta in deltas:
                row = _fair_fit("german", notion, delta, split, 3, args.limit)
                ref = paper.get((short[notion], delta, split, 3))
                write(dict(section="german", dataset="german", split=split, depth=3, variant=short[notion], bound=delta,
                           reference=None if ref is None else ref["obj val"],
                           reference_status="" if ref is None else f"gurobi 3h status {ref['status']} gap {ref['gap']:.1f}%",
                           reference_seconds=None if ref is None else ref["solving time"], **row))


def run_compas(args, write) -> None:
    for ds_name in ("compas", "compas4", COMPAS_FULL.name):
        for delta in (0.01, 0.05, 0.10):
            for split in args.splits if ds_name != COMPAS_FULL.name else [1]:
                row = _fair_fit(ds_name, "statistical_parity", delta, split, 3, args.limit)
                write(dict(section="compas", dataset=ds_name, split=split, depth=3, variant="SP", bound=delta,
                           reference=None, reference_status="", reference_seconds=None, **row))


def run_adult(args, write) -> None:
    for precision in (0.6, 0.55):
        for split in args.splits:
            row = _fair_fit("adult", None, 0.0, split, 3, args.limit, extra=dict(min_recall=0.7, min_precision=precision))
            write(dict(section="adult", dataset="adult", split=split, depth=3, variant=f"recall>=0.7, precision>={precision}",
                       bound="", reference=None, reference_status="", reference_seconds=None, **row))


def run_first(args, write) -> None:
    rng = np.random.default_rng(0)
    for n in (10_000, 30_000, 100_000):
        for n_groups in (2, 3):
            X = pd.DataFrame(rng.normal(size=(n, 12)), columns=[f"x{j}" for j in range(12)])
            X["kind"] = rng.choice(list("abcde"), size=n)
            group = pd.Series(rng.integers(0, n_groups, n).astype(str), name="group")
            y = ((X["x0"] + X["x1"] - X["x2"] + group.astype(int) * 0.5 + rng.normal(0, 1, n)) > 0.5).astype(int)
            clf = StrongTreeClassifier(depth=3, fairness="statistical_parity", fairness_bound=0.05, pos_label=1,
                                       time_limit=args.limit)
            first = []
            t0 = time.perf_counter()

            def progress(ev) -> None:
                if ev.tree is not None and not first:
                    first.append(time.perf_counter() - t0)

            clf.fit(X, y, sensitive_features=group, progress=progress)
            seconds = time.perf_counter() - t0
            rec = clf.record_
            write(dict(section="first", dataset=f"synthetic {n:,} rows", split="", depth=3, variant=f"SP 0.05, {n_groups} groups",
                       bound=0.05, rows=n, features=rec.n_patterns, status=rec.status, certified=rec.certified,
                       objective=rec.objective, upper=rec.bound, seconds=round(seconds, 3),
                       first_tree=None if not first else round(first[0], 3),
                       checks_ok=all(c["satisfied"] for c in clf.constraint_checks_), reference=None,
                       reference_status="", reference_seconds=None, note=""))


SECTIONS = {"accuracy": run_accuracy, "german": run_german, "compas": run_compas, "adult": run_adult, "first": run_first}


# --------------------------------------------------------------- summary
def _certified(part: pd.DataFrame) -> pd.Series:
    """Certified optimum, or infeasibility proven (the estimator's message)."""
    return part["certified"].astype(str).eq("True") | part["note"].astype(str).str.startswith("No tree of depth")


def summarize(paths: list[str]) -> str:
    """The markdown tables of RESULTS.md section 11."""
    df = pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)
    out: list[str] = []
    acc = df[df.section == "accuracy"]
    if len(acc):
        out += ["| depth | variant | certified within the limit | median s | max s | pystreed certified | "
                "time ours / pystreed (median, both certified) | disagreements |", "|---|---|---|---|---|---|---|---|"]
        acc = acc.assign(kind=acc["variant"].str.replace(r"[=<].*", "", regex=True))
        for (depth, kind), part in acc.groupby(["depth", "kind"]):
            cert = _certified(part)
            theirs = part["reference_status"].astype(str).eq("pystreed certified")
            both = part[cert & theirs]
            ratio = (both["seconds"] / both["reference_seconds"].clip(lower=1e-3)).median() if len(both) else float("nan")
            bad = part["note"].astype(str).str.contains("MISMATCH", na=False)
            out.append(f"| {depth} | {kind} | {int(cert.sum())}/{len(part)} | {part['seconds'].median():.3f} | "
                       f"{part['seconds'].max():.2f} | {int(theirs.sum())}/{len(part)} | {ratio:.1f} | "
                       f"{'; '.join(part.loc[bad, 'dataset'] + ': ' + part.loc[bad, 'note'].astype(str)) or '0'} |")
    ger = df[df.section == "german"]
    if len(ger):
        out += ["", "| notion | instances | certified | median s | 90th pct s | max s | ours > paper | = paper | < paper | "
                "paper certified (3 h) |", "|---|---|---|---|---|---|---|---|---|---|"]
        for notion, part in ger.groupby("variant"):
            ref = part[part["reference"].notna()]
            paper_opt = ref["reference_status"].astype(str).str.contains("status 2").sum()
            out.append(f"| {notion} | {len(part)} | {int(_certified(part).sum())} | {part['seconds'].median():.2f} | "
                       f"{part['seconds'].quantile(0.9):.2f} | {part['seconds'].max():.2f} | "
                       f"{int((ref['objective'] > ref['reference']).sum())} | {int((ref['objective'] == ref['reference']).sum())} | "
                       f"{int((ref['objective'] < ref['reference']).sum())} | {paper_opt}/{len(ref)} |")
    rest = df[df.section.isin(["compas", "adult", "first"])]
    if len(rest):
        out += ["", "| section | data | split | constraint | outcome | correct rows | s | first tree s |", "|---|---|---|---|---|---|---|---|"]
        for r in rest.itertuples():
            outcome = "proven infeasible" if str(r.note).startswith("No tree of depth") else (
                "certified" if str(r.certified) == "True" else f"{r.status}, bound {r.upper}")
            bound = "" if pd.isna(r.bound) else f" {r.bound:g}"
            split = "" if pd.isna(r.split) else int(r.split)
            out.append(f"| {r.section} | {r.dataset} | {split} | {r.variant}{bound} | {outcome} | "
                       f"{'' if pd.isna(r.objective) else int(r.objective)} | {r.seconds:.2f} | "
                       f"{'' if pd.isna(r.first_tree) else r.first_tree} |")
    checks = df["checks_ok"].astype(str).eq("True")
    out.append(f"\n{len(df)} runs; constraint re-measurements failed: {int((~checks).sum())}.")
    return "\n".join(out)


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sections", nargs="+", default=list(SECTIONS), choices=list(SECTIONS))
    ap.add_argument("--limit", type=float, default=60.0, help="seconds per instance (accuracy: use 10)")
    ap.add_argument("--datasets", nargs="*", default=None, help="accuracy: only these datasets")
    ap.add_argument("--depths", nargs="+", type=int, default=[2, 3, 4], help="accuracy: depths")
    ap.add_argument("--variants", nargs="*", default=None, help="accuracy: plain, lambda, min leaf 5%%, branching")
    ap.add_argument("--splits", nargs="+", type=int, default=[1, 2, 3, 4, 5])
    ap.add_argument("--notions", nargs="+", default=list(NOTIONS.values()), choices=list(NOTIONS.values()))
    ap.add_argument("--deltas", nargs="*", type=float, default=None, help="german: bounds (default 0.01-0.55)")
    ap.add_argument("--out", default="benchmarks/out/exact_benchmark.csv", help="CSV written after every instance")
    ap.add_argument("--summarize", nargs="*", default=None, help="print the summary of these CSV files and exit")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse(argv)
    if args.summarize is not None:
        print(summarize(args.summarize or [args.out]))
        return 0
    require_data()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    new = not out.exists()
    with out.open("a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        if new:
            writer.writeheader()

        def write(row: dict) -> None:
            writer.writerow({k: row.get(k) for k in FIELDS})
            fh.flush()
            print(" | ".join(f"{row.get(k)}" for k in ("section", "dataset", "split", "depth", "variant", "bound", "status",
                                                         "objective", "upper", "seconds", "first_tree", "reference",
                                                         "reference_status", "reference_seconds", "note")), flush=True)

        for section in args.sections:
            SECTIONS[section](args, write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
