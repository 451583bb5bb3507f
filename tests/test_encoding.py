"""Binarization of raw tables (strongtree_core.encoding)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strongtree_core.encoding import EncodingError, EncodingPlan, TableEncoder, collapse_patterns
from strongtree_core.encoding import errors
from strongtree_core.encoding.features import readable_cut

DATASETS = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets"
needs_data = pytest.mark.skipif(
    not (DATASETS / "categorical").is_dir(), reason=f"benchmark data not found at {DATASETS}"
)


def mixed_table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [20.0, 25.0, 30.0, 35.0, 40.0, 45.0, 50.0, 55.0, 60.0, np.nan, 62.5],
            "priors_count": [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2],
            "race": [
                "Caucasian", "Hispanic", None, "African-American", "Caucasian", "Other",
                "Hispanic", "Caucasian", "African-American", "Other", "Caucasian",
            ],
            "smoker": [True, False, False, True, False, False, True, False, False, True, False],
            "sex": ["F", "M", "F", "M", "F", "M", "F", "M", "F", "M", "F"],
            "flag": [0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 0],
        }
    )


MIXED_LABELS = (
    # age: 10 finite values; quantiles 29, 38, 47, 56 fall between 25|30, 35|40,
    # 45|50, 55|60 and round to the whole numbers nearest the midpoints.
    "age ≤ 28", "age ≤ 38", "age ≤ 48", "age ≤ 58", "age missing",
    "priors_count ≤ 0", "priors_count ≤ 1", "priors_count ≤ 2",
    "race = African-American", "race = Caucasian", "race = Hispanic", "race = Other", "race missing",
    "smoker",
    "sex = M",
    "flag",
)


def test_mixed_table_labels_kinds_and_values():
    plan = TableEncoder().fit(mixed_table())
    assert plan.labels == MIXED_LABELS
    assert [f.negated_label for f in plan.features[:2]] == ["age > 28", "age > 38"]
    assert plan.features[9].negated_label == "race ≠ Caucasian"
    assert plan.features[13].negated_label == "not smoker"
    X = plan.transform(mixed_table())
    assert X.dtype == np.uint8 and X.shape == (11, 16)
    age = [[1, 1, 1, 1, 0], [1, 1, 1, 1, 0], [0, 1, 1, 1, 0], [0, 1, 1, 1, 0], [0, 0, 1, 1, 0],
           [0, 0, 1, 1, 0], [0, 0, 0, 1, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 1],
           [0, 0, 0, 0, 0]]
    priors = [[1, 1, 1], [0, 1, 1], [0, 0, 1], [0, 0, 0], [1, 1, 1], [0, 1, 1], [0, 0, 1],
              [0, 0, 0], [1, 1, 1], [0, 1, 1], [0, 0, 1]]
    race = [[0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 1], [1, 0, 0, 0, 0], [0, 1, 0, 0, 0],
            [0, 0, 0, 1, 0], [0, 0, 1, 0, 0], [0, 1, 0, 0, 0], [1, 0, 0, 0, 0], [0, 0, 0, 1, 0],
            [0, 1, 0, 0, 0]]
    smoker = [[1], [0], [0], [1], [0], [0], [1], [0], [0], [1], [0]]
    sex = [[0], [1], [0], [1], [0], [1], [0], [1], [0], [1], [0]]
    flag = [[0], [1], [1], [0], [0], [1], [0], [1], [1], [0], [0]]
    expected = np.hstack([np.array(b) for b in (age, priors, race, smoker, sex, flag)])
    np.testing.assert_array_equal(X, expected)


def test_summary_one_row_per_column():
    summary = TableEncoder().fit(mixed_table()).summary()
    assert list(summary.columns) == ["column", "kind", "n_binary", "thresholds / levels", "n_missing"]
    assert summary["column"].tolist() == ["age", "priors_count", "race", "smoker", "sex", "flag"]
    assert summary["kind"].tolist() == ["continuous", "ordinal", "categorical", "binary", "categorical", "binary"]
    assert summary["n_binary"].tolist() == [5, 3, 5, 1, 1, 1]
    assert summary["n_missing"].tolist() == [1, 0, 1, 0, 0, 0]
    assert summary["thresholds / levels"].tolist()[:3] == [
        "28, 38, 48, 58", "0, 1, 2", "African-American, Caucasian, Hispanic, Other"
    ]


def test_onehot_buckets_one_bucket_per_present_row():
    plan = TableEncoder(continuous="onehot_buckets").fit(mixed_table())
    assert plan.labels[:6] == (
        "age ≤ 28", "age in (28, 38]", "age in (38, 48]", "age in (48, 58]", "age > 58", "age missing"
    )
    X = plan.transform(mixed_table())
    assert X[:, :6].sum(axis=1).tolist() == [1] * 11
    assert X[:, 1].tolist() == [0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0]


def test_more_buckets_give_more_thresholds():
    table = pd.DataFrame({"x": np.arange(1.0, 101.0)})
    # quartiles 25.75, 50.5, 75.25 fall between 25|26, 50|51, 75|76
    assert TableEncoder(n_buckets=4).fit(table).labels == ("x ≤ 25.5", "x ≤ 50.5", "x ≤ 75.5")
    assert len(TableEncoder(n_buckets=10).fit(table).features) == 9


def test_repeated_values_remove_duplicate_thresholds():
    table = pd.DataFrame({"gain": [0.0] * 60 + [100.0, 250.0, 1000.0, 4000.0] * 10})
    plan = TableEncoder().fit(table, kinds={"gain": "continuous"})
    # quantiles 0, 0, 40 and 400: 0|100 (three times) and 250|1000 -> two thresholds
    assert plan.labels == ("gain ≤ 50", "gain ≤ 600")


def test_thresholds_read_in_user_terms_not_midpoints_only():
    assert readable_cut(35.0, 36.0) == 35.5
    assert readable_cut(30.0, 50.0) == 40.0
    assert readable_cut(29.0, 40.0) == 34.0
    assert readable_cut(0.12, 0.9) == 0.5
    assert readable_cut(12000.0, 15000.0) == 14000.0


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_subnormal=False),
        min_size=1,
        max_size=40,
    ),
    st.integers(min_value=2, max_value=8),
)
def test_thermometer_bits_are_the_threshold_tests(values, n_buckets):
    table = pd.DataFrame({"v": values})
    table["v"] = table["v"].astype(float)
    plan = TableEncoder(n_buckets=n_buckets).fit(table, kinds={"v": "continuous"})
    cuts = [f.threshold for f in plan.features]
    assert cuts == sorted(set(cuts)) and len(cuts) <= n_buckets - 1
    distinct = np.unique(values)
    for cut in cuts:  # separates the observed values
        assert distinct.min() <= cut < distinct.max()
    X = plan.transform(table)
    expected = np.array([[v <= c for c in cuts] for v in values], dtype=np.uint8).reshape(len(values), -1)
    np.testing.assert_array_equal(X, expected)


def test_transform_matches_by_name_and_ignores_extra_columns():
    table = mixed_table()
    plan = TableEncoder().fit(table)
    shuffled = table[["flag", "race", "age", "sex", "smoker", "priors_count"]].assign(extra=1)
    np.testing.assert_array_equal(plan.transform(shuffled), plan.transform(table))


def test_missing_columns_named_in_error():
    plan = TableEncoder().fit(mixed_table())
    with pytest.raises(EncodingError) as err:
        plan.transform(mixed_table().drop(columns=["race", "flag"]))
    assert str(err.value) == errors.MISSING_COLUMNS.format(n=2, missing="'race', 'flag'")
    assert str(err.value).startswith("The table lacks 2 column(s) the encoding was fitted on: 'race', 'flag'.")


def test_unseen_category_and_new_missing_values_are_all_zero():
    plan = TableEncoder().fit(mixed_table())
    new = mixed_table().iloc[:2].copy()
    new["race"] = ["Martian", "Hispanic"]
    new["sex"] = [None, "M"]
    X = plan.transform(new)
    race = [plan.labels.index(l) for l in plan.labels if l.startswith("race")]
    assert X[0, race].tolist() == [0, 0, 0, 0, 0]
    assert X[1, race].tolist() == [0, 0, 1, 0, 0]
    assert X[:, plan.labels.index("sex = M")].tolist() == [0, 1]


def test_numbers_given_as_text_are_read_and_separators_refused():
    plan = TableEncoder().fit(mixed_table())
    as_text = mixed_table().astype({"age": str, "priors_count": str})
    as_text.loc[9, "age"] = None
    np.testing.assert_array_equal(plan.transform(as_text), plan.transform(mixed_table()))
    with_commas = mixed_table().astype({"age": object})
    with_commas.loc[0, "age"] = "1,020"
    with pytest.raises(EncodingError) as err:
        plan.transform(with_commas)
    assert str(err.value) == errors.NUMERIC_AS_TEXT.format(column="age", example="1,020")
    with_words = mixed_table().astype({"age": object})
    with_words.loc[0, "age"] = "old"
    with pytest.raises(EncodingError) as err:
        plan.transform(with_words)
    assert str(err.value) == errors.NOT_NUMERIC.format(column="age", examples="'old'")


def test_fit_refuses_numbers_with_thousands_separators():
    table = pd.DataFrame({"income": ["1,200", "15,000", "800"], "age": [1.5, 2.5, 3.5]})
    with pytest.raises(EncodingError) as err:
        TableEncoder().fit(table)
    assert str(err.value) == errors.NUMERIC_AS_TEXT.format(column="income", example="1,200")


def test_numbers_written_as_text_fit_as_numbers():
    table = pd.DataFrame({"n": ["1", "2", "3", "2"]})
    assert TableEncoder().fit(table).labels == ("n ≤ 1", "n ≤ 2")


def test_yes_no_column_refuses_other_values():
    plan = TableEncoder().fit(mixed_table())
    bad = mixed_table().assign(flag=[2] + [0] * 10)
    with pytest.raises(EncodingError) as err:
        plan.transform(bad)
    assert str(err.value) == errors.NOT_BINARY.format(column="flag", examples="2")


def test_exclude_and_single_column():
    plan = TableEncoder().fit(mixed_table(), exclude=["race", "sex"])
    assert plan.source_columns == ("age", "priors_count", "smoker", "flag")
    assert plan.excluded == ("race", "sex")
    single = TableEncoder().fit(mixed_table()[["smoker"]])
    assert single.labels == ("smoker",)
    np.testing.assert_array_equal(single.transform(mixed_table())[:, 0], mixed_table()["smoker"].astype(int))


def test_kinds_override_makes_integer_codes_categorical():
    table = pd.DataFrame({"race": [1, 2, 3, 4, 2, 1]})
    assert TableEncoder().fit(table).labels == ("race ≤ 1", "race ≤ 2", "race ≤ 3")
    plan = TableEncoder().fit(table, kinds={"race": "categorical"})
    assert plan.labels == ("race = 1", "race = 2", "race = 3", "race = 4")
    # text codes at prediction time match the integer levels
    X = plan.transform(pd.DataFrame({"race": ["2", "4"]}))
    assert X.tolist() == [[0, 1, 0, 0], [0, 0, 0, 1]]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: TableEncoder().fit(mixed_table().iloc[:0]), errors.EMPTY_TABLE),
        (
            lambda: TableEncoder().fit(mixed_table()[["race", "sex"]], exclude=["race", "sex"]),
            errors.NO_FEATURES.format(columns="'race', 'sex'", excluded="'race', 'sex'"),
        ),
        (
            lambda: TableEncoder().fit(mixed_table(), exclude=["gender"]),
            errors.UNKNOWN_EXCLUDE.format(
                names="'gender'", columns="'age', 'priors_count', 'race', 'smoker', 'sex', 'flag'"
            ),
        ),
        (lambda: TableEncoder().fit(np.zeros((3, 2))), errors.NOT_A_DATAFRAME.format(got="ndarray")),
        (
            lambda: TableEncoder().fit(pd.DataFrame([[1, 2]], columns=["a", "a"])),
            errors.DUPLICATE_COLUMNS.format(names="'a'"),
        ),
        (lambda: TableEncoder(n_buckets=1), errors.BAD_N_BUCKETS.format(value=1)),
        (lambda: TableEncoder(continuous="linear"), errors.BAD_CONTINUOUS.format(value="linear")),
        (lambda: TableEncoder(max_ordinal_levels=-1), errors.BAD_MAX_ORDINAL.format(value=-1)),
        (
            lambda: TableEncoder().fit(mixed_table(), kinds={"age": "numeric"}),
            errors.UNKNOWN_KIND.format(kind="numeric", column="age"),
        ),
        (
            lambda: TableEncoder().fit(mixed_table(), kinds={"aeg": "ordinal"}),
            errors.UNKNOWN_KIND_COLUMN.format(
                names="'aeg'", columns="'age', 'priors_count', 'race', 'smoker', 'sex', 'flag'"
            ),
        ),
    ],
)
def test_bad_input_messages(call, message):
    with pytest.raises(EncodingError) as err:
        call()
    assert str(err.value) == message


@pytest.mark.parametrize("continuous", ["thermometer", "onehot_buckets"])
def test_plan_round_trips_through_json(continuous):
    table = mixed_table().rename(columns={"race": 'a"b\\c<d>'})
    plan = TableEncoder(n_buckets=3, continuous=continuous).fit(table, exclude=["flag"])
    back = EncodingPlan.from_dict(json.loads(json.dumps(plan.to_dict(), allow_nan=False)))
    assert back == plan
    assert back.features == plan.features
    np.testing.assert_array_equal(back.transform(table), plan.transform(table))


def test_stored_plan_is_checked():
    with pytest.raises(EncodingError) as err:
        EncodingPlan.from_dict({"columns": []})
    assert str(err.value) == errors.BAD_PLAN.format(reason="'format' is not 'strongtree.encoding_plan'")


@needs_data
def test_binary_table_passes_through_unchanged():
    data = pd.read_csv(DATASETS / "categorical" / "monk1.csv")
    features = data.drop(columns=["target"])
    plan = TableEncoder().fit(features)
    assert plan.labels == tuple(features.columns)
    assert plan.n_binary == features.shape[1]
    np.testing.assert_array_equal(plan.transform(features), features.values)
    # a training subset where some columns are constant keeps one column each
    subset = features.iloc[:3]
    assert TableEncoder().fit(subset).labels == tuple(features.columns)


@needs_data
def test_car_evaluation_collapses_into_fewer_patterns():
    data = pd.read_csv(DATASETS / "categorical" / "car-evaluation.csv")
    features = data.drop(columns=["target"])
    X = TableEncoder().fit(features).transform(features)
    y = pd.factorize(data["target"], sort=True)[0]
    patterns = collapse_patterns(X, y, n_classes=4)
    n_distinct_rows = len(features.drop_duplicates())
    assert n_distinct_rows == 1728 - 576  # the manifest's 576 duplicated feature rows
    assert patterns.n_rows == 1728 and patterns.weight.sum() == 1728
    assert patterns.n_patterns == len(data.drop_duplicates())
    assert n_distinct_rows <= patterns.n_patterns < 1728
    np.testing.assert_array_equal(patterns.X[patterns.row_to_pattern], X)
    np.testing.assert_array_equal(patterns.y[patterns.row_to_pattern], y)


def test_every_distinct_value_is_its_own_group():
    from strongtree_core.encoding.groups import encode_groups

    ages = pd.Series([20.0, 21.0, 22.0, np.nan, 20.0, 35.5] + list(range(40, 55)), name="age")
    coding = encode_groups(ages)
    assert coding.n_levels == 20  # 19 distinct numbers and "missing": nothing bucketed
    assert set(coding.levels) >= {"20", "21", "35.5", "missing"}
    assert coding.codes[0] == coding.codes[4] and coding.labels()[3] == "missing"
    bands = pd.cut(ages, bins=[0, 30, 60])
    assert encode_groups(bands).levels == ("(0, 30]", "(30, 60]", "missing")
    flags = encode_groups(pd.Series([True, False, True], name="f"))
    assert flags.levels == ("False", "True") and flags.codes.tolist() == [1, 0, 1]


def test_group_limit_and_combinations():
    from strongtree_core.encoding import groups

    ok = groups.encode_groups(pd.Series(range(groups.MAX_GROUPS), name="g"))
    assert ok.n_levels == groups.MAX_GROUPS
    with pytest.raises(EncodingError) as info:
        groups.encode_groups(pd.Series(range(groups.MAX_GROUPS + 1), name="g"), role="legitimate")
    assert str(info.value) == groups.TOO_MANY_GROUPS.format(
        role="legitimate factor", column="g", n=groups.MAX_GROUPS + 1, argument="legitimate_features"
    )
    both = groups.encode_groups(pd.DataFrame({"race": ["a", "b", "a"], "sex": ["F", "F", "M"]}))
    assert both.levels == ("race=a & sex=F", "race=a & sex=M", "race=b & sex=F")
    assert both.name == "race & sex"


def test_wide_zero_one_columns_read_in_bulk_encode_as_one_column_at_a_time(monkeypatch):
    # The bulk reader of 0/1 columns must give exactly the general path's plan and matrix,
    # and leave every other column (missing values, a 2, booleans, text) to it.
    from strongtree_core.encoding import binarize
    from strongtree_core.encoding.columns import fit_column

    rng = np.random.default_rng(3)
    n = 40
    df = pd.DataFrame({f"c{j}": rng.integers(0, 2, n) for j in range(1200)})  # more than one chunk
    df["as_float"] = rng.integers(0, 2, n).astype(float)
    df["with_nan"] = np.where(rng.random(n) < 0.2, np.nan, rng.integers(0, 2, n))
    df["with_two"] = rng.integers(0, 3, n)
    df["nullable"] = pd.array(np.where(rng.random(n) < 0.2, None, rng.integers(0, 2, n)), dtype="Int64")
    df["flag"] = rng.random(n) < 0.5
    df["word"] = rng.choice(["yes", "no"], n)
    plan = TableEncoder().fit(df)
    expected = tuple(
        fit_column(df[c], c, n_buckets=5, coding="thermometer", max_ordinal_levels=10) for c in df.columns
    )
    assert plan.columns == expected
    monkeypatch.setattr(binarize, "_plain_flags", lambda frame, names: {})
    general = EncodingPlan(columns=expected).transform(df)
    monkeypatch.undo()
    assert np.array_equal(plan.transform(df), general)
    # At predict time a value other than 0/1 still gets the general path's message.
    bad = df.copy()
    bad.loc[0, "c7"] = 5
    with pytest.raises(EncodingError) as err:
        plan.transform(bad)
    assert str(err.value) == errors.NOT_BINARY.format(column="c7", examples="5")


@settings(deadline=None, max_examples=300)
@given(values=st.lists(st.one_of(st.integers(-3, 12).map(float), st.sampled_from([0.0, 1.0, 0.5, -2.25]),
                                 st.just(float("inf")), st.just(float("-inf"))), max_size=30),
       levels=st.sampled_from([0, 3, 10]))
def test_a_columns_kind_follows_its_definition_on_the_sorted_distinct_values(values, levels):
    """0/1 when every value is 0 or 1 (none infinite), ordinal when every finite value is a whole
    number and there are at most ``levels`` of them, else continuous: read off ``np.unique``."""
    from strongtree_core.encoding.columns import infer_kind

    number = np.array(values, dtype=float)
    distinct = np.unique(number[np.isfinite(number)])
    if np.isin(distinct, (0.0, 1.0)).all() and np.isfinite(number).all():
        expected = "binary"
    elif np.all(distinct == np.round(distinct)) and distinct.size <= levels:
        expected = "ordinal"
    else:
        expected = "continuous"
    assert infer_kind(pd.Series(number), "x", levels) == expected
