"""One row of rates per protected group."""

from __future__ import annotations

import pandas as pd

from strongtree_core.metrics._inputs import NEED_SENSITIVE, prepare
from strongtree_core.metrics.rates import by_group_frame
from strongtree_core.renames import RENAMED_METRIC_ARGUMENTS, refuses_renamed

#: Columns of :func:`group_metrics`.
GROUP_COLUMNS = ("group", "count", "selection_rate", "tpr", "fpr", "fnr", "precision", "accuracy")


@refuses_renamed(RENAMED_METRIC_ARGUMENTS)
def group_metrics(
    y_true, y_pred, *, sensitive_features, legitimate_features=None, pos_label, sample_weight=None
) -> pd.DataFrame:
    """Rates of every protected group, computed by fairlearn's ``MetricFrame``.

    Parameters
    ----------
    y_true, y_pred : array-like, shape (n,)
    sensitive_features : array-like or DataFrame, n rows
    legitimate_features : array-like or DataFrame, n rows, optional
        When given, one row per (legitimate level, group) with a ``legit`` column.
    pos_label : object
    sample_weight : array-like, shape (n,), optional
        Weight of each row in every rate (``count`` stays a number of rows; a row
        of weight 0 is left out).

    Returns
    -------
    DataFrame
        Columns ``group, count, selection_rate, tpr, fpr, fnr, precision, accuracy``
        (``legit`` first when conditioned); NaN where a rate's denominator is
        empty (``tpr``/``fnr`` without positives, ``fpr`` without negatives,
        ``precision`` without positive predictions).

    Examples
    --------
    >>> from strongtree_core.metrics import group_metrics
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> group = ['a', 'a', 'a', 'b', 'b', 'b']
    >>> table = group_metrics(y_true, y_pred, sensitive_features=group, pos_label='yes')
    >>> print(table[['group', 'count', 'selection_rate']].round(3).to_string(index=False))
    group  count  selection_rate
        a      3           0.333
        b      3           0.667
    """
    prep = prepare(
        y_true, y_pred, pos_label=pos_label, sensitive_features=sensitive_features,
        legitimate_features=legitimate_features, sample_weight=sample_weight,
    )
    if prep.group is None:
        raise ValueError(NEED_SENSITIVE.format(what="group_metrics"))
    frame = by_group_frame(prep, GROUP_COLUMNS[1:], conditional=prep.legit is not None)
    table = frame.by_group.reset_index()
    table = table[table["count"].notna()].copy()
    table["count"] = table["count"].astype(int)
    lead = ["legit"] if prep.legit is not None else []
    return table[lead + list(GROUP_COLUMNS)].reset_index(drop=True)
