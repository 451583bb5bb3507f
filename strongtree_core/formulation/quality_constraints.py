"""Classification-quality floors on formulation (11) (paper, Section 4.2).

With a positive class ``k+`` and the prediction indicator of formulation (11)

    yhat[i, k+] = sum_{n in B u T} z[i, n, t_{k+}]     (1 when pattern i is predicted k+),

and ``c_i`` the number of training rows behind pattern ``i``:

    TP = sum_{i: y_i = k+} c_i yhat[i, k+]      P = sum_{i: y_i = k+} c_i
    FP = sum_{i: y_i != k+} c_i yhat[i, k+]     N = sum_{i: y_i != k+} c_i

Recall, precision and specificity floors are linear rows in TP and FP.  Every
left-hand side below has integer coefficients, so it is an integer at every
integral solution; right-hand sides are therefore rounded onto the integer
lattice with exact rational arithmetic (the bound ``C`` is read as the decimal
the user typed, ``Fraction(repr(C))``).  Two consequences:

* the row holds at an integral solution exactly when the ratio meets ``C``,
  with no floating-point slack either way (``0.1 * 10`` is not ``1.0000000000000002``);
* a solver's feasibility tolerance (about 1e-6) cannot let an integral
  solution through that misses the bound by a whole row.

What remains is the integrality tolerance of the solver (a binary at
``1 - 1e-6``); :meth:`measure` re-counts every quantity from the decoded
tree's predictions, which depend only on b, p and w, so a tree presented as
meeting a bound is checked on its actual predictions.

Counts, not sample weights, define these ratios: they are statements about
rows of the training table.  Multi-class targets are treated one-versus-rest
(positive class against all others).

The paper: Sina Aghaei, Andrés Gómez and Phebe Vayanos, *Strong Optimal Classification Trees*,
arXiv:2103.15965 (Operations Research).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, ClassVar, Iterator

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from strongtree_core.formulation.arrays import RowBuilder
    from strongtree_core.formulation.flow_all import FlowAllColumns

#: Error texts (tests assert them).
BOUND_OUT_OF_RANGE = "{what} must be a number between 0 and 1, got {value!r}: pass for example {what}=0.8"
NO_POSITIVE_CLASS = (
    "{what} needs a positive class, but none was given: pass pos_label=<class index> "
    "to the constraint or the tree specification"
)


@dataclass(frozen=True)
class ConstraintCheck:
    """One constrained quantity re-measured on predictions.

    Unpacks as ``(name, measured, bound, satisfied)``.

    Attributes
    ----------
    name : str
        What was measured ("recall", "statistical parity difference", ...).
    measured : float
        The measured value; NaN when it is undefined (for example precision
        of a tree that predicts no row positive).
    bound : float
        The user's bound (a floor for quality, a ceiling for fairness gaps).
    satisfied : bool
        Decided in exact rational arithmetic on integer row counts.
    detail : str
        Why an undefined quantity counts as satisfied, or which groups were left out.
    """

    name: str
    measured: float
    bound: float
    satisfied: bool
    detail: str = ""

    def __iter__(self) -> Iterator:
        return iter((self.name, self.measured, self.bound, self.satisfied))


def exact_bound(value: float, what: str) -> Fraction:
    """The bound as the exact decimal the user typed, checked to lie in [0, 1]."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(BOUND_OUT_OF_RANGE.format(what=what, value=value)) from None
    if not (0.0 <= number <= 1.0):
        raise ValueError(BOUND_OUT_OF_RANGE.format(what=what, value=value))
    return Fraction(repr(number))


def smallest_fraction_at_least(c: Fraction, max_denominator: int) -> Fraction:
    """Smallest fraction ``a / b >= c`` with ``1 <= b <= max_denominator``.

    A ratio whose denominator is at most ``max_denominator`` is ``>= c`` exactly
    when it is ``>= `` this fraction (its right neighbour in the Farey sequence
    of that order), so ``c`` may be replaced by it without changing which
    integral solutions are feasible, while keeping coefficients small.
    The two candidates come from the continued-fraction expansion of ``c``
    (its last convergent and semiconvergent within the denominator limit).
    """
    if max_denominator < 1:
        raise ValueError("max_denominator must be at least 1")
    if c.denominator <= max_denominator:
        return c
    p0, q0, p1, q1 = 0, 1, 1, 0
    n, d = c.numerator, c.denominator
    while True:
        a = n // d
        q2 = q0 + a * q1
        if q2 > max_denominator:
            break
        p0, q0, p1, q1 = p1, q1, p0 + a * p1, q2
        n, d = d, n - a * d
    k = (max_denominator - q0) // q1
    candidates = (Fraction(p0 + k * p1, q0 + k * q1), Fraction(p1, q1))
    return min(x for x in candidates if x >= c)


