"""Intervals of rates, differences and gaps: published values, exact coverage where it can be
enumerated, simulated coverage on populations whose rates are known, and the report's rates
recomputed from predictions by plain counting."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

from strongtree_core.metrics import fairness_intervals
from strongtree_core.metrics.gap_intervals import INTERVAL_COLUMNS, SMALL_N
from strongtree_core.metrics.intervals import (
    BAD_CONFIDENCE,
    BAD_INTERVAL_METHOD,
    absolute_interval,
    clopper_pearson_interval,
    difference_bounds_exact,
    difference_interval,
    gap_interval,
    gap_interval_many,
    proportion_interval,
    wilson_interval,
)

# -- published values ------------------------------------------------------------


def test_wilson_and_clopper_pearson_match_published_values():
    low, high = wilson_interval([0, 5], [10, 10], 0.95)
    assert low[0] == 0.0 and high[0] == pytest.approx(0.2775, abs=1e-4)  # Newcombe (1998), Table I
    assert (low[1], high[1]) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    low, high = clopper_pearson_interval([0, 5, 10], [10, 10, 10], 0.95)
    assert (low[0], high[0]) == pytest.approx((0.0, 0.3085), abs=1e-4)
    assert (low[1], high[1]) == pytest.approx((0.1871, 0.8129), abs=1e-4)
    assert (low[2], high[2]) == pytest.approx((0.6915, 1.0), abs=1e-4)


def test_newcombe_hybrid_score_matches_newcombe_1998_method_10():
    # Newcombe (1998), Table II, example (a): 56/70 - 48/80, method 10: 0.0524 to 0.3339.
    low, high = difference_interval(56, 70, 48, 80, 0.95)
    assert (float(low), float(high)) == pytest.approx((0.0524, 0.3339), abs=1e-4)
    # example (e): 5/56 - 0/29 (one rate exactly 0), method 10: -0.0381 to 0.1926
    low, high = difference_interval(5, 56, 0, 29, 0.95)
    assert (float(low), float(high)) == pytest.approx((-0.0381, 0.1926), abs=1e-4)


def test_empty_denominator_gives_nan_and_bad_arguments_are_refused_with_their_message():
    low, high = wilson_interval(0, 0)
    assert np.isnan(low) and np.isnan(high)
    with pytest.raises(ValueError) as err:
        wilson_interval(1, 10, confidence=1.0)
    assert str(err.value) == BAD_CONFIDENCE.format(value=1.0)
    with pytest.raises(ValueError) as err:
        proportion_interval(1, 10, method="jeffreys")
    assert str(err.value) == BAD_INTERVAL_METHOD.format(method="jeffreys")
    with pytest.raises(ValueError) as err:
        wilson_interval(11, 10)
    assert str(err.value) == "counts must satisfy 0 <= k <= n: got k=11.0, n=10.0"


def test_absolute_interval():
    a, b = absolute_interval([-0.1, 0.02, -0.3], [0.05, 0.07, -0.2])
    assert a.tolist() == [0.0, 0.02, 0.2] and b.tolist() == pytest.approx([0.1, 0.07, 0.3])


# -- exact coverage (enumerated over every outcome, no Monte Carlo) --------------

P_GRID = np.linspace(0.001, 0.999, 499)


def _exact_coverage(n: int, confidence: float, method: str) -> np.ndarray:
    k = np.arange(n + 1)
    low, high = proportion_interval(k, np.full(k.shape, n), confidence, method)
    pmf = binom.pmf(k[None, :], n, P_GRID[:, None])
    inside = (low[None, :] <= P_GRID[:, None]) & (P_GRID[:, None] <= high[None, :])
    return (inside * pmf).sum(axis=1)


@pytest.mark.parametrize("n", [5, 12, 40, 200, 1000])
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_clopper_pearson_covers_at_least_nominally_for_every_rate(n, confidence):
    assert _exact_coverage(n, confidence, "exact").min() >= confidence - 1e-9


@pytest.mark.parametrize("n", [12, 40, 200, 1000])
def test_wilson_covers_nominally_on_average_over_the_rate(n):
    # Wilson is approximate: its coverage oscillates around nominal and dips near p = 0 or 1
    # (Brown, Cai and DasGupta 2001); averaged over p it stays within half a point.
    coverage = _exact_coverage(n, 0.95, "wilson")
    assert coverage.mean() >= 0.945
    assert coverage.min() >= 0.83  # the known worst dips, for the record


@pytest.mark.parametrize("n_a,n_b", [(8, 12), (25, 40), (60, 30)])
def test_exact_difference_bounds_hold_with_probability_at_least_one_minus_alpha(n_a, n_b):
    alpha = 0.1
    k_a, k_b = np.meshgrid(np.arange(n_a + 1), np.arange(n_b + 1), indexing="ij")
    lower, upper = difference_bounds_exact(k_a, np.full(k_a.shape, n_a), k_b, np.full(k_b.shape, n_b), alpha)
    for p_a, p_b in itertools.product([0.0, 0.03, 0.3, 0.5, 0.8, 0.99, 1.0], repeat=2):
        prob = np.outer(binom.pmf(np.arange(n_a + 1), n_a, p_a), binom.pmf(np.arange(n_b + 1), n_b, p_b))
        d = p_a - p_b
        assert prob[upper < d - 1e-12].sum() <= alpha + 1e-9
        assert prob[lower > d + 1e-12].sum() <= alpha + 1e-9


# -- simulated coverage of the gap, populations with known rates -----------------

#: (rates per cohort and group, rows per cohort and group); gaps, sizes and extremes vary.
POPULATIONS = {
    "2 groups, small, equal rates": ([[0.4, 0.4]], [[25, 40]]),
    "2 groups, small, near 0": ([[0.02, 0.05]], [[30, 25]]),
    "2 groups, small, near 1": ([[0.97, 0.99]], [[40, 30]]),
    "2 groups, large, gap 5 pp": ([[0.20, 0.25]], [[2400, 1200]]),
    "2 groups, large, equal near 0": ([[0.01, 0.01]], [[2400, 1200]]),
    "2 groups, TPR and FPR": ([[0.55, 0.50], [0.08, 0.05]], [[600, 300], [1800, 900]]),
    "4 groups, small, mixed": ([[0.1, 0.15, 0.3, 0.12]], [[20, 50, 35, 100]]),
    "4 groups, large, TPR and FPR": ([[0.6, 0.62, 0.55, 0.6], [0.1, 0.1, 0.12, 0.09]],
                                     [[300, 800, 150, 1000], [900, 2400, 450, 3000]]),
    "4 groups, all 0": ([[0.0, 0.0, 0.0, 0.0]], [[20, 30, 40, 50]]),
    "4 groups, rare": ([[0.01, 0.02, 0.005, 0.03]], [[200, 100, 400, 80]]),
}


def simulated_gap_coverage(rates, sizes, draws: int, confidence: float, method: str, seed: int) -> float:
    """Share of draws whose interval holds the population gap; binomial draws of every count at once."""
    rng = np.random.default_rng(seed)
    rates, sizes = np.asarray(rates, dtype=float), np.asarray(sizes)
    k = rng.binomial(sizes[None], rates[None], size=(draws,) + rates.shape)
    pairs = [(c, a, b) for c in range(rates.shape[0]) for a, b in itertools.combinations(range(rates.shape[1]), 2)]
    ka = np.stack([k[:, c, a] for c, a, _ in pairs], axis=1)
    kb = np.stack([k[:, c, b] for c, _, b in pairs], axis=1)
    na = np.broadcast_to([sizes[c, a] for c, a, _ in pairs], ka.shape)
    nb = np.broadcast_to([sizes[c, b] for c, _, b in pairs], kb.shape)
    truth = max(abs(rates[c, a] - rates[c, b]) for c, a, b in pairs)
    _, low, high = gap_interval_many(ka, na, kb, nb, confidence, method)
    return float(((low <= truth) & (truth <= high)).mean())


@pytest.mark.parametrize("name", list(POPULATIONS))
@pytest.mark.parametrize("confidence", [0.9, 0.95])
@pytest.mark.parametrize("method", ["wilson", "exact"])
def test_gap_interval_covers_the_population_gap(name, confidence, method):
    rates, sizes = POPULATIONS[name]
    draws = 20_000 if len(rates[0]) == 2 else 6_000
    coverage = simulated_gap_coverage(rates, sizes, draws, confidence, method, seed=17)
    monte_carlo_error = 3 * np.sqrt(confidence * (1 - confidence) / draws)
    assert coverage >= confidence - monte_carlo_error, (name, coverage)


def test_gap_interval_of_one_table_agrees_with_the_vectorised_form():
    ka, na, kb, nb = [30, 5], [100, 50], [20, 9], [80, 40]
    one = gap_interval(ka, na, kb, nb, 0.9)
    gap, low, high = gap_interval_many(np.array([ka]), np.array([na]), np.array([kb]), np.array([nb]), 0.9)
    assert (one.gap, one.low, one.high) == pytest.approx((gap[0], low[0], high[0]))
    assert one.n_differences == 2
    assert one.gap == pytest.approx(max(abs(30 / 100 - 20 / 80), abs(5 / 50 - 9 / 40)))
    # each difference at level 1 - 0.1/2: the gap's upper end is the larger |end| of the two
    lows, highs = difference_interval(ka, na, kb, nb, 0.95)
    assert one.high == pytest.approx(np.abs(np.concatenate([lows, highs])).max())


# -- the report, recomputed by counting --------------------------------------------


def _table(seed: int = 3, n: int = 400):
    rng = np.random.default_rng(seed)
    y = rng.choice(["no", "yes"], n, p=[0.6, 0.4])
    pred = np.where(rng.random(n) < 0.7, y, rng.choice(["no", "yes"], n))
    group = rng.choice(["f", "m", "x"], n, p=[0.45, 0.5, 0.05])
    legit = rng.choice(["low", "high"], n)
    return y, pred, group, legit


def test_report_rates_and_gaps_recomputed_by_counting():
    y, pred, group, legit = _table()
    table = fairness_intervals(y, pred, sensitive_features=group, legitimate_features=legit,
                               pos_label="yes", confidence=0.9)
    assert list(table.columns) == list(INTERVAL_COLUMNS)
    cohorts = {
        "statistical_parity": [("all rows", np.ones(len(y), bool))],
        "predictive_equality": [("rows outside the positive class", y != "yes")],
        "equal_opportunity": [("rows of the positive class", y == "yes")],
        "equalized_odds": [("rows of the positive class", y == "yes"), ("rows outside the positive class", y != "yes")],
        "conditional_statistical_parity": [(f"legitimate level {v!r}", legit == v) for v in ("high", "low")],
    }
    assert set(table["notion"]) == set(cohorts)
    for notion, parts in cohorts.items():
        rows = table[table["notion"] == notion]
        gap = 0.0
        for label, mask in parts:
            values = {}
            for g in ("f", "m", "x"):
                members = mask & (group == g)
                hits = int(np.sum(members & (pred == "yes")))
                line = rows[(rows["cohort"] == label) & (rows["group"] == g)]
                assert len(line) == 1
                assert line["denominator"].iloc[0] == members.sum() and line["positives"].iloc[0] == hits
                assert line["value"].iloc[0] == pytest.approx(hits / members.sum())
                low, high = wilson_interval(hits, members.sum(), 0.9)
                assert (line["low"].iloc[0], line["high"].iloc[0]) == pytest.approx((float(low), float(high)))
                assert line["small"].iloc[0] == (members.sum() < SMALL_N)  # rows, not outcomes: 0 of 2,371 is precise
                values[g] = hits / members.sum()
            gap = max(gap, max(values.values()) - min(values.values()))
        assert rows["gap"].iloc[0] == pytest.approx(gap)
        assert rows["gap_low"].iloc[0] <= gap <= rows["gap_high"].iloc[0]
        assert rows["n_differences"].iloc[0] == 3 * len(parts)
    # the small group "x" (about 20 rows) is flagged
    assert table[table["group"] == "x"]["small"].all()


def test_report_ratio_is_the_four_fifths_ratio():
    y = np.array([1] * 10 + [0] * 10)
    pred = np.array([1] * 8 + [0] * 2 + [1] * 4 + [0] * 6)
    group = np.array(["a"] * 10 + ["b"] * 10)
    table = fairness_intervals(y, pred, sensitive_features=group, pos_label=1, notions="statistical_parity")
    assert table["ratio"].iloc[0] == pytest.approx(0.4 / 0.8)
    assert table["gap"].iloc[0] == pytest.approx(0.4)


def test_report_exact_method_is_wider_than_wilson_on_the_same_rows():
    y, pred, group, _ = _table(seed=5)
    wilson = fairness_intervals(y, pred, sensitive_features=group, pos_label="yes", notions="equalized_odds")
    exact = fairness_intervals(y, pred, sensitive_features=group, pos_label="yes", notions="equalized_odds",
                               method="exact")
    assert (exact["high"] - exact["low"] >= wilson["high"] - wilson["low"] - 1e-12).all()
    assert exact["gap_high"].iloc[0] >= wilson["gap_high"].iloc[0]


def test_report_group_without_rows_in_a_cohort_has_no_row_there():
    y = np.array([1, 1, 0, 0, 1, 1])
    pred = np.array([1, 0, 0, 1, 1, 1])
    group = np.array(["a", "a", "a", "a", "b", "b"])  # "b" has no negatives: no false positive rate
    table = fairness_intervals(y, pred, sensitive_features=group, pos_label=1, notions="predictive_equality")
    assert table["group"].tolist() == ["a"] and np.isnan(table["gap"].iloc[0])


def test_report_with_integer_weights_equals_repeated_rows():
    y, pred, group, _ = _table(seed=8, n=120)
    w = np.random.default_rng(1).integers(1, 4, y.size)
    weighted = fairness_intervals(y, pred, sensitive_features=group, pos_label="yes", sample_weight=w,
                                  notions="statistical_parity")
    repeated = fairness_intervals(np.repeat(y, w), np.repeat(pred, w), sensitive_features=np.repeat(group, w),
                                  pos_label="yes", notions="statistical_parity")
    pd.testing.assert_series_equal(weighted["value"], repeated["value"])
    pd.testing.assert_series_equal(weighted["denominator"], repeated["denominator"])
    # fewer effective rows than repeated rows: the weighted intervals are wider
    assert ((weighted["high"] - weighted["low"]) > (repeated["high"] - repeated["low"])).all()
