"""One vocabulary: every registry of the words a user picks covers exactly them."""

from __future__ import annotations

from strongtree_core import vocabulary
from strongtree_core.estimator.classifier import StrongTreeClassifier
from strongtree_core.formulation.fairness_constraints import FAIRNESS_NOTIONS
from strongtree_core.formulation.quality_constraints import QUALITY_CONSTRAINTS
from strongtree_core.metrics.fairness_gaps import NOTION_RATES
from strongtree_core.solvers.registry import BACKENDS


def test_fairness_notions_are_the_same_everywhere() -> None:
    assert list(FAIRNESS_NOTIONS) == list(vocabulary.FAIRNESS_NOTIONS)
    assert list(NOTION_RATES) == list(vocabulary.FAIRNESS_NOTIONS)
    assert list(QUALITY_CONSTRAINTS) == list(vocabulary.QUALITY_FLOORS)


def test_the_estimator_accepts_exactly_the_vocabulary() -> None:
    constraints = StrongTreeClassifier._parameter_constraints
    for name, words in (("formulation", vocabulary.FORMULATIONS), ("solver", vocabulary.SOLVERS),
                        ("objective", vocabulary.OBJECTIVES), ("encoding", vocabulary.ENCODINGS)):
        (options,) = [c for c in constraints[name] if hasattr(c, "options")]
        assert set(options.options) == set(words), name
    for floor in vocabulary.QUALITY_FLOORS:
        assert floor in constraints


def test_every_solver_but_auto_is_a_backend() -> None:
    assert set(vocabulary.SOLVERS) - {"auto"} == set(BACKENDS)


def test_every_mio_formulation_is_a_formulation_the_model_builder_takes() -> None:
    from strongtree_core.encoding.patterns import collapse_patterns
    from strongtree_core.formulation import TreeSpec, build_model

    assert set(vocabulary.MIO_FORMULATIONS) <= set(vocabulary.FORMULATIONS)
    assert set(vocabulary.FORMULATIONS) - set(vocabulary.MIO_FORMULATIONS) == {"auto", "local_search"}
    data = collapse_patterns([[0, 1], [1, 0], [1, 1]], [0, 1, 1], 2)
    for word in vocabulary.MIO_FORMULATIONS:
        assert build_model(data, TreeSpec(depth=1), word).method == word
