"""``strongtree fit``: check the input, solve in a worker thread, report, write the tree.

Ctrl-C sets the solve's stop event (a handler, so no KeyboardInterrupt lands in a
waiting ``Thread.join``): the solve ends with its best tree, which is reported and
written as usual, and the exit code is 130.  A second Ctrl-C quits at once.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import threading
from typing import Callable

import numpy as np
import pandas as pd

from strongtree_core.cli.files import output_problem, read_table, shown, write_text, write_tree
from strongtree_core.cli.messages import (
    EXIT_FAULT,
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SOLVE,
    INTERNAL_ERROR,
    INTERRUPTED,
    JSON_AND_STDOUT,
    MISSING_TARGET,
    NO_TARGET,
    OUTPUT_UNWRITABLE,
    QUIT_NOW,
    ROLE_IS_TARGET,
    ROLE_NOT_FOUND,
    STDIO,
    STOPPING,
    TOO_MANY_GROUPS,
)
from strongtree_core.accel import prepare
from strongtree_core.tree.claim import claim_json, cli_lines
from strongtree_core.cli.progress_bar import Progress
from strongtree_core.cli.words import cli_words
from strongtree_core.encoding import EncodingError
from strongtree_core.encoding.groups import MAX_GROUPS
from strongtree_core.errors import StrongTreeError
from strongtree_core.estimator.classifier import StrongTreeClassifier
from strongtree_core.source.paths import TableError, is_table_path
from strongtree_core.metrics.verdict import gap_verdict
from strongtree_core.signals import block_sigint_in_this_thread, kill_worker_processes

#: Said after a fit while the exact search's compiled code is still being prepared (a fresh machine).
PREPARING_NOTE = "note: {words} Until it is ready, fits run without it (slower, same trees)."
#: Seconds between two looks at the worker (and two redraws of the progress bar).
POLL_SECONDS = 0.2


def refuse(message: str, code: int, as_json: bool = False) -> int:
    """Say what is wrong on standard error (and as JSON on standard output with --json); return ``code``."""
    print(message, file=sys.stderr)
    if as_json:
        print(json.dumps({"error": message, "exit_code": code}, ensure_ascii=False))
    return code


def _coerce_label(value: str | None, y: pd.Series):
    """The label of y written as ``value`` on the command line (a number stays a number)."""
    if value is None:
        return None
    for v in pd.unique(y):
        if str(v) == value:
            return v
    return value


def input_problem(args: argparse.Namespace, df: pd.DataFrame) -> str | None:
    """What is wrong with the table for these options (None when nothing is)."""
    columns = ", ".join(map(str, df.columns))
    path = shown(args.data)
    if args.target not in df.columns:
        return NO_TARGET.format(target=args.target, path=path, columns=columns)
    missing = np.flatnonzero(df[args.target].isna().to_numpy())
    if missing.size:
        return MISSING_TARGET.format(n=missing.size, total=len(df), path=path, target=args.target, first=int(missing[0]) + 1)
    for option in ("protected", "legitimate"):
        for column in getattr(args, option) or ():
            if column == args.target:
                return ROLE_IS_TARGET.format(option=option, column=column)
            if column not in df.columns:
                return ROLE_NOT_FOUND.format(option=option, column=column, path=path, columns=columns)
            n = df[column].nunique(dropna=False)
            if args.fairness and n > MAX_GROUPS:
                return TOO_MANY_GROUPS.format(option=option, column=column, n=n, limit=MAX_GROUPS)
    return None


def _estimator(args: argparse.Namespace, y: pd.Series) -> StrongTreeClassifier:
    return StrongTreeClassifier(
        depth=args.depth, formulation=args.formulation, solver=args.solver, time_limit=args.time_limit,
        threads=args.threads, n_jobs=args.n_jobs, regularization=args.regularization, max_branching=args.max_branching,
        max_features_used=args.max_features_used, min_leaf=args.min_leaf, objective=args.objective,
        pos_label=_coerce_label(args.pos_label, y), min_recall=args.min_recall,
        min_precision=args.min_precision, min_specificity=args.min_specificity, fairness=args.fairness,
        fairness_bound=args.fairness_bound, fairness_confidence=args.fairness_confidence,
        fairness_confidence_method=args.fairness_confidence_method, allow_protected_splits=args.allow_protected_splits,
        n_buckets=args.n_buckets, max_thresholds=args.max_thresholds,
        exact_search=not args.no_exact_search,
        memory_limit=None if args.memory_limit_gb is None else max(1, int(args.memory_limit_gb * 2**30)),
    )


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def solve(fit: Callable[[threading.Event], None], progress: Progress, *, stopping: str = STOPPING,
          quit_now: str = QUIT_NOW) -> tuple[Exception | None, bool]:
    """Run ``fit(stop)`` in a worker thread until it returns; Ctrl-C sets ``stop``.

    The worker thread blocks SIGINT, and so does every thread and process it starts (sweep
    workers, solver threads): a terminal's Ctrl-C is handled here, on the main thread, and
    nowhere else.  A second Ctrl-C quits at once, ending the worker processes first.
    Returns the exception ``fit`` raised (None when it returned) and whether Ctrl-C was pressed.
    """
    stop = threading.Event()
    failure: list[Exception] = []
    presses: list[int] = []

    def work() -> None:
        block_sigint_in_this_thread()
        try:
            fit(stop)
        except Exception as exc:  # reported by the caller: a user's mistake and a fault read differently
            failure.append(exc)

    def interrupted(signum, frame) -> None:
        presses.append(signum)
        if len(presses) > 1:
            progress.end()
            sys.stderr.write(quit_now + "\n")
            sys.stderr.flush()
            kill_worker_processes()
            os._exit(EXIT_INTERRUPTED)
        stop.set()

    previous = None
    if _on_main_thread() and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:  # ignored: a background job
        previous = signal.signal(signal.SIGINT, interrupted)
    worker = threading.Thread(target=work, name="strongtree-fit", daemon=True)
    announced = False
    try:
        worker.start()
        while True:
            worker.join(POLL_SECONDS)
            if presses and not announced:
                progress.say(stopping)
                announced = True
            if not worker.is_alive():
                break
            progress.tick()
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        progress.end()
    return (failure[0] if failure else None), bool(presses)


def _plain(value):
    """JSON-safe: numpy scalars as Python numbers, NaN and infinities as null."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def result(clf: StrongTreeClassifier, accuracy: float, interrupted: bool, tree_file: str | None) -> dict:
    """The machine-readable result of ``fit --json``."""
    rec = clf.record_
    return _plain({
        "status": rec.status, "certified": rec.certified, **claim_json(rec), "objective": rec.objective,
        "bound": rec.bound,
        "gap": rec.gap, "runtime": rec.runtime, "interrupted": interrupted, "training_accuracy": accuracy,
        "baseline_accuracy": clf.baseline_accuracy_, "fairness_promise": rec.promise,
        "constraint_checks": clf.constraint_checks_, "tree_file": tree_file, "tree": clf.tree_.to_dict(),
        **({"reading": clf.reading_} if getattr(clf, "reading_", None) is not None else {}),
    })


