"""What a fairness promise on new rows will cost, said before it is asked for.

Two costs (docs/fairness-on-new-rows.md):

* **time**: the promise refits the tree several times (:data:`PLANNED_FITS` by method), all
  within the one time limit, so each fit gets a share of it;
* **the chance of a constant tree**: a promise needs every compared difference's sampling
  error on the training rows to fit inside δ.  The largest of those errors, measured from
  the table's own group sizes, is the sampling *margin* of :func:`promise_outlook`: even a
  tree whose training gap is exactly 0 passes the criterion only when δ exceeds it.  Its
  worst case (rates of 50 %) is used, so it is a rough guide, not a forecast: the methods also
  add the fit's estimated optimism, which only makes a constant tree likelier.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
from scipy.stats import norm

from strongtree_core.metrics.gap_intervals import compared_counts
from strongtree_core.metrics.promise import BOOTSTRAP_FITS, CROSSFIT_FOLDS, HOLDOUT_SHARE, HOLDOUT_STEPS, SUBSAMPLE_PAIRS
from strongtree_core.words import count_of, fmt

#: Fits a promise plans by method: the fit at δ, the refits on parts of the rows, up to two more
#: (a tightened bound, the constant tree); the time limit is shared among them.
PLANNED_FITS: dict[str, int] = {
    "margin": 3, "bootstrap": 3 + BOOTSTRAP_FITS, "subsample": 3 + 2 * SUBSAMPLE_PAIRS,
    "crossfit": 3 + 3 * CROSSFIT_FOLDS, "holdout": len(HOLDOUT_STEPS) + 2,
}
#: What the margin says of the chance of a constant tree: at least δ, at least half of δ, less.
LIKELY = "likely: even a tree with no gap on the training rows would be too uncertain to promise δ"
POSSIBLE = "possible: only a tree whose training gap is well below δ can keep the promise"
UNLIKELY = "unlikely: the rows leave room for a tree that splits"


@dataclass(frozen=True)
class PromiseOutlook:
    """A promise's cost, before the solve.

    Attributes
    ----------
    fits : int
        Fits the promise plans (they share the time limit).
    seconds_per_fit : float
        The time limit divided among them.
    margin : float or None
        The largest sampling error of a compared difference at the confidence asked (a share;
        worst case, rates of 50 %), over the rows the promise judges on; None when no two groups
        can be compared.
    group, cohort : str
        The smallest group of the compared pair that sets the margin, and among which rows.
    rows : int
        That group's rows.
    constant : str
        :data:`LIKELY`, :data:`POSSIBLE` or :data:`UNLIKELY`.
    """

    fits: int
    seconds_per_fit: float
    margin: float | None
    group: str = ""
    cohort: str = ""
    rows: int = 0
    constant: str = ""

    def words(self, fairness_bound: float, confidence: float, method: str) -> str:
        """The outlook in plain words (one paragraph)."""
        time = (f"A promise refits the tree about {self.fits} times within the time limit (about "
                f"{fmt(self.seconds_per_fit, 'seconds')} each), so each fit gets less time than one solve alone.")
        if self.margin is None:
            return time
        level = f"{round(100 * confidence)} %"
        return (f"{time} With these rows, the smallest compared group, {self.group} among {self.cohort} "
                f"({count_of(self.rows, 'row')}), leaves a gap measured on the training rows uncertain by up to "
                f"±{fmt(self.margin, 'points')} at {level} confidence, against δ = {fmt(fairness_bound, 'points')}: "
                f"a constant tree is {self.constant} (a rough guide from the group sizes; the {method} method "
                f"{'proves' if method == 'holdout' else 'estimates'} the promise).")


def promise_outlook(y_positive, groups, notions: Sequence[str], *, fairness_bound: float, confidence: float,
                    time_limit: float, method: str = "subsample", legit=None) -> PromiseOutlook:
    """What a promise of ``fairness_bound`` at ``confidence`` will cost on these training rows.

    Parameters
    ----------
    y_positive : array of bool, shape (n,)
        Whether each training row is of the positive class.
    groups : array-like, shape (n,)
        Each row's protected group (any labels).
    notions : sequence of str
        The fairness notions asked for.
    legit : array-like, shape (n,), optional
        Each row's legitimate level (conditional statistical parity).

    Examples
    --------
    >>> import numpy as np
    >>> y = np.r_[np.ones(100, bool), np.zeros(100, bool)]
    >>> g = np.array(["a"] * 150 + ["b"] * 50)
    >>> outlook = promise_outlook(y, g, ["statistical_parity"], fairness_bound=0.05, confidence=0.9, time_limit=60)
    >>> outlook.fits, outlook.group, outlook.rows, round(100 * outlook.margin, 1)
    (13, 'b', 50, 13.4)
    """
    fits = PLANNED_FITS.get(method, PLANNED_FITS["subsample"])
    y_positive = np.asarray(y_positive, dtype=bool)
    codes, names = pd.factorize(pd.Series(np.asarray(groups, dtype=object)).astype(str), sort=True)
    legit_codes = None if legit is None else pd.factorize(pd.Series(np.asarray(legit, dtype=object)).astype(str),
                                                          sort=True)[0]
    cohorts = [c for notion in notions
               for c in compared_counts(notion, y_positive, np.zeros(y_positive.size, dtype=bool), codes, len(names),
                                        legit=legit_codes)]
    pairs = [(c, p, q) for c in cohorts for p, q in c.pairs()]
    if not pairs:
        return PromiseOutlook(fits, time_limit / fits, None)
    alpha = 1.0 - confidence
    z = float(norm.ppf(1 - alpha / (2 * len(pairs))))  # every difference at once, both tails (the union bound)
    judged = HOLDOUT_SHARE if method == "holdout" else 1.0  # the holdout judges on the rows it holds out

    def error(c, p, q) -> float:
        n_p, n_q = judged * c.rows[p], judged * c.rows[q]
        return z * float(np.sqrt(0.25 / max(n_p, 1.0) + 0.25 / max(n_q, 1.0)))

    c, p, q = max(pairs, key=lambda pair: error(*pair))
    margin = error(c, p, q)
    small = p if c.rows[p] <= c.rows[q] else q
    constant = LIKELY if margin >= fairness_bound else POSSIBLE if margin >= fairness_bound / 2 else UNLIKELY
    return PromiseOutlook(fits, time_limit / fits, margin, str(names[small]), c.label, int(c.rows[small]), constant)
