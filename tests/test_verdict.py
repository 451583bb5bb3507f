"""One verdict for a gap against δ (within / beyond / undecided) and one rule for "small", on the
Fairness page's cards and bars, in the report and on the command line.

The reproducers are the measured contradictions: test rows 8.3 pp with interval 0-20.4 pp read
"undecided" on the page and "above" in the report; a constant tree's 0.0 pp read "undecided" and
"within"; training-row bars read "undecided" under a chip "within δ on these rows"; groups of 2,371
rows were flagged "small"."""

from __future__ import annotations

import re

import numpy as np
import pytest

from strongtree_core.metrics.gap_intervals import fairness_intervals
from strongtree_core.metrics.verdict import SMALL_ROWS, gap_verdict, is_small, small_words
from strongtree_studio.views.fairness_view import judged, new_rows_words, rate_chart, verdict


def test_the_measured_test_rows_gap_is_undecided_everywhere():
    found = gap_verdict(0.083, 0.05, training=False, constrained=True, interval=(0.0, 0.204))
    assert (found.state, found.text) == ("undecided", "undecided against δ = 5.0 pp")
    assert found.words == "undecided against δ = 5.0 pp (95 % interval 0.0 pp to 20.4 pp)"
    badge = verdict(0.083, 0.05, True, "test", interval=(0.0, 0.204))
    assert (badge.text, badge.colour) == ("undecided against δ = 5.0 pp", "orange")
    test = {"gaps": {"statistical_parity": {"difference": 0.083}},
            "intervals": {"statistical_parity": {"low": 0.0, "high": 0.204}}}
    sentence = new_rows_words(test, ["statistical_parity"], 0.05, {})
    assert sentence.endswith("statistical_parity on the test rows: 8.3 pp, 95 % interval 0.0 pp to 20.4 pp, "
                             "undecided against δ = 5.0 pp.")
    # the interval decides off the training rows: wholly below, wholly above
    assert gap_verdict(0.083, 0.05, training=False, constrained=True, interval=(0.0, 0.05)).state == "within"
    assert gap_verdict(0.083, 0.05, training=False, constrained=True, interval=(0.0501, 0.2)).state == "beyond"
    assert gap_verdict(0.083, 0.05, training=False, constrained=True, interval=(0.05, 0.2)).state == "undecided"
    # a stored run without intervals: the measured gap, said as such
    assert gap_verdict(0.083, 0.05, training=False, constrained=True).words == (
        "beyond δ = 5.0 pp (the measured gap, no interval)")
    assert gap_verdict(0.03, 0.05, training=False, constrained=True).state == "within"
    assert gap_verdict(None, 0.05, training=False, constrained=True) is None


def test_on_the_training_rows_the_certificate_decides():
    found = gap_verdict(0.049, 0.05, training=True, constrained=True, interval=(0.0, 0.3))
    assert found.words == "within δ = 5.0 pp (the certificate on these rows)"
    assert gap_verdict(0.049, 0.05, training=False, constrained=True, interval=(0.0, 0.3)).state == "undecided"
    assert gap_verdict(0.049, 0.05, training=True, constrained=False, interval=(0.0, 0.3)).state == "undecided"
    badge = verdict(0.049, 0.05, True, "train", interval=(0.0, 0.3))
    assert (badge.text, badge.colour) == ("within δ = 5.0 pp on these rows", "green")
    # the bars under that card: judged by their rates, as the certificate does, not by their intervals
    rows = [{"group": "a", "rate": 0.40, "rows": 50, "low": 0.27, "high": 0.55},
            {"group": "b", "rate": 0.449, "rows": 50, "low": 0.31, "high": 0.59}]
    assert [r["status"] for r in judged(rows, 0.05, True, certificate=True)] == ["within δ", "within δ"]
    assert [r["status"] for r in judged(rows, 0.05, True)] == ["undecided", "undecided"]
    spec = rate_chart(rows, "selection_rate", 0.05, True, "group", certificate=True)
    assert {d["status"] for d in spec["data"]["values"]} == {"within δ"}
    # the intervals are still drawn and labelled
    assert [r["label"] for r in judged(rows, 0.05, True, certificate=True)][0] == "40.0% (27.0%-55.0%) · 50 rows"


