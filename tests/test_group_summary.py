"""The protected groups before any tree: sizes, base rates and parts recomputed by counting,
small groups flagged at the stated threshold, and the Data page showing them."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from strongtree_core.metrics import group_metrics
from strongtree_core.metrics.group_summary import SMALL_ROWS, SUMMARY_COLUMNS, group_labels, group_summary
from strongtree_studio.data.demo_tables import make_hiring
from strongtree_studio.views.groups_view import group_sentence, group_summary_table, small_note
from strongtree_studio.views.markup import md


@pytest.fixture(scope="module")
def parts():
    frame = make_hiring(800, seed=1)
    return frame.iloc[:600].reset_index(drop=True), frame.iloc[600:].reset_index(drop=True)


def test_sizes_and_base_rates_are_the_counts(parts):
    train, test = parts
    summary = group_summary(train, test, target="hired", protected=["gender"], pos_label="yes")
    assert tuple(summary.columns) == SUMMARY_COLUMNS
    both = pd.concat([train, test])
    for row in summary.itertuples():
        in_group = both[both["gender"] == row.group]
        assert row.rows == len(in_group) and row.positives == (in_group["hired"] == "yes").sum()
        assert row.base_rate == pytest.approx((in_group["hired"] == "yes").mean())
        assert row.share == pytest.approx(len(in_group) / len(both))
        for name, part in (("train", train), ("test", test)):
            mine = part[part["gender"] == row.group]
            assert getattr(row, f"{name}_rows") == len(mine)
            assert getattr(row, f"{name}_base_rate") == pytest.approx((mine["hired"] == "yes").mean())
    assert summary["rows"].sum() == 800 and not summary["small"].any()


def test_groups_are_named_as_the_metrics_name_them(parts):
    train, _ = parts
    labels = set(group_labels(train, ["gender", "education"]))
    y = train["hired"].to_numpy()
    named = set(group_metrics(y, y, sensitive_features=train[["gender", "education"]], pos_label="yes")["group"])
    assert labels == named and "gender=female & education=master" in labels


def test_small_groups_are_flagged_at_the_threshold():
    rng = np.random.default_rng(0)
    n_big, n_small = 400, SMALL_ROWS - 1
    train = pd.DataFrame({"g": ["big"] * n_big + ["small"] * n_small,
                          "y": rng.integers(0, 2, n_big + n_small)})
    train.loc[train["g"] == "small", "y"] = 1  # and no row of the other class
    summary = group_summary(train, None, target="y", protected=["g"], pos_label=1).set_index("group")
    assert not summary.loc["big", "small"]
    assert summary.loc["small", "small"] and summary.loc["small", "why_small"] == f"{n_small} training rows"
    assert summary.loc["small", "test_rows"] == 0
    few = pd.DataFrame({"g": ["a"] * 100, "y": [1] * 97 + [0] * 3})
    flagged = group_summary(few, None, target="y", protected=["g"], pos_label=1).iloc[0]
    assert flagged["small"] and flagged["why_small"] == "3 training rows outside the positive class"
    assert str(SMALL_ROWS) in small_note()


def test_the_summary_in_words(parts):
    train, test = parts
    summary = group_summary(train, test, target="hired", protected=["gender"], pos_label="yes")
    table = group_summary_table(summary, "gender", "yes")
    assert list(table.index) == ["female", "male"]
    assert list(table.columns) == ["rows", "share of rows", "share yes", "training rows", "training: share yes",
                                   "test rows", "test: share yes", "flag"]
    female = summary.set_index("group").loc["female"]
    assert table.loc["female", "share yes"] == f"{100 * female['base_rate']:.1f}%"
    sentence = group_sentence(summary, "yes")
    assert sentence.startswith("2 groups: the largest is ") and "in the data, before any tree" in sentence
    gap = summary["base_rate"].max() - summary["base_rate"].min()
    assert f"a gap of {100 * gap:.1f} pp" in sentence


def test_the_data_page_shows_the_groups_once_a_protected_column_is_chosen(tmp_path, monkeypatch):
    monkeypatch.setenv("STRONGTREE_RUNS_DB", str(tmp_path / "runs.sqlite3"))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=60).run()
    at.button(key="data.load_demo").click().run()  # the hiring table, gender protected
    assert not at.exception
    headings = [m.value for m in at.markdown]
    assert "##### Protected groups" in headings
    table = next(t for t in at.table if "training rows" in t.value.columns)
    assert list(table.value.index) == ["female", "male"]
    assert any(md(small_note()) in c.value for c in at.caption)
