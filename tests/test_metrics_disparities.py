"""Differences and ratios, between groups and to the overall rate, with sample weights and
every shape of group input, against fairlearn and against repeated rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import (
    MetricFrame,
    demographic_parity_difference,
    demographic_parity_ratio,
    equalized_odds_difference,
    equalized_odds_ratio,
    false_positive_rate,
    selection_rate,
    true_positive_rate,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import balanced_accuracy_score, confusion_matrix, precision_score, recall_score

from strongtree_core import metrics
from strongtree_core.metrics import _inputs
from strongtree_core.metrics.fairness_gaps import UNKNOWN_METHOD

NOTIONS = ("statistical_parity", "predictive_equality", "equal_opportunity", "equalized_odds")
RATES = {"statistical_parity": (selection_rate,), "predictive_equality": (false_positive_rate,),
         "equal_opportunity": (true_positive_rate,), "equalized_odds": (true_positive_rate, false_positive_rate)}


def _same(a: float, b: float) -> bool:
    return (np.isnan(a) and np.isnan(b)) or abs(a - b) <= 1e-12


@st.composite
def weighted(draw):
    """Labels, predictions, 2-3 groups each holding both labels (so every rate is defined), integer weights."""
    n_groups = draw(st.integers(2, 3))
    rows = []
    for g in range(n_groups):
        rows += [("yes", draw(st.sampled_from(["yes", "no"])), f"g{g}"), ("no", draw(st.sampled_from(["yes", "no"])), f"g{g}")]
    extra = draw(st.lists(st.tuples(st.sampled_from(["yes", "no"]), st.sampled_from(["yes", "no"]),
                                    st.sampled_from([f"g{g}" for g in range(n_groups)])), max_size=20))
    rows += extra
    weight = np.array(draw(st.lists(st.integers(1, 4), min_size=len(rows), max_size=len(rows))))
    y, p, g = (np.array(column, dtype=object) for column in zip(*rows))
    return y, p, g, weight


@settings(max_examples=20, deadline=None)
@given(case=weighted())
def test_differences_and_ratios_equal_fairlearn_and_repeated_rows(case):
    y, p, g, w = case
    t, q = (y == "yes").astype(int), (p == "yes").astype(int)
    rows = np.repeat(np.arange(len(y)), w)
    for method in ("between_groups", "to_overall"):
        for notion in NOTIONS:
            gap = metrics.fairness_gap(notion, y, p, sensitive_features=g, pos_label="yes", method=method,
                                       sample_weight=w)
            again = metrics.fairness_gap(notion, y[rows], p[rows], sensitive_features=g[rows], pos_label="yes",
                                         method=method)
            assert _same(gap.difference, again.difference) and _same(gap.ratio, again.ratio), notion
            frame = MetricFrame(metrics={f.__name__: f for f in RATES[notion]}, y_true=t, y_pred=q,
                                sensitive_features=g,
                                sample_params={f.__name__: {"sample_weight": w} for f in RATES[notion]})
            assert _same(gap.difference, float(frame.difference(method=method).max())), (notion, method)
            assert _same(gap.ratio, float(frame.ratio(method=method).min())), (notion, method)
        kw = dict(sensitive_features=g, pos_label="yes", method=method, sample_weight=w)
        assert _same(metrics.statistical_parity_difference(y, p, **kw),
                     demographic_parity_difference(t, q, sensitive_features=g, method=method, sample_weight=w))
        assert _same(metrics.statistical_parity_ratio(y, p, **kw),
                     demographic_parity_ratio(t, q, sensitive_features=g, method=method, sample_weight=w))
        assert _same(metrics.equalized_odds_difference(y, p, **kw),
                     equalized_odds_difference(t, q, sensitive_features=g, method=method, sample_weight=w))
        # fairlearn's equalized odds ratio is NaN when one of its two ratios is 0/0 (no group has a true
        # positive, say); here an undefined comparison is left out, as it is from the difference.
        theirs = equalized_odds_ratio(t, q, sensitive_features=g, method=method, sample_weight=w)
        parts = [MetricFrame(metrics=f, y_true=t, y_pred=q, sensitive_features=g,
                             sample_params={"sample_weight": w}).ratio(method=method) for f in RATES["equalized_odds"]]
        expected = theirs if not np.isnan(theirs) else (np.nanmin(parts) if not np.isnan(parts).all() else np.nan)
        assert _same(metrics.equalized_odds_ratio(y, p, **kw), expected)


def test_to_overall_compares_each_group_with_all_rows():
    # group a: 3 of 4 predicted yes; group b: 1 of 4; all rows: 4 of 8.
    y = ["yes", "no"] * 4
    p = ["yes", "yes", "yes", "no", "yes", "no", "no", "no"]
    g = ["a"] * 4 + ["b"] * 4
    kw = dict(sensitive_features=g, pos_label="yes")
    assert metrics.statistical_parity_difference(y, p, **kw) == pytest.approx(0.5)
    assert metrics.statistical_parity_difference(y, p, method="to_overall", **kw) == pytest.approx(0.25)
    assert metrics.statistical_parity_ratio(y, p, **kw) == pytest.approx(1 / 3)
    assert metrics.statistical_parity_ratio(y, p, method="to_overall", **kw) == pytest.approx(0.5)  # 0.25 / 0.5
    # weighing b's predicted-yes row 3 times: b selects 3 of 6, all rows 6 of 10
    w = [1, 1, 1, 1, 3, 1, 1, 1]
    assert metrics.statistical_parity_difference(y, p, sample_weight=w, **kw) == pytest.approx(0.75 - 0.5)
    assert metrics.statistical_parity_ratio(y, p, sample_weight=w, **kw) == pytest.approx(0.5 / 0.75)


def test_nobody_selected_has_no_disparity_difference_and_an_undefined_ratio():
    kw = dict(sensitive_features=["a", "a", "b", "b"], pos_label="yes")
    assert metrics.statistical_parity_difference(["yes", "no"] * 2, ["no"] * 4, **kw) == 0.0
    assert np.isnan(metrics.statistical_parity_ratio(["yes", "no"] * 2, ["no"] * 4, **kw))


def test_conditional_parity_takes_the_worst_level():
    y = ["yes"] * 8
    p = ["yes", "no", "yes", "yes", "yes", "no", "no", "no"]
    g = ["a", "a", "b", "b", "a", "a", "b", "b"]
    level = ["lo"] * 4 + ["hi"] * 4
    kw = dict(sensitive_features=g, legitimate_features=level, pos_label="yes")
    # lo: a 1/2, b 2/2 (gap 0.5, ratio 0.5); hi: a 1/2, b 0/2 (gap 0.5, ratio 0)
    assert metrics.conditional_statistical_parity_difference(y, p, **kw) == pytest.approx(0.5)
    assert metrics.conditional_statistical_parity_ratio(y, p, **kw) == pytest.approx(0.0)
    gap = metrics.fairness_gap("conditional_statistical_parity", y, p, **kw)
    assert gap.ratio_parts == {"share predicted positive | legitimate level 'lo'": 0.5,
                               "share predicted positive | legitimate level 'hi'": 0.0}


GROUPS = pd.DataFrame({"sex": ["F", "F", "M", "M", "F", "M"], "race": ["A", "B", "A", "A", "A", "B"]})
Y = ["yes", "no", "yes", "no", "yes", "no"]
P = ["yes", "yes", "no", "no", "yes", "yes"]


@pytest.mark.parametrize("form", [
    GROUPS,
    {"sex": GROUPS["sex"].tolist(), "race": GROUPS["race"].tolist()},
    [GROUPS["sex"], GROUPS["race"]],
])
def test_named_columns_in_any_form_are_the_same_groups(form):
    table = metrics.group_metrics(Y, P, sensitive_features=form, pos_label="yes")
    assert table["group"].tolist() == ["sex=F & race=A", "sex=F & race=B", "sex=M & race=A", "sex=M & race=B"]
    assert table["count"].tolist() == [2, 1, 2, 1]


@pytest.mark.parametrize("form", [
    list(zip(GROUPS["sex"], GROUPS["race"])),            # a list of one tuple per row
    [[s, r] for s, r in zip(GROUPS["sex"], GROUPS["race"])],  # a nested list, one row per entry
    GROUPS.to_numpy(),                                   # a 2-D array
    [GROUPS["sex"].tolist(), GROUPS["race"].tolist()],   # a list of 2 columns of 6 values
])
def test_unnamed_columns_in_any_form_are_the_same_groups(form):
    table = metrics.group_metrics(Y, P, sensitive_features=form, pos_label="yes")
    assert table["group"].tolist() == ["F & A", "F & B", "M & A", "M & B"]
    gap = metrics.statistical_parity_difference(Y, P, sensitive_features=form, pos_label="yes")
    assert gap == metrics.statistical_parity_difference(Y, P, sensitive_features=GROUPS, pos_label="yes")


def test_a_list_of_labels_is_one_group_per_row_even_when_labels_look_like_names():
    labels = ["sex", "race", "sex", "race", "sex", "race"]
    table = metrics.group_metrics(Y, P, sensitive_features=labels, pos_label="yes")
    assert dict(zip(table["group"], table["count"])) == {"sex": 3, "race": 3}


def test_group_table_quality_and_confusion_weigh_rows():
    g = GROUPS["sex"].to_numpy()
    w = np.array([2.0, 1.0, 0.5, 1.0, 0.0, 3.0])
    table = metrics.group_metrics(Y, P, sensitive_features=g, pos_label="yes", sample_weight=w).set_index("group")
    keep = w > 0
    for group in ("F", "M"):
        at = (g == group) & keep
        t, q = np.array(Y)[at] == "yes", np.array(P)[at] == "yes"
        assert table.loc[group, "count"] == at.sum()
        assert table.loc[group, "selection_rate"] == pytest.approx(np.average(q, weights=w[at]))
        assert _same(table.loc[group, "precision"], precision_score(t, q, sample_weight=w[at], zero_division=np.nan))
    quality = metrics.classification_quality(Y, P, pos_label="yes", sample_weight=w)
    t, q = np.array(Y) == "yes", np.array(P) == "yes"
    assert quality["recall"] == pytest.approx(recall_score(t, q, sample_weight=w))
    assert quality["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(Y, P, sample_weight=w))
    per_group = metrics.group_confusion_matrices(Y, P, sensitive_features=g, labels=["no", "yes"], sample_weight=w)
    at = g == "M"
    np.testing.assert_allclose(per_group["M"].to_numpy(),
                               confusion_matrix(np.array(Y)[at], np.array(P)[at], labels=["no", "yes"], sample_weight=w[at]))


def test_bad_weights_methods_and_shapes_are_named():
    kw = dict(sensitive_features=["a", "b"], pos_label="yes")
    cases = [
        (dict(sample_weight=[1.0]), _inputs.LENGTH_MISMATCH.format(what="sample_weight", got=1, expected=2)),
        (dict(sample_weight=["1", "2"]), _inputs.WEIGHTS_NOT_NUMBERS.format(examples="'1', '2'")),
        (dict(sample_weight=[True, 1]), _inputs.WEIGHTS_NOT_NUMBERS.format(examples="True")),
        (dict(sample_weight=[-1.0, np.nan]), _inputs.WEIGHTS_NOT_FINITE.format(n=2, total=2, examples="-1.0, nan")),
        (dict(sample_weight=[0, 0]), _inputs.WEIGHTS_ALL_ZERO),
        (dict(method="pairwise"), UNKNOWN_METHOD.format(method="pairwise")),
    ]
    for extra, message in cases:
        with pytest.raises(ValueError) as info:
            metrics.statistical_parity_difference(["yes", "no"], ["yes", "no"], **kw, **extra)
        assert str(info.value) == message
    with pytest.raises(ValueError) as info:
        metrics.statistical_parity_difference(["yes", "no"], ["yes", "no"], sensitive_features=np.zeros((2, 2, 2)),
                                              pos_label="yes")
    assert str(info.value) == _inputs.BAD_SHAPE.format(what="sensitive_features", shape=(2, 2, 2))


def test_a_row_of_weight_zero_is_no_row():
    g = np.array(["a", "a", "b", "b", "c"], dtype=object)
    y, p = ["yes", "no", "yes", "no", "yes"], ["yes", "no", "no", "no", "no"]
    w = np.array([1, 1, 1, 1, 0])
    report = metrics.fairness_report(y, p, sensitive_features=g, pos_label="yes", sample_weight=w)
    without = metrics.fairness_report(y[:4], p[:4], sensitive_features=g[:4], pos_label="yes")
    pd.testing.assert_frame_equal(report, without)
    assert "c" not in metrics.group_metrics(y, p, sensitive_features=g, pos_label="yes", sample_weight=w)["group"].tolist()
