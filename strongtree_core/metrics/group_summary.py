"""The protected groups of a table before any tree: sizes, base rates, and the
groups too small to measure a rate on.

A rate measured on 96 rows is not the same fact as one measured on 9,600: the
analyst should learn before solving that a group has few rows, not on the
Fairness page.  A group is flagged *small* when one of its parts (training or
test rows) has fewer than :data:`SMALL_ROWS` rows, or fewer than
:data:`SMALL_OUTCOME` rows of the positive class or of the others: the
thresholds under which :mod:`strongtree_core.metrics.gap_intervals` flags a
rate as measured on too few rows.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from strongtree_core.encoding.features import equals_label
from strongtree_core.encoding.groups import group_text
from strongtree_core.metrics.gap_intervals import SMALL_N, SMALL_OUTCOME

#: A part (training or test rows) of a group with fewer rows than this is small.
SMALL_ROWS = SMALL_N

#: Columns of :func:`group_summary`.
SUMMARY_COLUMNS = (
    "group", "rows", "share", "positives", "base_rate", "train_rows", "train_base_rate", "test_rows",
    "test_base_rate", "small", "why_small",
)


def group_labels(frame: pd.DataFrame, columns: Sequence[str]) -> pd.Series:
    """One group label per row: the value (as text; a missing one named by
    :func:`~strongtree_core.encoding.groups.missing_group_name`), or ``col=value & col=value``
    for several columns, as :func:`~strongtree_core.metrics.group_metrics` names them."""
    parts = [group_text(frame[c]) for c in columns]
    if len(parts) == 1:
        return parts[0].rename("group")
    label = parts[0].radd(f"{columns[0]}=")
    for column, part in zip(columns[1:], parts[1:]):
        label = label + f" & {column}=" + part
    return label.rename("group")


def group_order(groups) -> list:
    """Groups in one order for every table: numbers by value, text alphabetically."""
    unique = list(dict.fromkeys(groups))
    try:
        return sorted(unique)
    except TypeError:
        return sorted(unique, key=str)


def group_summary(
    train: pd.DataFrame,
    test: pd.DataFrame | None,
    *,
    target: str,
    protected: Sequence[str],
    pos_label: Any = None,
) -> pd.DataFrame:
    """One row per protected group: its rows, share, base rate and parts, and whether it is small.

    Parameters
    ----------
    train, test : DataFrame
        Training and test rows (``test`` may be None or empty), with the target and protected columns.
    target : str
    protected : sequence of str
        The protected columns; several form one group per combination.
    pos_label : label, optional
        The positive class; without it the base rates are NaN.

    Returns
    -------
    DataFrame
        Columns :data:`SUMMARY_COLUMNS`: ``rows`` and ``share`` over both parts,
        ``positives`` and ``base_rate`` (share of the positive class), the same
        per part, ``small`` (bool) and ``why_small`` (words, "" when not small).
    """
    parts = {"train": train}
    if test is not None and len(test):
        parts["test"] = test
    both = pd.concat(list(parts.values()), ignore_index=True)
    everything = group_labels(both, list(protected)).to_numpy()  # named over both parts: one name per group
    ends = np.cumsum([0] + [len(part) for part in parts.values()])
    labels = {name: everything[ends[j]:ends[j + 1]] for j, name in enumerate(parts)}
    total = len(everything)
    rows = []
    for group in group_order(everything):
        row: dict[str, Any] = {"group": group}
        hits = everything == group
        row["rows"] = int(hits.sum())
        row["share"] = row["rows"] / total if total else float("nan")
        positives, base = _positives(both[target].to_numpy()[hits], pos_label)
        row["positives"], row["base_rate"] = positives, base
        reasons = []
        for name in ("train", "test"):
            if name not in parts:
                row[f"{name}_rows"], row[f"{name}_base_rate"] = 0, float("nan")
                continue
            mask = labels[name] == group
            n = int(mask.sum())
            k, rate = _positives(parts[name][target].to_numpy()[mask], pos_label)
            row[f"{name}_rows"], row[f"{name}_base_rate"] = n, rate
            where = "training" if name == "train" else "test"
            if n < SMALL_ROWS:
                reasons.append(f"{n:,} {where} row{'' if n == 1 else 's'}")
            elif pos_label is not None and min(k, n - k) < SMALL_OUTCOME:
                which = "of the positive class" if k < SMALL_OUTCOME else "outside the positive class"
                reasons.append(f"{min(k, n - k):,} {where} row{'' if min(k, n - k) == 1 else 's'} {which}")
        row["small"] = bool(reasons)
        row["why_small"] = "; ".join(reasons)
        rows.append(row)
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def _positives(y: np.ndarray, pos_label: Any) -> tuple[int, float]:
    if pos_label is None or len(y) == 0:
        return 0, float("nan")
    k = int(np.sum(equals_label(np.asarray(y, dtype=object), pos_label)))  # as the metrics count the positive class
    return k, k / len(y)
