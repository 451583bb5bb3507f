"""The options of ``strongtree fit``, ``predict`` and ``export``, each with its help and default.

The defaults of ``fit`` are the estimator's own (``StrongTreeClassifier().get_params()``).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from strongtree_core.version import __version__
from strongtree_core.cli import options
from strongtree_core.cli.dashboard import add_app_parser
from strongtree_core.cli.messages import BAD_GIGABYTES, RENAMED_FLAG, STDIO
from strongtree_core.cli.tables import RAW_HELP
from strongtree_core.estimator.classifier import StrongTreeClassifier
from strongtree_core.sweep import BACKENDS, SCHEDULER_ENV
from strongtree_core.vocabulary import (
    FAIRNESS_NOTIONS,
    FORMULATIONS,
    OBJECTIVES,
    PROMISE_METHODS,
    SOLVERS,
)

#: Seconds ``strongtree report`` gives the tree without the fairness constraint.
REPORT_BASELINE_LIMIT = 60.0
#: What ``strongtree export --format`` writes.
EXPORT_FORMATS = ("text", "json", "dot", "sql", "python")
EPILOG = (
    "Exit codes: 0 done; 1 the solve refused the settings (values that do not go together, infeasible "
    "constraints); 2 bad input (a file, an option's value), "
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


#: Options of earlier versions and their names now, per command (refused with a message that gives the new name).
RENAMED_FLAGS: dict[str, dict[str, str]] = {
    "fit": {"--delta": "--fairness-bound", "--positive-class": "--pos-label", "--max-features": "--max-features-used",
            "--no-accelerator": "--no-exact-search", "--encoding": "--file-encoding"},
    "sweep": {"--delta": "--fairness-bound", "--bounds": "--fairness-bound", "--positive-class": "--pos-label",
              "--no-accelerator": "--no-exact-search", "--encoding": "--file-encoding"},
    "predict": {"--encoding": "--file-encoding"},
}


class RenamedOption(argparse.Action):
    """An option of an earlier version: using it stops with a message that names the option now."""

    def __init__(self, option_strings, dest, new: str, **kwargs) -> None:
        self.new = new
        super().__init__(option_strings, dest, nargs="*", default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        parser.error(RENAMED_FLAG.format(old=option_string, new=self.new))



MAX_THRESHOLDS_HELP = ("thresholds per continuous column chosen from the data (CART's always among them); "
                       "none: 16, unless --n-buckets is given")
N_BUCKETS_HELP = "cut each continuous column at this many quantile buckets instead (the earlier rule; not with --max-thresholds)"

def gigabytes(text: str) -> float:
    """``--memory-limit-gb``: a finite number of GB above 0 (``nan`` and ``inf`` read as floats, and are refused)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(BAD_GIGABYTES.format(value=text))
    return value


def _sub(sub, name: str, text: str) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, help=text, description=text, formatter_class=HelpFormatter, epilog=EPILOG)
    # Exact names win over abbreviations, so ``--max-features`` is refused rather than read as
    # an abbreviation of ``--max-features-used``.
    for old, new in RENAMED_FLAGS.get(name, {}).items():
        parser.add_argument(old, action=RenamedOption, new=new, dest=f"_renamed_{old.strip('-').replace('-', '_')}")
    return parser


def _data_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", type=Path, help=f"CSV file with a header row ({STDIO} reads standard input)")
    parser.add_argument("--target", required=True, help="name of the column to predict")


FIT_DATA_HELP = (f"the table: a CSV file with a header row ({STDIO} reads standard input), or, read where it lies without "
                 "loading it whole, a Parquet file, a folder of Parquet files, or a glob such as 'claims/*.parquet' "
                 "(quote it)")


def _solve_options(parser: argparse.ArgumentParser, defaults: dict) -> None:
    parser.add_argument("--formulation", choices=list(FORMULATIONS), default=defaults["formulation"],
                        help="auto: the fastest exact route; flow / benders: the paper's FlowOCT / BendersOCT")
    parser.add_argument("--solver", choices=list(SOLVERS), default=defaults["solver"],
                        help="MIO solver; auto takes Gurobi when licensed for the model, else HiGHS or SCIP")
    parser.add_argument("--time-limit", type=options.seconds, default=defaults["time_limit"], help="seconds")
    parser.add_argument("--threads", type=options.threads, default=defaults["threads"], help="solver threads")