def test_a_constant_tree_is_within_on_any_rows():
    found = gap_verdict(0.0, 0.05, training=False, constrained=True, interval=(0.0, 0.3), constant=True)
    assert found.words == "within δ = 5.0 pp (a constant tree: gap 0 on any rows)"
    badge = verdict(0.0, 0.05, True, "test", interval=(0.0, 0.3), constant=True)
    assert (badge.text, badge.colour) == ("within δ = 5.0 pp: constant tree", "orange")  # no green beside one class
    assert verdict(0.0, 0.05, True, "test", interval=(0.0, 0.3)).text == "undecided against δ = 5.0 pp"
    test = {"gaps": {"statistical_parity": {"difference": 0.0}},
            "intervals": {"statistical_parity": {"low": 0.0, "high": 0.3}}}
    assert new_rows_words(test, ["statistical_parity"], 0.05, {}, constant=True).endswith(
        "within δ = 5.0 pp (a constant tree: gap 0 on any rows).")


def test_a_rate_is_small_by_its_rows_not_by_few_of_one_outcome():
    """A constant tree predicts no one positive: 0 of 2,371 is a precise rate, not a small one."""
    n = 2_371 + 12
    y = np.r_[np.ones(1_000), np.zeros(1_371), np.ones(6), np.zeros(6)].astype(int)
    group = np.array(["big"] * 2_371 + ["tiny"] * 12)
    table = fairness_intervals(y, np.zeros(n, dtype=int), sensitive_features=group, pos_label=1,
                               notions=["statistical_parity"])
    flags = dict(zip(table["group"], table["small"]))
    assert flags == {"big": False, "tiny": True}
    assert is_small(SMALL_ROWS - 1) and not is_small(SMALL_ROWS) and not is_small(None)
    assert small_words(12) == "small: 12 rows" and small_words(1) == "small: 1 row"


def test_the_report_says_the_same_verdict_as_the_page(run):
    """Every gap paragraph of the report ends with gap_verdict's words for its own numbers."""
    inp, html, page = run
    seen = 0
    for attrs, text in page.paragraphs:
        if "data-notion" not in attrs:
            continue
        gap, low, high = (float(v) / 100 for v in re.findall(r"(-?[\d.]+) pp", text)[:3])
        training = attrs["data-part"] == "train"
        expected = gap_verdict(gap, inp.fairness_bound, training=training, constrained=True, interval=(low, high))
        assert text.endswith(f"; {expected.words}."), text
        assert ("the certificate on these rows" in text) == training
        seen += 1
    assert seen == 2  # training and test rows


@pytest.fixture(scope="module")
def run():
    """The report test's run: the hiring table, statistical parity within 2 pp, training and test rows."""
    from test_report import ROLES, WHEN, parse

    from strongtree_core import StrongTreeClassifier
    from strongtree_core.datasets import make_hiring
    from strongtree_core.report.build import build_report
    from strongtree_studio.data.choices import ModelConfig, SplitConfig, split_table
    from strongtree_studio.views.report_view import report_input

    tables = split_table(make_hiring(800, seed=1), ROLES, SplitConfig(test_size=0.25, seed=0))
    X = tables.train.drop(columns=["hired"])
    model = ModelConfig(depth=2, fairness=("statistical_parity",), fairness_bound=0.02, time_limit=30)
    fair = StrongTreeClassifier(**model.estimator_params(ROLES)).fit(X, tables.train["hired"],
                                                                      sensitive_features=["gender"]).tree_
    inp = report_input("hiring.csv", fair, None, ROLES, model, SplitConfig(test_size=0.25, seed=0), tables)
    html = build_report(inp, engine="builtin", created=WHEN)
    return inp, html, parse(html)


