"""A sweep's grid as the Trade-offs page takes it (:class:`SweepChoice`, bounds and λ as
typed) and as it is run (:class:`SweepGrid`), and the check between the two: every
problem in words, the first that apply."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np
import pandas as pd

from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig, check_model, check_roles, split_table
from strongtree_studio.views.explain import FAIRNESS_NOTIONS
from strongtree_studio.views.fairness_view import PROMISE_LEVELS, promise_words
from strongtree_studio.data.roles import class_values
from strongtree_studio.sweeps.parse import TooFine, Unreadable, parse_numbers

#: Most points one sweep from the dashboard may have (the command line runs larger ones).
MAX_SWEEP_POINTS = 120
#: The default bound grid: 10 bounds from 0 to 20 pp, evenly spaced (rounded to 0.1 pp).
#: The bounds offered first: 0 to 20 pp in round steps of 2.5 pp.
DEFAULT_BOUNDS_TEXT = ", ".join(f"{b:g}" for b in np.arange(0.0, 20.01, 2.5))

MSG_NO_PROTECTED = (
    "A trade-off sweep measures fairness between groups, and no protected attribute is chosen: "
    "choose one on the Data page."
)
MSG_ONE_GROUP = (
    "The protected attribute {columns} has a single group in the training rows ({group}): fairness compares two "
    "groups or more. Choose another protected attribute on the Data page."
)
MSG_EMPTY_GRID = (
    "The grid is empty: choose at least one fairness notion, one bound δ, one depth, one λ value and one promise "
    "level (training rows only counts as one)."
)
MSG_PROMISE_LEVEL = "A promise level must be one of {levels}; {values} is not."
MSG_BOUNDS_TEXT = (
    "The bounds δ could not be read ({text}): type numbers in percentage points separated by commas, "
    "e.g. 0, 2, 5, 10."
)
#: Decimals of a bound δ in percentage points that a sweep tells apart (0.0001 pp: one row in a million).
BOUND_DECIMALS = 4
MSG_BOUNDS_TOO_FINE = (
    "The bound δ {text} pp has more decimals than a sweep tells apart (it keeps {decimals} decimals of a "
    "percentage point, one row in a million): round it, e.g. to {rounded:g}."
)
MSG_BOUNDS_RANGE = (
    "Every bound δ must be between 0 and 100 percentage points; {values} is not. Type the bounds in percentage "
    "points, e.g. 0, 2, 5, 10."
)
MSG_LAMBDA_TEXT = "The λ values could not be read ({text}): type numbers separated by commas, e.g. 0, 0.01, 0.05."
MSG_LAMBDA_RANGE = "Every λ must be at least 0 and below 1; {values} is not. Type values such as 0, 0.01, 0.05."
MSG_TOO_MANY = (
    "The grid has {n} points; a sweep here runs at most {limit}. Choose fewer notions, bounds, depths or λ "
    "values (the command line, strongtree sweep, runs larger grids)."
)


@dataclass(frozen=True)
class SweepChoice:
    """The grid chosen on the Trade-offs page (bounds and λ as typed)."""

    notions: tuple[str, ...] = ("statistical_parity",)
    fairness_bounds: str = DEFAULT_BOUNDS_TEXT  # percentage points
    depths: tuple[int, ...] = (2,)
    lambdas: str = "0"
    time_limit: float = 10.0  # seconds per point
    confidences: tuple[float | None, ...] = (None,)  # promise levels on new rows; None: the training rows only


@dataclass(frozen=True)
class SweepGrid:
    """A checked grid: the values each setting takes (bounds as shares, 0-1)."""

    notions: tuple[str, ...]
    fairness_bounds: tuple[float, ...]
    depths: tuple[int, ...]
    lambdas: tuple[float, ...]
    confidences: tuple[float | None, ...] = (None,)  # fairness_confidence of the fair points

    @property
    def promises(self) -> bool:
        """Whether some fair point keeps its bound on new rows (a ``fairness_confidence`` in the grid)."""
        return any(c is not None for c in self.confidences)

    @property
    def n_points(self) -> int:
        """The fair points: notions x bounds x depths x λ values x promise levels."""
        return (len(self.notions) * len(self.fairness_bounds) * len(self.depths) * len(self.lambdas)
                * len(self.confidences))

    @property
    def n_references(self) -> int:
        """The trees without a fairness constraint solved beside them, one per depth and λ (the frontier's reference)."""
        return len(self.depths) * len(self.lambdas) if self.n_points else 0

    @property
    def n_total(self) -> int:
        return self.n_points + self.n_references

    def as_params(self) -> list[dict[str, list[Any]]]:
        """The grid as estimator parameters (:func:`strongtree_core.sweep.sweep`'s ``grid``): the fair points, then
        the same depths and λ values without a fairness constraint."""
        fair = {"fairness": list(self.notions), "fairness_bound": list(self.fairness_bounds), "depth": list(self.depths),
                "regularization": list(self.lambdas)}
        if self.promises:  # a grid key only when asked for: the sweeps without one keep their columns
            fair["fairness_confidence"] = list(self.confidences)
        return [fair, {"fairness": [None], "depth": list(self.depths), "regularization": list(self.lambdas)}]


def _read_values(text: str, inside: Callable[[float], bool], unreadable: str, outside: str, shape: str,
                 problems: list[str], decimals: int | None = None) -> tuple[float, ...]:
    """The numbers typed in ``text``; a problem is added when one cannot be read, is finer than ``decimals``
    or lies outside."""
    try:
        values = parse_numbers(text, decimals)
    except TooFine as err:
        problems.append(MSG_BOUNDS_TOO_FINE.format(text=err, decimals=decimals,
                                                   rounded=round(float(str(err)), decimals)))
        return ()
    except Unreadable as err:
        problems.append(unreadable.format(text=err))
        return ()
    bad = [v for v in values if not inside(v)]
    if bad:
        problems.append(outside.format(values=", ".join(shape.format(v) for v in bad)))
    return values


def allowed_notions(roles: Roles | None) -> list[str]:
    """The notions the column roles allow (conditional parity needs a legitimate factor)."""
    if roles is None or not roles.protected:
        return []
    return [n for n in FAIRNESS_NOTIONS if n != "conditional_statistical_parity" or roles.legitimate]


def check_sweep(frame: pd.DataFrame, roles: Roles, split: SplitConfig, model: ModelConfig,
                choice: SweepChoice) -> tuple[SweepGrid | None, list[str]]:
    """The checked grid, or None and the problems in words (the first that apply)."""
    if not roles.protected:
        return None, [MSG_NO_PROTECTED]
    problems = check_roles(frame, roles, model.allow_protected_splits)
    if problems:
        return None, problems
    train = split_table(frame, roles, split).train
    groups = train[list(roles.protected)].drop_duplicates()
    if len(groups) < 2:
        group = ", ".join(str(v) for v in groups.iloc[0]) if len(groups) else "no value"
        return None, [MSG_ONE_GROUP.format(columns=", ".join(roles.protected), group=group)]
    notions = tuple(n for n in choice.notions if n in allowed_notions(roles))
    problems = check_model(replace(model, fairness=notions or ("statistical_parity",)), roles,
                           len(class_values(frame, roles.target)))
    bounds = _read_values(choice.fairness_bounds, lambda b: 0 <= b <= 100, MSG_BOUNDS_TEXT, MSG_BOUNDS_RANGE, "{:g} pp",
                          problems, BOUND_DECIMALS)
    lambdas = _read_values(choice.lambdas, lambda v: 0 <= v < 1, MSG_LAMBDA_TEXT, MSG_LAMBDA_RANGE, "{:g}", problems)
    odd = [c for c in choice.confidences if c not in PROMISE_LEVELS]
    if odd:
        problems.append(MSG_PROMISE_LEVEL.format(levels=", ".join(promise_words(c) for c in PROMISE_LEVELS),
                                                 values=", ".join(map(str, odd))))
    if problems:
        return None, problems
    confidences = tuple(c for c in PROMISE_LEVELS if c in set(choice.confidences))  # the page's order, each once
    grid = SweepGrid(notions, tuple(round(b / 100.0, 6) for b in bounds), tuple(sorted(set(choice.depths))),
                     lambdas, confidences)
    if grid.n_points == 0:
        return None, [MSG_EMPTY_GRID]
    if grid.n_total > MAX_SWEEP_POINTS:
        return None, [MSG_TOO_MANY.format(n=grid.n_total, limit=MAX_SWEEP_POINTS)]
    return grid, []
