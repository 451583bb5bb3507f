"""Careless calls refused or told apart: a positive label that occurs in neither label array,
rows with no group value beside a group spelled "missing" (in every place groups are named),
and the cases where the disparities differ from fairlearn's functions of the same name."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from fairlearn import metrics as fl

from strongtree_core import StrongTreeClassifier, metrics
from strongtree_core.encoding.groups import MISSING_GROUP, NO_VALUE_GROUP, encode_groups, missing_group_name
from strongtree_core.metrics._inputs import POSITIVE_LABEL_ABSENT, POSITIVE_LABEL_SPELLING
from strongtree_core.metrics.group_summary import group_labels, group_summary
from strongtree_core.report.build import ReportInput, build_report

Y = np.array(["yes", "no", "yes", "no", "yes", "no", "no", "yes"], dtype=object)
P = np.array(["yes", "no", "no", "no", "yes", "yes", "no", "yes"], dtype=object)
G = np.array(["a", "a", "a", "a", "b", "b", "b", "b"], dtype=object)
L = np.array(["x", "y", "x", "y", "x", "y", "x", "y"], dtype=object)


def _calls():
    """Every public metric that reads a positive label, as f(pos_label)."""
    kw = dict(sensitive_features=G)
    out = {name: (lambda pos, f=getattr(metrics, name): f(Y, P, pos_label=pos, **kw))
           for name in ("statistical_parity_difference", "statistical_parity_ratio", "predictive_equality_difference",
                        "predictive_equality_ratio", "equal_opportunity_difference", "equal_opportunity_ratio",
                        "equalized_odds_difference", "equalized_odds_ratio", "fairness_report", "group_metrics",
                        "fairness_intervals")}
    for name in ("conditional_statistical_parity_difference", "conditional_statistical_parity_ratio"):
        out[name] = lambda pos, f=getattr(metrics, name): f(Y, P, pos_label=pos, legitimate_features=L, **kw)
    out["fairness_gap"] = lambda pos: metrics.fairness_gap("equal_opportunity", Y, P, pos_label=pos, **kw)
    for name in ("recall", "precision", "specificity", "classification_quality"):
        out[name] = lambda pos, f=getattr(metrics, name): f(Y, P, pos_label=pos)
    return out


CALLS = _calls()


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_positive_label_spelled_otherwise_is_refused_by_every_metric(name):
    with pytest.raises(ValueError) as err:
        CALLS[name]("Yes")
    assert str(err.value) == POSITIVE_LABEL_SPELLING.format(label="Yes", match="yes")
    assert str(err.value) == ("pos_label 'Yes' occurs in neither y_true nor y_pred, which hold 'yes': labels are "
                              "compared exactly, pass pos_label='yes'")
    with pytest.raises(ValueError) as err:
        CALLS[name](" yes")
    assert str(err.value) == POSITIVE_LABEL_SPELLING.format(label=" yes", match="yes")
    with pytest.raises(ValueError) as err:
        CALLS[name]("hired")
    assert str(err.value) == POSITIVE_LABEL_ABSENT.format(label="hired", seen=["no", "yes"])
    assert "whose labels are ['no', 'yes']: pass one of these labels" in str(err.value)
    CALLS[name]("yes")  # the right label is measured


def test_the_reproducer_once_read_every_gap_as_zero():
    """fairness_report(..., pos_label='Yes') on labels 'yes'/'no' gave 0.0 for every gap."""
    with pytest.raises(ValueError, match="pass pos_label='yes'"):
        metrics.fairness_report(Y, P, sensitive_features=G, pos_label="Yes")
    report = metrics.fairness_report(Y, P, sensitive_features=G, pos_label="yes").set_index("notion")
    assert report.loc["statistical_parity", "difference"] == pytest.approx(0.5)  # a: 1/4, b: 3/4


def test_a_positive_label_in_one_array_only_is_measured():
    none_true = np.array(["no"] * 4, dtype=object)
    some_pred = np.array(["yes", "no", "no", "no"], dtype=object)
    g = ["a", "a", "b", "b"]
    assert metrics.statistical_parity_difference(none_true, some_pred, sensitive_features=g, pos_label="yes") == 0.5
    assert metrics.statistical_parity_difference(some_pred, none_true, sensitive_features=g, pos_label="yes") == 0.0
    assert metrics.group_confusion_matrices(none_true, none_true, sensitive_features=g)  # no positive label read


# -- rows with no group value, beside a group spelled "missing" ------------------------------------------------

# "missing" (the text) is always predicted yes, rows with no value never, "f" half the time: merged, the two
# would read 0.5 like "f" (a gap of 0); kept apart, the gap is 1.0.
SENS = pd.Series(["missing", None, "f", np.nan, "missing", "f", None, "missing", "f", "f"], name="sex", dtype=object)
YT = np.array(["yes", "no"] * 5, dtype=object)
YP = np.where(SENS.to_numpy() == "missing", "yes", np.where(SENS.isna(), "no", np.array(["yes", "no"] * 5)))
YP = YP.astype(object)
HELD = {"missing": 3, NO_VALUE_GROUP: 3, "f": 4}


def _by_hand(groups: np.ndarray) -> float:
    rates = [np.mean(YP[groups == g] == "yes") for g in pd.unique(groups)]
    return max(rates) - min(rates)


def test_the_name_of_the_missing_group_is_never_a_present_value():
    assert missing_group_name(["f", "m"]) == MISSING_GROUP == "missing"
    assert missing_group_name(["f", "missing"]) == NO_VALUE_GROUP == "(no value)"
    assert missing_group_name(["missing", "(no value)", "(no value) 2"]) == "(no value) 3"


@pytest.mark.parametrize("form", ["series", "list", "frame"])
def test_the_metrics_keep_missing_values_apart_from_the_value_missing(form):
    sens = {"series": SENS, "list": SENS.tolist(), "frame": SENS.to_frame()}[form]
    table = metrics.group_metrics(YT, YP, sensitive_features=sens, pos_label="yes").set_index("group")
    assert dict(table["count"]) == HELD
    assert table.loc["missing", "selection_rate"] == 1.0 and table.loc[NO_VALUE_GROUP, "selection_rate"] == 0.0
    hand = _by_hand(np.where(SENS.isna(), "none", SENS.to_numpy()).astype(object))
    assert hand == 1.0
    assert metrics.statistical_parity_difference(YT, YP, sensitive_features=sens, pos_label="yes") == hand
    spans = metrics.fairness_intervals(YT, YP, sensitive_features=sens, pos_label="yes", notions=["statistical_parity"])
    assert dict(zip(spans["group"], spans["denominator"])) == {k: float(v) for k, v in HELD.items()}
    assert spans["gap"].iloc[0] == 1.0


def test_several_columns_keep_missing_values_apart_too():
    other = pd.Series(["u"] * 10, name="band")
    frame = pd.concat([SENS, other], axis=1)
    table = metrics.group_metrics(YT, YP, sensitive_features=frame, pos_label="yes")
    assert sorted(table["group"]) == ["sex=(no value) & band=u", "sex=f & band=u", "sex=missing & band=u"]
    assert set(group_labels(frame, ["sex", "band"])) == set(table["group"])


def test_without_a_value_spelled_missing_the_group_is_called_missing():
    sens = SENS.replace("missing", "m")
    table = metrics.group_metrics(YT, YP, sensitive_features=sens, pos_label="yes")
    assert sorted(table["group"]) == ["f", "m", "missing"]
    assert list(encode_groups(sens).levels) == ["f", "m", "missing"]


def test_the_encoding_codes_them_as_two_groups():
    coding = encode_groups(SENS)
    assert coding.levels == ("(no value)", "f", "missing")
    labels = coding.labels()
    assert list(labels[SENS.isna().to_numpy()]) == [NO_VALUE_GROUP] * 3
    assert list(labels[(SENS == "missing").to_numpy()]) == ["missing"] * 3
    assert set(coding.levels) == set(metrics.group_metrics(YT, YP, sensitive_features=SENS, pos_label="yes")["group"])


def test_a_fit_bounds_and_measures_the_two_groups_apart():
    rng = np.random.default_rng(3)
    n = 60
    X = pd.DataFrame({"a": rng.integers(0, 2, n), "b": rng.integers(0, 3, n)})
    y = pd.Series(np.where(X["a"] == 1, "yes", "no"))
    sens = pd.Series(np.where(X["b"] == 0, "missing", "f"), name="sex", dtype=object)
    sens[X["b"] == 2] = None
    clf = StrongTreeClassifier(depth=1, fairness="statistical_parity", fairness_bound=0.2, pos_label="yes",
                               time_limit=10).fit(X, y, sensitive_features=sens)
    check = clf.constraint_checks_[0]
    pred = clf.predict(X)
    measured = metrics.statistical_parity_difference(y, pred, sensitive_features=sens, pos_label="yes")
    assert check["measured"] == pytest.approx(measured) and measured <= 0.2 + 1e-9
    groups = np.where(sens.isna(), "none", sens.to_numpy()).astype(object)
    rates = [np.mean(pred[groups == g] == "yes") for g in ("none", "missing", "f")]
    assert measured == pytest.approx(max(rates) - min(rates))


def test_the_group_summary_names_a_group_once_over_both_parts():
    frame = pd.DataFrame({"sex": SENS, "y": YT})
    train, test = frame.iloc[:2], frame.iloc[2:]  # the training part has "missing" and a row with no value
    summary = group_summary(train, test, target="y", protected=["sex"], pos_label="yes").set_index("group")
    assert dict(summary["rows"]) == HELD
    assert summary.loc[NO_VALUE_GROUP, "train_rows"] == 1 and summary.loc[NO_VALUE_GROUP, "test_rows"] == 2
    only_none = frame[frame["sex"] != "missing"]
    train, test = only_none.iloc[:3], only_none.iloc[3:]
    summary = group_summary(train, test, target="y", protected=["sex"], pos_label="yes").set_index("group")
    assert dict(summary["rows"]) == {"missing": 3, "f": 4}  # no value spelled "missing": the group is "missing"
    # a test part with the text "missing" and a training part with only no-value rows: two groups, one name each
    train, test = frame[frame["sex"].isna()], frame[frame["sex"] == "missing"]
    summary = group_summary(train, test, target="y", protected=["sex"], pos_label="yes").set_index("group")
    assert dict(summary["train_rows"]) == {NO_VALUE_GROUP: 3, "missing": 0}
    assert dict(summary["test_rows"]) == {NO_VALUE_GROUP: 0, "missing": 3}


def test_the_report_and_the_pages_show_the_two_groups():
    from strongtree_studio.page.shown import group_mix

    rng = np.random.default_rng(0)
    n = 80
    x = rng.integers(0, 2, n)
    sex = np.array(["missing", None, "f", "m"] * (n // 4), dtype=object)
    frame = pd.DataFrame({"x": x, "sex": sex, "y": np.where(x == 1, "yes", "no")})
    tree = StrongTreeClassifier(depth=1, time_limit=10).fit(frame[["x"]], frame["y"]).tree_
    train, test = frame.iloc[:60], frame.iloc[60:]
    inp = ReportInput(tree, train, test, "t.csv", pos_label="yes", protected=("sex",),
                      fairness=("statistical_parity",), fairness_bound=0.1)
    html = build_report(inp, engine="builtin")
    from test_report import parse

    page = parse(html)
    groups = {row[0]: row for row in page.tables["groups"][1:]}
    assert set(groups) == {"(no value)", "f", "m", "missing"}
    assert groups["(no value)"][1] == "20" and groups["missing"][1] == "20"
    for part in ("train", "test"):
        rows = page.tables[f"rates-{part}-statistical_parity"][1:]
        assert sorted(r[0] for r in rows) == ["(no value)", "f", "m", "missing"]
    mix = group_mix(tree, frame, ("sex",))
    assert mix[1] == {"(no value)": 20, "f": 20, "m": 20, "missing": 20}


# -- where the disparities differ from fairlearn's functions of the same name -----------------------------------

def _fairlearn(name, y_true, y_pred, groups):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(getattr(fl, name)(np.asarray(y_true) == "yes", np.asarray(y_pred) == "yes",
                                        sensitive_features=groups))


def _ours(name, y_true, y_pred, groups):
    return float(getattr(metrics, name)(y_true, y_pred, sensitive_features=groups, pos_label="yes"))


def test_a_group_with_no_positive_row_is_left_out_where_fairlearn_counts_zero():
    y_true = ["yes", "yes", "yes", "yes", "no", "no"]
    y_pred = ["yes", "yes", "yes", "no", "no", "yes"]
    groups = ["a", "a", "b", "b", "c", "c"]  # true positive rates: a 1.0, b 0.5, c undefined
    assert _ours("equal_opportunity_difference", y_true, y_pred, groups) == 0.5
    assert _fairlearn("equal_opportunity_difference", y_true, y_pred, groups) == 1.0
    assert _ours("equal_opportunity_ratio", y_true, y_pred, groups) == 0.5
    assert _fairlearn("equal_opportunity_ratio", y_true, y_pred, groups) == 0.0
    # the false positive rates: a and b undefined, c 1/2, so equalized odds is the true positive rates' gap
    assert _ours("equalized_odds_difference", y_true, y_pred, groups) == 0.5
    assert _fairlearn("equalized_odds_difference", y_true, y_pred, groups) == 1.0
    assert _ours("equalized_odds_ratio", y_true, y_pred, groups) == 0.5
    assert _fairlearn("equalized_odds_ratio", y_true, y_pred, groups) == 0.0


def test_a_group_with_no_negative_row_is_left_out_of_predictive_equality():
    y_true = ["no", "no", "no", "no", "yes", "yes"]
    y_pred = ["yes", "no", "yes", "yes", "yes", "no"]
    groups = ["a", "a", "b", "b", "c", "c"]  # false positive rates: a 0.5, b 1.0, c undefined
    assert _ours("predictive_equality_difference", y_true, y_pred, groups) == 0.5
    assert _fairlearn("false_positive_rate_difference", y_true, y_pred, groups) == 1.0  # c counts as 0 there
    assert _ours("predictive_equality_ratio", y_true, y_pred, groups) == 0.5
    assert _fairlearn("false_positive_rate_ratio", y_true, y_pred, groups) == 0.0


PAIRS = [("statistical_parity_difference", "demographic_parity_difference", 0.0),
         ("statistical_parity_ratio", "demographic_parity_ratio", 1.0),
         ("predictive_equality_difference", "false_positive_rate_difference", 0.0),
         ("predictive_equality_ratio", "false_positive_rate_ratio", 1.0),
         ("equal_opportunity_difference", "equal_opportunity_difference", 0.0),
         ("equal_opportunity_ratio", "equal_opportunity_ratio", 1.0),
         ("equalized_odds_difference", "equalized_odds_difference", 0.0),
         ("equalized_odds_ratio", "equalized_odds_ratio", 1.0)]


@pytest.mark.parametrize("ours, theirs, single", PAIRS)
def test_one_group_compares_nothing_where_fairlearn_says_no_disparity(ours, theirs, single):
    y_true, y_pred, groups = ["yes", "no", "yes", "no"], ["yes", "yes", "no", "no"], ["a"] * 4
    assert np.isnan(_ours(ours, y_true, y_pred, groups))
    assert _fairlearn(theirs, y_true, y_pred, groups) == single
    # with two groups whose every rate is defined, the same number
    two = ["a", "a", "b", "b", "a", "b", "a", "b"]
    y_true, y_pred = ["yes", "no", "yes", "no", "yes", "no", "no", "yes"], ["yes", "no", "no", "no", "yes", "yes", "yes", "yes"]
    assert _ours(ours, y_true, y_pred, two) == pytest.approx(_fairlearn(theirs, y_true, y_pred, two))


def test_equalized_odds_ratio_leaves_out_a_ratio_of_zero_over_zero():
    groups = ["a", "a", "b", "b"]
    # nobody predicted positive: both ratios are 0/0 -> NaN here and in fairlearn
    assert np.isnan(_ours("equalized_odds_ratio", ["yes", "no"] * 2, ["no"] * 4, groups))
    # no true positive anywhere (TPR ratio 0/0), false positive rates a 1.0, b 0.0: here 0.0, fairlearn NaN
    y_true, y_pred = ["yes", "no", "yes", "no"], ["no", "yes", "no", "no"]
    assert _ours("equalized_odds_ratio", y_true, y_pred, groups) == 0.0
    assert np.isnan(_fairlearn("equalized_odds_ratio", y_true, y_pred, groups))
    assert np.isnan(_ours("equal_opportunity_ratio", y_true, y_pred, groups))
    assert np.isnan(_fairlearn("equal_opportunity_ratio", y_true, y_pred, groups))
    # no false positive anywhere (FPR ratio 0/0), true positive rates a 1.0, b 0.0: 0.0 in both
    y_true, y_pred = ["yes", "no", "yes", "no"], ["yes", "no", "no", "no"]
    assert _ours("equalized_odds_ratio", y_true, y_pred, groups) == 0.0
    assert _fairlearn("equalized_odds_ratio", y_true, y_pred, groups) == 0.0


def test_a_part_with_no_positive_row_says_there_is_nothing_to_compare():
    """The report, the pages and the sweep measure parts of the rows; a part with no positive row, true or
    predicted, shows "nothing to compare" instead of being refused."""
    from strongtree_studio.data.choices import Roles
    from strongtree_studio.data.evaluation import _split_metrics

    n = 60
    x = np.arange(n) % 2
    frame = pd.DataFrame({"x": x, "sex": np.where(np.arange(n) % 3 == 0, "f", "m"), "y": np.where(x == 1, "yes", "no")})
    tree = StrongTreeClassifier(depth=1, time_limit=10).fit(frame[["x"]], frame["y"]).tree_
    test = frame[frame["x"] == 0]  # every row "no", and the tree predicts "no" on each
    assert not metrics.positive_present(test["y"], tree.predict(test), "yes")
    inp = ReportInput(tree, frame, test, "t.csv", pos_label="yes", protected=("sex",),
                      fairness=("statistical_parity",), fairness_bound=0.1)
    html = build_report(inp, engine="builtin")
    assert "No row here is of the positive class yes or predicted so: no rate to compare." in html
    assert 'data-part="train"' in html and 'data-part="test"' not in html
    roles = Roles("y", "yes", ("sex",), ())
    measured = _split_metrics(test, tree.predict(test), roles, ["statistical_parity"])
    assert "gaps" not in measured and measured["n"] == len(test)
    assert "gaps" in _split_metrics(frame, tree.predict(frame), roles, ["statistical_parity"])
