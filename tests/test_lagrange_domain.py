"""The Lagrangian dual's prices always inside their domain: ``L(y)`` is an upper bound there and only
there, and a solver's answer meets its bounds and rows only within its tolerance."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from strongtree_core.accel.lagrange import _master, into_domain


@pytest.mark.parametrize("feasibility", [False, True])
def test_the_prices_are_moved_inside_their_domain(feasibility):
    """A price below 0, or above 0 on a row side that does not exist, makes L no bound: moved inside exactly,
    and the normalized prices sum to 1 (the answer within a solver's tolerance, on every side)."""
    rng = np.random.default_rng(1)
    J, R = 2, 3
    n = J + 2 * R + 1
    eq = np.zeros(n)
    upper = np.full(n, np.inf)
    upper[J + 1] = 0.0  # a row with no upper side
    if feasibility:
        upper[:J] = 0.0
        eq[J:] = np.where(upper[J:] > 0, 1.0 / rng.uniform(1, 5, n - J), 0.0)
    else:
        eq[:J] = 1.0
    lo = np.zeros(n)
    hi = np.where(eq > 0, np.minimum(upper, 1.0 / np.where(eq > 0, eq, 1.0)), np.minimum(upper, 3.0))
    y = rng.uniform(0.0, 0.5, n) * (hi > 0)
    y[eq > 0] /= eq @ y
    noisy = y + rng.choice([-1e-8, 1e-8], n)
    assert not (np.all(noisy >= lo) and np.all(noisy <= hi))  # outside, as far as a solver's tolerance allows
    moved = into_domain(noisy.copy(), lo, hi, eq)
    assert np.all(moved >= lo) and np.all(moved <= hi) and moved[J + 1] == 0.0
    assert abs(eq @ moved - 1.0) <= 1e-15
    assert np.allclose(moved, y, atol=1e-7)


def test_nothing_normalized_left_is_no_price():
    eq = np.array([1.0, 1.0, 0.0])
    assert into_domain(np.array([-1e-9, -1e-9, 0.5]), np.zeros(3), np.array([1.0, 1.0, 2.0]), eq) is None


@pytest.mark.parametrize("seed", range(10))
def test_the_cutting_plane_model_s_minimum_is_at_a_point_of_the_domain(seed):
    """The dual's master problem (min over the box of the max of the cuts): its point in the domain exactly,
    its value the model's there and scipy's linprog's (the LP was solved by linprog before highspy)."""
    rng = np.random.default_rng(seed)
    J, R = 2, int(rng.integers(1, 4))
    n = J + 2 * R + 1
    A = rng.normal(size=(int(rng.integers(1, 15)), n))
    c = rng.normal(size=A.shape[0])
    eq = np.r_[np.ones(J), np.zeros(n - J)]
    upper = np.where(rng.random(n) < 0.2, 0.0, np.inf)
    center = np.r_[np.full(J, 1.0 / J), rng.random(n - J) * (upper[J:] > 0)]
    radius = np.full(n, 0.5)
    y, model = _master(A, c, eq, center, radius, upper)
    lo = np.r_[np.zeros(J), np.maximum(0.0, center[J:] - radius[J:])]
    hi = np.r_[np.minimum(upper[:J], 1.0), np.maximum(np.minimum(upper[J:], center[J:] + radius[J:]), lo[J:])]
    truth = linprog(np.r_[np.zeros(n), 1.0], A_ub=np.hstack([A, -np.ones((A.shape[0], 1))]), b_ub=-c,
                    A_eq=np.r_[eq, 0.0][None, :], b_eq=[1.0], bounds=list(zip(lo, hi)) + [(None, None)], method="highs")
    assert truth.status == 0 and model == pytest.approx(truth.fun, rel=1e-7, abs=1e-7)
    assert np.all(y >= lo) and np.all(y <= hi) and abs(y[:J].sum() - 1.0) <= 1e-15
    assert np.max(A @ y + c) == pytest.approx(model, rel=1e-6, abs=1e-6)
