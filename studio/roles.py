"""Suggested column roles for a freshly loaded table."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from studio.config import Roles
from studio.demo_data import DemoTable


def plain(value: Any) -> Any:
    """A numpy scalar as the Python value (so it stores as JSON and compares equal)."""
    return value.item() if isinstance(value, np.generic) else value


def class_values(frame: pd.DataFrame, target: str) -> list[Any]:
    """Distinct non-missing values of the target, sorted as ``np.unique`` sorts them."""
    return [plain(v) for v in np.unique(frame[target].dropna().to_numpy())]


def default_positive(frame: pd.DataFrame, target: str) -> Any:
    """The estimator's default: the second class of a binary target, else None."""
    values = class_values(frame, target)
    return values[1] if len(values) == 2 else None


def suggest_roles(frame: pd.DataFrame, demo: DemoTable | None = None) -> Roles:
    """The demo's roles, or for an upload: the last column as target, no protected attribute."""
    if demo is not None:
        return Roles(demo.target, demo.positive, demo.protected, demo.legitimate, demo.ignored)
    target = str(frame.columns[-1])
    return Roles(target, default_positive(frame, target))
