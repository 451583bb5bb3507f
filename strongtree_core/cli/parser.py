"""The options of ``strongtree fit``, ``predict`` and ``export``, each with its help and default.

The defaults of ``fit`` are the estimator's own (``StrongTreeClassifier().get_params()``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from strongtree_core import __version__
from strongtree_core.cli.messages import STDIO
from strongtree_core.estimator import StrongTreeClassifier
from strongtree_core.vocabulary import (
    FAIRNESS_NOTIONS,
    FORMULATIONS,
    OBJECTIVES,
    SOLVERS,
)

#: What ``strongtree export --format`` writes.
EXPORT_FORMATS = ("text", "json", "dot", "sql", "python")
EPILOG = (
    "Exit codes: 0 done; 1 the solve refused the settings (bad values, infeasible constraints); 2 bad input, "
    "nothing solved; 3 a fault of the program; 130 stopped by Ctrl-C (the best tree so far is still written)."
)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's help ends with its default ("none" when it has none, "off" for a flag) or "(required)"."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if not action.option_strings or action.default is argparse.SUPPRESS or "(default" in text:
            return text
        if action.required:
            return f"{text} (required)"
        if isinstance(action, argparse._StoreTrueAction):
            return f"{text} (default: off)"
        if action.default is None:
            return f"{text} (default: none)"
        return f"{text} (default: %(default)s)"


def _sub(sub, name: str, text: str) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=text, description=text, formatter_class=HelpFormatter, epilog=EPILOG)


def build_parser() -> argparse.ArgumentParser:
    defaults = StrongTreeClassifier().get_params()
    p = argparse.ArgumentParser(
        prog="strongtree", description="Provably optimal and fair classification trees.", epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}", help="print the version and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="{fit,predict,export}")

    f = _sub(sub, "fit", "learn a tree from a CSV file")
    f.add_argument("data", type=Path, help=f"CSV file with a header row ({STDIO} reads standard input)")
    f.add_argument("--target", required=True, help="name of the column to predict")
    f.add_argument("--depth", type=int, default=defaults["depth"], help="maximum depth of the tree")
    f.add_argument("--formulation", choices=list(FORMULATIONS), default=defaults["formulation"],
                   help="auto: the fastest exact route; flow / benders: the paper's FlowOCT / BendersOCT")
    f.add_argument("--solver", choices=list(SOLVERS), default=defaults["solver"],
                   help="MIO solver; auto takes Gurobi when licensed for the model, else HiGHS or SCIP")
    f.add_argument("--time-limit", type=float, default=defaults["time_limit"], help="seconds")
    f.add_argument("--threads", type=int, default=defaults["threads"], help="solver threads")
    f.add_argument("--regularization", type=float, default=defaults["regularization"],
                   help="the paper's lambda in [0, 1): the price of each branching node against correct rows")
    f.add_argument("--max-branching", type=int, default=defaults["max_branching"],
                   help="at most this many branching nodes (eq. 8); none: no limit")
    f.add_argument("--max-features", type=int, default=defaults["max_features"],
                   help="at most this many distinct binary features (eq. 9); none: no limit")
    f.add_argument("--min-leaf", type=int, default=defaults["min_leaf"],
                   help="every leaf holds at least this many training rows (eq. 10)")
    f.add_argument("--objective", choices=list(OBJECTIVES), default=defaults["objective"], help="what the tree maximizes")
    f.add_argument("--positive-class", default=defaults["positive_class"],
                   help="label of the positive class (fairness, recall, precision, specificity, sensitivity); "
                        "none: the second label in sorted order")
    f.add_argument("--min-recall", type=float, default=defaults["min_recall"], help="lowest recall allowed, in [0, 1]")
    f.add_argument("--min-precision", type=float, default=defaults["min_precision"],
                   help="lowest precision allowed, in [0, 1]")
    f.add_argument("--min-specificity", type=float, default=defaults["min_specificity"],
                   help="lowest specificity allowed, in [0, 1]")
    f.add_argument("--protected", action="append", default=None, metavar="COLUMN",
                   help="protected column, every value one group (repeat for several columns)")
    f.add_argument("--legitimate", action="append", default=None, metavar="COLUMN",
                   help="legitimate column of conditional statistical parity (repeatable)")
    f.add_argument("--fairness", action="append", choices=list(FAIRNESS_NOTIONS), default=None,
                   help="fairness notion bounded by --delta (repeatable); needs --protected")
    f.add_argument("--delta", type=float, default=defaults["fairness_bound"],
                   help="largest gap allowed between two protected groups, in [0, 1]")
    f.add_argument("--allow-protected-splits", action="store_true", help="let the tree split on protected columns")
    f.add_argument("--n-buckets", type=int, default=defaults["n_buckets"],
                   help="quantile buckets of a continuous column")
    f.add_argument("--no-accelerator", action="store_true",
                   help="solve by the MIO only (no dynamic program or exhaustive search)")
    f.add_argument("--output", type=Path, default=None,
                   help=f"write the fitted tree as JSON to this file ({STDIO}: standard output, the report then "
                        "goes to standard error)")
    f.add_argument("--json", action="store_true",
                   help="print the result as one JSON object on standard output (status, gap, accuracy, "
                        "constraint checks, the tree) instead of the report")
    f.add_argument("--encoding", default=None,
                   help="text encoding of the CSV file; none: UTF-8, or what its byte-order mark says")

    pr = _sub(sub, "predict", "predict the rows of a CSV file with a stored tree")
    pr.add_argument("data", type=Path, help=f"CSV file with a header row ({STDIO} reads standard input)")
    pr.add_argument("--tree", type=Path, required=True, help="tree written by `strongtree fit --output`")
    pr.add_argument("--output", type=Path, default=Path(STDIO),
                    help=f"CSV file written: the input columns, then the prediction ({STDIO}: standard output)")
    pr.add_argument("--column", default=None,
                    help="name of the prediction column; none: predicted_<target>")
    pr.add_argument("--proba", action="store_true",
                    help="add one column per class: the share of that class among the training rows of the row's leaf")
    pr.add_argument("--encoding", default=None,
                    help="text encoding of the CSV file; none: UTF-8, or what its byte-order mark says")

    ex = _sub(sub, "export", "write a stored tree as text rules, JSON, Graphviz DOT, SQL or Python")
    ex.add_argument("--tree", type=Path, required=True,
                    help=f"tree written by `strongtree fit --output` ({STDIO} reads standard input)")
    ex.add_argument("--format", choices=EXPORT_FORMATS, default="text",
                    help="text: IF ... THEN rules; json: the stored tree; dot: Graphviz; sql: a CASE expression; "
                         "python: a predict(row) function")
    ex.add_argument("--output", type=Path, default=Path(STDIO), help=f"file written ({STDIO}: standard output)")
    return p
