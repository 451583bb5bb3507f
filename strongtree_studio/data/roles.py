"""Suggested column roles for a freshly loaded table."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from strongtree_core.encoding.features import level_key
from strongtree_studio.data.choices import Roles
from strongtree_studio.data.demo_tables import DemoTable


def plain(value: Any) -> Any:
    """A numpy scalar as the Python value (so it stores as JSON and compares equal)."""
    return value.item() if isinstance(value, np.generic) else value


def class_values(frame: pd.DataFrame, target: str) -> list[Any]:
    """Distinct non-missing values of the target, sorted as ``np.unique`` sorts them."""
    return [plain(v) for v in np.unique(frame[target].dropna().to_numpy())]


#: Class names that read as the outcome a rate counts ("hired", "yes", 1 ...), lower case.
POSITIVE_NAMES = frozenset({
    "1", "true", "yes", "y", "positive", "pos", "hired", "approved", "accepted", "granted", "admitted", "selected",
    "pass", "passed", "success", "good",
})


def default_positive(frame: pd.DataFrame, target: str) -> Any:
    """The class whose rates are compared by default, for a two-class target (else None):
    the one that reads as positive ("yes", "hired", 1 ...) when exactly one does, else
    the second sorted class (the estimator's default)."""
    values = class_values(frame, target)
    if len(values) != 2:
        return None
    named = [v for v in values if level_key(v).strip().lower() in POSITIVE_NAMES]
    return named[0] if len(named) == 1 else values[1]


def suggest_roles(frame: pd.DataFrame, demo: DemoTable | None = None) -> Roles:
    """The demo's roles, or for an upload: the last column as target, no protected attribute."""
    if demo is not None:
        return Roles(demo.target, demo.pos_label, demo.protected, demo.legitimate, demo.ignored)
    target = str(frame.columns[-1])
    return Roles(target, default_positive(frame, target))
