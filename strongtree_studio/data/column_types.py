"""Column types and value labels chosen on the Data page, and the columns a tree
should not see (identifiers, dates, free text).

Coded data stays coded unless the user names it: COMPAS writes ``race`` as 1-4
and ``age_cat`` as 0-2, so a tree would split on "age_cat <= 1" and treat race
as ordered.  A :class:`ColumnEdit` says how to read one column (``number``:
ordered, thresholds; ``category``: one test per value, no order) and what each
value is called.  :func:`apply_edits` makes the table the tree learns from; the
table as loaded is kept, so every edit can be changed or undone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from strongtree_core.encoding.features import level_key

#: How a column can be read, in the user's words.
KINDS = {
    "auto": "automatic",
    "number": "number (ordered: thresholds)",
    "category": "category (no order: one test per value)",
}
#: Most distinct values offered for labelling.
MAX_LABELLED = 40
#: Binary features above which the Data page warns that the solve will be slow.
MANY_FEATURES = 200
#: Levels of one column above which it is named in that warning.
MANY_LEVELS = 50

#: The Data page's words for a column of numbers with a few texts (the library's advice is pandas code).
MSG_MIXED_COLUMN = (
    "Column {column} holds numbers, and text such as {examples} in {rows} of its rows: read as categories, "
    "each of its {levels} distinct values would be a question of its own. Under Types & labels, read it as a "
    "number (the text becomes missing) or as a category, or add it to Ignore these columns."
)
NOTE_NOT_NUMBER = "{n} value(s) of {column!r} are not numbers and are now missing."
NOTE_MERGED = "Values {values} of {column!r} now have the same label {label!r} and count as one value."
MSG_MANY_FEATURES = (
    "These columns make {n} binary features, {detail}. Each feature is a question the solver must try at every "
    "node, so the solve slows down and the tree may split on an accident of the data. Ignore columns the tree "
    "should not see, group their values first, or ask for fewer buckets or thresholds per numeric column "
    "on the Model page."
)
REASON_ID = "an identifier: every row has its own value"
REASON_DATE = "dates: every day becomes a test"
REASON_TEXT = "free text: almost every row has its own wording"


@dataclass(frozen=True)
class ColumnEdit:
    """How to read one column: ``kind`` (a key of :data:`KINDS`) and labels of its values.

    ``labels`` maps a value's text (``level_key``: 1, 1.0 and "1" all read "1")
    to the name shown; values without a label keep their own.
    """

    kind: str = "auto"
    labels: tuple[tuple[str, str], ...] = ()

    @property
    def label_map(self) -> dict[str, str]:
        return {k: v for k, v in self.labels if v.strip() and v.strip() != k}

    @property
    def empty(self) -> bool:
        return self.kind == "auto" and not self.label_map


def apply_edits(frame: pd.DataFrame, edits: Mapping[str, ColumnEdit]) -> tuple[pd.DataFrame, list[str]]:
    """The table with every column read as ``edits`` say, and notes on what that changed."""
    out = frame.copy()
    notes: list[str] = []
    for column, edit in edits.items():
        if column not in out.columns or edit.empty:
            continue
        values = out[column]
        if edit.kind == "number":
            parsed = pd.to_numeric(values, errors="coerce")
            lost = int((parsed.isna() & values.notna()).sum())
            if lost:
                notes.append(NOTE_NOT_NUMBER.format(n=f"{lost:,}", column=column))
            out[column] = parsed
            continue
        labels = edit.label_map
        if edit.kind == "category" or labels:
            present = values.notna()
            keys = values[present].map(level_key)
            named = keys.map(lambda k: labels.get(k, k))
            merged: dict[str, list[str]] = {}
            for key in pd.unique(keys):
                merged.setdefault(labels.get(key, key), []).append(key)
            for label, keys_ in merged.items():
                if len(keys_) > 1:
                    notes.append(NOTE_MERGED.format(values=", ".join(keys_), column=column, label=label))
            result = pd.Series(np.nan, index=values.index, dtype=object)
            result[present] = named.astype(str)
            # A category dtype: text that reads as numbers would otherwise be read as numbers again.
            out[column] = pd.Categorical(result) if edit.kind == "category" else result
    return out, notes


def relabel(value: Any, edit: ColumnEdit | None) -> Any:
    """A value of a column as it reads after ``edit`` (e.g. the positive class after its class is named)."""
    if value is None or edit is None or edit.empty or edit.kind == "number":
        return value
    key = level_key(value)
    return edit.label_map.get(key, key)


def distinct_values(series: pd.Series, limit: int = MAX_LABELLED) -> list[str] | None:
    """The value texts of a column, in their natural order, or None when it has more than ``limit``."""
    present = series.dropna()
    unique = pd.unique(present)
    if len(unique) > limit:
        return None
    if isinstance(series.dtype, pd.CategoricalDtype):
        ordered = [c for c in series.cat.categories if c in set(unique)]
    else:
        try:
            ordered = sorted(unique)
        except TypeError:
            ordered = sorted(unique, key=str)
    keys: list[str] = []
    for value in ordered:
        key = level_key(value.item() if hasattr(value, "item") else value)
        if key not in keys:
            keys.append(key)
    return keys


def detected_kind(series: pd.Series) -> str:
    """How the tree reads the column without an edit, in words."""
    present = series.dropna()
    if isinstance(series.dtype, pd.CategoricalDtype) or not pd.api.types.is_numeric_dtype(series.dtype):
        numeric = pd.to_numeric(present, errors="coerce")
        if len(present) and numeric.notna().all():
            return "numbers written as text: read as numbers (ordered)"
        return "text: a category (one test per value)"
    distinct = np.unique(present.to_numpy(dtype=float))
    if np.isin(distinct, (0.0, 1.0)).all():
        return "0 / 1: a yes/no flag"
    if np.all(distinct == np.round(distinct)) and distinct.size <= 20:
        return f"whole numbers ({distinct.size} values): read as ordered codes; choose category if they are names"
    return "numbers: cut at quantiles (ordered)"


_ID_NAME = re.compile(r"(?i)(^|[_\W])(id|uuid|guid|key|ident|identifier|number|no|nr|code)$|^id[_\W]|id$")
_DATE_TEXT = re.compile(r"^\s*(\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})([ T]\d{1,2}:\d{2}(:\d{2})?)?\s*$")


def ignore_suggestions(frame: pd.DataFrame, target: str | None = None) -> dict[str, str]:
    """Columns a tree should not split on, with the reason: identifiers, dates and free text.

    * identifier: every row has its own value and the values are whole numbers in a
      run (1, 2, 3 ...) or the name says so (``applicant_id``), or short codes;
    * dates: a date or time type, or text that reads as dates in most rows;
    * free text: text with a different value in most rows and several words per value.
    Measured numbers (all different, but not whole or not in a run) are not suggested.
    """
    out: dict[str, str] = {}
    n = len(frame)
    if n == 0:
        return out
    for column in frame.columns:
        if column == target:
            continue
        values = frame[column]
        present = values.dropna()
        if present.empty:
            continue
        unique_share = present.nunique() / len(present)
        if pd.api.types.is_datetime64_any_dtype(values.dtype):
            out[str(column)] = REASON_DATE
            continue
        if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype):
            number = present.to_numpy(dtype=float)
            whole = bool(np.all(number == np.round(number)))
            if unique_share >= 0.98 and whole:
                ordered = np.sort(number)
                run = len(ordered) > 1 and np.median(np.diff(ordered)) <= 1.0
                if run or _ID_NAME.search(str(column)):
                    out[str(column)] = REASON_ID
            continue
        text = present.astype(str)
        sample = text.sample(min(len(text), 500), random_state=0) if len(text) > 500 else text
        if sample.map(lambda v: bool(_DATE_TEXT.match(v))).mean() >= 0.9 and present.nunique() > 12:
            out[str(column)] = REASON_DATE
        elif unique_share >= 0.5 and present.nunique() > 20 and sample.str.split().str.len().mean() >= 3:
            out[str(column)] = REASON_TEXT
        elif unique_share >= 0.98 and len(present) > 20:
            out[str(column)] = REASON_ID
    return out


def many_features_message(summary: pd.DataFrame) -> str:
    """The warning for an encoding with too many binary features ("" when it is fine).

    ``summary`` is ``EncodingPlan.summary()``: one row per column with ``n_binary``.
    """
    total = int(summary["n_binary"].sum()) if len(summary) else 0
    if total <= MANY_FEATURES:
        return ""
    big = summary[summary["n_binary"] > MANY_LEVELS].sort_values("n_binary", ascending=False)
    if big.empty:
        big = summary.sort_values("n_binary", ascending=False).head(3)
    parts = [f"{row.column} {int(row.n_binary):,}" for row in big.itertuples()]
    return MSG_MANY_FEATURES.format(n=f"{total:,}", detail="most from " + ", ".join(parts))


#: How the encoding summary's column kinds read.
KIND_WORDS = {"continuous": "numbers: thresholds", "categorical": "categories: one question per value",
              "binary": "yes / no", "flag": "yes / no"}


def encoding_table(summary: pd.DataFrame) -> pd.DataFrame:
    """``EncodingPlan.summary()`` in words: the library's column names (``n_binary``, ``kind``) become what they mean."""
    out = summary.rename(columns={"column": "column", "kind": "read as", "n_binary": "yes/no questions",
                                  "thresholds / levels": "thresholds or values", "n_missing": "missing values"})
    if "read as" in out:
        out["read as"] = out["read as"].map(lambda k: KIND_WORDS.get(k, str(k)))
    return out
