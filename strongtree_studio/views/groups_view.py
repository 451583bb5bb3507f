"""The protected groups of the table as the Data page shows them, before any tree:
sizes, base rates per part and the small groups flagged (numbers from
:func:`strongtree_core.metrics.group_summary.group_summary`)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from strongtree_core.metrics.gap_intervals import SMALL_OUTCOME
from strongtree_core.metrics.group_summary import SMALL_ROWS
from strongtree_studio.views.status_words import count_of, fmt

#: Said under the table: the threshold of a small group.
SMALL_NOTE = (
    "A group is flagged when its training or test rows number fewer than {rows}, or hold fewer than {outcome} rows "
    "of the positive class or of the others: a rate measured on so few rows is too uncertain to compare."
)


def small_note() -> str:
    return SMALL_NOTE.format(rows=fmt(SMALL_ROWS, "int"), outcome=fmt(SMALL_OUTCOME, "int"))


def group_summary_table(summary: pd.DataFrame, group_title: str, positive: Any) -> pd.DataFrame:
    """The summary in words: one row per group, counts with separators, rates in percent, small groups flagged."""
    has_test = bool(summary["test_rows"].sum())
    rows = []
    for r in summary.itertuples():
        row = {group_title: str(r.group), "rows": fmt(r.rows, "int"), "share of rows": fmt(r.share, "percent")}
        if positive is not None:
            row[f"share {positive}"] = fmt(r.base_rate, "percent")
        row["training rows"] = fmt(r.train_rows, "int")
        if positive is not None:
            row[f"training: share {positive}"] = fmt(r.train_base_rate, "percent")
        if has_test:
            row["test rows"] = fmt(r.test_rows, "int")
            if positive is not None:
                row[f"test: share {positive}"] = fmt(r.test_base_rate, "percent")
        row["flag"] = f"small: {r.why_small}" if r.small else ""
        rows.append(row)
    return pd.DataFrame(rows).set_index(group_title)


def group_sentence(summary: pd.DataFrame, positive: Any) -> str:
    """One sentence: how many groups, the largest and the smallest, the spread of base rates, how many small."""
    n = len(summary)
    largest = summary.loc[summary["rows"].idxmax()]
    smallest = summary.loc[summary["rows"].idxmin()]
    text = (f"{count_of(n, 'group')}: the largest is {largest['group']} ({fmt(largest['share'], 'percent')} of the "
            f"rows), the smallest {smallest['group']} ({count_of(int(smallest['rows']), 'row')}).")
    rates = summary["base_rate"].dropna()
    if positive is not None and len(rates) >= 2:
        high = summary.loc[rates.idxmax()]
        low = summary.loc[rates.idxmin()]
        text += (f" The share of {positive} is {fmt(high['base_rate'], 'percent')} in {high['group']} and "
                 f"{fmt(low['base_rate'], 'percent')} in {low['group']}: a gap of "
                 f"{fmt(high['base_rate'] - low['base_rate'], 'points')} in the data, before any tree.")
    small = int(summary["small"].sum())
    if small:
        text += f" {count_of(small, 'group')} flagged small."
    return text
