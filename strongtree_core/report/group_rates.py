"""Each group's compared rates with their intervals, on one part of the rows: the
report's one door to the fairness measures.

The numbers are those of :func:`strongtree_core.metrics.fairness_intervals` (Wilson
score intervals for a group's rate; the gap's interval simultaneous over its
differences), measured from the predictions given.  Everything the report says
about a group's rate comes through :func:`group_rates`, so a change in how rates
and intervals are measured is made here once.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from strongtree_core.metrics import fairness_intervals
from strongtree_core.metrics.fairness_gaps import NOTION_RATES

#: Confidence of every interval in the report.
CONFIDENCE = 0.95
#: Notions shown when none was constrained: every rate they compare (share predicted
#: positive, true and false positive rates).
MEASURED = ("statistical_parity", "equalized_odds")


def shown_notions(constrained: Sequence[str], legitimate: Sequence[str]) -> list[str]:
    """The notions a report shows: those constrained, else :data:`MEASURED`."""
    notions = [n for n in constrained if n in NOTION_RATES and (n != "conditional_statistical_parity" or legitimate)]
    return notions or list(MEASURED)


def group_rates(
    frame: pd.DataFrame,
    predictions: np.ndarray,
    *,
    target: str,
    protected: Sequence[str],
    legitimate: Sequence[str] = (),
    pos_label: Any,
    notions: Sequence[str],
) -> pd.DataFrame:
    """One row per notion, compared cohort and group: the gap with its interval, the
    group's rate (``value``) with its interval (``low``, ``high``), its counts
    (``positives`` of ``denominator``) and the ``small`` flag; columns of
    :data:`strongtree_core.metrics.INTERVAL_COLUMNS`."""
    return fairness_intervals(
        frame[target].to_numpy(), np.asarray(predictions), sensitive_features=frame[list(protected)],
        legitimate_features=frame[list(legitimate)] if legitimate else None, pos_label=pos_label,
        notions=list(notions), confidence=CONFIDENCE,
    )
