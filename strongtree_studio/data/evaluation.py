"""Measure a fitted tree (and the trees it is compared with) on training and test
rows, as JSON-ready data the pages render and the run store keeps.

Every number comes from :mod:`strongtree_core.metrics` applied to the trees'
predictions; the reference models (CART of the same depth on the same binary
encoding, a logistic regression, the majority class) are those of
:mod:`strongtree_core.report.references`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score

from strongtree_core.metrics import (
    balanced_accuracy,
    classification_quality,
    fairness_gap,
    fairness_intervals,
    group_confusion_matrices,
    group_metrics,
    positive_present,
    worst_case_accuracy,
)
from strongtree_core.metrics.fairness_gaps import NOTION_RATES
from strongtree_core.report.references import CART_NAME, references
from strongtree_core.tree import FittedTree
from strongtree_studio.data.choices import ModelConfig, Roles, SplitTables

#: Confidence of the intervals the Fairness page draws.
INTERVAL_CONFIDENCE = 0.95


def _clean(value: Any) -> Any:
    """JSON-ready: NaN/inf as None, numpy scalars as Python values, containers recursively."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def applicable_notions(roles: Roles) -> list[str]:
    """Fairness notions that can be measured with these roles."""
    if not roles.protected:
        return []
    return [n for n in NOTION_RATES if n != "conditional_statistical_parity" or roles.legitimate]


def quality(y_true: np.ndarray, y_pred: np.ndarray, positive: Any) -> dict[str, float]:
    """Accuracy and its relatives; recall, precision and specificity when there is a positive class."""
    if positive is not None and positive_present(y_true, y_pred, positive):
        return classification_quality(y_true, y_pred, pos_label=positive)
    return {
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "balanced_accuracy": balanced_accuracy(y_true, y_pred),
        "worst_case_accuracy": worst_case_accuracy(y_true, y_pred),
    }


def gaps(frame: pd.DataFrame, y_pred: np.ndarray, roles: Roles, notions: list[str]) -> dict[str, dict]:
    """The measured gap of each notion (with its parts and left-out groups)."""
    out = {}
    for notion in notions:
        gap = fairness_gap(
            notion,
            frame[roles.target].to_numpy(),
            y_pred,
            sensitive_features=frame[list(roles.protected)],
            legitimate_features=frame[list(roles.legitimate)] if roles.legitimate else None,
            pos_label=roles.pos_label,
        )
        out[notion] = {"difference": gap.difference, "parts": dict(gap.parts), "excluded": list(gap.excluded),
                       "ratio": getattr(gap, "ratio", None), "ratio_parts": dict(getattr(gap, "ratio_parts", {}))}
    return out


def intervals(frame: pd.DataFrame, y_pred: np.ndarray, roles: Roles, notions: list[str]) -> dict[str, dict]:
    """Per notion: the gap's simultaneous interval and every compared rate's interval (95 %)."""
    if not notions:
        return {}
    table = fairness_intervals(
        frame[roles.target].to_numpy(), y_pred, sensitive_features=frame[list(roles.protected)],
        legitimate_features=frame[list(roles.legitimate)] if roles.legitimate else None,
        pos_label=roles.pos_label, notions=notions, confidence=INTERVAL_CONFIDENCE,
    )
    out = {}
    for notion, part in table.groupby("notion", sort=False):
        first = part.iloc[0]
        out[notion] = {
            "gap": first["gap"], "low": first["gap_low"], "high": first["gap_high"], "ratio": first["ratio"],
            "n_differences": int(first["n_differences"]), "confidence": INTERVAL_CONFIDENCE,
            "rates": [{"cohort": r.cohort, "rate": r.rate, "group": str(r.group), "value": r.value, "low": r.low,
                       "high": r.high, "rows": r.denominator, "small": bool(r.small)} for r in part.itertuples()],
        }
    return out


def majority_baseline(train_y: np.ndarray, y_true: np.ndarray) -> float:
    """Accuracy on ``y_true`` of predicting the training rows' majority class for every row."""
    labels, counts = np.unique(train_y, return_counts=True)
    return float(np.mean(y_true == labels[int(np.argmax(counts))])) if len(y_true) else float("nan")


def _split_metrics(frame: pd.DataFrame, y_pred: np.ndarray, roles: Roles, notions: list[str],
                   train_y: np.ndarray | None = None) -> dict[str, Any]:
    y_true = frame[roles.target].to_numpy()
    out: dict[str, Any] = {"n": len(frame), "quality": quality(y_true, y_pred, roles.pos_label)}
    out["baseline_accuracy"] = majority_baseline(y_true if train_y is None else train_y, y_true)
    if roles.protected and roles.pos_label is not None and positive_present(y_true, y_pred, roles.pos_label):
        sensitive = frame[list(roles.protected)]
        table = group_metrics(y_true, y_pred, sensitive_features=sensitive, pos_label=roles.pos_label)
        order = {str(g): i for i, g in enumerate(group_order(table["group"]))}
        table = table.assign(_order=table["group"].astype(str).map(order)).sort_values("_order").drop(columns="_order")
        out["groups"] = table.to_dict(orient="records")
        if roles.legitimate:
            by_level = group_metrics(y_true, y_pred, sensitive_features=sensitive,
                                     legitimate_features=frame[list(roles.legitimate)], pos_label=roles.pos_label)
            out["groups_by_level"] = by_level.to_dict(orient="records")
        out["gaps"] = gaps(frame, y_pred, roles, notions)
        out["intervals"] = intervals(frame, y_pred, roles, notions)
        matrices = group_confusion_matrices(y_true, y_pred, sensitive_features=sensitive)
        out["confusion"] = {
            str(g): {"index": list(m.index), "columns": list(m.columns), "data": m.to_numpy().tolist()}
            for g, m in sorted(matrices.items(), key=lambda item: order.get(str(item[0]), len(order)))
        }
    return out


