"""Fair trees on COMPAS, German credit and Adult: the five notions of Section 4.3.

For every dataset, notion, depth and split (the ``_enc`` train/test files in
``../shared/datasets/fairness/``), one ``StrongTreeClassifier`` with that
fairness notion and bound delta, and one without any (the unconstrained tree,
fitted once per dataset, depth and split).  The protected attribute (and, for
conditional statistical parity, the legitimate factor) is passed to ``fit`` as
data and is never a splitting feature; the legitimate factor's own columns stay
features.  Printed per tree: status, whether it is certified, method/backend,
the objective (training accuracy), the MIO gap, the time, the time to the
first tree, and the fairness gap measured by :mod:`strongtree_core.metrics` on
the predictions for the training rows (must be <= delta; the script fails
loudly otherwise) and the test rows (may exceed delta), with the test accuracy.

``--compas4`` adds one more block: the full ``compas_enc.csv`` with the
4-level race, statistical parity, depth 2: time to the first feasible tree
(first progress event with a tree), time to a certificate or the gap at the
limit, and the measured gap.

Examples
--------
python -m benchmarks.fairness_benchmark --quick
python -m benchmarks.fairness_benchmark --depths 2 --splits 1 --time-limit 60
python -m benchmarks.fairness_benchmark --datasets compas --notions statistical_parity --compas4 --compas4-time-limit 300
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import traceback
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import FAIRNESS_DATA, MISSING_DATA, load_fairness_table
from benchmarks.paper_benchmark import write_csv
from strongtree_core import StrongTreeClassifier
from strongtree_core.errors import StrongTreeError
from strongtree_core.metrics import fairness_gap

NOTIONS = (
    "statistical_parity",
    "conditional_statistical_parity",
    "predictive_equality",
    "equal_opportunity",
    "equalized_odds",
)
SHORT = {
    "statistical_parity": "SP",
    "conditional_statistical_parity": "CSP",
    "predictive_equality": "PE",
    "equal_opportunity": "EOpp",
    "equalized_odds": "EOdds",
}
#: Slack allowed on a training gap before it counts as above delta (float noise of fairlearn's rates).
GAP_TOLERANCE = 1e-9
QUICK = {"depths": [1], "splits": [1], "time_limit": 10.0, "train_rows": 1000}

ABOVE_DELTA = "FAIRNESS BOUND BROKEN: {dataset} {notion} depth {depth} split {split}: training gap {gap:.6f} > delta {delta:g}"


@dataclass(frozen=True)
class FairDataset:
    """Where a dataset's splits are and how to read them (MANIFEST section 2).

    Attributes
    ----------
    name : str
    pattern : str
        Path under ``fairness/`` with ``{part}`` (train/test) and ``{split}`` (1..5).
    protected : tuple of str
        Columns of the protected attribute (one-hot when several); never split on.
    group_names : tuple of str
        Readable name of each protected level (value 0/1 of a single column, or each one-hot column).
    positive : int
        The positive (favourable) class.
    legitimate : tuple of str
        Columns that together form the legitimate factor of conditional statistical parity.
    """

    name: str
    pattern: str
    protected: tuple[str, ...]
    group_names: tuple[str, ...]
    positive: int
    legitimate: tuple[str, ...]


_PRIORS = ("priors_count.1", "priors_count.2", "priors_count.3", "priors_count.4")
DATASETS: dict[str, FairDataset] = {
    "compas": FairDataset(
        "compas", "compas/splits/compas_binrace_{part}_enc_{split}.csv", ("race.1",), ("white", "non-white"), 1, _PRIORS,
    ),
    "compas4": FairDataset(
        "compas4", "compas/splits/compas_{part}_enc_{split}.csv", ("race.1", "race.2", "race.3", "race.4"),
        ("African-American", "Caucasian", "Hispanic", "Other"), 1, _PRIORS,
    ),
    "german": FairDataset(
        "german", "german/splits/german_binary_{part}_enc_{split}.csv", ("age.1",), ("age.1=0", "age.1=1"), 2,
        tuple(f"credit_history.{j}" for j in range(1, 6)),
    ),
    "adult": FairDataset(
        "adult", "adult/splits/limited-adult-2_{part}_enc_{split}.csv", ("sex.1",), ("sex.1=0", "sex.1=1"), 2,
        tuple(f"education.{j}" for j in range(1, 7)),
    ),
}
COMPAS_FULL = replace(DATASETS["compas4"], name="compas4-full", pattern="compas/compas_enc.csv")


@dataclass(frozen=True)
class Part:
    """One table ready for ``fit``: features, label, protected group and legitimate factor."""

    X: pd.DataFrame
    y: pd.Series
    group: pd.Series
    legit: pd.Series


def _group(frame: pd.DataFrame, ds: FairDataset) -> pd.Series:
    if len(ds.protected) == 1:
        codes = frame[ds.protected[0]].astype(int).to_numpy()
    else:
        onehot = frame[list(ds.protected)].to_numpy()
        if not np.all(onehot.sum(axis=1) == 1):
            raise SystemExit(f"{ds.name}: the columns {ds.protected} are not one-hot")
        codes = onehot.argmax(axis=1)
    return pd.Series(np.asarray(ds.group_names, dtype=object)[codes], name="+".join(ds.protected))


def _legitimate(frame: pd.DataFrame, ds: FairDataset) -> pd.Series:
    """One level per combination of the legitimate columns (thermometer or one-hot alike)."""
    stem = ds.legitimate[0].rsplit(".", 1)[0]
    joined = frame[list(ds.legitimate)].astype(int).astype(str).agg("".join, axis=1)
    return pd.Series(stem + "=" + joined.to_numpy(dtype=object), name=stem)


def split_part(df: pd.DataFrame, ds: FairDataset) -> Part:
    """Features (protected columns removed), label, group and legitimate factor of a table."""
    y = df["target"].astype(int).rename("target")
    X = df.drop(columns=["target", *ds.protected]).reset_index(drop=True)
    return Part(X, y.reset_index(drop=True), _group(df.reset_index(drop=True), ds), _legitimate(df.reset_index(drop=True), ds))


def load_part(ds: FairDataset, part: str, split: int, rows: int | None = None) -> Part:
    df = load_fairness_table(ds.pattern.format(part=part, split=split))
    if rows is not None and rows < len(df):
        df = df.sample(n=rows, random_state=0)
    return split_part(df, ds)


def measured_gap(notion: str, part: Part, pred, positive: int) -> float:
    """The notion's gap on predictions, from the metrics package (NaN if undefined)."""
    return fairness_gap(
        notion, part.y, pred, sensitive_features=part.group,
        legitimate_features=part.legit if notion == "conditional_statistical_parity" else None,
        pos_label=positive,
    ).difference