def report(clf: StrongTreeClassifier, accuracy: float, out) -> None:
    """The human-readable report: rules, status, method, sizes, accuracy, constraint checks."""
    rec = clf.record_
    print(clf.tree_.to_text(), file=out)
    print(file=out)
    for line in cli_lines(rec):
        print(line, file=out)
    gap = "n/a" if rec.gap is None else f"{100 * rec.gap:.2f}%"
    bound = "none yet" if rec.bound is None else f"{rec.bound:g}"
    print(f"status: {rec.status}   bound: {bound}   gap: {gap}   time: {rec.runtime:.2f}s", file=out)
    print(f"method: {rec.formulation} on {rec.backend}; {rec.choice}", file=out)
    print(f"rows: {rec.n_rows}, patterns: {rec.n_patterns}, variables: {rec.n_variables}, constraints: {rec.n_constraints}",
          file=out)
    print(f"training accuracy: {accuracy:.4f}   majority-class baseline: {clf.baseline_accuracy_:.4f}", file=out)
    constant = rec.promise is not None and bool(rec.promise.get("constant"))
    for check in clf.constraint_checks_:
        found = gap_verdict(check["measured"], check["bound"], training=True, constrained=True, constant=constant) \
            if check["constraint"].endswith(" difference") else None  # a parity gap (the floors read the other way)
        said = f": {found.words}" if found is not None else ""
        print(f"{check['constraint']}: measured {check['measured']:.4f} (bound {check['bound']:.4f}){said}", file=out)
    reading = getattr(clf, "reading_", None)
    if reading is not None:
        print(f"read where it lies ({reading['where']}): {reading['rows']:,} rows in {len(reading['rungs']) + 2} passes; "
              f"thresholds kept: {reading['thresholds_kept']} of {reading['thresholds_total']}", file=out)
    if rec.message:
        print(f"note: {cli_words(rec.message)}", file=out)


def out_of_core(args: argparse.Namespace) -> bool:
    """Whether the table is read where it lies (Parquet, a folder, a glob, or asked for) rather than loaded whole."""
    if str(args.data) == STDIO:
        return False
    return bool(getattr(args, "out_of_core", False) or getattr(args, "scheduler", None)
                or is_table_path(str(args.data)))