def group_order(groups) -> list:
    """Groups in one order for every table, chart and split: numbers by value, text alphabetically."""
    unique = list(dict.fromkeys(groups))
    try:
        return sorted(unique)
    except TypeError:
        return sorted(unique, key=str)


def _summary_row(name: str, status: str, predictions: dict[str, np.ndarray], parts: dict[str, pd.DataFrame],
                 roles: Roles, notions: list[str], leaves: int) -> dict[str, Any]:
    row: dict[str, Any] = {"model": name, "status": status, "leaves": leaves}
    for split, frame in parts.items():
        y_true = frame[roles.target].to_numpy()
        row[f"{split}_accuracy"] = float(accuracy_score(y_true, predictions[split]))
        if notions and roles.pos_label is not None and positive_present(y_true, predictions[split], roles.pos_label):
            for notion, gap in gaps(frame, predictions[split], roles, notions).items():
                row[f"{split}_{notion}"] = gap["difference"]
    return row


def evaluate(
    tree: FittedTree,
    tables: SplitTables,
    roles: Roles,
    model: ModelConfig,
    baseline: FittedTree | None = None,
) -> dict[str, Any]:
    """Everything the Fairness & performance page shows, JSON-ready.

    Returns
    -------
    dict
        ``notions`` (constrained), ``measured`` (every notion measured),
        ``fairness_bound``, ``splits`` (per split: ``n``, ``quality``, ``baseline_accuracy``, and with a
        protected attribute ``groups``, ``gaps``, ``intervals`` (95 %), ``confusion``),
        ``comparison`` (one row per tree: accuracy and gaps per split), ``baseline_accuracy``
        per split (predicting the training majority class), ``promise`` (the record's
        fairness promise, or None), ``constant`` (one class everywhere) and ``trivial``
        (the trivial-tree warning's text, or None).
    """
    parts = {"train": tables.train}
    if len(tables.test):
        parts["test"] = tables.test
    notions = applicable_notions(roles)
    predictions = {split: tree.predict(frame) for split, frame in parts.items()}
    train_y = tables.train[roles.target].to_numpy()
    splits = {split: _split_metrics(frame, predictions[split], roles, notions, train_y)
              for split, frame in parts.items()}

    compared = [n for n in model.fairness if n in notions] or notions[:1]
    n_leaves = len(tree.structure.leaves)
    comparison = [_summary_row("StrongTree", tree.record.status, predictions, parts, roles, compared, n_leaves)]
    if baseline is not None:
        base_pred = {split: baseline.predict(frame) for split, frame in parts.items()}
        comparison.append(
            _summary_row("StrongTree without fairness constraints", baseline.record.status, base_pred, parts, roles,
                         compared, len(baseline.structure.leaves))
        )
    for ref in references(tree, parts, roles.target, model.depth):  # CART, logistic regression, majority class
        status = "heuristic" if ref.name == CART_NAME else "reference"
        comparison.append(_summary_row(ref.name, status, ref.predictions, parts, roles, compared, ref.leaves))
    return _clean(
        {
            "notions": list(model.fairness),
            "measured": notions,
            "fairness_bound": model.fairness_bound,
            "pos_label": roles.pos_label,
            "splits": splits,
            "comparison": comparison,
            "baseline_accuracy": {split: m["baseline_accuracy"] for split, m in splits.items()},
            "promise": tree.record.promise,
            "constant": bool(np.unique(tree.structure.prediction[tree.structure.leaves - 1]).size == 1),
            "trivial": trivial_words(tree, tables.train, roles, model.objective),
        }
    )


def trivial_words(tree: FittedTree, train: pd.DataFrame, roles: Roles, objective: str = "accuracy") -> str | None:
    """The trivial-tree warning's text for this tree on its training rows, or None."""
    from strongtree_core.metrics.trivial import trivial_reason

    classes = list(tree.classes)
    y = train[roles.target].to_numpy()
    index = {c: i for i, c in enumerate(classes)}
    if any(v not in index for v in pd.unique(y)):
        return None
    y_idx = np.array([index[v] for v in y])
    pred_idx = np.array([index[v] for v in tree.predict(train)])
    return trivial_reason(y_idx, pred_idx, classes, objective=objective)


def headline(evaluation: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """A few numbers for the run history table."""
    splits = evaluation.get("splits", {})
    out = {
        "objective": record.get("objective"),
        "gap": record.get("gap"),
        "runtime": record.get("runtime"),
        "backend": record.get("backend"),
        "train_accuracy": splits.get("train", {}).get("quality", {}).get("accuracy"),
        "test_accuracy": splits.get("test", {}).get("quality", {}).get("accuracy"),
    }
    for split in ("train", "test"):
        gaps_ = splits.get(split, {}).get("gaps", {})
        values = [gaps_[n]["difference"] for n in evaluation.get("notions", []) if n in gaps_]
        values = [v for v in values if v is not None]
        out[f"{split}_worst_gap"] = max(values) if values else None
    return _clean(out)
