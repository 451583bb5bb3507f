"""Command line: ``python -m strongtree_core fit data.csv --target y --depth 2``.

Prints a live progress line while the solver works, then the tree's rules,
the status, the gap and the training accuracy; ``--output tree.json`` saves
the fitted tree.  The file, the columns named and the output path are checked
before the solve: a problem there is a message and exit code 2; a problem the
solve finds (bad settings, infeasible constraints) exit code 1; a fault of the
program exit code 3, with its type and text.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from strongtree_core import __version__
from strongtree_core.encoding import EncodingError
from strongtree_core.encoding.groups import MAX_GROUPS
from strongtree_core.errors import StrongTreeError
from strongtree_core.estimator import FAIRNESS, FORMULATIONS, OBJECTIVES, SOLVERS, FitProgress, StrongTreeClassifier

# Messages; tests assert their text.  Bad input exits with code 2 before any solve.
READ_FAILED = "Could not read {path}: {reason}"
NOT_TEXT = (
    "Could not read {path} as {encoding} text ({reason}). If it is a CSV file in another encoding, name it, "
    "e.g. --encoding latin-1, or save the file as UTF-8."
)
NO_TARGET = "The target column {target!r} is not in {path}; its columns are: {columns}."
DUPLICATE_COLUMNS = (
    "{path} has more than one column named {names}: rename them so that every column name is unique "
    "(they would be read as {renamed})."
)
NO_ROWS = "{path} has a header but no data rows."
MISSING_TARGET = (
    "{n} of {total} data rows of {path} have no value in the target column {target!r} (the first is data row {first}): "
    "fill them in, or remove those rows."
)
ROLE_IS_TARGET = "--{option} {column!r} is the target column; name another column."
ROLE_NOT_FOUND = "--{option} {column!r} is not a column of {path}; its columns are: {columns}."
TOO_MANY_GROUPS = (
    "--{option} {column!r} has {n} distinct values; every value is its own group and at most {limit} groups "
    "can be compared. Add a column of explicit buckets to the file (e.g. age bands) and name that column instead."
)
OUTPUT_UNWRITABLE = "Cannot write the tree to {path}: {reason}. Choose another --output; nothing was solved."
OUTPUT_FALLBACK = "Could not write the tree to {path} ({reason}); it was written to {fallback} instead."
INTERNAL_ERROR = "internal error ({kind}): {detail}. Please report it with the command line and the data file."


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="strongtree", description="Optimal and fair classification trees.")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fit", help="fit a tree to a CSV file")
    f.add_argument("data", type=Path, help="CSV file with a header row")
    f.add_argument("--target", required=True, help="name of the label column")
    f.add_argument("--depth", type=int, default=2)
    f.add_argument("--formulation", choices=FORMULATIONS, default="auto")
    f.add_argument("--solver", choices=SOLVERS, default="auto")
    f.add_argument("--time-limit", type=float, default=60.0, help="seconds (default 60)")
    f.add_argument("--threads", type=int, default=1)
    f.add_argument("--regularization", type=float, default=0.0, help="the paper's lambda in [0, 1)")
    f.add_argument("--max-branching", type=int, default=None)
    f.add_argument("--max-features", type=int, default=None)
    f.add_argument("--min-leaf", type=int, default=0)
    f.add_argument("--objective", choices=OBJECTIVES, default="accuracy")
    f.add_argument("--positive-class", default=None, help="label of the positive class")
    f.add_argument("--min-recall", type=float, default=None)
    f.add_argument("--min-precision", type=float, default=None)
    f.add_argument("--min-specificity", type=float, default=None)
    f.add_argument("--protected", action="append", default=None, help="protected column (repeatable)")
    f.add_argument("--legitimate", action="append", default=None, help="legitimate column (repeatable)")
    f.add_argument("--fairness", action="append", choices=FAIRNESS, default=None)
    f.add_argument("--delta", type=float, default=0.05, help="fairness bound (default 0.05)")
    f.add_argument("--no-accelerator", action="store_true", help="use the MIO only")
    f.add_argument("--output", type=Path, default=None, help="write the fitted tree as JSON")
    f.add_argument("--encoding", default=None,
                   help="text encoding of the CSV file (default: UTF-8, or UTF-16 when the file starts with its mark)")
    return p


def _coerce_label(value: str | None, y: pd.Series):
    if value is None:
        return None
    for v in pd.unique(y):
        if str(v) == value:
            return v
    return value


class _ProgressLine:
    """One line redrawn in place on a terminal; elsewhere (a log, a pipe) a new
    line at most every ``every`` seconds and whenever the best tree changes."""

    def __init__(self, stream=sys.stderr, every: float = 5.0) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.every = every
        self.last_time = -np.inf
        self.last_best: float | None = None

    def __call__(self, ev: FitProgress) -> None:
        text = _describe(ev)
        if self.tty:
            self.stream.write("\r" + text[:110].ljust(110))
        elif ev.elapsed - self.last_time >= self.every or ev.objective != self.last_best or ev.message:
            self.stream.write(text + "\n")
            self.last_time = ev.elapsed
            self.last_best = ev.objective
        self.stream.flush()

    def end(self) -> None:
        if self.tty:
            self.stream.write("\n")


def _describe(ev: FitProgress) -> str:
    parts = [f"{ev.elapsed:6.1f}s"]
    if ev.objective is not None:
        parts.append(f"best {ev.objective:.4g}")
    if ev.bound is not None:
        parts.append(f"bound {ev.bound:.4g}")
    if ev.gap is not None:
        parts.append(f"gap {100 * ev.gap:.2f}%")
    parts.append(f"nodes {ev.nodes}")
    if ev.message:
        parts.append(ev.message)
    return "  ".join(parts)


def _encoding(path: Path, given: str | None) -> str:
    """The encoding named, else UTF-16 when the file starts with its byte-order mark, else UTF-8."""
    if given:
        return given
    with open(path, "rb") as handle:
        start = handle.read(2)
    return "utf-16" if start in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"


def read_table(path: Path, encoding: str | None) -> pd.DataFrame | str:
    """The CSV file as a table, or the message saying why it cannot be used."""
    try:
        enc = _encoding(path, encoding)
        header = pd.read_csv(path, header=None, nrows=1, dtype=str, keep_default_na=False, encoding=enc)
        df = pd.read_csv(path, encoding=enc)
    except UnicodeError as exc:
        return NOT_TEXT.format(path=path, encoding=encoding or "UTF-8", reason=exc)
    except LookupError as exc:  # an unknown --encoding
        return READ_FAILED.format(path=path, reason=exc)
    except (OSError, ValueError, csv.Error, pd.errors.ParserError) as exc:
        return READ_FAILED.format(path=path, reason=exc)
    names = header.iloc[0].tolist() if len(header) else []
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        renamed = ", ".join(repr(str(c)) for c in df.columns if str(c) not in names)
        return DUPLICATE_COLUMNS.format(path=path, names=", ".join(map(repr, repeated)), renamed=renamed)
    if len(df) == 0:
        return NO_ROWS.format(path=path)
    return df


def _input_problem(args: argparse.Namespace, df: pd.DataFrame) -> str | None:
    """What is wrong with the table for these options (None when nothing is)."""
    columns = ", ".join(map(str, df.columns))
    if args.target not in df.columns:
        return NO_TARGET.format(target=args.target, path=args.data, columns=columns)
    missing = np.flatnonzero(df[args.target].isna().to_numpy())
    if missing.size:
        return MISSING_TARGET.format(n=missing.size, total=len(df), path=args.data, target=args.target, first=int(missing[0]) + 1)
    for option in ("protected", "legitimate"):
        for column in getattr(args, option) or ():
            if column == args.target:
                return ROLE_IS_TARGET.format(option=option, column=column)
            if column not in df.columns:
                return ROLE_NOT_FOUND.format(option=option, column=column, path=args.data, columns=columns)
            n = df[column].nunique(dropna=False)
            if args.fairness and n > MAX_GROUPS:
                return TOO_MANY_GROUPS.format(option=option, column=column, n=n, limit=MAX_GROUPS)
    return None


def _output_problem(path: Path, data: Path | None = None) -> str | None:
    """Why the tree could not be written to ``path`` (None when it can): tried, not guessed."""
    if data is not None and path.resolve() == data.resolve():
        return "it is the data file"
    existed = path.exists()
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    finally:
        if not existed and path.is_file():
            path.unlink()
    return None


def _write_tree(path: Path, text: str) -> str:
    """Write the tree; when that fails, keep it in a temporary file and say where."""
    try:
        path.write_text(text, encoding="utf-8")
        return f"tree written to {path}"
    except OSError as exc:
        handle, fallback = tempfile.mkstemp(prefix="strongtree-tree-", suffix=".json")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        return OUTPUT_FALLBACK.format(path=path, reason=exc.strerror or exc, fallback=fallback)


def run_fit(args: argparse.Namespace) -> int:
    df = read_table(args.data, args.encoding)
    if isinstance(df, str):
        print(df, file=sys.stderr)
        return 2
    problem = _input_problem(args, df)
    if problem is None and args.output is not None:
        reason = _output_problem(args.output, args.data)
        problem = None if reason is None else OUTPUT_UNWRITABLE.format(path=args.output, reason=reason)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    y = df[args.target]
    X = df.drop(columns=[args.target])
    clf = StrongTreeClassifier(
        depth=args.depth, formulation=args.formulation, solver=args.solver, time_limit=args.time_limit,
        threads=args.threads, regularization=args.regularization, max_branching=args.max_branching,
        max_features=args.max_features, min_leaf=args.min_leaf, objective=args.objective,
        positive_class=_coerce_label(args.positive_class, y), min_recall=args.min_recall,
        min_precision=args.min_precision, min_specificity=args.min_specificity, fairness=args.fairness,
        fairness_bound=args.delta, accelerator=not args.no_accelerator,
    )
    stop = threading.Event()
    line = _ProgressLine()
    failure: list[Exception] = []

    def work() -> None:
        try:
            clf.fit(X, y, sensitive_features=args.protected, legitimate_features=args.legitimate, progress=line, stop=stop)
        except Exception as exc:  # reported below; a user's mistake and a fault read differently
            failure.append(exc)

    # The solve runs in a thread so that Ctrl-C can ask it to stop and keep the best tree.
    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.2)
    except KeyboardInterrupt:
        stop.set()
        sys.stderr.write("\nStopping: keeping the best tree found so far...\n")
        worker.join()
    line.end()
    if failure:
        exc = failure[0]
        if isinstance(exc, (StrongTreeError, EncodingError)):
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(INTERNAL_ERROR.format(kind=type(exc).__name__, detail=exc), file=sys.stderr)
        return 3
    rec = clf.record_
    print(clf.tree_.to_text())
    print()
    gap = "n/a" if rec.gap is None else f"{100 * rec.gap:.2f}%"
    print(f"status: {rec.status}{' (certified optimal)' if rec.certified else ''}   gap: {gap}   time: {rec.runtime:.2f}s")
    print(f"method: {rec.formulation} on {rec.backend}; {rec.choice}")
    print(f"rows: {rec.n_rows}, patterns: {rec.n_patterns}, variables: {rec.n_variables}, constraints: {rec.n_constraints}")
    acc = float(np.mean(clf.predict(X) == y.to_numpy()))
    print(f"training accuracy: {acc:.4f}")
    for check in clf.constraint_checks_:
        print(f"{check['constraint']}: measured {check['measured']:.4f} (bound {check['bound']:.4f})")
    if rec.message:
        print(f"note: {rec.message}")
    if args.output is not None:
        print(_write_tree(args.output, clf.tree_.to_json()))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "fit":
        return run_fit(args)
    return 2  # pragma: no cover - argparse requires a command
