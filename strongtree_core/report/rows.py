"""The training and test rows of a table, made again from a tree's fit context: the same
rule as the dashboard's split (rows without a target dropped, scikit-learn's
``train_test_split`` with the seed, stratified by the target when every class has two
rows), so a report made later from the tree file measures the same rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import pandas as pd
from sklearn.model_selection import train_test_split


@dataclass(frozen=True)
class Rows:
    """Training and test rows (fresh indexes), with what making them dropped or could not do."""

    train: pd.DataFrame
    test: pd.DataFrame
    missing_target: int = 0
    stratified: bool = False


def split_rows(frame: pd.DataFrame, target: str, test_size: float, seed: int, stratify: bool) -> Rows:
    """Drop rows without ``target``, then hold out ``test_size`` of the rest (stratified when asked and possible)."""
    missing = int(frame[target].isna().sum())
    kept = frame[frame[target].notna()] if missing else frame
    by = None
    if stratify and len(kept) and kept[target].value_counts().min() >= 2:
        by = kept[target]
    if test_size <= 0:
        return Rows(kept.reset_index(drop=True), kept.iloc[:0].reset_index(drop=True), missing, False)
    train, test = train_test_split(kept, test_size=test_size, random_state=seed, stratify=by)
    return Rows(train.reset_index(drop=True), test.reset_index(drop=True), missing, by is not None)


def rows_from_split(frame: pd.DataFrame, target: str, split: Mapping[str, Any]) -> Rows:
    """:func:`split_rows` with a fit context's ``split`` (``test_size``, ``seed``, ``stratify``)."""
    return split_rows(frame, target, float(split.get("test_size", 0.25)), int(split.get("seed", 0)),
                      bool(split.get("stratify", True)))