@dataclass
class Fit:
    """One fitted tree (or why there is none)."""

    status: str
    certified: bool = False
    method: str = ""
    backend: str = ""
    objective: float | None = None
    bound: float | None = None
    train_accuracy: float | None = None
    test_accuracy: float | None = None
    mio_gap: float | None = None
    seconds: float = 0.0
    first_tree_seconds: float | None = None
    branching: int | None = None
    message: str = ""
    model: StrongTreeClassifier | None = None


def fit_one(ds: FairDataset, notion: str | None, depth: int, train: Part, test: Part, args) -> Fit:
    clf = StrongTreeClassifier(
        depth=depth, fairness=notion, fairness_bound=args.delta, pos_label=ds.positive,
        time_limit=args.time_limit, solver=args.solver, threads=args.threads,
    )
    first: list[float] = []
    t0 = time.perf_counter()

    def progress(ev) -> None:
        if ev.tree is not None and not first:
            first.append(time.perf_counter() - t0)

    kwargs = {}
    if notion is not None:
        kwargs["sensitive_features"] = train.group
    if notion == "conditional_statistical_parity":
        kwargs["legitimate_features"] = train.legit
    try:
        clf.fit(train.X, train.y, progress=progress, **kwargs)
    except StrongTreeError as err:  # infeasible, no tree in time, a bound the tree breaks
        return Fit("error", seconds=time.perf_counter() - t0, message=str(err))
    except Exception as err:  # noqa: BLE001  (a crash is a result of the benchmark, reported below)
        traceback.print_exc()
        return Fit("CRASH", seconds=time.perf_counter() - t0, message=f"{type(err).__name__}: {err}")
    seconds = time.perf_counter() - t0
    rec = clf.record_
    train_pred = clf.predict(train.X)
    return Fit(
        status=rec.status, certified=rec.certified, method=rec.method, backend=rec.backend,
        objective=rec.objective, bound=rec.bound, train_accuracy=float(np.mean(train_pred == train.y.to_numpy())),
        test_accuracy=float(np.mean(clf.predict(test.X) == test.y.to_numpy())),
        mio_gap=rec.gap, seconds=seconds, first_tree_seconds=first[0] if first else None,
        branching=clf.tree_.structure.n_branching, message=rec.message, model=clf,
    )


def _fmt(v, spec: str = ".4f") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return format(v, spec)


