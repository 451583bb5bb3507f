"""The settings a tree was solved with, in words (the estimator's parameters, by name)."""

from __future__ import annotations

from typing import Any, Mapping

from strongtree_core import vocabulary
from strongtree_core.words import fmt

#: The parameters a report lists, in this order, with their names (the one name of each setting,
#: :data:`strongtree_core.vocabulary.SETTING_NAMES`; ``max_features`` is what runs stored before 0.2 call
#: ``max_features_used``).
SHOWN: dict[str, str] = {
    name: vocabulary.SETTING_NAMES[name] for name in (
        "depth", "objective", "regularization", "fairness", "fairness_bound", "fairness_confidence", "min_recall",
        "min_precision", "min_specificity", "max_branching", "max_features_used", "min_leaf",
        "allow_protected_splits", "formulation", "solver", "time_limit")
}
SHOWN = {**SHOWN, "max_features": SHOWN["max_features_used"]}
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
    if name == "fairness_confidence":
        return "none: the training rows only" if value is None else f"{round(100 * float(value))} % confidence"
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
        if name in ("fairness_bound", "fairness_confidence") and not constrained:
            continue
        seen.add(words)
        rows.append((words, _value(name, params[name])))
    if "n_buckets" in params or "max_thresholds" in params:
        rows.append((vocabulary.SETTING_NAMES["max_thresholds"], _thresholds(params)))
    return rows


def _thresholds(params: Mapping[str, Any]) -> str:
    buckets = params.get("n_buckets")
    if buckets is not None and params.get("max_thresholds") is None:
        return f"cut at {fmt(buckets, 'int')} quantile buckets"
    most = params.get("max_thresholds") or DEFAULT_THRESHOLDS
    return f"chosen from the data, at most {fmt(most, 'int')}"