def _role_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--protected", action="append", default=None, metavar="COLUMN",
                        help="protected column, every value one group (repeat for several columns)")
    parser.add_argument("--legitimate", action="append", default=None, metavar="COLUMN",
                        help="legitimate column of conditional statistical parity (repeatable)")


def _sweep_parser(sub, defaults: dict) -> None:
    s = _sub(sub, "sweep", "fit a tree at every point of a grid (notions x bounds x depths x lambdas x folds) and "
                           "write one row per point: settings, status, accuracy and fairness gaps, the tree")
    _data_options(s)
    _role_options(s)
    s.add_argument("--fairness", nargs="+", choices=list(FAIRNESS_NOTIONS), default=None, metavar="NOTION",
                   help=f"fairness notion(s) to bound, each a dimension of the grid ({', '.join(FAIRNESS_NOTIONS)}); "
                        "needs --protected")
    s.add_argument("--fairness-bound", nargs="+", type=options.bound, default=None, metavar="DELTA",
                   help="the fairness bound(s) δ to try, each the largest gap allowed between two groups as a share "
                        f"in [0, 1] (0.05 = 5 percentage points); none: {defaults['fairness_bound']}")
    s.add_argument("--depths", nargs="+", type=options.depth, default=[defaults["depth"]], metavar="DEPTH",
                   help="tree depths to try")
    s.add_argument("--regularization", nargs="+", type=options.regularization, default=[defaults["regularization"]], metavar="LAMBDA",
                   help="the paper's lambda values to try, each in [0, 1)")
    s.add_argument("--folds", type=options.count(2, 5), default=None,
                   help="k: fit on k - 1 folds and measure on the held-out fold (test columns); none: fit on every row")
    s.add_argument("--frontier", action="store_true",
                   help="write only the Pareto frontier: per notion, the best accuracy per bound that no other point "
                        "beats on both accuracy and measured gap")
    _solve_options(s, defaults)
    s.add_argument("--min-leaf", type=options.count(0, 5), default=defaults["min_leaf"],
                   help="every leaf holds at least this many training rows (eq. 10)")
    s.add_argument("--objective", choices=list(OBJECTIVES), default=defaults["objective"], help="what the tree maximizes")
    s.add_argument("--pos-label", default=defaults["pos_label"],
                   help="label of the positive class; none: the second label in sorted order")
    s.add_argument("--max-thresholds", type=options.count(1, 16), default=defaults["max_thresholds"], help=MAX_THRESHOLDS_HELP)
    s.add_argument("--n-buckets", type=options.count(2, 5), default=defaults["n_buckets"], help=N_BUCKETS_HELP)
    s.add_argument("--no-exact-search", action="store_true",
                   help="solve by the MIO only (no exact search)")
    s.add_argument("--backend", choices=list(BACKENDS), default="serial",
                   help="where the points run: serial, threads, processes (local process workers), dask (a cluster)")
    s.add_argument("--n-jobs", type=options.jobs, default=None,
                   help="workers (threads, processes, or a local Dask cluster's process workers); none: every core")
    s.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help=f"with --backend dask: the scheduler, e.g. tcp://host:8786; none: ${SCHEDULER_ENV} if set, "
                        "else a local cluster of --n-jobs process workers")
    s.add_argument("--output", type=Path, default=None,
                   help=f"write the table: CSV (.csv or no extension), JSON records (.json) or an Excel workbook "
                        f"(.xlsx) ({STDIO}: CSV on standard output, the summary then goes to standard error)")
    s.add_argument("--raw", action="store_true", help=RAW_HELP)
    s.add_argument("--file-encoding", default=None,
                   help="text encoding of the CSV file; none: UTF-8, or what its byte-order mark says")