HEADER = (
    f"{'dataset':8} {'notion':5} {'d':>1} {'s':>1} {'tree':4} {'status':>10} {'cert':>4} {'method':>13} "
    f"{'objective':>9} {'train acc':>9} {'MIO gap':>8} {'time s':>7} {'1st s':>6} "
    f"{'gap train':>9} {'gap test':>8} {'test acc':>8}"
)


def _line(row: dict) -> str:
    return (
        f"{row['dataset']:8} {SHORT[row['notion']]:5} {row['depth']:>1} {row['split']:>1} {row['tree']:4} "
        f"{row['status']:>10} {'yes' if row['certified'] else 'no':>4} {row['method'] + '/' + row['backend']:>13} "
        f"{_fmt(row['objective'], '.0f'):>9} {_fmt(row['train_accuracy']):>9} {_fmt(row['mio_gap']):>8} "
        f"{row['seconds']:>7.1f} {_fmt(row['first_tree_seconds'], '.1f'):>6} "
        f"{_fmt(row['gap_train']):>9} {_fmt(row['gap_test']):>8} {_fmt(row['test_accuracy']):>8}"
        + (f"  {row['message'][:160]}" if row["status"] in ("error", "CRASH") else "")
        + ("" if row["check"] == "ok" else f"  CHECK: {row['check']}")
    )


def _row(ds: FairDataset, notion: str, depth: int, split: int, kind: str, fit: Fit, train: Part, test: Part,
         delta: float) -> dict:
    """A CSV row; ``kind`` is "fair" (fitted with ``notion``) or "free" (unconstrained, gaps of ``notion``)."""
    gap_train = gap_test = None
    problems = []
    if fit.model is not None:
        gap_train = measured_gap(notion, train, fit.model.predict(train.X), ds.positive)
        gap_test = measured_gap(notion, test, fit.model.predict(test.X), ds.positive)
        reference = None
        if depth == 1:
            reference = depth1_optimum(notion if kind == "fair" else None, train, ds.positive, delta)
        problems = consistency(fit, gap_train, len(train.X), kind, reference)
    out = {f.name: getattr(fit, f.name) for f in fields(fit) if f.name != "model"}
    return dict(
        dataset=ds.name, notion=notion, depth=depth, split=split, tree=kind, delta=delta,
        n_train=len(train.X), n_test=len(test.X), gap_train=gap_train, gap_test=gap_test, **out,
        check="; ".join(problems) or "ok",
    )


def _numpy_gap(notion: str, y: np.ndarray, pred: np.ndarray, group: np.ndarray, legit: np.ndarray, positive) -> float:
    """The notion's gap written out with numpy (independent of the metrics package); NaN if undefined."""
    cohorts = {
        "statistical_parity": [np.ones_like(y, dtype=bool)],
        "conditional_statistical_parity": [legit == level for level in np.unique(legit)],
        "predictive_equality": [y != positive],
        "equal_opportunity": [y == positive],
        "equalized_odds": [y == positive, y != positive],
    }[notion]
    gaps = []
    for cohort in cohorts:
        rates = [np.mean(pred[cohort & (group == g)] == positive) for g in np.unique(group) if np.any(cohort & (group == g))]
        if len(rates) >= 2:
            gaps.append(max(rates) - min(rates))
    return max(gaps) if gaps else math.nan


def depth1_optimum(notion: str | None, part: Part, positive, delta: float) -> int | None:
    """Most correct training rows of any tree of depth <= 1 within ``delta`` (brute force over all of them)."""
    X = np.unique(part.X.to_numpy(dtype=np.int64), axis=1).T  # one row per distinct binary column
    y = part.y.to_numpy()
    group, legit = part.group.to_numpy(), part.legit.to_numpy()
    classes = np.unique(y)
    best = None
    for column in X:
        for left in classes:
            for right in classes:
                pred = np.where(column == 1, right, left)
                correct = int(np.sum(pred == y))
                if best is not None and correct <= best:
                    continue
                if notion is None or _numpy_gap(notion, y, pred, group, legit, positive) <= delta + GAP_TOLERANCE:
                    best = correct
    return best