def percent(value: float) -> str:
    """0.85 -> "85%" (no rounding of the user's bound)."""
    return f"{float(value) * 100:.10g}%"


def resolve_positive(own: int | None, fallback: int | None, what: str) -> int:
    """The constraint's positive class, else the specification's."""
    positive = own if own is not None else fallback
    if positive is None:
        raise ValueError(NO_POSITIVE_CLASS.format(what=what))
    return int(positive)


def _row_counts(y: np.ndarray, count: np.ndarray | None) -> np.ndarray:
    return np.ones(len(y), dtype=np.int64) if count is None else np.asarray(count, dtype=np.int64)


def confusion_counts(y_true: np.ndarray, y_pred: np.ndarray, positive: int, count: np.ndarray | None = None) -> tuple[int, int, int, int]:
    """(TP, FP, P, N) of the positive class, counting ``count`` rows per entry."""
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    c = _row_counts(y_true, count)
    is_pos = y_true == positive
    said_pos = y_pred == positive
    return (
        int(c[is_pos & said_pos].sum()),
        int(c[~is_pos & said_pos].sum()),
        int(c[is_pos].sum()),
        int(c[~is_pos].sum()),
    )


def _ratio(num: int, den: int) -> float:
    return num / den if den > 0 else float("nan")


@dataclass(frozen=True)
class QualityFloor:
    """Base of the quality floors: a bound in [0, 1] on a rate of the positive class.

    Parameters
    ----------
    bound : float in [0, 1]
        The floor C.
    pos_label : int or None
        Class index of the positive class; None uses ``TreeSpec.pos_label``.
    """

    bound: float
    pos_label: int | None = None

    name: ClassVar[str] = "quality_floor"
    couples_datapoints: ClassVar[bool] = True

    def __post_init__(self) -> None:
        exact_bound(self.bound, self.name)

    def skipped_reasons(self, data, positive: int | None = None) -> list[str]:
        """Why the floor is not applied on ``data`` (its rate is undefined there), if it is not."""
        return []


@dataclass(frozen=True)
class MinRecall(QualityFloor):
    """Recall (true positive rate) of the positive class at least ``bound``."""

    name: ClassVar[str] = "min_recall"

    def add_rows(self, cols: "FlowAllColumns", rows: "RowBuilder") -> None:
        """Recall floor (paper, Section 4.2, "Constraining Recall").

        (1 / P) sum_{i: y_i = k+} c_i yhat[i, k+] >= C
          <=>  TP >= ceil(C * P)          (TP is an integer at integral solutions)
        """
        data = cols.data
        positive = resolve_positive(self.pos_label, cols.pos_label, "min_recall")
        is_pos = data.y == positive
        P = int(data.count[is_pos].sum())
        if P == 0:
            return
        rhs = math.ceil(exact_bound(self.bound, "min_recall") * P)
        tp_cols, tp_coefs = cols.linear_count(positive, is_pos)
        rows.add("min_recall (Sec. 4.2)", tp_cols[None, :], tp_coefs[None, :], float(rhs), np.inf)

    def skipped_reasons(self, data, positive: int | None = None) -> list[str]:
        pos = resolve_positive(self.pos_label, positive, "min_recall")
        if int(data.count[data.y == pos].sum()) == 0:
            return ["no training row belongs to the positive class, so recall is undefined: the recall floor is not applied"]
        return []

    def measure(self, y_true, y_pred, *, positive: int | None = None, count=None, **_) -> list[ConstraintCheck]:
        """Recall of ``y_pred`` (class indices) against the floor, exactly."""
        pos = resolve_positive(self.pos_label, positive, "min_recall")
        tp, _fp, P, _N = confusion_counts(y_true, y_pred, pos, count)
        if P == 0:
            return [ConstraintCheck("recall", float("nan"), self.bound, True, "no row of the positive class: recall is undefined and not constrained")]
        ok = Fraction(tp, P) >= exact_bound(self.bound, "min_recall")
        return [ConstraintCheck("recall", tp / P, self.bound, bool(ok))]

    def describe(self) -> str:
        return (
            f"At least {percent(self.bound)} of the rows that truly belong to the positive class "
            f"are predicted positive (recall ≥ {float(self.bound)!r})."
        )


