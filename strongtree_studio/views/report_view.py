"""The report of a run on screen: what the dashboard hands to
:func:`strongtree_core.report.build.build_report` (the same generator as ``strongtree
report``), and the file's name."""

from __future__ import annotations

import re

from strongtree_core.report.build import ReportInput, build_report
from strongtree_core.tree import FittedTree
from strongtree_core.words import fmt
from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig, SplitTables
from strongtree_studio.views.status_words import page_words

#: Said on the Fairness page when the rows of the run are not at hand.
MSG_NO_ROWS = ("The report measures the tree on its rows: load the table this run was learned on (Data page) to "
               "make it.")


def split_words(split: SplitConfig, tables: SplitTables) -> str:
    """How the rows were divided: "4,629 training rows and 1,543 test rows (25% held out, seed 0, stratified)"."""
    if not len(tables.test):
        return f"{fmt(len(tables.train), 'int')} training rows, no test rows"
    how = f"{fmt(split.test_size, 'percent').replace('.0%', '%')} held out, seed {split.seed}" + (
        ", stratified by the target" if split.stratify else "")
    return f"{fmt(len(tables.train), 'int')} training rows and {fmt(len(tables.test), 'int')} test rows ({how})"


def report_input(dataset: str, tree: FittedTree, baseline: FittedTree | None, roles: Roles, model: ModelConfig,
                 split: SplitConfig, tables: SplitTables) -> ReportInput:
    """The report's input for a run: its trees, rows, roles and settings."""
    return ReportInput(
        tree=tree, train=tables.train, test=tables.test, dataset=dataset, pos_label=roles.pos_label,
        protected=tuple(roles.protected), legitimate=tuple(roles.legitimate), fairness=tuple(model.fairness),
        fairness_bound=model.fairness_bound if model.fairness else None,
        settings=model.estimator_params(roles), split=split_words(split, tables),
        unconstrained=baseline if model.fairness else None, notes=tuple(tables.notes), note_words=page_words,
    )


def report_html(dataset: str, tree: FittedTree, baseline: FittedTree | None, roles: Roles, model: ModelConfig,
                split: SplitConfig, tables: SplitTables) -> bytes:
    """The report as UTF-8 HTML bytes (a download)."""
    return build_report(report_input(dataset, tree, baseline, roles, model, split, tables)).encode("utf-8")


#: Longest part of a report's file name taken from the table's name.
FILE_STEM = 60


def report_file_name(dataset: str, run_id: int | None) -> str:
    """"report-compas-run-3.html": the table's name in safe characters and the run."""
    stem = re.sub(r"[^A-Za-z0-9]+", "-", dataset.rsplit(".", 1)[0] if "." in dataset else dataset).strip("-").lower()
    stem = stem[:FILE_STEM].rstrip("-")  # a 20,000-character table name is no file name (255 bytes at most)
    run = f"-run-{run_id}" if run_id is not None else ""
    return f"report-{stem or 'table'}{run}.html"