def consistency(fit: Fit, gap_train: float, n_train: int, kind: str, reference: int | None) -> list[str]:
    """Disagreements between the record, the estimator's own check, the re-measured predictions and,
    at depth 1, the brute-force optimum ``reference``."""
    problems = []
    correct = fit.train_accuracy * n_train
    if fit.objective is not None and abs(fit.objective - correct) > 1e-6 * max(1.0, correct):
        problems.append(f"objective {fit.objective:g} but the tree classifies {correct:g} training rows correctly")
    if reference is not None and (correct > reference + 1e-6 or (fit.certified and abs(correct - reference) > 1e-6)):
        problems.append(f"{'certified ' if fit.certified else ''}{correct:g} correct rows, brute force over depth 1 gives {reference}")
    if kind == "fair":
        own = [c["measured"] for c in fit.model.constraint_checks_ if not math.isnan(c["measured"])]
        own_gap = max(own) if own else math.nan
        same = abs(own_gap - gap_train) <= GAP_TOLERANCE or (math.isnan(own_gap) and math.isnan(gap_train))
        if not same:
            problems.append(f"the estimator measured {own_gap:.6g}, the metrics {gap_train:.6g}")
    return problems


def run_splits(args) -> tuple[list[dict], list[str]]:
    rows: list[dict] = []
    broken: list[str] = []
    print(f"# fairness benchmark: delta={args.delta:g} time_limit={args.time_limit:g}s solver={args.solver} "
          f"threads={args.threads} train rows={'all' if args.train_rows is None else args.train_rows}")
    print("# tree: fair = with the notion, free = unconstrained (gaps of the same notion); objective = correct training rows")
    print(HEADER)
    for name in args.datasets:
        ds = DATASETS[name]
        for split in args.splits:
            train = load_part(ds, "train", split, args.train_rows)
            test = load_part(ds, "test", split)
            for depth in args.depths:
                free = fit_one(ds, None, depth, train, test, args)
                for notion in args.notions:
                    fair = fit_one(ds, notion, depth, train, test, args)
                    for kind, fit in (("fair", fair), ("free", free)):
                        row = _row(ds, notion, depth, split, kind, fit, train, test, args.delta)
                        rows.append(row)
                        print(_line(row), flush=True)
                    row = rows[-2]
                    if row["gap_train"] is not None and row["gap_train"] > args.delta + GAP_TOLERANCE:
                        msg = ABOVE_DELTA.format(dataset=name, notion=notion, depth=depth, split=split,
                                                 gap=row["gap_train"], delta=args.delta)
                        broken.append(msg)
                        print("!" * 20 + " " + msg, flush=True)
    return rows, broken


def run_compas_full(args) -> tuple[dict, list[str]]:
    """The 4-level race on the full COMPAS table: statistical parity, depth 2."""
    ds = COMPAS_FULL
    part = split_part(load_fairness_table(ds.pattern), ds)
    limit = args.compas4_time_limit
    print(f"\n# COMPAS full ({len(part.X)} rows), 4-level race, statistical parity delta={args.delta:g}, "
          f"depth 2, time limit {limit:g}s, solver={args.solver}")
    clf = StrongTreeClassifier(depth=2, fairness="statistical_parity", fairness_bound=args.delta,
                               pos_label=ds.positive, time_limit=limit, solver=args.solver, threads=args.threads)
    events: list[tuple[float, float | None, int | None, str]] = []  # (seconds, objective, branching nodes, message)
    t0 = time.perf_counter()

    def progress(ev) -> None:
        branching = None if ev.tree is None else ev.tree.structure.n_branching
        events.append((time.perf_counter() - t0, ev.objective, branching, ev.message))

    broken: list[str] = []
    try:
        clf.fit(part.X, part.y, sensitive_features=part.group, progress=progress)
    except StrongTreeError as err:
        print(f"error after {time.perf_counter() - t0:.1f}s: {err}")
        return {"status": "error", "message": str(err)}, broken
    seconds = time.perf_counter() - t0
    rec = clf.record_
    pred = clf.predict(part.X)
    gap = measured_gap("statistical_parity", part, pred, ds.positive)
    trees = [e for e in events if e[2] is not None]
    first = trees[0] if trees else None
    split = next((e for e in trees if e[2] > 0), None)
    improved = [e for e in trees if e[1] is not None and first[1] is not None and e[1] > first[1] + 1e-9]
    row = dict(
        dataset=ds.name, n_rows=len(part.X), delta=args.delta, time_limit=limit, status=rec.status,
        certified=rec.certified, method=rec.method, backend=rec.backend, objective=rec.objective, bound=rec.bound,
        mio_gap=rec.gap, seconds=seconds, certificate_seconds=seconds if rec.certified else None,
        first_tree_seconds=None if first is None else first[0], first_tree_objective=None if first is None else first[1],
        first_tree_source=None if first is None else first[3],
        first_split_tree_seconds=None if split is None else split[0],
        first_improvement_seconds=improved[0][0] if improved else None,
        best_tree_seconds=improved[-1][0] if improved else None, train_accuracy=float(np.mean(pred == part.y.to_numpy())),
        gap_train=gap, n_progress_events=len(events), choice=rec.choice,
    )
    for key, value in row.items():
        print(f"  {key:22} {value}")
    if gap > args.delta + GAP_TOLERANCE:
        broken.append(ABOVE_DELTA.format(dataset=ds.name, notion="statistical_parity", depth=2, split=0, gap=gap, delta=args.delta))
        print("!" * 20 + " " + broken[-1])
    return row, broken