def test_a_sweep_says_each_points_claim_and_verdicts_in_its_table():
    """The exports (the sweep's table, the CLI's and the Trade-offs page's CSV) carry the claim and the verdict."""
    import pandas as pd

    from strongtree_core import StrongTreeClassifier
    from strongtree_core.tree.claim import claim
    from strongtree_core.sweep import sweep
    from strongtree_core.tree import FittedTree

    rng = np.random.default_rng(5)
    n = 400
    X = pd.DataFrame({"score": rng.normal(size=n), "age": rng.integers(18, 70, n)})
    group = rng.choice(["a", "b"], n)
    y = ((X.score + 0.4 * (group == "a") + rng.normal(scale=0.8, size=n)) > 0).astype(int)
    table = sweep(StrongTreeClassifier(depth=1, time_limit=20), X, y, sensitive_features=group,
                  grid={"fairness": ["statistical_parity"], "fairness_bound": [0.02, 0.3]}, cv=[(np.arange(300),
                                                                                               np.arange(300, n))])
    for row in table.to_dict("records"):
        record = FittedTree.from_json(row["tree"]).record
        assert row["claim"] == claim(record).short == "Optimal over kept thresholds"
        expected = gap_verdict(row["train_gap"], row["fairness_bound"], training=True, constrained=True)
        assert row["train_verdict"] == expected.words == (
            f"within δ = {100 * row['fairness_bound']:.1f} pp (the certificate on these rows)")
        test = gap_verdict(row["test_gap"], row["fairness_bound"], training=False, constrained=True,
                           interval=(row["test_gap_low"], row["test_gap_high"]))
        assert row["test_verdict"] == test.words and "interval" in test.words


def test_an_interval_missing_an_end_or_a_gap_not_measured_decides_nothing():
    """An interval with a missing or NaN end is no interval: the measured gap decides, said as such (an interval
    (None, 1 pp) read "within", (NaN, 20 pp) "undecided"); a NaN gap, as no gap, has no verdict."""
    assert gap_verdict(float("nan"), 0.05, training=False, constrained=True, interval=(0.0, 0.2)) is None
    nan = float("nan")
    for interval in ((None, 0.01), (0.0, None), (nan, 0.2), (0.0, nan)):
        found = gap_verdict(0.083, 0.05, training=False, constrained=True, interval=interval)
        assert found.words == "beyond δ = 5.0 pp (the measured gap, no interval)", interval


def test_an_interval_end_at_the_bound_is_judged_with_the_tolerance():
    """The interval's high end at δ (within the tolerance) is within; its low end there is not beyond (all of
    the interval must be above δ to say beyond)."""
    from strongtree_core.metrics.verdict import TOLERANCE

    at = 0.05 + TOLERANCE
    assert gap_verdict(0.03, 0.05, training=False, constrained=True, interval=(0.0, at)).state == "within"
    assert gap_verdict(0.083, 0.05, training=False, constrained=True, interval=(at, 0.2)).words == (
        "undecided against δ = 5.0 pp (95 % interval 5.0 pp to 20.0 pp)")


def test_on_the_training_rows_a_gap_above_the_bound_is_beyond():
    """The training rows' verdict compares the measured gap with δ; it is no "within" by fiat (a tree stopped before
    its constraint held, or stored from elsewhere, can measure above δ)."""
    assert gap_verdict(0.08, 0.05, training=True, constrained=True, interval=(0.0, 0.3)).words == (
        "beyond δ = 5.0 pp (the certificate on these rows)")
    badge = verdict(0.08, 0.05, True, "train", interval=(0.0, 0.3))
    assert (badge.text, badge.colour) == ("beyond δ = 5.0 pp on these rows", "red")


@pytest.mark.parametrize("interval", [(0.0, 0.3), None])  # the certificate's verdict; the measured gap's
def test_a_gap_at_the_bound_is_within_by_the_tolerance_and_not_a_hair_beyond(interval):
    """A gap that meets δ, or exceeds it by no more than the tolerance (sums of weights, rounding), is within; the
    comparison is with δ plus the tolerance, not minus it."""
    from strongtree_core.metrics.verdict import TOLERANCE

    training = interval is not None
    for gap in (0.05, 0.05 + TOLERANCE):
        assert gap_verdict(gap, 0.05, training=training, constrained=True, interval=interval).state == "within"
    assert gap_verdict(0.05 + 3 * TOLERANCE, 0.05, training=training, constrained=True,
                       interval=interval).state == "beyond"
