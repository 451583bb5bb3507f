"""Fairness constraints up to a bias delta on formulation (11) (paper, Section 4.3).

Every notion of the paper compares, between every two levels p, p' of the
protected attribute, the rate at which rows of a *cohort* are predicted
positive:

==============================  =========================================
notion                          cohorts (rows whose positive rate is compared)
==============================  =========================================
statistical parity              all rows
conditional statistical parity  rows with legitimate level l, for every l
predictive equality             rows with y != k+  (false positive rate)
equal opportunity               rows with y  = k+  (true positive rate)
equalized odds                  both of the previous two
==============================  =========================================

With ``c_i`` the rows behind pattern ``i``, for cohort ``C`` and group ``p``

    S_p = sum_{i in C, p_i = p} c_i yhat[i, k+]      N_p = sum_{i in C, p_i = p} c_i

and the paper's constraint | S_p / N_p - S_p' / N_p' | <= delta becomes, after
multiplying by N_p N_p' / g > 0 with g = gcd(N_p, N_p'), one ranged row per
pair (p, p'):

    -floor(delta N_p N_p' / g) <= (N_p' / g) S_p - (N_p / g) S_p' <= floor(delta N_p N_p' / g)

The middle has integer coefficients c_i N_p' / g, so it is an integer at
every integral solution; flooring the right-hand side in exact rational
arithmetic (delta read as the decimal the user typed) changes nothing at
integral points and leaves the solver's feasibility tolerance nothing to
round up.
A group with no rows in a cohort (N_p = 0) has no rate there: it is left out
of that cohort's pairs, and :meth:`ParityConstraint.skipped_reasons` says so.

The paper: Sina Aghaei, Andrés Gómez and Phebe Vayanos, *Strong Optimal Classification Trees*,
arXiv:2103.15965 (Operations Research).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, ClassVar, Sequence

import numpy as np

from strongtree_core.formulation.quality_constraints import (
    ConstraintCheck,
    exact_bound,
    resolve_positive,
)

if TYPE_CHECKING:  # pragma: no cover
    from strongtree_core.formulation.arrays import RowBuilder
    from strongtree_core.formulation.flow_all import FlowAllColumns

#: Error texts (tests assert them).
NO_PROTECTED_GROUPS = (
    "{notion} needs the protected group of every row, but none was given: "
    "pass sensitive_features=<column name(s)> to fit"
)
NO_LEGITIMATE_FACTOR = (
    "conditional statistical parity needs a legitimate factor for every row, but none was given: "
    "pass legitimate_features=<column name(s)> to fit"
)
LENGTH_MISMATCH = "{what} has {got} entries but y_true has {expected}: pass one entry per row"


@dataclass(frozen=True)
class Cohort:
    """Rows whose positive-prediction rate is compared across groups.

    Attributes
    ----------
    label : str
        "all rows", "legitimate level 'x'", ...
    rate : str
        What the rate is called there ("share predicted positive", "true positive rate", ...).
    mask : ndarray of bool, shape (n,)
    sizes : ndarray of int, shape (n_groups,)
        N_p: rows of each group in the cohort.
    """

    label: str
    rate: str
    mask: np.ndarray
    sizes: np.ndarray

    def pairs(self) -> list[tuple[int, int]]:
        """Pairs of groups that both have rows in the cohort."""
        return list(combinations(np.flatnonzero(self.sizes > 0).tolist(), 2))


@dataclass(frozen=True)
class ParityConstraint:
    """Base of the fairness constraints: pairwise gaps of a positive rate <= ``bound``.

    Parameters
    ----------
    bound : float in [0, 1]
        The bias delta.
    pos_label : int or None
        Class index of the positive outcome; None uses ``TreeSpec.pos_label``.
    group_levels : sequence of str, optional
        Readable name of each protected-group code (for messages).
    legit_levels : sequence of str, optional
        Readable name of each legitimate-factor code (for messages).
    """

    bound: float
    pos_label: int | None = None
    group_levels: Sequence[str] | None = field(default=None, compare=False)
    legit_levels: Sequence[str] | None = field(default=None, compare=False)

    name: ClassVar[str] = "parity"
    notion: ClassVar[str] = "parity"
    #: What is compared, for :meth:`describe`.
    compared: ClassVar[str] = "the shares of rows predicted positive"
    scope: ClassVar[str] = "For every two protected groups"
    couples_datapoints: ClassVar[bool] = True

    def __post_init__(self) -> None:
        exact_bound(self.bound, "fairness_bound")

    # -- what is compared ------------------------------------------------
    def _cohort_masks(self, y: np.ndarray, legit: np.ndarray | None, positive: int) -> list[tuple[str, str, np.ndarray]]:
        raise NotImplementedError

    def _group_name(self, g: int) -> str:
        if self.group_levels is not None and 0 <= g < len(self.group_levels):
            return f"group {self.group_levels[g]!r}"
        return f"group {g}"

    def _legit_name(self, level: int) -> str:
        if self.legit_levels is not None and 0 <= level < len(self.legit_levels):
            return f"legitimate level {self.legit_levels[level]!r}"
        return f"legitimate level {level}"

    def cohorts(self, y, group, legit, positive: int, count=None) -> tuple[list[Cohort], list[str]]:
        """The cohorts compared and the reasons groups were left out.

        Parameters
        ----------
        y, group : array of int, shape (n,)
            Class index and protected-group code of each row (or pattern).
        legit : array of int or None, shape (n,)
        positive : int
        count : array of int, shape (n,), optional
            Rows behind each entry (1 by default).
        """
        y = np.asarray(y)
        if group is None:
            raise ValueError(NO_PROTECTED_GROUPS.format(notion=self.notion))
        group = np.asarray(group, dtype=np.int64)
        if group.shape[0] != y.shape[0]:
            raise ValueError(LENGTH_MISMATCH.format(what="group", got=group.shape[0], expected=y.shape[0]))
        if legit is not None:
            legit = np.asarray(legit, dtype=np.int64)
            if legit.shape[0] != y.shape[0]:
                raise ValueError(LENGTH_MISMATCH.format(what="legit", got=legit.shape[0], expected=y.shape[0]))
        count = np.ones(y.shape[0], dtype=np.int64) if count is None else np.asarray(count, dtype=np.int64)
        n_groups = max(int(group.max()) + 1 if group.size else 0, len(self.group_levels or ()))
        out: list[Cohort] = []
        skipped: list[str] = []
        for label, rate, mask in self._cohort_masks(y, legit, positive):
            sizes = np.bincount(group[mask], weights=count[mask], minlength=n_groups).astype(np.int64)
            cohort = Cohort(label, rate, mask, sizes)
            empty = np.flatnonzero(sizes == 0)
            for g in empty:
                skipped.append(
                    f"{self.notion}: {self._group_name(int(g))} has no rows among {label}, "
                    f"so its {rate} is undefined there and it is left out of that comparison"
                )
            if len(cohort.pairs()) == 0 and n_groups - empty.size == 1:
                skipped.append(f"{self.notion}: only one group has rows among {label}, so there is nothing to compare there")
            out.append(cohort)
        return out, skipped

    # -- rows of the model -----------------------------------------------
    def add_rows(self, cols: "FlowAllColumns", rows: "RowBuilder") -> None:
        """One ranged row per cohort and pair of groups (see the module docstring)."""
        data = cols.data
        positive = resolve_positive(self.pos_label, cols.pos_label, self.name)
        cohorts, _ = self.cohorts(data.y, data.group, data.legit, positive, data.count)
        delta = exact_bound(self.bound, "fairness_bound")
        group = np.asarray(data.group)
        for cohort in cohorts:
            for p, q in cohort.pairs():
                n_p, n_q = int(cohort.sizes[p]), int(cohort.sizes[q])
                cols_p, coefs_p = cols.linear_count(positive, cohort.mask & (group == p))
                cols_q, coefs_q = cols.linear_count(positive, cohort.mask & (group == q))
                # |(N_p' / g) S_p - (N_p / g) S_p'| <= floor(delta N_p N_p' / g),  g = gcd(N_p, N_p')
                g = math.gcd(n_p, n_q)
                rhs = float(math.floor(delta * n_p * n_q / g))
                rows.add(
                    f"{self.name} ({cohort.label}; groups {p}, {q})",
                    np.concatenate([cols_p, cols_q])[None, :],
                    np.concatenate([(n_q // g) * coefs_p, -(n_p // g) * coefs_q])[None, :],
                    -rhs,
                    rhs,
                )

    def skipped_reasons(self, data, positive: int | None = None) -> list[str]:
        """Groups left out of a comparison on ``data`` (patterns) and why."""
        pos = resolve_positive(self.pos_label, positive, self.name)
        return self.cohorts(data.y, data.group, data.legit, pos, data.count)[1]

    # -- re-measuring on predictions -------------------------------------
    def measure(self, y_true, y_pred, *, group=None, legit=None, positive: int | None = None, count=None) -> list[ConstraintCheck]:
        """Largest pairwise gap of the rate over all cohorts, decided exactly.

        Parameters
        ----------
        y_true, y_pred : array of int, shape (n,)
            Class indices.
        group, legit : array of int, shape (n,)
        positive : int, optional
            Used when the constraint has no positive class of its own.
        count : array of int, shape (n,), optional
        """
        pos = resolve_positive(self.pos_label, positive, self.name)
        y_pred = np.asarray(y_pred)
        if y_pred.shape[0] != np.asarray(y_true).shape[0]:
            raise ValueError(LENGTH_MISMATCH.format(what="y_pred", got=y_pred.shape[0], expected=np.asarray(y_true).shape[0]))
        cohorts, skipped = self.cohorts(y_true, group, legit, pos, count)
        count = np.ones(y_pred.shape[0], dtype=np.int64) if count is None else np.asarray(count, dtype=np.int64)
        group = np.asarray(group, dtype=np.int64)
        delta = exact_bound(self.bound, "fairness_bound")
        said_pos = y_pred == pos
        gap = float("nan")
        ok = True
        for cohort in cohorts:
            if not cohort.pairs():
                continue
            hits = np.bincount(group[cohort.mask & said_pos], weights=count[cohort.mask & said_pos], minlength=cohort.sizes.size)
            hits = hits.astype(np.int64)
            present = cohort.sizes > 0
            rates = hits[present] / cohort.sizes[present]
            gap = float(np.nanmax([gap, rates.max() - rates.min()]))
            for p, q in cohort.pairs():
                diff = abs(int(cohort.sizes[q]) * int(hits[p]) - int(cohort.sizes[p]) * int(hits[q]))
                ok &= bool(diff <= delta * int(cohort.sizes[p]) * int(cohort.sizes[q]))
        return [ConstraintCheck(f"{self.notion} difference", gap, self.bound, ok, "; ".join(skipped))]

    def describe(self) -> str:
        """One plain-language sentence."""
        return f"{self.scope}, {self.compared} differ by at most {float(self.bound)!r} ({self.notion})."


@dataclass(frozen=True)
class StatisticalParity(ParityConstraint):
    """Shares of rows predicted positive differ by at most ``bound`` between groups."""

    name: ClassVar[str] = "statistical_parity"
    notion: ClassVar[str] = "statistical parity"

    def _cohort_masks(self, y, legit, positive):
        return [("all rows", "share predicted positive", np.ones(y.shape[0], dtype=bool))]


@dataclass(frozen=True)
class ConditionalStatisticalParity(ParityConstraint):
    """Statistical parity within every level of the legitimate factor."""

    name: ClassVar[str] = "conditional_statistical_parity"
    notion: ClassVar[str] = "conditional statistical parity"
    scope: ClassVar[str] = "Among rows that share a level of the legitimate factor, for every two protected groups"

    def _cohort_masks(self, y, legit, positive):
        if legit is None:
            raise ValueError(NO_LEGITIMATE_FACTOR)
        return [
            (f"rows of {self._legit_name(int(level))}", "share predicted positive", legit == level)
            for level in np.unique(legit)
        ]


@dataclass(frozen=True)
class PredictiveEquality(ParityConstraint):
    """False positive rates differ by at most ``bound`` between groups."""

    name: ClassVar[str] = "predictive_equality"
    notion: ClassVar[str] = "predictive equality"
    compared: ClassVar[str] = "the false positive rates (shares of truly negative rows predicted positive)"

    def _cohort_masks(self, y, legit, positive):
        return [("rows outside the positive class", "false positive rate", y != positive)]


@dataclass(frozen=True)
class EqualOpportunity(ParityConstraint):
    """True positive rates differ by at most ``bound`` between groups."""

    name: ClassVar[str] = "equal_opportunity"
    notion: ClassVar[str] = "equal opportunity"
    compared: ClassVar[str] = "the true positive rates (shares of truly positive rows predicted positive)"

    def _cohort_masks(self, y, legit, positive):
        return [("rows of the positive class", "true positive rate", y == positive)]


@dataclass(frozen=True)
class EqualizedOdds(ParityConstraint):
    """True positive rates and false positive rates each differ by at most ``bound``."""

    name: ClassVar[str] = "equalized_odds"
    notion: ClassVar[str] = "equalized odds"
    compared: ClassVar[str] = "both the true positive rates and the false positive rates"

    def _cohort_masks(self, y, legit, positive):
        return [
            ("rows of the positive class", "true positive rate", y == positive),
            ("rows outside the positive class", "false positive rate", y != positive),
        ]


#: Fairness notions by the estimator's name; each class takes ``(bound, pos_label)``.
FAIRNESS_NOTIONS: dict[str, type[ParityConstraint]] = {
    cls.name: cls
    for cls in (StatisticalParity, ConditionalStatisticalParity, PredictiveEquality, EqualOpportunity, EqualizedOdds)
}
