"""Quality floors and fairness constraints on formulation (11) against brute force.

The independent truth is written here from the paper's definitions, in exact
fractions over the rows of the table: for every tree of the depth (all
imbalanced trees), whether it meets each bound and what its objective is.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from brute_force import all_trees, holds, milp_solve, true_objective
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score
from strategies import ALL_CONSTRAINTS, BOUNDS, Instance, instances

from strongtree_core import metrics
from strongtree_core.encoding.patterns import collapse_patterns
from strongtree_core.formulation.decode import decode_tree, start_vector
from strongtree_core.formulation.fairness_constraints import (
    FAIRNESS_NOTIONS,
    NO_LEGITIMATE_FACTOR,
    NO_PROTECTED_GROUPS,
    ConditionalStatisticalParity,
    EqualizedOdds,
    EqualOpportunity,
    StatisticalParity,
)
from strongtree_core.formulation.flow_all import build_flow_all
from strongtree_core.formulation.quality_constraints import (
    BOUND_OUT_OF_RANGE,
    NO_POSITIVE_CLASS,
    ConstraintCheck,
    MinPrecision,
    MinRecall,
    MinSpecificity,
    smallest_fraction_at_least,
)
from strongtree_core.formulation.spec import TreeSpec
from strongtree_core.metrics.constraints import NOT_MEASURABLE

PROPERTY = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------- truth
def measured_objective(objective: str, y, pred, pos: int) -> float:
    """The same objective from the metrics package (scikit-learn underneath)."""
    n = len(y)
    return {
        "accuracy": lambda: n * accuracy_score(y, pred),
        "balanced_accuracy": lambda: n * metrics.balanced_accuracy(y, pred),
        "worst_case_accuracy": lambda: n * metrics.worst_case_accuracy(y, pred),
        "sensitivity": lambda: n * metrics.recall(y, pred, pos_label=pos),
    }[objective]()


# ---------------------------------------------------------------- instances
def compare_with_brute_force(inst: Instance, spec: TreeSpec, kinds_bounds, pos: int) -> None:
    """Rows accept exactly the trees that meet every bound; the MILP optimum is the best of them."""
    data = inst.data
    model = build_flow_all(data, spec)
    best = None
    for tree in all_trees(inst.depth, inst.X.shape[1], inst.n_classes):
        pred = tree.predict(inst.X)
        ok = all(holds(k, b, inst.y, pred, inst.group, inst.legit, pos) for k, b in kinds_bounds)
        # the model's rows accept this tree exactly when it meets the bounds
        x = start_vector(model, tree, data)
        assert (model.max_violation(x) <= 1e-9) == ok, (tree, kinds_bounds)
        # check_constraints agrees with the definitions on every tree
        checks = metrics.check_constraints(spec, inst.y, pred, inst.group, inst.legit)
        assert all(c.satisfied for c in checks) == ok
        if ok:
            value = (1 - spec.lambda_) * true_objective(spec.objective, inst.y, pred, pos) - Fraction(str(spec.lambda_)) * tree.n_branching
            assert model.objective(x) == pytest.approx(float(value), abs=1e-9)
            best = value if best is None else max(best, value)
    x = milp_solve(model)
    if best is None:
        assert x is None, "brute force finds no feasible tree but the MILP returned one"
        return
    assert x is not None, "the MILP says infeasible but brute force found a tree"
    # The solver's feasibility tolerance (1e-7 on rows, scaled by the weights) may
    # lift a continuous helper such as m of the worst-case accuracy by ~1e-6;
    # distinct objective values here differ by more than 1e-2.
    assert model.objective(x) == pytest.approx(float(best), abs=1e-5)
    tree = decode_tree(model.index, x, inst.depth, balanced=False)
    pred = tree.predict(inst.X)
    for k, b in kinds_bounds:
        assert holds(k, b, inst.y, pred, inst.group, inst.legit, pos)
    assert all(ok for _, _, _, ok in metrics.check_constraints(spec, inst.y, pred, inst.group, inst.legit))
    reported = (model.objective(x) + spec.lambda_ * tree.n_branching) / (1 - spec.lambda_)
    assert measured_objective(spec.objective, inst.y, pred, pos) == pytest.approx(reported, abs=1e-5)


# ----------------------------------------------------------- the properties
@PROPERTY
@given(
    inst=instances(),
    chosen=st.lists(st.tuples(st.sampled_from(sorted(ALL_CONSTRAINTS)), BOUNDS), min_size=1, max_size=2, unique_by=lambda t: t[0]),
    pos=st.integers(0, 1),
)
def test_constraints_against_brute_force(inst: Instance, chosen, pos: int) -> None:
    constraints = tuple(ALL_CONSTRAINTS[k](b, pos) for k, b in chosen)
    spec = TreeSpec(depth=inst.depth, pos_label=pos, side_constraints=constraints)
    compare_with_brute_force(inst, spec, chosen, pos)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    inst=instances(n_classes=3, max_columns=2),
    chosen=st.lists(st.tuples(st.sampled_from(sorted(ALL_CONSTRAINTS)), BOUNDS), min_size=1, max_size=2, unique_by=lambda t: t[0]),
    pos=st.integers(0, 2),
    objective=st.sampled_from(["accuracy", "balanced_accuracy", "worst_case_accuracy"]),
)
def test_three_classes_one_versus_rest(inst: Instance, chosen, pos: int, objective: str) -> None:
    """With three classes the positive class stands against the other two."""
    constraints = tuple(ALL_CONSTRAINTS[k](b, pos) for k, b in chosen)
    spec = TreeSpec(depth=inst.depth, objective=objective, pos_label=pos, side_constraints=constraints)
    compare_with_brute_force(inst, spec, chosen, pos)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    inst=instances(),
    chosen=st.lists(
        st.tuples(st.sampled_from(sorted(ALL_CONSTRAINTS)), st.sampled_from([0.5, 0.6, 0.75, 0.8, 0.9, 1.0, 0.0, 0.05])),
        min_size=2,
        max_size=3,
        unique_by=lambda t: t[0],
    ),
    pos=st.integers(0, 1),
)
def test_tight_combinations_against_brute_force(inst: Instance, chosen, pos: int) -> None:
    """High quality floors and tight fairness bounds together: infeasible cases included.

    Quality bounds are read as floors and fairness bounds as ceilings, so the
    sampled values make both kinds tight.
    """
    constraints = tuple(ALL_CONSTRAINTS[k](b, pos) for k, b in chosen)
    spec = TreeSpec(depth=inst.depth, pos_label=pos, side_constraints=constraints)
    compare_with_brute_force(inst, spec, chosen, pos)


def test_contradictory_floors_are_infeasible_for_both() -> None:
    # Identical features, different labels: no tree has recall 1 and specificity 1.
    X = np.zeros((8, 2), dtype=int)
    y = np.array([1, 0, 1, 0, 1, 0, 1, 1])
    inst = Instance(X, y, np.zeros(8, dtype=int), np.zeros(8, dtype=int), 2)
    chosen = [("min_recall", 1.0), ("min_specificity", 0.5)]
    spec = TreeSpec(depth=2, pos_label=1, side_constraints=(MinRecall(1.0, 1), MinSpecificity(0.5, 1)))
    compare_with_brute_force(inst, spec, chosen, 1)
    assert milp_solve(build_flow_all(inst.data, spec)) is None


@PROPERTY
@given(
    inst=instances(),
    objective=st.sampled_from(["balanced_accuracy", "worst_case_accuracy", "sensitivity"]),
    specificity=st.one_of(st.none(), BOUNDS),
    lambda_=st.sampled_from([0.0, 0.0, 0.1]),
    pos=st.integers(0, 1),
)
def test_objectives_against_brute_force(inst: Instance, objective: str, specificity, lambda_: float, pos: int) -> None:
    if objective == "sensitivity" and not (inst.y == pos).any():
        with pytest.raises(ValueError, match="sensitivity is undefined"):
            build_flow_all(inst.data, TreeSpec(depth=inst.depth, objective=objective, pos_label=pos))
        return
    chosen = [] if specificity is None else [("min_specificity", specificity)]
    spec = TreeSpec(
        depth=inst.depth,
        objective=objective,
        lambda_=lambda_,
        pos_label=pos,
        side_constraints=tuple(MinSpecificity(b, pos) for _, b in chosen),
    )
    compare_with_brute_force(inst, spec, chosen, pos)


@settings(max_examples=200, deadline=None)
@given(num=st.integers(0, 10**6), den=st.integers(1, 10**6), max_den=st.integers(1, 60))
def test_smallest_fraction_at_least_is_the_farey_successor(num: int, den: int, max_den: int) -> None:
    c = Fraction(min(num, den), den)
    expected = min(Fraction(-((-c.numerator * b) // c.denominator), b) for b in range(1, max_den + 1))
    assert smallest_fraction_at_least(c, max_den) == expected


# ------------------------------------------------------- exact boundaries
def _single_feature_data(y, group=None, legit=None, X=None):
    y = np.asarray(y)
    X = np.asarray(X) if X is not None else (np.arange(len(y)) % 2)[:, None]
    return X, collapse_patterns(X, y, 2, group=group, legit=legit)


def test_recall_floor_at_a_decimal_is_exact() -> None:
    # 0.1 as a binary float is slightly above 1/10; the floor must still be one true positive of ten.
    y = np.array([1] * 10 + [0] * 4)
    X, data = _single_feature_data(y)
    base = build_flow_all(data, TreeSpec(depth=1, pos_label=1))
    model = build_flow_all(data, TreeSpec(depth=1, pos_label=1, side_constraints=(MinRecall(0.1, 1),)))
    assert model.n_rows == base.n_rows + 1
    assert model.row_lower[-1] == 1.0
    pred = np.zeros_like(y)
    pred[0] = 1
    assert MinRecall(0.1, 1).measure(y, pred)[0].satisfied


def test_fairness_gap_at_the_bound_is_accepted_despite_float_rounding() -> None:
    # rates 8/10 and 7/10: 0.8 - 0.7 = 0.10000000000000009 in floats, exactly 0.1 in fact.
    y = np.zeros(20, dtype=int)
    group = np.repeat([0, 1], 10)
    pred = np.array([1] * 8 + [0] * 2 + [1] * 7 + [0] * 3)
    assert 0.8 - 0.7 > 0.1
    (check,) = StatisticalParity(0.1, 1).measure(y, pred, group=group)
    assert check.satisfied and check.measured == pytest.approx(0.1)
    (tighter,) = StatisticalParity(0.09, 1).measure(y, pred, group=group)
    assert not tighter.satisfied


def test_fairness_rows_accept_exactly_the_trees_at_the_bound() -> None:
    # group 0: 4 rows, group 1: 5 rows; feature 0 selects 2 of 4 and 2 of 5 -> gap 1/2 - 2/5 = 1/10.
    X = np.array([[1], [1], [0], [0], [1], [1], [0], [0], [0]])
    y = np.zeros(9, dtype=int)
    group = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1])
    data = collapse_patterns(X, y, 2, group=group)
    split = next(t for t in all_trees(1, 1, 2) if t.feature[0] == 0 and list(t.prediction[1:]) == [0, 1])
    for bound, accepted in ((0.1, True), (0.0999, False)):
        model = build_flow_all(data, TreeSpec(depth=1, pos_label=1, side_constraints=(StatisticalParity(bound, 1),)))
        assert (model.max_violation(start_vector(model, split, data)) <= 1e-9) == accepted


def test_precision_row_keeps_small_integer_coefficients() -> None:
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, (30, 3))
    y = rng.integers(0, 2, 30)
    data = collapse_patterns(X, y, 2)
    model = build_flow_all(data, TreeSpec(depth=1, pos_label=1, side_constraints=(MinPrecision(0.123456789, 1),)))
    row = model.A[model.n_rows - 1].data
    assert np.all(row == np.round(row))
    assert np.abs(row).max() <= 30 * data.count.max()


# ---------------------------------------------- skipped groups and messages
def test_group_without_positives_is_skipped_not_divided_by() -> None:
    y = np.array([1, 0, 1, 0, 0, 0, 1, 1, 0])
    group = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2])  # group 1 has no positive row
    X, data = _single_feature_data(y, group=group)
    constraint = EqualOpportunity(0.0, 1, group_levels=("a", "b", "c"))
    base = build_flow_all(data, TreeSpec(depth=1, pos_label=1))
    model = build_flow_all(data, TreeSpec(depth=1, pos_label=1, side_constraints=(constraint,)))
    assert model.n_rows == base.n_rows + 1  # only the pair (a, c)
    assert constraint.skipped_reasons(data) == [
        "equal opportunity: group 'b' has no rows among rows of the positive class, "
        "so its true positive rate is undefined there and it is left out of that comparison"
    ]
    (check,) = constraint.measure(y, np.ones_like(y), group=group)
    assert check.satisfied and check.measured == 0.0 and "group 'b'" in check.detail


def test_equalized_odds_has_one_row_per_pair_and_rate() -> None:
    y = np.array([1, 0, 1, 0, 1, 0, 1, 0, 1])
    group = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2])
    X, data = _single_feature_data(y, group=group)
    constraint = EqualizedOdds(0.2, 1)
    base = build_flow_all(data, TreeSpec(depth=1, pos_label=1))
    model = build_flow_all(data, TreeSpec(depth=1, pos_label=1, side_constraints=(constraint,)))
    assert model.n_rows == base.n_rows + 6
    assert constraint.skipped_reasons(data) == []


def test_level_with_a_single_group_is_reported() -> None:
    y = np.array([1, 0, 1, 0, 1, 0])
    group = np.array([0, 0, 1, 1, 0, 0])
    legit = np.array([0, 0, 0, 0, 1, 1])  # level 1 holds group 0 only
    X, data = _single_feature_data(y, group=group, legit=legit)
    constraint = ConditionalStatisticalParity(0.1, 1)
    assert constraint.skipped_reasons(data) == [
        "conditional statistical parity: group 1 has no rows among rows of legitimate level 1, "
        "so its share predicted positive is undefined there and it is left out of that comparison",
        "conditional statistical parity: only one group has rows among rows of legitimate level 1, "
        "so there is nothing to compare there",
    ]


@pytest.mark.parametrize("cls, what", [(MinRecall, "min_recall"), (MinPrecision, "min_precision"), (StatisticalParity, "fairness_bound")])
@pytest.mark.parametrize("bad", [1.5, -0.1, "high"])
def test_bound_out_of_range(cls, what, bad) -> None:
    with pytest.raises(ValueError) as err:
        cls(bad, 1)
    assert str(err.value) == BOUND_OUT_OF_RANGE.format(what=what, value=bad)


def test_missing_inputs_have_clear_messages() -> None:
    y = np.array([1, 0, 1, 0])
    X, data = _single_feature_data(y)
    with pytest.raises(ValueError) as err:
        build_flow_all(data, TreeSpec(depth=1, side_constraints=(MinRecall(0.5),)))
    assert str(err.value) == NO_POSITIVE_CLASS.format(what="min_recall")
    with pytest.raises(ValueError) as err:
        build_flow_all(data, TreeSpec(depth=1, pos_label=1, side_constraints=(StatisticalParity(0.1),)))
    assert str(err.value) == NO_PROTECTED_GROUPS.format(notion="statistical parity")
    X, data = _single_feature_data(y, group=np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError) as err:
        build_flow_all(data, TreeSpec(depth=1, pos_label=1, side_constraints=(ConditionalStatisticalParity(0.1),)))
    assert str(err.value) == NO_LEGITIMATE_FACTOR


def test_check_constraints_reads_a_spec_and_refuses_unmeasurable_constraints() -> None:
    y = np.array([1, 1, 1, 1, 0, 0])
    pred = np.array([1, 1, 1, 0, 0, 1])
    spec = TreeSpec(depth=1, pos_label=1, side_constraints=(MinRecall(0.75), MinPrecision(0.8), MinSpecificity(0.5)))
    checks = metrics.check_constraints(spec, y, pred)
    assert [tuple(c) for c in checks] == [
        ("recall", 0.75, 0.75, True),
        ("precision", 0.75, 0.8, False),
        ("specificity", 0.5, 0.5, True),
    ]

    class Opaque:
        name = "opaque"

    with pytest.raises(ValueError) as err:
        metrics.check_constraints([Opaque()], y, pred)
    assert str(err.value) == NOT_MEASURABLE.format(name="opaque")


def test_undefined_quality_ratios_are_reported() -> None:
    y = np.zeros(4, dtype=int)
    pred = np.zeros(4, dtype=int)
    checks = metrics.check_constraints([MinRecall(0.9, 1), MinPrecision(0.9, 1)], y, pred)
    assert [c.satisfied for c in checks] == [True, True]
    assert all(np.isnan(c.measured) and c.detail for c in checks)
    X, data = _single_feature_data(y)
    recall = MinRecall(0.9, 1)
    model = build_flow_all(data, TreeSpec(depth=1, pos_label=1, side_constraints=(recall,)))
    assert model.n_rows == build_flow_all(data, TreeSpec(depth=1, pos_label=1)).n_rows  # no recall row
    (reason,) = recall.skipped_reasons(data)
    assert "recall is undefined" in reason


@pytest.mark.parametrize("name", sorted(ALL_CONSTRAINTS))
def test_every_constraint_describes_itself(name) -> None:
    c = ALL_CONSTRAINTS[name](0.15, 1)
    text = c.describe()
    assert "0.15" in text and text.endswith(".") and c.couples_datapoints
    if name in FAIRNESS_NOTIONS:
        assert c.notion in text


def test_constraint_check_unpacks_as_four_values() -> None:
    name, measured, bound, ok = ConstraintCheck("recall", 0.5, 0.4, True, "detail")
    assert (name, measured, bound, ok) == ("recall", 0.5, 0.4, True)
