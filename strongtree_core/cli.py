"""Command line: ``python -m strongtree_core fit data.csv --target y --depth 2``.

Prints a live progress line while the solver works, then the tree's rules,
the status, the gap and the training accuracy; ``--output tree.json`` saves
the fitted tree.
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from strongtree_core.encoding import EncodingError
from strongtree_core.errors import StrongTreeError
from strongtree_core.estimator import FAIRNESS, FORMULATIONS, OBJECTIVES, SOLVERS, FitProgress, StrongTreeClassifier

READ_FAILED = "Could not read {path}: {reason}"
NO_TARGET = "The target column {target!r} is not in {path}; its columns are: {columns}."


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m strongtree_core", description="Optimal and fair classification trees.")
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


def run_fit(args: argparse.Namespace) -> int:
    try:
        df = pd.read_csv(args.data)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        print(READ_FAILED.format(path=args.data, reason=exc), file=sys.stderr)
        return 2
    if args.target not in df.columns:
        print(NO_TARGET.format(target=args.target, path=args.data, columns=", ".join(df.columns)), file=sys.stderr)
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
        except (StrongTreeError, EncodingError) as exc:
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
        print(f"error: {failure[0]}", file=sys.stderr)
        return 1
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
        args.output.write_text(clf.tree_.to_json())
        print(f"tree written to {args.output}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "fit":
        return run_fit(args)
    return 2  # pragma: no cover - argparse requires a command