def _fail(failure: Exception, interrupted: bool, as_json: bool) -> int:
    if interrupted:
        return refuse(f"error: {cli_words(str(failure))}", EXIT_INTERRUPTED, as_json)
    if isinstance(failure, (StrongTreeError, EncodingError)):
        return refuse(f"error: {cli_words(str(failure))}", EXIT_SOLVE, as_json)
    return refuse(INTERNAL_ERROR.format(kind=type(failure).__name__, detail=failure), EXIT_FAULT, as_json)


def run_fit_table(args: argparse.Namespace, to_stdout: bool) -> int:
    """``fit`` of a table read where it lies (:meth:`StrongTreeClassifier.fit_table`)."""
    for option in ("protected", "legitimate"):
        for column in getattr(args, option) or ():
            if column == args.target:
                return refuse(ROLE_IS_TARGET.format(option=option, column=column), EXIT_INPUT, args.json)
    if args.output is not None:
        reason = output_problem(args.output)
        if reason is not None:
            return refuse(OUTPUT_UNWRITABLE.format(path=args.output, reason=reason), EXIT_INPUT, args.json)
    clf = _estimator(args, pd.Series([], dtype=object))  # --pos-label as text: fit_table finds the class it names
    progress = Progress(args.time_limit)

    def fit(stop: threading.Event) -> None:
        clf.fit_table(str(args.data), target=args.target, sample_weight=args.sample_weight,
                      sensitive_features=args.protected, legitimate_features=args.legitimate,
                      scheduler=args.scheduler, progress=progress, stop=stop)

    failure, interrupted = solve(fit, progress)
    if failure is not None:
        if isinstance(failure, TableError) and not interrupted:  # the table or a column is not there: bad input
            return refuse(f"error: {cli_words(str(failure))}", EXIT_INPUT, args.json)
        return _fail(failure, interrupted, args.json)
    accuracy = float(clf.reading_["training_accuracy"])
    return _finish(args, clf, accuracy, interrupted, to_stdout)


def run_fit(args: argparse.Namespace) -> int:
    to_stdout = args.output is not None and str(args.output) == STDIO
    if args.json and to_stdout:
        return refuse(JSON_AND_STDOUT, EXIT_INPUT, args.json)
    if out_of_core(args):
        return run_fit_table(args, to_stdout)
    df = read_table(args.data, args.file_encoding)
    if isinstance(df, str):
        return refuse(df, EXIT_INPUT, args.json)
    problem = input_problem(args, df)
    if problem is None and args.output is not None:
        reason = output_problem(args.output, args.data)
        problem = None if reason is None else OUTPUT_UNWRITABLE.format(path=args.output, reason=reason)
    if problem is not None:
        return refuse(problem, EXIT_INPUT, args.json)
    y = df[args.target]
    X = df.drop(columns=[args.target])
    weight = None
    if args.sample_weight is not None:
        if args.sample_weight not in X.columns:
            return refuse(ROLE_NOT_FOUND.format(option="sample-weight", column=args.sample_weight, path=shown(args.data),
                                                columns=", ".join(map(str, df.columns))), EXIT_INPUT, args.json)
        weight = X.pop(args.sample_weight)
    clf = _estimator(args, y)
    progress = Progress(args.time_limit)

    def fit(stop: threading.Event) -> None:
        clf.fit(X, y, sample_weight=weight, sensitive_features=args.protected, legitimate_features=args.legitimate,
                progress=progress, stop=stop)

    failure, interrupted = solve(fit, progress)
    if failure is not None:
        return _fail(failure, interrupted, args.json)
    accuracy = float(np.mean(clf.predict(X) == y.to_numpy()))
    return _finish(args, clf, accuracy, interrupted, to_stdout)


def _finish(args: argparse.Namespace, clf: StrongTreeClassifier, accuracy: float, interrupted: bool,
            to_stdout: bool) -> int:
    """Report the fit, write the tree; the exit code."""
    tree_file, written = None, None
    if args.output is not None and not to_stdout:
        tree_file, written = write_tree(args.output, clf.tree_.to_json())
    if args.json:
        print(json.dumps(result(clf, accuracy, interrupted, tree_file), ensure_ascii=False, allow_nan=False))
        if tree_file is not None and tree_file != str(args.output):  # the fallback: say why
            print(written, file=sys.stderr)
    else:
        out = sys.stderr if to_stdout else sys.stdout
        report(clf, accuracy, out)
        if written is not None:
            print(written, file=out)
    if to_stdout:
        write_text(args.output, clf.tree_.to_json())
    if interrupted and not clf.record_.certified:
        print(INTERRUPTED.format(elapsed=clf.record_.runtime), file=sys.stderr)
    preparing = prepare.preparation()
    if any(part.state == "building" for part in preparing.parts):  # the first runs on a fresh machine
        print(PREPARING_NOTE.format(words=preparing.words()), file=sys.stderr)
    return EXIT_INTERRUPTED if interrupted else EXIT_OK
