"""``strongtree predict`` and ``strongtree export``: use a stored tree, no solver needed."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from strongtree_core.cli.files import output_problem, read_table, read_tree, shown, write_text
from strongtree_core.cli.fit import refuse
from strongtree_core.cli.tables import format_problem, write_table
from strongtree_core.cli.messages import (
    ACCURACY_AGAINST,
    BOTH_FROM_STDIN,
    COLUMN_EXISTS,
    EXIT_INPUT,
    EXIT_OK,
    PREDICT_FAILED,
    STDIO,
    WRITE_FAILED,
)
from strongtree_core.encoding import EncodingError
from strongtree_core.tree import FittedTree

#: ``export --format`` to the text it writes.
EXPORTS = {
    "text": FittedTree.to_text,
    "json": lambda tree: tree.to_json(indent=2),
    "dot": FittedTree.to_dot,
    "sql": FittedTree.to_sql,
    "python": FittedTree.to_python,
}


def _tree_to_use(args: argparse.Namespace) -> FittedTree | int:
    """The stored tree of --tree, once --output is known to be writable; else the exit code, after saying why."""
    reason = output_problem(args.output)
    if reason is not None:
        return refuse(WRITE_FAILED.format(path=args.output, reason=reason), EXIT_INPUT)
    tree = read_tree(args.tree)
    return refuse(tree, EXIT_INPUT) if isinstance(tree, str) else tree


def run_predict(args: argparse.Namespace) -> int:
    """Write the input table with a prediction column (and class shares with --proba)."""
    if str(args.data) == STDIO and str(args.tree) == STDIO:
        return refuse(BOTH_FROM_STDIN, EXIT_INPUT)
    wrong_format = format_problem(args.output)
    if wrong_format is not None:
        return refuse(wrong_format, EXIT_INPUT)
    tree = _tree_to_use(args)
    if not isinstance(tree, FittedTree):
        return tree
    df = read_table(args.data, args.file_encoding)
    if isinstance(df, str):
        return refuse(df, EXIT_INPUT)
    column = args.column or f"predicted_{tree.target}"
    added = [column] + ([f"proba_{label}" for label in tree.classes] if args.proba else [])
    clash = next((c for c in added if c in df.columns), None)
    if clash is not None:
        return refuse(COLUMN_EXISTS.format(path=shown(args.data), column=clash), EXIT_INPUT)
    try:
        labels = tree.predict(df)
        shares = tree.predict_proba(df) if args.proba else None
    except (EncodingError, ValueError) as exc:
        return refuse(PREDICT_FAILED.format(path=shown(args.data), tree=shown(args.tree), reason=exc), EXIT_INPUT)
    out = df.copy()
    out[column] = labels
    if shares is not None:
        for k, name in enumerate(added[1:]):
            out[name] = shares[:, k]
    if tree.target in df.columns:
        truth = df[tree.target].astype(str).to_numpy()
        accuracy = float(np.mean(truth == np.asarray(labels).astype(str)))
        print(ACCURACY_AGAINST.format(target=tree.target, accuracy=accuracy, n=len(df)), file=sys.stderr)
    failed = write_table(args.output, out, raw=args.raw)
    return EXIT_OK if failed is None else refuse(failed, EXIT_INPUT)


def run_export(args: argparse.Namespace) -> int:
    """Write the stored tree in the format asked for."""
    tree = _tree_to_use(args)
    if not isinstance(tree, FittedTree):
        return tree
    failed = write_text(args.output, EXPORTS[args.format](tree))
    return EXIT_OK if failed is None else refuse(failed, EXIT_INPUT)
