"""The metrics package against fairlearn, scikit-learn and the constraints' own measurement."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import (
    demographic_parity_difference,
    equal_opportunity_difference,
    equalized_odds_difference,
    false_positive_rate_difference,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, balanced_accuracy_score, confusion_matrix, precision_score, recall_score

from strongtree_core import metrics
from strongtree_core.formulation.fairness_constraints import FAIRNESS_NOTIONS
from strongtree_core.metrics._inputs import (
    LENGTH_MISMATCH,
    NEED_LEGITIMATE,
    NEED_SENSITIVE,
    POSITIVE_LABEL_ABSENT,
    POSITIVE_LABEL_UNKNOWN,
)
from strongtree_core.metrics.fairness_gaps import UNKNOWN_NOTION

LABEL_SETS = [("yes", "no"), (3, 7), ("low", "mid", "high")]
SETTINGS = settings(max_examples=25, deadline=None)


@st.composite
def predictions(draw):
    """Random labels (never {0, 1}), predictions, 1-3 groups and 2 legitimate levels."""
    labels = draw(st.sampled_from(LABEL_SETS))
    n = draw(st.integers(4, 40))
    pick = st.lists(st.sampled_from(labels), min_size=n, max_size=n)
    groups = ["g1", "g2", "g3"][: draw(st.integers(1, 3))]
    positive = draw(st.sampled_from(labels))
    y_true = draw(pick)
    y_true[draw(st.integers(0, n - 1))] = positive  # a positive label that occurs nowhere is refused
    return dict(
        y_true=np.array(y_true),
        y_pred=np.array(draw(pick)),
        group=np.array(draw(st.lists(st.sampled_from(groups), min_size=n, max_size=n)), dtype=object),
        legit=np.array(draw(st.lists(st.sampled_from(["lo", "hi"]), min_size=n, max_size=n)), dtype=object),
        positive=positive,
    )


def _same(a: float, b: float) -> bool:
    return (np.isnan(a) and np.isnan(b)) or abs(a - b) <= 1e-12


def _fairlearn_gap(fn, t, p, g, keep) -> float:
    """fairlearn on the groups where the rate is defined; NaN with fewer than two of them."""
    kept = np.isin(g, keep)
    if len(keep) < 2:
        return float("nan")
    return float(fn(t[kept], p[kept], sensitive_features=g[kept]))


@settings(max_examples=20, deadline=None)
@given(case=predictions())
def test_gaps_agree_with_fairlearn(case) -> None:
    t = (case["y_true"] == case["positive"]).astype(int)
    p = (case["y_pred"] == case["positive"]).astype(int)
    g = case["group"]
    kw = dict(sensitive_features=g, pos_label=case["positive"])
    everyone = list(pd.unique(g))
    with_pos = list(pd.unique(g[t == 1]))
    with_neg = list(pd.unique(g[t == 0]))
    y, yp = case["y_true"], case["y_pred"]

    assert _same(metrics.statistical_parity_difference(y, yp, **kw), _fairlearn_gap(demographic_parity_difference, t, p, g, everyone))
    assert _same(metrics.equal_opportunity_difference(y, yp, **kw), _fairlearn_gap(equal_opportunity_difference, t, p, g, with_pos))
    assert _same(metrics.predictive_equality_difference(y, yp, **kw), _fairlearn_gap(false_positive_rate_difference, t, p, g, with_neg))
    eo = np.nanmax(
        [
            _fairlearn_gap(equal_opportunity_difference, t, p, g, with_pos),
            _fairlearn_gap(false_positive_rate_difference, t, p, g, with_neg),
            np.nan,
        ]
    ) if (len(with_pos) >= 2 or len(with_neg) >= 2) else float("nan")
    assert _same(metrics.equalized_odds_difference(y, yp, **kw), eo)
    if set(with_pos) == set(with_neg) == set(everyone) and len(everyone) >= 2:
        # every rate defined: fairlearn's own equalized odds, unfiltered
        assert _same(metrics.equalized_odds_difference(y, yp, **kw), float(equalized_odds_difference(t, p, sensitive_features=g)))

    levels = []
    for level in pd.unique(case["legit"]):
        at = case["legit"] == level
        levels.append(_fairlearn_gap(demographic_parity_difference, t[at], p[at], g[at], list(pd.unique(g[at]))))
    csp = float(np.nanmax(levels)) if not np.all(np.isnan(levels)) else float("nan")
    assert _same(metrics.conditional_statistical_parity_difference(y, yp, legitimate_features=case["legit"], **kw), csp)


@SETTINGS
@given(case=predictions())
def test_gaps_equal_what_the_constraints_measure(case) -> None:
    labels = sorted(set(case["y_true"]) | set(case["y_pred"]) | {case["positive"]}, key=str)
    index = {v: i for i, v in enumerate(labels)}
    yt = np.array([index[v] for v in case["y_true"]])
    yp = np.array([index[v] for v in case["y_pred"]])
    group = pd.factorize(case["group"])[0]
    legit = pd.factorize(case["legit"])[0]
    report = metrics.fairness_report(
        case["y_true"],
        case["y_pred"],
        sensitive_features=case["group"],
        legitimate_features=case["legit"],
        pos_label=case["positive"],
    ).set_index("notion")
    assert sorted(report.index) == sorted(FAIRNESS_NOTIONS)
    for notion, cls in FAIRNESS_NOTIONS.items():
        (check,) = metrics.check_constraints([cls(1.0, index[case["positive"]])], yt, yp, group, legit)
        assert _same(check.measured, report.loc[notion, "difference"]), notion
        assert check.satisfied


@SETTINGS
@given(case=predictions())
def test_group_table_agrees_with_sklearn(case) -> None:
    pos = case["positive"]
    table = metrics.group_metrics(case["y_true"], case["y_pred"], sensitive_features=case["group"], pos_label=pos)
    assert tuple(table.columns) == metrics.GROUP_COLUMNS
    assert set(table["group"]) == set(case["group"])
    for _, row in table.iterrows():
        at = case["group"] == row["group"]
        t = (case["y_true"][at] == pos).astype(int)
        p = (case["y_pred"][at] == pos).astype(int)
        assert row["count"] == at.sum()
        assert _same(row["selection_rate"], p.mean())
        assert _same(row["tpr"], recall_score(t, p, zero_division=np.nan))
        assert _same(row["fnr"], 1 - recall_score(t, p, zero_division=np.nan))
        assert _same(row["fpr"], 1 - recall_score(1 - t, 1 - p, zero_division=np.nan))
        assert _same(row["precision"], precision_score(t, p, zero_division=np.nan))
        assert _same(row["accuracy"], accuracy_score(case["y_true"][at], case["y_pred"][at]))


@SETTINGS
@given(case=predictions())
def test_quality_agrees_with_sklearn(case) -> None:
    y, yp, pos = case["y_true"], case["y_pred"], case["positive"]
    q = metrics.classification_quality(y, yp, pos_label=pos)
    is_pos, said_pos = y == pos, yp == pos
    assert _same(q["accuracy"], accuracy_score(y, yp))
    assert _same(q["balanced_accuracy"], balanced_accuracy_score(y, yp))
    assert _same(q["recall"], (is_pos & said_pos).sum() / is_pos.sum() if is_pos.any() else np.nan)
    assert _same(q["precision"], (is_pos & said_pos).sum() / said_pos.sum() if said_pos.any() else np.nan)
    assert _same(q["specificity"], (~is_pos & ~said_pos).sum() / (~is_pos).sum() if (~is_pos).any() else np.nan)
    per_class = [((y == k) & (yp == k)).sum() / (y == k).sum() for k in set(y)]
    assert _same(q["worst_case_accuracy"], min(per_class))
    assert _same(q["balanced_accuracy"], float(np.mean(per_class)))


@SETTINGS
@given(case=predictions())
def test_group_confusion_matrices_add_up(case) -> None:
    labels = sorted(set(case["y_true"]) | set(case["y_pred"]), key=str)
    per_group = metrics.group_confusion_matrices(case["y_true"], case["y_pred"], sensitive_features=case["group"], labels=labels)
    total = sum(m.to_numpy() for m in per_group.values())
    np.testing.assert_array_equal(total, confusion_matrix(case["y_true"], case["y_pred"], labels=labels))
    for g, m in per_group.items():
        at = case["group"] == g
        expected = pd.crosstab(pd.Categorical(case["y_true"][at], labels), pd.Categorical(case["y_pred"][at], labels), dropna=False)
        np.testing.assert_array_equal(m.to_numpy(), expected.to_numpy())


def test_undefined_rates_are_left_out_where_fairlearn_counts_zero() -> None:
    y = np.array(["no", "no", "yes", "yes", "yes", "no"], dtype=object)
    yp = np.array(["yes", "no", "yes", "no", "yes", "no"], dtype=object)
    g = np.array(["a", "a", "b", "b", "c", "c"], dtype=object)  # group a has no "yes" row
    gap = metrics.fairness_gap("equal_opportunity", y, yp, sensitive_features=g, pos_label="yes")
    assert gap.difference == pytest.approx(0.5)  # b: 1/2, c: 1/1
    assert gap.excluded == (
        "group 'a' has no rows of the positive class: its true positive rate is undefined and left out",
    )
    t, p = (y == "yes").astype(int), (yp == "yes").astype(int)
    # fairlearn counts group a's undefined rate as 0 and reports 1 - 0
    assert equal_opportunity_difference(t, p, sensitive_features=g) == pytest.approx(1.0)
    table = metrics.group_metrics(y, yp, sensitive_features=g, pos_label="yes")
    assert np.isnan(table.loc[table["group"] == "a", "tpr"].item())
    report = metrics.fairness_report(y, yp, sensitive_features=g, pos_label="yes")
    assert list(report["notion"]) == ["statistical_parity", "predictive_equality", "equal_opportunity", "equalized_odds"]
    assert "group 'a'" in report.set_index("notion").loc["equal_opportunity", "excluded"]


def test_several_sensitive_columns_form_one_group_each() -> None:
    frame = pd.DataFrame({"sex": ["F", "F", "M", "M"], "race": ["A", "B", "A", "A"]})
    table = metrics.group_metrics([1, 0, 1, 0], [1, 1, 0, 0], sensitive_features=frame, pos_label=1)
    assert sorted(table["group"]) == ["sex=F & race=A", "sex=F & race=B", "sex=M & race=A"]
    assert table.set_index("group").loc["sex=M & race=A", "count"] == 2


def test_conditional_table_has_one_row_per_level_and_group() -> None:
    table = metrics.group_metrics(
        ["y", "n", "y", "n"], ["y", "y", "n", "n"], sensitive_features=["a", "b", "a", "a"], legitimate_features=[1, 1, 2, 2], pos_label="y"
    )
    assert list(table.columns[:2]) == ["legit", "group"]
    assert sorted(zip(table["legit"], table["group"])) == [(1, "a"), (1, "b"), (2, "a")]


def test_input_errors_have_clear_messages() -> None:
    with pytest.raises(ValueError) as err:
        metrics.recall(["a", "b"], ["a", "b"], pos_label=1)
    assert str(err.value) == POSITIVE_LABEL_UNKNOWN.format(label=1, seen=["a", "b"])
    # a label of the right kind that occurs in neither array is refused too: every rate would be 0 or undefined
    with pytest.raises(ValueError) as err:
        metrics.recall(["a", "b"], ["a", "b"], pos_label="c")
    assert str(err.value) == POSITIVE_LABEL_ABSENT.format(label="c", seen=["a", "b"])
    with pytest.raises(ValueError) as err:
        metrics.recall(["a", "b"], ["a"], pos_label="a")
    assert str(err.value) == LENGTH_MISMATCH.format(what="y_pred", got=1, expected=2)
    with pytest.raises(ValueError) as err:
        metrics.statistical_parity_difference(["a", "b"], ["a", "b"], sensitive_features=["g"], pos_label="a")
    assert str(err.value) == LENGTH_MISMATCH.format(what="sensitive_features", got=1, expected=2)
    with pytest.raises(ValueError) as err:
        metrics.conditional_statistical_parity_difference(["a", "b"], ["a", "b"], sensitive_features=["g", "h"], pos_label="a")
    assert str(err.value) == NEED_LEGITIMATE
    with pytest.raises(ValueError) as err:
        metrics.fairness_gap("parity", ["a"], ["a"], sensitive_features=["g"], pos_label="a")
    assert str(err.value) == UNKNOWN_NOTION.format(name="parity", choices=sorted(FAIRNESS_NOTIONS))
    with pytest.raises(ValueError) as err:
        metrics.group_metrics(["a"], ["a"], sensitive_features=None, pos_label="a")
    assert str(err.value) == NEED_SENSITIVE.format(what="group_metrics")


@SETTINGS
@given(case=predictions(), seed=st.integers(0, 2**16))
def test_each_rate_equals_fairlearns_and_sklearns_with_weights(case, seed) -> None:
    """The rates the group frames are built from, against the functions of fairlearn and scikit-learn
    on the same weighted rows (NaN where the denominator has no row, where those return 0)."""
    from fairlearn.metrics import false_negative_rate, false_positive_rate, selection_rate, true_positive_rate

    from strongtree_core.metrics.rates import rate_functions

    pos = case["positive"]
    w = np.random.default_rng(seed).uniform(0.1, 3.0, len(case["y_true"]))
    rates = rate_functions(pos)
    t = (case["y_true"] == pos).astype(int)
    p = (case["y_pred"] == pos).astype(int)
    y, yp = case["y_true"], case["y_pred"]
    nan = float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = {
            "count": float(w.sum()),
            "selection_rate": float(selection_rate(p, p, pos_label=1, sample_weight=w)),
            "tpr": float(true_positive_rate(t, p, pos_label=1, sample_weight=w)) if t.any() else nan,
            "fpr": float(false_positive_rate(t, p, pos_label=1, sample_weight=w)) if (t == 0).any() else nan,
            "fnr": float(false_negative_rate(t, p, pos_label=1, sample_weight=w)) if t.any() else nan,
            "precision": float(precision_score(t, p, sample_weight=w, zero_division=np.nan)) if p.any() else nan,
            "accuracy": float(accuracy_score(y, yp, sample_weight=w)),
        }
    for name, value in expected.items():
        got = rates[name](y, yp, w)
        assert (np.isnan(got) and np.isnan(value)) or abs(got - value) <= 1e-12, (name, got, value)
