"""``strongtree report TABLE --tree TREE.json --output report.html``: the HTML report of a
stored tree on the table it learned from.

The tree file says what the report needs (:class:`~strongtree_core.tree.context.FitContext`):
the target, the protected and legitimate columns, the positive class, the settings, how
coded columns were read and, for a dashboard download, how the rows were divided (the same
training and test rows are made again).  The training rows must be as many as the tree
learned from, else the table is not its table and the report refuses to measure it.  With a
fairness constraint the same tree is solved again without it, as the cost of fairness's
reference (``--baseline-time-limit``).
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from strongtree_core.cli.files import output_problem, read_table, read_tree, shown, write_text
from strongtree_core.cli.fit import refuse
from strongtree_core.cli.words import cli_words
from strongtree_core.cli.messages import (
    EXIT_INPUT,
    EXIT_OK,
    REPORT_BASELINE,
    REPORT_BASELINE_FAILED,
    REPORT_COLUMNS_MISSING,
    REPORT_NO_CONTEXT,
    REPORT_OUTPUT_STDOUT,
    REPORT_WRITTEN,
    REPORT_WRONG_ROWS,
    STDIO,
    WRITE_FAILED,
)
from strongtree_core.encoding import EncodingError
from strongtree_core.errors import StrongTreeError
from strongtree_core.report.build import ReportInput, build_report
from strongtree_core.report.rows import rows_from_split
from strongtree_core.tree import FitContext, FittedTree
from strongtree_core.tree.context import apply_codes
from strongtree_core.words import fmt


def _missing(frame: pd.DataFrame, columns) -> list[str]:
    return [str(c) for c in dict.fromkeys(columns) if c not in frame.columns]


def _split_words(context: FitContext, train: pd.DataFrame, test: pd.DataFrame | None, test_file: str | None) -> str:
    rows = f"{fmt(len(train), 'int')} training rows"
    if test is None or not len(test):
        return rows + ", no test rows"
    if test_file is not None:
        return f"{rows} and {fmt(len(test), 'int')} test rows (from {test_file})"
    split = context.split or {}
    how = (f"{fmt(float(split.get('test_size', 0)), 'percent').replace('.0%', '%')} held out, seed "
           f"{int(split.get('seed', 0))}" + (", stratified by the target" if split.get("stratify") else ""))
    return f"{rows} and {fmt(len(test), 'int')} test rows ({how})"


def unconstrained_tree(tree: FittedTree, train: pd.DataFrame, context: FitContext, limit: float) -> FittedTree | str:
    """The same tree solved without its fairness constraint on the training rows, or why it could not be."""
    from strongtree_core.estimator.classifier import StrongTreeClassifier

    params = {k: v for k, v in context.settings.items() if k in StrongTreeClassifier().get_params()}
    params.update(fairness=None, fairness_confidence=None, fairness_confidence_method=None,
                  time_limit=min(float(params.get("time_limit") or limit), limit))
    try:
        model = StrongTreeClassifier(**params)
        model.fit(train[list(tree.feature_names)], train[tree.target])
    except (StrongTreeError, EncodingError, ValueError, TypeError) as exc:
        return str(exc)
    return model.tree_


def run_report(args: argparse.Namespace) -> int:
    """Check the files, make the rows again, solve the reference tree if needed, write the report."""
    if str(args.output) == STDIO:
        return refuse(REPORT_OUTPUT_STDOUT, EXIT_INPUT)
    reason = output_problem(args.output, args.data)
    if reason is not None:
        return refuse(WRITE_FAILED.format(path=args.output, reason=reason), EXIT_INPUT)
    tree = read_tree(args.tree)
    if isinstance(tree, str):
        return refuse(tree, EXIT_INPUT)
    context = tree.context
    if context is None:
        print(REPORT_NO_CONTEXT.format(tree=shown(args.tree)), file=sys.stderr)
        context = FitContext()
    frames = []
    for path in [args.data] + ([args.test] if args.test is not None else []):
        frame = read_table(path, args.file_encoding)
        if isinstance(frame, str):
            return refuse(frame, EXIT_INPUT)
        frame = apply_codes(frame, context.codes)
        needed = [tree.target, *tree.feature_names, *context.protected, *context.legitimate]
        missing = _missing(frame, needed)
        if missing:
            return refuse(REPORT_COLUMNS_MISSING.format(path=shown(path), columns=", ".join(map(repr, missing)),
                                                        tree=shown(args.tree), needs="reads"), EXIT_INPUT)
        frames.append(frame)
    table, test = frames[0], (frames[1] if len(frames) > 1 else None)
    if test is not None or context.split is None:
        train = table[table[tree.target].notna()].reset_index(drop=True)
        if test is not None:
            test = test[test[tree.target].notna()].reset_index(drop=True)
    else:
        rows = rows_from_split(table, tree.target, context.split)
        train, test = rows.train, rows.test
    expected = tree.record.n_rows
    if expected and len(train) != expected:
        hint = ("" if context.split is None else
                " (the tree file names its split: the same file with the same rows gives the same training rows)")
        return refuse(REPORT_WRONG_ROWS.format(path=shown(args.data), rows=fmt(len(train), "int"), tree=shown(args.tree),
                                               expected=fmt(expected, "int"), hint=hint), EXIT_INPUT)
    baseline = None
    fairness = context.settings.get("fairness")
    notions = (fairness,) if isinstance(fairness, str) else tuple(fairness or ())
    if notions:
        print(REPORT_BASELINE.format(limit=args.baseline_time_limit), file=sys.stderr)
        solved = unconstrained_tree(tree, train, context, args.baseline_time_limit)
        if isinstance(solved, str):
            print(REPORT_BASELINE_FAILED.format(reason=solved.rstrip(".")), file=sys.stderr)
        else:
            baseline = solved
    title = args.title or context.dataset or args.data.name
    inp = ReportInput(
        tree=tree, train=train, test=test, dataset=title, pos_label=context.pos_label,
        protected=context.protected, legitimate=context.legitimate, fairness=notions,
        fairness_bound=context.settings.get("fairness_bound") if notions else None,
        settings=context.settings or {"depth": tree.structure.depth},
        split=_split_words(context, train, test, None if args.test is None else shown(args.test)),
        unconstrained=baseline,
        notes=() if tree.context is not None else (REPORT_NO_CONTEXT.format(tree=args.tree.name).removeprefix("note: "),),
        note_words=cli_words,
    )
    failed = write_text(args.output, build_report(inp, engine=args.drawing))
    if failed is not None:
        return refuse(failed, EXIT_INPUT)
    print(REPORT_WRITTEN.format(path=args.output), file=sys.stderr)
    return EXIT_OK