@dataclass(frozen=True)
class MinPrecision(QualityFloor):
    """Precision of the positive class at least ``bound`` (eq. 12).

    A tree that predicts no row positive meets the floor trivially, exactly as
    eq. (12) reads (0 >= C * 0).
    """

    name: ClassVar[str] = "min_precision"

    def add_rows(self, cols: "FlowAllColumns", rows: "RowBuilder") -> None:
        """Precision floor, eq. (12).

        sum_{i: y_i = k+} c_i yhat[i, k+] >= C sum_i c_i yhat[i, k+]
          <=>  TP >= C (TP + FP)
          <=>  (b - a) TP - a FP >= 0      with C replaced by a / b, the smallest
                                           fraction >= C of denominator <= n rows.

        TP + FP <= n, so precision = TP / (TP + FP) has denominator <= n and
        precision >= C  <=>  precision >= a / b: the row is exact with integer
        coefficients no larger than n.
        """
        data = cols.data
        positive = resolve_positive(self.pos_label, cols.pos_label, "min_precision")
        n_rows = max(int(data.count.sum()), 1)
        floor = smallest_fraction_at_least(exact_bound(self.bound, "min_precision"), n_rows)
        a, b = floor.numerator, floor.denominator
        is_pos = data.y == positive
        tp_cols, tp_coefs = cols.linear_count(positive, is_pos)
        fp_cols, fp_coefs = cols.linear_count(positive, ~is_pos)
        row_cols = np.concatenate([tp_cols, fp_cols])
        row_coefs = np.concatenate([(b - a) * tp_coefs, -a * fp_coefs])
        rows.add("min_precision (12)", row_cols[None, :], row_coefs[None, :], 0.0, np.inf)

    def measure(self, y_true, y_pred, *, positive: int | None = None, count=None, **_) -> list[ConstraintCheck]:
        """Precision of ``y_pred`` against the floor, exactly."""
        pos = resolve_positive(self.pos_label, positive, "min_precision")
        tp, fp, _P, _N = confusion_counts(y_true, y_pred, pos, count)
        if tp + fp == 0:
            return [ConstraintCheck("precision", float("nan"), self.bound, True, "no row is predicted positive: eq. (12) holds trivially")]
        ok = Fraction(tp, tp + fp) >= exact_bound(self.bound, "min_precision")
        return [ConstraintCheck("precision", tp / (tp + fp), self.bound, bool(ok))]

    def describe(self) -> str:
        return (
            f"Of the rows predicted positive, at least {percent(self.bound)} truly are positive "
            f"(precision ≥ {float(self.bound)!r}); a tree that predicts no row positive meets this trivially."
        )


@dataclass(frozen=True)
class MinSpecificity(QualityFloor):
    """Specificity (true negative rate) at least ``bound``; rows of every other class are the negatives."""

    name: ClassVar[str] = "min_specificity"

    def add_rows(self, cols: "FlowAllColumns", rows: "RowBuilder") -> None:
        """Specificity floor (paper, Section 4.2, "Balancing Sensitivity and Specificity").

        (1 / N) sum_{i: y_i != k+} c_i (1 - yhat[i, k+]) >= C
          <=>  N - FP >= C N
          <=>  FP <= N - ceil(C * N)        (FP is an integer at integral solutions)

        Written with yhat[i, k+] it also covers several negative classes.
        """
        data = cols.data
        positive = resolve_positive(self.pos_label, cols.pos_label, "min_specificity")
        is_neg = data.y != positive
        N = int(data.count[is_neg].sum())
        if N == 0:
            return
        rhs = N - math.ceil(exact_bound(self.bound, "min_specificity") * N)
        fp_cols, fp_coefs = cols.linear_count(positive, is_neg)
        rows.add("min_specificity (Sec. 4.2)", fp_cols[None, :], fp_coefs[None, :], -np.inf, float(rhs))

    def skipped_reasons(self, data, positive: int | None = None) -> list[str]:
        pos = resolve_positive(self.pos_label, positive, "min_specificity")
        if int(data.count[data.y != pos].sum()) == 0:
            return ["every training row belongs to the positive class, so specificity is undefined: "
                    "the specificity floor is not applied"]
        return []

    def measure(self, y_true, y_pred, *, positive: int | None = None, count=None, **_) -> list[ConstraintCheck]:
        """Specificity of ``y_pred`` against the floor, exactly."""
        pos = resolve_positive(self.pos_label, positive, "min_specificity")
        _tp, fp, _P, N = confusion_counts(y_true, y_pred, pos, count)
        if N == 0:
            return [ConstraintCheck("specificity", float("nan"), self.bound, True, "no row outside the positive class: specificity is undefined and not constrained")]
        ok = Fraction(N - fp, N) >= exact_bound(self.bound, "min_specificity")
        return [ConstraintCheck("specificity", (N - fp) / N, self.bound, bool(ok))]

    def describe(self) -> str:
        return (
            f"At least {percent(self.bound)} of the rows outside the positive class are predicted "
            f"negative (specificity ≥ {float(self.bound)!r})."
        )


#: Quality constraints by the estimator's parameter name.
QUALITY_CONSTRAINTS = {
    "min_recall": MinRecall,
    "min_precision": MinPrecision,
    "min_specificity": MinSpecificity,
}
