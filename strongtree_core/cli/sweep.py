"""``strongtree sweep``: many fits over a grid (notions x bounds x depths x lambdas x folds), one row each.

The points run on the chosen backend (``--backend``, ``--n-jobs``, ``--scheduler``) while a bar
counts them on standard error; the table goes to ``--output`` (CSV, or JSON records when the
name ends in .json, an Excel workbook for .xlsx; ``-``: CSV on standard output), and a summary to standard output.
``--frontier`` keeps only the Pareto frontier of accuracy against the measured gap.  Ctrl-C
stops the sweep: running fits end with their best tree, the finished points are written, and
the exit code is 130.
"""

from __future__ import annotations

import argparse
import sys
import threading

import pandas as pd

from strongtree_core.cli.files import output_problem, read_table
from strongtree_core.cli.fit import _coerce_label, input_problem, refuse, solve
from strongtree_core.cli.words import SWEEP_FLAGS, cli_words
from strongtree_core.cli.messages import (
    EXIT_FAULT,
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SOLVE,
    INTERNAL_ERROR,
    OUTPUT_UNWRITABLE,
    STDIO,
    SWEEP_BOUNDS_WITHOUT_FAIRNESS,
    SWEEP_FAILED_POINTS,
    SWEEP_FRONTIER_NEEDS_FAIRNESS,
    SWEEP_LONG,
    SWEEP_NEEDS_PROTECTED,
    SWEEP_QUIT_NOW,
    SWEEP_STOPPED,
    SWEEP_STOPPING,
    SWEEP_WRITTEN,
)
from strongtree_core.cli.progress_bar import SweepBar
from strongtree_core.cli.tables import format_problem, write_table
from strongtree_core.encoding import EncodingError
from strongtree_core.errors import StrongTreeError
from strongtree_core.estimator.classifier import StrongTreeClassifier
from strongtree_core.sweep import best_per_bound, pareto_front, sweep
from strongtree_core.sweep.backends import n_workers
from strongtree_core.sweep.run import plan

#: Columns of the summary printed on standard output (those the table has).
SUMMARY = ("point", "fold", "fairness", "fairness_bound", "depth", "regularization", "status", "certified",
           "train_accuracy", "train_gap", "test_accuracy", "test_gap", "time")


def sweep_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the sweep's options themselves (None when nothing is)."""
    if args.fairness and not args.protected:
        return SWEEP_NEEDS_PROTECTED
    if args.fairness_bound is not None and not args.fairness:
        return SWEEP_BOUNDS_WITHOUT_FAIRNESS
    if args.frontier and not args.fairness:
        return SWEEP_FRONTIER_NEEDS_FAIRNESS
    return None


def _grid(args: argparse.Namespace) -> dict:
    grid: dict = {"depth": args.depths, "regularization": args.regularization}
    if args.fairness:
        bounds = args.fairness_bound or [StrongTreeClassifier().fairness_bound]
        grid = {"fairness": args.fairness, "fairness_bound": bounds, **grid}
    return grid


def _estimator(args: argparse.Namespace, y: pd.Series) -> StrongTreeClassifier:
    return StrongTreeClassifier(
        formulation=args.formulation, solver=args.solver, time_limit=args.time_limit, threads=args.threads,
        min_leaf=args.min_leaf, objective=args.objective, pos_label=_coerce_label(args.pos_label, y),
        n_buckets=args.n_buckets, max_thresholds=args.max_thresholds, exact_search=not args.no_exact_search,
    )


