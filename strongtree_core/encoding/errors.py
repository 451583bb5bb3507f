"""Messages for tables the encoding cannot take, each naming the problem and the fix."""

from __future__ import annotations

from strongtree_core.errors import StrongTreeError


class EncodingError(StrongTreeError):
    """A table, option or stored plan the encoding cannot use.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from strongtree_core.encoding import TableEncoder, collapse_patterns
    >>> X = pd.DataFrame({'a': [0, 1, 0, 1, 1, 0], 'b': [1, 1, 0, 0, 1, 0]})
    >>> y = np.array([0, 1, 0, 1, 1, 1])
    >>> plan = TableEncoder().fit(X)
    >>> from strongtree_core.encoding import EncodingError
    >>> try:
    ...     plan.transform(X.drop(columns='a'))
    ... except EncodingError as error:
    ...     print(str(error)[:52])
    The table lacks 1 column(s) the encoding was fitted 
    """


NOT_A_DATAFRAME = (
    "Expected a pandas DataFrame with named columns, got {got}. "
    "Wrap an array with pandas.DataFrame(X, columns=[...])."
)
EMPTY_TABLE = "The table has no rows. Give at least one row to fit the encoding."
NO_FEATURES = (
    "No feature columns are left to encode (columns: {columns}; excluded: {excluded}). "
    "Keep at least one column that is not excluded."
)
MISSING_COLUMNS = (
    "The table lacks {n} column(s) the encoding was fitted on: {missing}. "
    "Add them (missing values are allowed) or fit a new encoding on this table."
)
DUPLICATE_COLUMNS = (
    "Column names must be unique, but these appear more than once: {names}. "
    "Rename them before encoding."
)
NAMES_THE_SAME_AS_TEXT = (
    "Columns {names} are different names that read the same as text (the tree's text, SQL and DOT exports and "
    "the dashboard name columns as text, so one would be taken for the other). Rename one of them, e.g. "
    "X.columns = X.columns.astype(str) after removing the duplicate."
)
BAD_COLUMN_NAME = (
    "Column names must be strings or integers, got {name!r} of type {type}. Rename the column."
)
UNKNOWN_EXCLUDE = "Cannot exclude {names}: the table has no such column. Its columns are: {columns}."
UNKNOWN_KIND_COLUMN = "kinds names column(s) {names} that are not encoded. Encoded columns: {columns}."
UNKNOWN_KIND = (
    "Unknown kind {kind!r} for column {column!r}: use one of "
    "'binary', 'categorical', 'ordinal', 'continuous'."
)
NUMERIC_AS_TEXT = (
    "Column {column!r} holds numbers written as text with thousands separators (e.g. {example!r}). "
    "Convert it first, e.g. df[{column!r}] = pandas.to_numeric(df[{column!r}].str.replace(',', ''))."
)
DECIMAL_COMMA = (
    "Column {column!r} holds numbers written as text with a decimal comma (e.g. {example!r}). Convert it first, "
    "e.g. df[{column!r}] = pandas.to_numeric(df[{column!r}].str.replace('.', '', regex=False)"
    ".str.replace(',', '.', regex=False)), or read the CSV file with pandas.read_csv(..., decimal=',')."
)
MIXED_NUMBERS_TEXT = (
    "Column {column!r} holds numbers, and text such as {examples} in {rows:,} of its rows: read as categories, "
    "each of its {levels:,} distinct values would be a yes/no question of its own. If the text marks missing "
    "values, make it missing, e.g. df[{column!r}] = pandas.to_numeric(df[{column!r}], errors='coerce'); if the "
    "column holds categories, say so: df[{column!r}] = df[{column!r}].astype('category')."
)


class MixedColumnError(EncodingError):
    """A column of numbers that holds a few texts (:data:`MIXED_NUMBERS_TEXT`); its fields let another
    surface say the same in its own words."""

    def __init__(self, column, examples: str, rows: int, levels: int) -> None:
        super().__init__(MIXED_NUMBERS_TEXT.format(column=column, examples=examples, rows=rows, levels=levels))
        self.column, self.examples, self.rows, self.levels = column, examples, rows, levels

    def __reduce__(self):
        return type(self), (self.column, self.examples, self.rows, self.levels)


TOO_WIDE = (
    "Encoding this table would need about {need:.1f} GB of memory, more than the {limit:.1f} GB allowed "
    "(memory_limit): its {rows:,} rows become at least {features:,} yes/no features, most from {widest}. A column "
    "with a value of its own in most rows (an identifier, a name, free text) tells a tree nothing about new rows: "
    "leave it out, or raise memory_limit."
)
NOT_NUMERIC = (
    "Column {column!r} must hold numbers but holds text such as {examples}. "
    "Give numbers or missing values in this column."
)
NOT_BINARY = (
    "Column {column!r} is a yes/no column but holds {examples}. "
    "Give only 0/1, True/False or missing values, or declare the column's kind as 'categorical'."
)
BAD_N_BUCKETS = "n_buckets must be an integer of at least 2, got {value!r}."
BAD_MAX_THRESHOLDS = "max_thresholds must be an integer of at least 1 or None, got {value!r}."
BUCKETS_AND_THRESHOLDS = (
    "n_buckets={n_buckets!r} and max_thresholds={max_thresholds!r} both choose the thresholds of continuous "
    "columns: n_buckets cuts at quantiles, max_thresholds picks cuts from the data (CART's among them). "
    "Give one of them."
)
ONEHOT_NEEDS_BUCKETS = (
    "max_thresholds={max_thresholds!r} picks thresholds (x <= t), which one column per bucket cannot express: "
    "use the thermometer coding with max_thresholds, or n_buckets with one-hot buckets."
)
BAD_CONTINUOUS = "continuous must be 'thermometer' or 'onehot_buckets', got {value!r}."
BAD_MAX_ORDINAL = "max_ordinal_levels must be a non-negative integer, got {value!r}."
BAD_PLAN = "Not a stored encoding plan: {reason}. Store plans with EncodingPlan.to_dict()."


def stored_format_problem(data, expected_format: str, expected_version: int) -> str | None:
    """Why ``data`` is not a stored object of this format and version (None when it is)."""
    if not isinstance(data, dict) or data.get("format") != expected_format:
        return f"'format' is not {expected_format!r}"
    if data.get("version") != expected_version:
        return f"unknown version {data.get('version')!r}"
    return None
