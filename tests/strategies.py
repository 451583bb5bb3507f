"""Hypothesis strategies shared by the tests: small instances with groups and a
legitimate factor, and whole problems (objective, constraints, structure bounds)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from strongtree_core.encoding.patterns import collapse_patterns
from strongtree_core.formulation.fairness_constraints import FAIRNESS_NOTIONS
from strongtree_core.formulation.quality_constraints import QUALITY_CONSTRAINTS
from strongtree_core.formulation.spec import TreeSpec

ALL_CONSTRAINTS = {**QUALITY_CONSTRAINTS, **FAIRNESS_NOTIONS}
OBJECTIVES = ["accuracy", "balanced_accuracy", "worst_case_accuracy", "sensitivity"]
NICE_BOUNDS = [0.0, 0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 1.0]
#: Bounds with exact decimal edges, and any float in [0, 1].
BOUNDS = st.one_of(st.sampled_from(NICE_BOUNDS), st.floats(0.0, 1.0))


@dataclass(frozen=True)
class Instance:
    X: np.ndarray
    y: np.ndarray
    group: np.ndarray
    legit: np.ndarray
    depth: int
    n_classes: int = 2

    @property
    def data(self):
        return collapse_patterns(self.X, self.y, self.n_classes, group=self.group, legit=self.legit)


@st.composite
def instances(draw, n_classes: int = 2, max_columns: int = 3) -> Instance:
    n = draw(st.integers(8, 16))
    n_features = draw(st.integers(2, max_columns))
    n_groups = draw(st.integers(2, 3))
    bits = st.integers(0, 1)
    return Instance(
        X=draw(arrays(np.int64, (n, n_features), elements=bits)),
        y=draw(arrays(np.int64, n, elements=st.integers(0, n_classes - 1))),
        group=draw(arrays(np.int64, n, elements=st.integers(0, n_groups - 1))),
        legit=draw(arrays(np.int64, n, elements=bits)),
        depth=draw(st.integers(1, 2)),
        n_classes=n_classes,
    )



@st.composite
def problems(draw, max_depth: int = 2):
    n_classes = draw(st.sampled_from([2, 2, 2, 3]))
    depth = draw(st.integers(1, max_depth))
    n_features = 2 if depth == 3 else draw(st.integers(1, 3))
    n = draw(st.integers(6, 18))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.integers(0, 2, (n, n_features))
    y = rng.integers(0, n_classes, n)
    y[:n_classes] = np.arange(n_classes)  # every class present
    group = rng.integers(0, draw(st.integers(2, 3)), n)
    legit = rng.integers(0, 2, n)
    kinds = draw(st.lists(st.tuples(st.sampled_from(sorted(ALL_CONSTRAINTS)), BOUNDS), max_size=2, unique_by=lambda t: t[0]))
    objective = draw(st.sampled_from(OBJECTIVES))
    weighted = objective == "accuracy" and draw(st.booleans())
    weight = rng.integers(1, 4, n).astype(float) if weighted else None
    spec = TreeSpec(
        depth=depth,
        lambda_=draw(st.sampled_from([0.0, 0.0, 0.1, 0.25])),
        min_leaf=draw(st.sampled_from([0, 0, 2, 3])),
        max_branching=draw(st.sampled_from([None, None, 1, 2])),
        max_features_used=draw(st.sampled_from([None, None, None, 1])),
        objective=objective,
        pos_label=1,
        side_constraints=tuple(ALL_CONSTRAINTS[k](b, 1) for k, b in kinds),
    )
    return X, y, group, legit, weight, spec, kinds, n_classes