def frontier_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The Pareto frontier of every notion (best training accuracy per bound over the other settings)."""
    front = pareto_front(best_per_bound(table))
    return front.sort_values(["fairness", "train_gap", "fairness_bound"], kind="stable").reset_index(drop=True)


def summary(table: pd.DataFrame) -> str:
    shown = table[[c for c in SUMMARY if c in table.columns]].dropna(axis=1, how="all")
    return shown.to_string(index=False, float_format=lambda v: f"{v:.4f}", na_rep="-") if len(shown) else "(no points)"


#: A sweep that may run longer than this (points x time limit / workers) is announced with its bound.
LONG_SWEEP_SECONDS = 3600.0


def _duration(seconds: float) -> str:
    for unit, size in (("days", 86400.0), ("hours", 3600.0), ("minutes", 60.0)):
        if seconds >= size:
            return f"{seconds / size:,.1f} {unit}"
    return f"{seconds:.0f} s"


def long_sweep_note(n_points: int, args: argparse.Namespace) -> str | None:
    """A line on standard error when the sweep may run for hours: how long at most, and how to stop it."""
    try:
        workers = 1 if args.backend == "serial" else n_workers(args.n_jobs)
    except StrongTreeError:
        workers = 1
    bound = n_points * float(args.time_limit) / max(1, workers)
    if bound <= LONG_SWEEP_SECONDS:
        return None
    return SWEEP_LONG.format(points=n_points, limit=float(args.time_limit), workers=workers, duration=_duration(bound))


def run_sweep(args: argparse.Namespace) -> int:
    """``strongtree sweep``: read the table, check the options, run the grid, write the rows; the exit code.

    Examples
    --------
    >>> from strongtree_core.cli import main
    >>> main(["sweep", "hiring.csv", "--target", "hired", "--protected", "gender", "--pos-label", "yes",
    ...       "--fairness", "statistical_parity", "--fairness-bound", "0.01", "0.05"])  # doctest: +SKIP
    0
    """
    df = read_table(args.data, args.file_encoding)
    if isinstance(df, str):
        return refuse(df, EXIT_INPUT)
    problem = input_problem(args, df) or sweep_problem(args)
    if problem is None and args.output is not None:
        problem = format_problem(args.output)
    if problem is None and args.output is not None:
        reason = output_problem(args.output, args.data)
        problem = None if reason is None else OUTPUT_UNWRITABLE.format(path=args.output, reason=reason)
    if problem is not None:
        return refuse(problem, EXIT_INPUT)
    y = df[args.target]
    X = df.drop(columns=[args.target])
    estimator = _estimator(args, y)
    options = dict(sensitive_features=args.protected, legitimate_features=args.legitimate, grid=_grid(args),
                   cv=args.folds)
    try:
        _, points = plan(estimator, X, y, **options)
    except (StrongTreeError, EncodingError) as exc:
        return refuse(f"error: {cli_words(str(exc), SWEEP_FLAGS)}", EXIT_SOLVE)
    note = long_sweep_note(len(points), args)
    if note is not None:
        print(note, file=sys.stderr)
    bar = SweepBar(len(points))
    finished: list = []

    def run(stop: threading.Event) -> None:
        finished.append(sweep(estimator, X, y, **options, backend=args.backend, n_jobs=args.n_jobs,
                              scheduler=args.scheduler, progress=bar, stop=stop))

    failure, interrupted = solve(run, bar, stopping=SWEEP_STOPPING, quit_now=SWEEP_QUIT_NOW)
    if failure is not None:
        if isinstance(failure, (StrongTreeError, EncodingError)):
            return refuse(f"error: {cli_words(str(failure), SWEEP_FLAGS)}", EXIT_SOLVE)
        return refuse(INTERNAL_ERROR.format(kind=type(failure).__name__, detail=failure), EXIT_FAULT)
    table = finished[0]
    if "error" in table:  # each point's message in the command line's words
        table["error"] = table["error"].map(lambda e: cli_words(e, SWEEP_FLAGS) if isinstance(e, str) else e)
    if args.frontier:
        table = frontier_rows(table)
    to_stdout = args.output is not None and str(args.output) == STDIO
    out = sys.stderr if to_stdout else sys.stdout
    print(summary(table), file=out)
    no_tree = int(table["tree"].isna().sum())
    if no_tree:
        print(SWEEP_FAILED_POINTS.format(n=no_tree, total=len(table)), file=out)
    if args.output is not None:
        failed = write_table(args.output, table, raw=args.raw, nested=("tree",))
        if failed is not None:
            return refuse(failed, EXIT_INPUT)
        if not to_stdout:
            print(SWEEP_WRITTEN.format(n=len(table), path=args.output), file=out)
    if interrupted:
        print(SWEEP_STOPPED.format(done=len(finished[0]), total=len(points)), file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_OK


__all__ = ["run_sweep"]
