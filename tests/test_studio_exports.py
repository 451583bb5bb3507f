"""Download bytes of the Tree page, and the measurements of the Fairness page."""

import json
import sqlite3

import numpy as np
import pytest

from strongtree_core import StrongTreeClassifier
from strongtree_core.tree import FittedTree
from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig, split_table
from strongtree_studio.data.demo_tables import make_hiring
from strongtree_studio.data.evaluation import evaluate
from strongtree_studio.views.downloads import EXPORTS, export_bytes, image_bytes, images_available
from strongtree_studio.page.shown import group_mix

ROLES = Roles("hired", "yes", ("gender",), ("education",))


@pytest.fixture(scope="module")
def fitted():
    tables = split_table(make_hiring(300, seed=2), ROLES, SplitConfig(seed=1))
    X = tables.train.drop(columns="hired")
    model = StrongTreeClassifier(depth=2, pos_label="yes", time_limit=30)
    model.fit(X, tables.train["hired"], sensitive_features="gender", legitimate_features="education")
    return model.tree_, tables


def test_every_export_is_utf8_text_of_the_tree(fitted):
    tree, tables = fitted
    for kind in EXPORTS:
        assert export_bytes(tree, kind).decode("utf-8").strip(), kind
    assert FittedTree.from_json(export_bytes(tree, "json").decode()) == tree
    assert export_bytes(tree, "dot").decode().startswith("digraph")
    assert export_bytes(tree, "rules").decode().count("IF ") == len(tree.structure.leaves)


def test_python_and_sql_exports_predict_like_the_tree(fitted):
    tree, tables = fitted
    rows = tables.test.drop(columns="hired")
    expected = list(tree.predict(rows))

    namespace: dict = {}
    exec(export_bytes(tree, "python").decode(), namespace)
    assert [namespace["predict"](row) for row in rows.to_dict(orient="records")] == expected

    db = sqlite3.connect(":memory:")
    rows.astype({"education": str}).to_sql("t", db, index=False)
    sql = export_bytes(tree, "sql").decode()
    assert [r[0] for r in db.execute(f"SELECT {sql} FROM t")] == expected


@pytest.mark.skipif(not images_available(), reason="Graphviz's dot program is not installed")
def test_images_render_when_dot_is_installed(fitted):
    tree, _ = fitted
    assert image_bytes(tree.to_dot(), "svg").lstrip().startswith(b"<")
    assert b"<svg" in image_bytes(tree.to_dot(), "svg")
    assert image_bytes(tree.to_dot(), "png")[:8] == b"\x89PNG\r\n\x1a\n"


def test_group_mix_counts_rows_per_group_at_every_node(fitted):
    tree, tables = fitted
    mix = group_mix(tree, tables.train, ("gender",))
    counts = tables.train["gender"].value_counts()
    assert mix[1] == {"female": counts["female"], "male": counts["male"]}
    leaves = tree.apply(tables.train)
    for leaf in tree.structure.leaves:
        at_leaf = tables.train[leaves == leaf]["gender"].value_counts().to_dict()
        assert mix.get(int(leaf), {}) == at_leaf
    for node in tree.structure.branching:
        children = [mix.get(2 * int(node), {}), mix.get(2 * int(node) + 1, {})]
        assert sum(map(sum, (c.values() for c in children))) == sum(mix[int(node)].values())


def test_evaluation_numbers_are_recomputed_from_predictions(fitted):
    tree, tables = fitted
    model = ModelConfig(depth=2, fairness=("statistical_parity",), fairness_bound=0.1)
    result = evaluate(tree, tables, ROLES, model)
    json.dumps(result, allow_nan=False)  # stored as JSON
    for split, rows in (("train", tables.train), ("test", tables.test)):
        predicted = tree.predict(rows)
        truth = rows["hired"].to_numpy()
        metrics = result["splits"][split]
        assert metrics["quality"]["accuracy"] == pytest.approx(np.mean(predicted == truth))
        rate = {g: np.mean(predicted[(rows["gender"] == g).to_numpy()] == "yes") for g in ("female", "male")}
        gap = metrics["gaps"]["statistical_parity"]["difference"]
        assert gap == pytest.approx(abs(rate["female"] - rate["male"]))
        groups = {r["group"]: r for r in metrics["groups"]}
        assert groups["female"]["selection_rate"] == pytest.approx(rate["female"])
        matrix = np.asarray(metrics["confusion"]["male"]["data"])
        assert matrix.sum() == (rows["gender"] == "male").sum()
    names = [row["model"] for row in result["comparison"]]
    assert names == ["StrongTree", "CART (same depth)", "Logistic regression", "Majority class"]
    cart = result["comparison"][1]
    assert cart["leaves"] <= 4 and 0.5 <= cart["train_accuracy"] <= 1