def build_parser() -> argparse.ArgumentParser:
    defaults = StrongTreeClassifier().get_params()
    p = argparse.ArgumentParser(
        prog="strongtree", description="Provably optimal and fair classification trees.", epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}", help="print the version and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="{fit,sweep,predict,export,report,app}")

    f = _sub(sub, "fit", "learn a tree from a CSV or Parquet table")
    f.add_argument("data", type=Path, help=FIT_DATA_HELP)
    f.add_argument("--target", required=True, help="name of the column to predict")
    f.add_argument("--depth", type=options.depth, default=defaults["depth"], help="maximum depth of the tree")
    _solve_options(f, defaults)
    f.add_argument("--n-jobs", type=options.jobs, default=defaults["n_jobs"],
                   help="threads of the exact search: -1 every core, -2 all but one (the tree found is the same)")
    f.add_argument("--regularization", type=options.regularization, default=defaults["regularization"],
                   help="the paper's lambda in [0, 1): the price of each branching node against correct rows")
    f.add_argument("--max-branching", type=options.count(0, 3), default=defaults["max_branching"],
                   help="at most this many branching nodes (eq. 8); none: no limit")
    f.add_argument("--max-features-used", type=options.count(0, 2), default=defaults["max_features_used"],
                   help="at most this many distinct binary features (eq. 9); none: no limit")
    f.add_argument("--min-leaf", type=options.count(0, 5), default=defaults["min_leaf"],
                   help="every leaf holds at least this many training rows (eq. 10)")
    f.add_argument("--objective", choices=list(OBJECTIVES), default=defaults["objective"], help="what the tree maximizes")
    f.add_argument("--pos-label", default=defaults["pos_label"],
                   help="label of the positive class (fairness, recall, precision, specificity, sensitivity); "
                        "none: the second label in sorted order")
    f.add_argument("--min-recall", type=options.share, default=defaults["min_recall"], help="lowest recall allowed, in [0, 1]")
    f.add_argument("--min-precision", type=options.share, default=defaults["min_precision"],
                   help="lowest precision allowed, in [0, 1]")
    f.add_argument("--min-specificity", type=options.share, default=defaults["min_specificity"],
                   help="lowest specificity allowed, in [0, 1]")
    _role_options(f)
    f.add_argument("--fairness", action="append", choices=list(FAIRNESS_NOTIONS), default=None,
                   help="fairness notion bounded by --fairness-bound (repeatable); needs --protected")
    f.add_argument("--fairness-bound", type=options.bound, default=defaults["fairness_bound"], metavar="DELTA",
                   help="δ: the largest gap allowed between two protected groups, as a share in [0, 1] "
                        "(0.05 = 5 percentage points)")
    f.add_argument("--fairness-confidence", type=options.confidence, default=None, metavar="C",
                   help="promise the bound on new rows of the same population with probability C in (0, 1), "
                        "e.g. 0.9; none: the bound holds on the training rows only")
    f.add_argument("--fairness-confidence-method", choices=list(PROMISE_METHODS),
                   default=defaults["fairness_confidence_method"],
                   help=f"how the promise of --fairness-confidence is kept; none: {next(iter(PROMISE_METHODS))}, the "
                        "method measured best (docs/fairness-on-new-rows.md)")
    f.add_argument("--allow-protected-splits", action="store_true", help="let the tree split on protected columns")
    f.add_argument("--max-thresholds", type=options.count(1, 16), default=defaults["max_thresholds"], help=MAX_THRESHOLDS_HELP)
    f.add_argument("--n-buckets", type=options.count(2, 5), default=defaults["n_buckets"], help=N_BUCKETS_HELP)
    f.add_argument("--no-exact-search", action="store_true",
                   help="solve by the MIO only (no exact search)")
    f.add_argument("--sample-weight", default=None, metavar="COLUMN",
                   help="column of row weights (a row of weight k counts as k rows; 0 leaves it out)")
    f.add_argument("--out-of-core", action="store_true",
                   help="read a CSV file where it lies, in passes, without loading it whole (Parquet files, folders "
                        "and globs always are)")
    f.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="read the table on a Dask cluster: its scheduler, e.g. tcp://host:8786 (the rows are "
                        "summed into patterns on the workers; implies --out-of-core)")
    f.add_argument("--memory-limit-gb", type=gigabytes, default=None, metavar="GB",
                   help="largest memory a solve may use, in GB; a larger one is refused before it is built "
                        "(none: half of this machine's)")
    f.add_argument("--output", type=Path, default=None,
                   help=f"write the fitted tree as JSON to this file ({STDIO}: standard output, the report then "
                        "goes to standard error)")
    f.add_argument("--json", action="store_true",
                   help="print the result as one JSON object on standard output (status, gap, accuracy, "
                        "constraint checks, the tree) instead of the report")
    f.add_argument("--file-encoding", default=None,
                   help="text encoding of the CSV file; none: UTF-8, or what its byte-order mark says")

    _sweep_parser(sub, defaults)

    pr = _sub(sub, "predict", "predict the rows of a CSV file with a stored tree")
    pr.add_argument("data", type=Path, help=f"CSV file with a header row ({STDIO} reads standard input)")
    pr.add_argument("--tree", type=Path, required=True, help="tree written by `strongtree fit --output`")
    pr.add_argument("--output", type=Path, default=Path(STDIO),
                    help=f"file written: the input columns, then the prediction; CSV (.csv or no extension), JSON "
                         f"records (.json) or an Excel workbook (.xlsx) ({STDIO}: CSV on standard output)")
    pr.add_argument("--raw", action="store_true", help=RAW_HELP)
    pr.add_argument("--column", default=None,
                    help="name of the prediction column; none: predicted_<target>")
    pr.add_argument("--proba", action="store_true",
                    help="add one column per class: the share of that class among the training rows of the row's leaf")
    pr.add_argument("--file-encoding", default=None,
                    help="text encoding of the CSV file; none: UTF-8, or what its byte-order mark says")

    ex = _sub(sub, "export", "write a stored tree as text rules, JSON, Graphviz DOT, SQL or Python")
    ex.add_argument("--tree", type=Path, required=True,
                    help=f"tree written by `strongtree fit --output` ({STDIO} reads standard input)")
    ex.add_argument("--format", choices=EXPORT_FORMATS, default="text",
                    help="text: IF ... THEN rules; json: the stored tree; dot: Graphviz; sql: a CASE expression; "
                         "python: a predict(row) function")
    ex.add_argument("--output", type=Path, default=Path(STDIO), help=f"file written ({STDIO}: standard output)")

    rp = _sub(sub, "report", "write a self-contained HTML report of a stored tree on its table (for a review board; "
                             "opens offline, prints to PDF): groups, settings, certificate, the tree drawn and in "
                             "words, each group's rates with intervals, the cost of fairness")
    rp.add_argument("data", type=Path, help="CSV file the tree learned from (its target, protected and legitimate "
                                            "columns are read from the tree file)")
    rp.add_argument("--tree", type=Path, required=True, help="tree written by `strongtree fit --output` or the "
                                                             "dashboard's JSON download")
    rp.add_argument("--output", type=Path, required=True, help="the HTML file written")
    rp.add_argument("--test", type=Path, default=None,
                    help="CSV file of held-out rows to measure the tree on; none: the test rows of the split the "
                         "tree file names (a dashboard download), else no test rows")
    rp.add_argument("--title", default=None, help="the table's name in the report; none: the name the tree file "
                                                  "gives, else the file's name")
    rp.add_argument("--baseline-time-limit", type=options.seconds, default=REPORT_BASELINE_LIMIT,
                    help="seconds for solving the same tree without the fairness constraint, the cost of fairness's "
                         "reference")
    rp.add_argument("--drawing", choices=["auto", "graphviz", "builtin"], default="auto",
                    help="auto: Graphviz's dot when installed, else the built-in layout")
    rp.add_argument("--file-encoding", default=None,
                    help="text encoding of the CSV files; none: UTF-8, or what its byte-order mark says")

    add_app_parser(sub)
    return p
