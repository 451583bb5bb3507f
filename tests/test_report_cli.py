"""``strongtree report TABLE --tree TREE.json --output report.html``: the roles read from the
tree file, the dashboard's split and coded columns made again from it, the same report as
the dashboard's, and every refusal a message."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_report import parse

from strongtree_core import StrongTreeClassifier, cli
from strongtree_core.cli.messages import (
    REPORT_COLUMNS_MISSING,
    REPORT_NO_CONTEXT,
    REPORT_OUTPUT_STDOUT,
    REPORT_WRONG_ROWS,
)
from strongtree_core.tree import FitContext, FittedTree
from strongtree_core.tree.context import apply_codes
from strongtree_studio.data.codebook import codebook_edits, read_codebook
from strongtree_studio.data.column_types import apply_edits
from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig, split_table
from strongtree_studio.data.demo_tables import make_hiring
from strongtree_studio.jobs.solve_job import SolveContext
from strongtree_studio.views.report_view import report_html


def write(folder: Path, name: str, frame: pd.DataFrame) -> Path:
    path = folder / name
    frame.to_csv(path, index=False)
    return path


def test_a_fitted_tree_carries_its_roles_and_settings():
    frame = make_hiring(300, seed=2)
    model = StrongTreeClassifier(depth=2, time_limit=20, fairness="statistical_parity", fairness_bound=0.04)
    model.fit(frame.drop(columns=["hired"]), frame["hired"], sensitive_features="gender",
              legitimate_features="education")
    context = model.tree_.context
    assert context.protected == ("gender",) and context.legitimate == ("education",) and context.pos_label == "yes"
    assert context.settings["fairness"] == "statistical_parity" and context.settings["fairness_bound"] == 0.04
    again = FittedTree.from_json(model.tree_.to_json())
    assert again == model.tree_ and again.context == context
    old = json.loads(model.tree_.to_json())
    del old["context"]  # a file written before the context was kept still reads
    assert FittedTree.from_dict(old).context is None


def test_the_command_line_reports_a_fitted_tree(tmp_path, capsys):
    data = write(tmp_path, "hiring.csv", make_hiring(400, seed=3))
    tree_file = tmp_path / "tree.json"
    assert cli.main(["fit", str(data), "--target", "hired", "--protected", "gender", "--fairness",
                     "statistical_parity", "--fairness-bound", "0.03", "--depth", "2", "--time-limit", "20",
                     "--output", str(tree_file)]) == 0
    out = tmp_path / "report.html"
    assert cli.main(["report", str(data), "--tree", str(tree_file), "--output", str(out), "--drawing", "builtin"]) == 0
    assert f"report written to {out}" in capsys.readouterr().err
    page = parse(out.read_text(encoding="utf-8"))
    tree = FittedTree.from_json(tree_file.read_text())
    frame = pd.read_csv(data)
    predicted = tree.predict(frame)
    cost = {row[0]: row for row in page.tables["cost"][1:]}
    assert cost["This tree"][3] == f"{100 * np.mean(predicted == frame['hired']):.1f}%"
    assert "The same tree without the fairness constraint" in cost  # solved again for the comparison
    rates = page.tables["rates-train-statistical_parity"]
    for row in rates[1:]:
        mine = (frame["gender"] == row[0]).to_numpy()
        assert row[3] == f"{100 * np.mean(predicted[mine] == 'yes'):.1f}%"
    gap = abs(np.diff([np.mean(predicted[(frame["gender"] == g).to_numpy()] == "yes") for g in ("female", "male")]))[0]
    assert gap <= 0.03 + 1e-9
    assert "hiring.csv: a fair decision tree of depth 2" in out.read_text()
    assert tree.record.message.startswith("The encoding kept ")  # the solver's note names the command line's option
    assert "max_thresholds=" not in out.read_text() and "--max-thresholds " in out.read_text()


@pytest.fixture(scope="module")
def dashboard_run():
    """A coded table named by a codebook, split and solved as the dashboard does; its tree file carries all that."""
    rng = np.random.default_rng(7)
    n = 600
    raw = pd.DataFrame({"race": rng.integers(1, 4, n), "score": rng.integers(0, 100, n),
                        "y": rng.integers(1, 3, n)})
    raw.loc[raw["score"] > 60, "y"] = 2
    book = read_codebook("column,code,label\nrace,1,A\nrace,2,B\nrace,3,C\ny,1,no\ny,2,yes\n")
    edits = codebook_edits(book, raw, {}).edits
    table, _ = apply_edits(raw, edits)
    roles = Roles("y", "yes", ("race",))
    split = SplitConfig(test_size=0.3, seed=4)
    tables = split_table(table, roles, split)
    model = ModelConfig(depth=2, fairness=("statistical_parity",), fairness_bound=0.05, time_limit=20)
    X = tables.train[roles.model_columns(tables.train)]
    tree = StrongTreeClassifier(**model.estimator_params(roles)).fit(X, tables.train["y"],
                                                                      sensitive_features=["race"]).tree_
    codes = {c: {"kind": e.kind, "labels": e.label_map} for c, e in edits.items()}
    context = SolveContext("coded.csv", "fp", roles, split, model, tables, codes=codes)
    return raw, table, tables, roles, model, split, context.with_context(tree)


def test_the_dashboard_tree_file_makes_the_same_rows_from_the_raw_codes(dashboard_run, tmp_path):
    raw, table, tables, roles, model, split, tree = dashboard_run
    assert tree.context.split == {"test_size": 0.3, "seed": 4, "stratify": True} and tree.context.dataset == "coded.csv"
    pd.testing.assert_frame_equal(apply_codes(raw, tree.context.codes).astype(str), table.astype(str))
    data = write(tmp_path, "coded.csv", raw)  # the codes, as the file is on disk
    tree_file = tmp_path / "tree.json"
    tree_file.write_text(tree.to_json())
    out = tmp_path / "report.html"
    assert cli.main(["report", str(data), "--tree", str(tree_file), "--output", str(out), "--drawing", "builtin",
                     "--baseline-time-limit", "20"]) == 0
    from_cli = parse(out.read_text(encoding="utf-8"))
    from_dashboard = parse(report_html("coded.csv", tree, None, roles, model, split, tables).decode())
    for split_name in ("train", "test"):
        key = f"rates-{split_name}-statistical_parity"
        assert from_cli.tables[key] == from_dashboard.tables[key]  # the same rows, the same numbers
    assert from_cli.tables["groups"] == from_dashboard.tables["groups"]
    assert [r[0] for r in from_cli.tables["groups"][1:]] == ["A", "B", "C"]  # the codes read as their labels


def test_refusals_are_messages(dashboard_run, tmp_path, capsys):
    raw, _, tables, *_, tree = dashboard_run
    tree_file = tmp_path / "tree.json"
    tree_file.write_text(tree.to_json())
    out = tmp_path / "report.html"
    fewer = write(tmp_path, "fewer.csv", raw.iloc[:500])
    assert cli.main(["report", str(fewer), "--tree", str(tree_file), "--output", str(out)]) == 2
    hint = " (the tree file names its split: the same file with the same rows gives the same training rows)"
    assert capsys.readouterr().err.strip() == REPORT_WRONG_ROWS.format(
        path=str(fewer), rows="350", tree=str(tree_file), expected=f"{len(tables.train):,}", hint=hint)
    without = write(tmp_path, "without.csv", raw.drop(columns=["race"]))
    assert cli.main(["report", str(without), "--tree", str(tree_file), "--output", str(out)]) == 2
    assert capsys.readouterr().err.strip() == REPORT_COLUMNS_MISSING.format(
        path=str(without), columns="'race'", tree=str(tree_file), needs="reads")
    assert cli.main(["report", str(without), "--tree", str(tree_file), "--output", "-"]) == 2
    assert capsys.readouterr().err.strip() == REPORT_OUTPUT_STDOUT
    assert not out.exists()


def test_a_tree_file_without_its_context_still_reports_without_groups(tmp_path, capsys):
    frame = make_hiring(200, seed=9)
    model = StrongTreeClassifier(depth=1, time_limit=10).fit(frame.drop(columns=["hired"]), frame["hired"])
    stored = model.tree_.to_dict()
    del stored["context"]
    tree_file = tmp_path / "old.json"
    tree_file.write_text(json.dumps(stored))
    data = write(tmp_path, "hiring.csv", frame)
    out = tmp_path / "report.html"
    assert cli.main(["report", str(data), "--tree", str(tree_file), "--output", str(out), "--drawing", "builtin"]) == 0
    assert REPORT_NO_CONTEXT.format(tree=str(tree_file)) in capsys.readouterr().err
    page = parse(out.read_text())
    assert "groups" not in page.tables and page.tables["cost"][1][0] == "This tree"
    assert FitContext().protected == ()