def markdown(rows: list[dict]) -> str:
    """The table for RESULTS.md: one line per (dataset, notion, depth, split), fair next to free."""
    lines = [
        (
            "| dataset | notion | d | split | status | cert | method/backend | train acc (obj) | MIO gap | time s "
            "| 1st tree s | gap train | gap test | test acc | free: train acc | free: gap train | free: gap test "
            "| free: test acc |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for fair, free in zip(rows[0::2], rows[1::2]):
        lines.append(
            f"| {fair['dataset']} | {SHORT[fair['notion']]} | {fair['depth']} | {fair['split']} | {fair['status']} "
            f"| {'yes' if fair['certified'] else 'no'} | {fair['method']}/{fair['backend']} "
            f"| {_fmt(fair['train_accuracy'])} ({_fmt(fair['objective'], '.0f')}) | {_fmt(fair['mio_gap'])} "
            f"| {fair['seconds']:.1f} | {_fmt(fair['first_tree_seconds'], '.1f')} | {_fmt(fair['gap_train'])} | {_fmt(fair['gap_test'])} | {_fmt(fair['test_accuracy'])} "
            f"| {_fmt(free['train_accuracy'])} | {_fmt(free['gap_train'])} | {_fmt(free['gap_test'])} | {_fmt(free['test_accuracy'])} |"
        )
    return "\n".join(lines)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="split 1, depth 1, 10 s, 1000 sampled training rows")
    ap.add_argument("--datasets", nargs="+", default=["compas", "german", "adult"], choices=list(DATASETS),
                    help="compas = binary race (compas_binrace files), compas4 = 4-level race (compas files)")
    ap.add_argument("--notions", nargs="+", default=list(NOTIONS), choices=NOTIONS, metavar="NOTION")
    ap.add_argument("--depths", nargs="+", type=int, default=[2], choices=[1, 2])
    ap.add_argument("--splits", nargs="+", type=int, default=[1], choices=[1, 2, 3, 4, 5])
    ap.add_argument("--delta", type=float, default=0.05)
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per tree")
    ap.add_argument("--train-rows", type=int, default=None, help="sample this many training rows (seed 0)")
    ap.add_argument("--solver", default="auto", choices=["auto", "highs", "scip", "gurobi"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--compas4", action="store_true", help="also run the 4-level race block on the full COMPAS table")
    ap.add_argument("--compas4-time-limit", type=float, default=300.0)
    ap.add_argument("--no-splits", action="store_true", help="skip the split table (e.g. only --compas4)")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/out/fairness_benchmark.csv"))
    ap.add_argument("--markdown-from", type=Path, default=None, metavar="CSV",
                    help="only print the markdown table of a CSV written by an earlier run")
    args = ap.parse_args(argv)
    if args.quick:
        for key, value in QUICK.items():
            setattr(args, key, value)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.markdown_from is not None:
        print(markdown(pd.read_csv(args.markdown_from).replace({np.nan: None}).to_dict("records")))
        return 0
    if not FAIRNESS_DATA.exists():
        raise SystemExit(MISSING_DATA.format(path=FAIRNESS_DATA.parent))
    import pystreed  # noqa: F401  (imported once, outside the timed fits)

    wall = time.perf_counter()
    rows: list[dict] = []
    broken: list[str] = []
    if not args.no_splits:
        rows, broken = run_splits(args)
        write_csv(rows, args.out)
        print("\n" + markdown(rows))
    if args.compas4:
        full, more = run_compas_full(args)
        broken += more
        write_csv([full], args.out.with_name(args.out.stem + "_compas4.csv"))
    crashes = [r for r in rows if r["status"] == "CRASH"]
    failed = [r for r in rows if r["check"] != "ok"]
    print(f"\n{len(rows)} rows, {len(crashes)} crashes, {len(failed)} failed checks, {len(broken)} training gaps above delta; "
          f"wall {time.perf_counter() - wall:.0f}s; CSV: {args.out}")
    if broken:
        print("\n".join(["", "!" * 72, *broken, "!" * 72]))
        raise AssertionError(f"{len(broken)} tree(s) break the fairness bound on their training rows")
    return 1 if crashes or failed else 0


if __name__ == "__main__":
    sys.exit(main())
