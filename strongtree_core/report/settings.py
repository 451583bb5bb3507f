"""The settings a tree was solved with, in words (the estimator's parameters, by name)."""

from __future__ import annotations

from typing import Any, Mapping

from strongtree_core import vocabulary
from strongtree_core.words import fmt

#: The parameters a report lists, in this order, with their names in words.
SHOWN: dict[str, str] = {
    "depth": "Maximum depth",
    "objective": "Objective",
    "regularization": "λ (price of a question)",
    "fairness": "Fairness notions",
    "fairness_bound": "Bound δ",
    "min_recall": "Minimum recall",
    "min_precision": "Minimum precision",
    "min_specificity": "Minimum specificity",
    "max_branching": "Most questions",
    "max_features_used": "Most distinct questions",
    "max_features": "Most distinct questions",
    "min_leaf": "Fewest training rows in a leaf",
    "allow_protected_splits": "Questions on the protected columns",
    "formulation": "Formulation",
    "solver": "Solver",
    "time_limit": "Time limit",
}
#: Thresholds per continuous column when neither rule is given (the estimator's default).
DEFAULT_THRESHOLDS = 16


def _value(name: str, value: Any) -> str:
    if name == "objective":
        return vocabulary.OBJECTIVES.get(value, str(value))
    if name == "formulation":
        return vocabulary.FORMULATIONS.get(value, str(value))
    if name == "solver":
        return vocabulary.SOLVERS.get(value, str(value))
    if name == "fairness":
        items = [value] if isinstance(value, str) else list(value or [])
        return ", ".join(vocabulary.FAIRNESS_NOTIONS.get(n, n) for n in items) or "none"
    if name == "fairness_bound":
        return fmt(value, "points")
    if name in ("min_recall", "min_precision", "min_specificity"):
        return "none" if value is None else fmt(value, "percent")
    if name in ("max_branching", "max_features_used", "max_features"):
        return "no limit" if value is None else fmt(value, "int")
    if name == "allow_protected_splits":
        return "allowed" if value else "not allowed"
    if name == "time_limit":
        return fmt(value, "seconds")
    if name == "regularization":
        return fmt(value)
    return fmt(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def settings_rows(params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(name in words, value in words)`` for the parameters in :data:`SHOWN` that ``params`` has.

    δ is left out when no fairness notion is constrained; a limit that is not set reads "no limit".
    """
    constrained = bool(params.get("fairness"))
    rows = []
    seen: set[str] = set()
    for name, words in SHOWN.items():
        if name not in params or words in seen:
            continue
        if name == "fairness_bound" and not constrained:
            continue
        seen.add(words)
        rows.append((words, _value(name, params[name])))
    if "n_buckets" in params or "max_thresholds" in params:
        rows.append(("Thresholds per numeric column", _thresholds(params)))
    return rows


def _thresholds(params: Mapping[str, Any]) -> str:
    buckets = params.get("n_buckets")
    if buckets is not None and params.get("max_thresholds") is None:
        return f"cut at {fmt(buckets, 'int')} quantile buckets"
    most = params.get("max_thresholds") or DEFAULT_THRESHOLDS
    return f"chosen from the data, at most {fmt(most, 'int')}"
