"""A fairness promise for new rows: the population gap of the fitted tree is at most delta
with probability at least c over the draw of the training rows.

The training-rows bound alone does not give this: the optimizer pins the training
gap near delta, so the gap on the population exceeds delta about half the time for
each compared difference.  The methods (see docs/fairness-on-new-rows.md):

``margin`` (asymptotic, its coverage measured by simulation)
    For a tree h, each compared difference k (every pair of groups with rows, in
    every cohort of every notion fitted) has the training estimate ``d_k`` and the
    Agresti-Caffo standard error (one success and one failure added to each group,
    so it is never 0 on a rate of 0 or 1)

        se_k^2 = p_a (1 - p_a) / (n_a + 2) + p_b (1 - p_b) / (n_b + 2),   p = (k + 1) / (n + 2).

    Its risk, an approximate bound on P(|true d_k| > delta) summed over k (Bonferroni, both tails), is

        R(h) = sum_k [ Phi_bar((delta - |d_k|) / se_k) + Phi_bar((delta + |d_k|) / se_k) ].

    The promise holds when R(h) <= 1 - c.  Fit at the training bound delta' = delta;
    while R > 1 - c, set delta' to the largest t with
    ``sum_k [Phi_bar((delta - t)/se_k) + Phi_bar((delta + t)/se_k)] <= 1 - c`` (the current
    tree's se_k), refit and re-check with the new tree's own estimates; when a round
    does not lower delta' the bound steps down by delta/10.  A tree whose leaves all
    predict one class has population gap exactly 0 (every rate is 0, or every rate is 1):
    it keeps any promise with certainty, and is the fallback when the tightest training
    bound, delta / 50, fails too.

``subsample`` (the default) and ``bootstrap`` (asymptotic, measured by simulation)
    The margin, with delta replaced by ``delta - omega`` and ``Var(omega)`` added to every
    ``se_k^2``, where omega estimates the fit's optimism (population gap minus training
    gap): the mean excess (:func:`excess`) of fits at delta on complementary halves
    (subsample) or on resamples drawn within each group and class (bootstrap), judged on
    the rows they did not see, rescaled by sqrt(1/2) from n/2 to n rows.

``crossfit`` (asymptotic, measured by simulation)
    The margin on the mean absolute out-of-fold differences of 4-fold fits at each
    training bound in ``CROSSFIT_STEPS``.

``holdout`` (finite-sample guarantee, proved)
    A stratified share of the training rows is held out.  Trees are fitted on the
    rest at the training bounds delta/50, delta/4, delta/2, 3 delta/4, delta, in that order
    (a sequence fixed before the held-out rows are seen); each is tested on the
    held-out rows by an intersection-union test of H0: |d_k| > delta for some k,
    which rejects when, for every k, the exact one-sided bounds of d_k at level
    1 - c (:func:`~strongtree_core.metrics.intervals.difference_bounds_exact`) both lie
    within [-delta, delta].  Testing stops at the first tree not certified; the last
    certified tree is returned (the constant tree when the first is not).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence

import numpy as np
from scipy.stats import norm

from strongtree_core.metrics.gap_intervals import CohortCounts, compared_counts
from strongtree_core.metrics.intervals import difference_bounds_exact

#: Methods (the words of :data:`strongtree_core.vocabulary.PROMISE_METHODS`), and what their guarantee rests on.
PROMISE_METHODS: dict[str, str] = {
    "margin": "asymptotic (normal approximation on the training rows; coverage measured by simulation)",
    "holdout": "finite-sample (exact binomial bounds on held-out rows; proved)",
    "bootstrap": "asymptotic (the margin plus a bootstrap estimate of the fit's optimism; coverage measured by simulation)",
    "subsample": "asymptotic (the margin plus a half-sample estimate of the fit's optimism; coverage measured by simulation)",
    "crossfit": "asymptotic (the margin on out-of-fold predictions of the fit at each training bound; coverage measured by simulation)",
}
#: Bootstrap refits the bootstrap method makes to estimate the optimism.
BOOTSTRAP_FITS = 10
#: Pairs of complementary half-samples the subsample method fits (two fits per pair).
SUBSAMPLE_PAIRS = 5
#: Effective share of the rows a resample's fit sees, by method: a half-sample has n/2 rows; a
#: bootstrap resample's in-bag rates have variance 2 p (1 - p) / n about the population's
#: (multinomial weights: sum w^2 = 2n), the variance of n/2 rows.
RESAMPLE_SHARE = {"bootstrap": 0.5, "subsample": 0.5}
#: Folds of the crossfit method, and its training bounds as shares of delta, loosest first.
CROSSFIT_FOLDS = 4
CROSSFIT_STEPS = (1.0, 0.8, 0.6, 0.4, 0.2, 0.02)
#: Share of the training rows the holdout method holds out.
HOLDOUT_SHARE = 0.3
#: Training bounds the holdout method tries, as shares of delta, tightest first.
HOLDOUT_STEPS = (0.02, 0.25, 0.5, 0.75, 1.0)
#: Rounds of the margin method before it tries its tightest training bound.
MARGIN_ROUNDS = 4
#: The tightest training bound any method tries, as a share of delta (the last step of
#: CROSSFIT_STEPS and the first of HOLDOUT_STEPS too).  Not 0: a bound of exactly 0 asks two
#: groups' rates to be equal as fractions, which only near-constant trees meet, and the exact
#: search can take its whole time limit to prove it (measured: Adult, equalized odds, depth 3,
#: 3,600 rows: 62 s and not proven at 0, 2.6 s proven at 0.1 pp).
TIGHTEST_SHARE = 0.02

#: How each method's promise is known (the words every surface says it in, :mod:`strongtree_core.tree.claim`).
PROMISE_KNOWN: dict[str, str] = {"margin": "estimated", "holdout": "proved", "bootstrap": "estimated",
                                 "subsample": "estimated", "crossfit": "estimated"}

CONSTANT_ONLY = (
    "Only a constant tree keeps the promise: with these {n} training rows, no tree that splits, fitted at training "
    "bounds down to {tightest:.2f} pp, {shown}: {why}. The tree predicts {label!r} for everyone (gap 0 on any rows). "
    "{smallest}"
)
#: How a tree that splits failed, by how the promise is known.
NOT_SHOWN = {
    "estimated": "could be shown to keep the gap on new rows within {delta:.1f} pp with confidence {confidence:.0%} "
                 "(estimated)",
    "proved": "passed the exact test on the held-out rows for a gap within {delta:.1f} pp at confidence "
              "{confidence:.0%}",
}
SMALLEST_DELTA = "The smallest gap a tree that splits, fitted here, could promise is estimated at {value:.1f} pp."
#: The holdout's: the failed tree's bound on the held-out rows, read after the test, so no proved promise itself.
HELD_OUT_SMALLEST = (
    "The first tree that splits would have passed the test at {value:.1f} pp, a bound read after the test "
    "(not a proved promise)."
)
NO_SMALLEST = "No tree that splits was fitted, so no smaller promise can be named."
KEPT_ESTIMATED = (
    "Fairness on new rows, estimated ({method} method; not proved): the gap on new rows of the same population is "
    "estimated to stay within {delta:.1f} pp with confidence {confidence:.0%}. The tree is optimal under the training "
    "bound tightened to {bound:.2f} pp; training accuracy {accuracy:.1f} % against {today:.1f} % at {delta:.1f} pp."
)
KEPT_PROVED = (
    "Fairness on new rows, proved ({method} method): the gap on new rows of the same population is at most "
    "{delta:.1f} pp with probability at least {confidence:.0%}, shown by an exact test on {held:,} held-out rows. The "
    "tree is optimal under the training bound {bound:.2f} pp on the {fitted:,} rows it was fitted on; training "
    "accuracy {accuracy:.1f} % against {today:.1f} % at {delta:.1f} pp on all rows."
)


@dataclass(frozen=True)
class Differences:
    """The compared differences of a tree on some rows (one entry per difference k).

    Attributes
    ----------
    k_a, n_a, k_b, n_b : ndarray of float, shape (K,)
        Rows predicted positive and rows of the cohort, in the two groups compared.
    """

    k_a: np.ndarray
    n_a: np.ndarray
    k_b: np.ndarray
    n_b: np.ndarray

    @property
    def estimate(self) -> np.ndarray:
        return self.k_a / self.n_a - self.k_b / self.n_b

    @property
    def gap(self) -> float:
        return float(np.abs(self.estimate).max()) if self.k_a.size else 0.0

    @property
    def standard_error(self) -> np.ndarray:
        """Agresti-Caffo standard error of each difference (never 0)."""
        p_a = (self.k_a + 1) / (self.n_a + 2)
        p_b = (self.k_b + 1) / (self.n_b + 2)
        return np.sqrt(p_a * (1 - p_a) / (self.n_a + 2) + p_b * (1 - p_b) / (self.n_b + 2))


def differences(cohorts: Sequence[CohortCounts]) -> Differences:
    """Every pair of groups with rows in every cohort given."""
    parts = [(c.positives[p], c.rows[p], c.positives[q], c.rows[q]) for c in cohorts for p, q in c.pairs()]
    arr = np.array(parts, dtype=float).reshape(-1, 4)
    return Differences(arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3])


def tree_differences(notions: Sequence[str], y_positive, pred_positive, group, n_groups: int,
                     legit=None) -> Differences:
    """The differences of all ``notions`` together (the union bound runs over all of them)."""
    cohorts: list[CohortCounts] = []
    for notion in notions:
        cohorts += compared_counts(notion, y_positive, pred_positive, group, n_groups, legit=legit)
    return differences(cohorts)


def risk(diffs: Differences, delta: float, extra_variance: float = 0.0) -> float:
    """R(h): the summed two-tailed normal probabilities that a true difference is beyond delta.

    ``extra_variance`` is added to every ``se_k^2`` (the sampling variance of an optimism
    estimate subtracted from delta: the error of ``d_k`` about ``d_hat_k + omega_hat`` is then
    that of ``d_hat_k`` and of ``omega_hat`` together).
    """
    d = np.abs(diffs.estimate)
    se = np.sqrt(diffs.standard_error ** 2 + extra_variance)
    return float(np.sum(norm.sf((delta - d) / se) + norm.sf((delta + d) / se)))


def _risk_at(t: float, se: np.ndarray, delta: float) -> float:
    return float(np.sum(norm.sf((delta - t) / se) + norm.sf((delta + t) / se)))


def tightened_bound(se: np.ndarray, delta: float, alpha: float) -> float | None:
    """Largest t in [0, delta] with sum_k [Phi_bar((delta-t)/se_k) + Phi_bar((delta+t)/se_k)] <= alpha.

    None when even t = 0 exceeds alpha.  The sum increases with t, so bisection finds it.
    """
    if _risk_at(0.0, se, delta) > alpha:
        return None
    if _risk_at(delta, se, delta) <= alpha:
        return float(delta)
    lo, hi = 0.0, float(delta)
    for _ in range(60):
        mid = (lo + hi) / 2
        if _risk_at(mid, se, delta) <= alpha:
            lo = mid
        else:
            hi = mid
    return lo


def smallest_promise(diffs: Differences, alpha: float, extra_variance: float = 0.0) -> float:
    """Smallest delta with R(h) <= alpha for this tree's own estimates (R decreases in delta)."""
    lo, hi = 0.0, 1.0
    while risk(diffs, hi, extra_variance) > alpha and hi < 64:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        if risk(diffs, mid, extra_variance) <= alpha:
            hi = mid
        else:
            lo = mid
    return hi


def holdout_certified(diffs: Differences, delta: float, alpha: float) -> bool:
    """Intersection-union test of H0: some |d_k| > delta, at level alpha (exact bounds)."""
    if diffs.k_a.size == 0:
        return True
    lower, upper = difference_bounds_exact(diffs.k_a, diffs.n_a, diffs.k_b, diffs.n_b, alpha)
    return bool(np.all(upper <= delta) and np.all(lower >= -delta))


def holdout_split(strata: np.ndarray, share: float = HOLDOUT_SHARE, seed: int = 0) -> np.ndarray:
    """Boolean mask of held-out rows: ``share`` of each stratum (at least one row of a stratum of two or more)."""
    rng = np.random.default_rng(seed)
    held = np.zeros(strata.shape[0], dtype=bool)
    for s in np.unique(strata):
        rows = np.flatnonzero(strata == s)
        take = int(round(share * rows.size)) if rows.size > 1 else 0
        if rows.size > 1:
            take = min(max(take, 1), rows.size - 1)
        held[rng.choice(rows, size=take, replace=False)] = True
    return held


@dataclass(frozen=True)
class PromiseRound:
    """One fit of the promise: its training bound, what it measured, and the verdict.

    ``training_gap`` is the gap on the rows the tree was judged on by its method: the training
    rows (margin, subsample, bootstrap), the rows out of fold (crossfit), or the rows it was
    fitted on (holdout), whose gap on the held-out rows is ``held_out_gap`` (None for the
    other methods).
    """

    training_bound: float
    training_gap: float
    risk: float | None
    certified: bool
    constant: bool
    training_accuracy: float | None  # None for the crossfit method's out-of-fold rounds
    held_out_gap: float | None = None


@dataclass(frozen=True)
class FairnessPromise:
    """What a fit with ``fairness_confidence`` promised, and what it cost.

    Attributes
    ----------
    confidence : float
        c: the population gap is at most ``delta`` with probability at least c.
    method : {"subsample", "bootstrap", "crossfit", "margin", "holdout"}
    guarantee : str
        What the method's guarantee rests on (:data:`PROMISE_METHODS`).
    delta : float
        The bound promised on new rows.
    training_bound : float
        delta': the training-rows bound of the returned tree (its certificate is
        "optimal under the tightened bound").
    kept : bool
        False only if no tree, not even the constant one, could carry it (never for
        these methods: the constant tree always can).
    constant : bool
        The returned tree predicts one class everywhere.
    training_accuracy : float
        Accuracy of the returned tree on all training rows.
    accuracy_at_delta : float
        Accuracy on all training rows of the tree fitted at delta (today's bound);
        the difference is what the promise costs.
    smallest_delta : float or None
        With a constant tree: the smallest delta a non-constant tree fitted here could promise.
    rows_used : int
        Training rows the returned tree was fitted on (fewer with the holdout method).
    rounds : tuple of PromiseRound
    message : str
    optimism : float
        The bootstrap and subsample methods' estimate of the optimism of the fit at delta on
        all training rows, E[population gap - training gap] (0 for the other methods).
    optimism_sd : float
        Standard error of that estimate (from the spread of the resamples).
    optimism_at_resample : float
        The mean excess (gap on the rows left out minus gap on the rows fitted) measured on
        the resamples, before it is rescaled to all training rows.
    known : {"estimated", "proved"}
        How the promise is known: an estimate (asymptotic methods, coverage measured by
        simulation) or a proof (holdout).  Filled from ``method`` when not given.
    predicts : label or None
        The class a constant tree predicts for everyone (None for a tree that splits).
    held_out_rows : int or None
        Rows the holdout method held out and tested the tree on (None for the other methods).
    details : str
        How the promise was checked, in the method's own terms (risks, optimism, rescaling),
        for the reader who wants them; ``message`` says what was promised in plain words.
    """

    confidence: float
    method: str
    guarantee: str
    delta: float
    training_bound: float
    kept: bool
    constant: bool
    training_accuracy: float
    accuracy_at_delta: float
    smallest_delta: float | None
    rows_used: int
    rounds: tuple[PromiseRound, ...] = field(default_factory=tuple)
    message: str = ""
    optimism: float = 0.0
    optimism_sd: float = 0.0
    optimism_at_resample: float = 0.0
    known: str = ""
    predicts: object = None
    held_out_rows: int | None = None
    details: str = ""

    def __post_init__(self) -> None:
        if not self.known:
            object.__setattr__(self, "known", PROMISE_KNOWN.get(self.method, "estimated"))

    @property
    def accuracy_cost(self) -> float:
        return self.accuracy_at_delta - self.training_accuracy

    def to_dict(self) -> dict:
        out = asdict(self)
        out["rounds"] = [asdict(r) for r in self.rounds]
        return out

    @classmethod
    def from_dict(cls, data) -> "FairnessPromise":
        """Read :meth:`to_dict`'s output (also of versions before ``known``, ``predicts``, ``held_out_rows``
        and ``details``, which are then filled from the method or left empty)."""
        data = dict(data)
        data["rounds"] = tuple(PromiseRound(**r) for r in data.get("rounds", ()))
        return cls(**data)


def excess(inside: Differences, outside: Differences) -> float:
    """How much a tree's gap grows from the rows it was fitted on to rows it was not.

    ``max_k s_k d_out_k - max_k |d_in_k|`` with ``s_k`` the sign of ``d_in_k``: each difference
    is read in the direction it had where the tree was fitted, so noise on the rows left out
    does not fold into a positive excess (``E |d + e| > |d|``; on a difference near 0 measured
    on a few hundred rows that folding alone is several points).  A difference that was exactly
    0 where the tree was fitted, or lists that do not match (a group absent from one side),
    are read folded, ``|d_out_k|``.
    """
    d_in, d_out = inside.estimate, outside.estimate
    if d_in.shape != d_out.shape or d_in.size == 0:
        return outside.gap - inside.gap
    sign = np.sign(d_in)
    directed = np.where(sign == 0, np.abs(d_out), sign * d_out)
    return float(directed.max() - np.abs(d_in).max())


@dataclass(frozen=True)
class Optimism:
    """An estimate of the optimism of a fit at delta: E[population gap - training gap].

    Attributes
    ----------
    value : float
        The estimate for a fit on all n training rows: ``scale * raw``.
    sd : float
        Its standard error: ``scale * sd(units) / sqrt(len(units))``.
    raw : float
        Mean excess over the resamples (:func:`excess`), the optimism of a fit on
        ``share * n`` rows.
    scale : float
        ``sqrt(share)``: the optimism of a selection among noisy training estimates scales
        with their standard error, ``O(n^-1/2)``, so ``omega(n) = omega(share * n) * sqrt(share)``.
    units : tuple of float
        Independent-ish measurements whose mean is ``raw`` (a resample, or a pair of
        complementary halves).
    """

    value: float
    sd: float
    raw: float
    scale: float
    units: tuple[float, ...]


def optimism_estimate(units: Sequence[float], share: float) -> Optimism:
    """Rescale the mean excess of fits on ``share * n`` rows to a fit on n rows (root-n rate)."""
    arr = np.asarray(units, dtype=float)
    raw = float(arr.mean()) if arr.size else 0.0
    scale = float(np.sqrt(share))
    sd = float(scale * arr.std(ddof=1) / np.sqrt(arr.size)) if arr.size > 1 else 0.0
    return Optimism(value=scale * raw, sd=sd, raw=raw, scale=scale, units=tuple(map(float, arr)))


def half_sample_pairs(strata: np.ndarray, pairs: int, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """``pairs`` splits of the rows with ``strata >= 0`` into two halves, each stratum halved
    (an odd row to either half at random): fits on the halves see n/2 rows, and each half is
    the other's fresh rows."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(pairs):
        first = np.zeros(strata.shape[0], dtype=bool)
        for s_ in np.unique(strata[strata >= 0]):
            rows = rng.permutation(np.flatnonzero(strata == s_))
            take = rows.size // 2 + (int(rng.integers(2)) if rows.size % 2 else 0)
            first[rows[:take]] = True
        usable = strata >= 0
        out.append((np.flatnonzero(first & usable), np.flatnonzero(~first & usable)))
    return out


@dataclass(frozen=True)
class Fitted:
    """A tree fitted by the promise's driver, as the driver sees it."""

    model: object
    training_bound: float
    constant: bool
    accuracy: float              # on all training rows
    diffs: Differences           # on the rows it is judged on
    fitted_gap: float | None = None  # its gap on the rows it was fitted on, when they are not the rows judged on

    @property
    def training_gap(self) -> float:
        return self.diffs.gap if self.fitted_gap is None else self.fitted_gap


def run_margin(fit_at: Callable[[float], Fitted], fit_constant: Callable[[], Fitted], *, delta: float,
               confidence: float, n_rows: int, optimism: float = 0.0, optimism_variance: float = 0.0,
               method: str = "margin") -> tuple[Fitted, FairnessPromise]:
    """The margin method (module docstring).  ``fit_at(t)`` fits on all training rows at bound t.

    ``optimism`` (the bootstrap and subsample methods): an estimate of how much the
    population gap of the fitted tree exceeds its training gap, added to every ``|d_k|``;
    the criterion is then the margin's with ``delta - optimism`` in place of ``delta``, and
    ``optimism_variance`` (the estimate's own sampling variance) added to every ``se_k^2``.
    """
    alpha = 1.0 - confidence
    v = float(max(0.0, optimism_variance))
    target = delta - max(0.0, optimism)
    if target <= 0:
        const = fit_constant()
        rounds = [PromiseRound(0.0, 0.0, 0.0, True, True, const.accuracy)]
        why = (f"a gap measured on the training rows is expected to grow by {100 * optimism:.1f} pp on new rows, "
               "at least the bound itself")
        first = fit_at(delta)
        smallest = None if first.constant else smallest_promise(first.diffs, alpha, v) + optimism
        return const, _promise(method, confidence, delta, const, first, rounds, smallest, n_rows, why,
                               f"estimated optimism {100 * optimism:.2f} pp >= delta {100 * delta:.2f} pp")
    rounds: list[PromiseRound] = []
    non_constant: list[Fitted] = []
    first: Fitted | None = None
    t = float(delta)
    floor = TIGHTEST_SHARE * float(delta)
    tried_floor = t <= floor
    for attempt in range(MARGIN_ROUNDS + 1):
        fitted = fit_at(t)
        first = first or fitted
        r = 0.0 if fitted.constant else risk(fitted.diffs, target, v)
        ok = fitted.constant or r <= alpha
        rounds.append(PromiseRound(t, fitted.diffs.gap, r, ok, fitted.constant, fitted.accuracy))
        if ok and fitted.constant and attempt > 0:  # tightening left only a constant tree
            smallest = (min(smallest_promise(f.diffs, alpha, v) for f in non_constant) + max(0.0, optimism)
                        if non_constant else None)
            why = f"the tree fitted at the training bound {100 * t:.2f} pp predicts one class for everyone"
            return fitted, _promise(method, confidence, delta, fitted, first, rounds, smallest, n_rows, why,
                                    _risks(rounds, alpha))
        if ok:
            return fitted, _promise(method, confidence, delta, fitted, first, rounds, None, n_rows, "",
                                    _risks(rounds, alpha))
        non_constant.append(fitted)
        if tried_floor:
            break
        nxt = tightened_bound(np.sqrt(fitted.diffs.standard_error ** 2 + v), target, alpha)
        if nxt is None or attempt == MARGIN_ROUNDS - 1:
            nxt = floor
        if nxt >= t:  # the new tree's errors were larger than the last one's: step down
            nxt = t - delta / 10
        t = max(floor, nxt)
        tried_floor = t <= floor
    const = fit_constant()
    rounds.append(PromiseRound(0.0, 0.0, 0.0, True, True, const.accuracy))
    smallest = (min(smallest_promise(f.diffs, alpha, v) for f in non_constant) + max(0.0, optimism)
                if non_constant else None)
    why = (f"even the tree fitted at the tightest training bound, {100 * rounds[-2].training_bound:.2f} pp, has gaps "
           "too uncertain on these rows")
    return const, _promise(method, confidence, delta, const, first, rounds, smallest, n_rows, why,
                           _risks(rounds, alpha))


def _risks(rounds: Sequence[PromiseRound], alpha: float) -> str:
    """The margin's criterion at each round, in its own terms (the promise's ``details``)."""
    parts = [f"training bound {100 * r.training_bound:.2f} pp: risk {r.risk:.3f} "
             f"{'<=' if r.certified else '>'} 1 - c = {alpha:.3f}" for r in rounds if not r.constant and r.risk is not None]
    return "Risk R (summed normal tail probabilities beyond the bound) by round: " + "; ".join(parts) + "." \
        if parts else ""


def holdout_smallest(diffs: Differences, alpha: float) -> float:
    """The smallest delta the holdout test would certify for a tree: the largest end of the exact
    one-sided bounds of its differences on the held-out rows."""
    if diffs.k_a.size == 0:
        return 0.0
    lower, upper = difference_bounds_exact(diffs.k_a, diffs.n_a, diffs.k_b, diffs.n_b, alpha)
    return float(max(np.max(np.abs(lower)), np.max(np.abs(upper))))


def run_holdout(fit_at: Callable[[float], Fitted], fit_constant: Callable[[], Fitted],
                fit_today: Callable[[], Fitted], *, delta: float, confidence: float, n_rows: int,
                n_fit_rows: int) -> tuple[Fitted, FairnessPromise]:
    """The holdout method (module docstring).

    ``fit_at(t)`` fits on the fitting part at bound t, its ``diffs`` measured on the
    held-out part and ``training_gap`` its gap on the fitting part; ``fit_today()`` fits
    at delta on all training rows (what the promise costs is measured against it);
    ``fit_constant()`` the constant tree.
    """
    alpha = 1.0 - confidence
    rounds: list[PromiseRound] = []
    best: Fitted | None = None
    failed: Fitted | None = None
    for step in HOLDOUT_STEPS:
        fitted = fit_at(step * delta)
        ok = fitted.constant or holdout_certified(fitted.diffs, delta, alpha)
        rounds.append(PromiseRound(step * delta, fitted.training_gap, None, ok, fitted.constant, fitted.accuracy,
                                   held_out_gap=fitted.diffs.gap))
        if not ok:
            failed = fitted
            break
        best = fitted
    today = fit_today()
    held = n_rows - n_fit_rows
    smallest = None if failed is None else holdout_smallest(failed.diffs, alpha)
    details = "Exact test on the held-out rows by round: " + "; ".join(
        f"training bound {100 * r.training_bound:.2f} pp: gap {100 * r.held_out_gap:.2f} pp on the held-out rows, "
        + ("constant" if r.constant else "certified" if r.certified else "not certified") for r in rounds) + "."
    if best is None:
        const = fit_constant()
        rounds.append(PromiseRound(0.0, 0.0, None, True, True, const.accuracy, held_out_gap=0.0))
        why = (f"the tree fitted at the training bound {100 * rounds[0].training_bound:.2f} pp failed the test on the "
               f"{held:,} held-out rows")
        return const, _promise("holdout", confidence, delta, const, today, rounds, smallest, n_rows, why, details,
                               held_out_rows=held)
    if best.constant:
        why = (f"the first tree that splits, fitted at the training bound {100 * rounds[-1].training_bound:.2f} pp, "
               f"failed the test on the {held:,} held-out rows")
        return best, _promise("holdout", confidence, delta, best, today, rounds, smallest, n_fit_rows, why, details,
                              held_out_rows=held)
    return best, _promise("holdout", confidence, delta, best, today, rounds, None, n_fit_rows, "", details,
                          held_out_rows=held)


def run_crossfit(out_of_fold_at: Callable[[float], Differences], fit_at: Callable[[float], Fitted],
                 fit_constant: Callable[[], Fitted], today: Fitted, *, delta: float, confidence: float,
                 n_rows: int) -> tuple[Fitted, FairnessPromise]:
    """The crossfit method: for training bounds delta, 0.8 delta, ..., 0.02 delta (loosest first), the
    differences of the out-of-fold predictions of the fit at that bound (each row predicted by a
    tree fitted without it) must pass the margin criterion; the first bound that passes is refitted
    on all rows.  The out-of-fold gap measures the selection the margin method ignores."""
    alpha = 1.0 - confidence
    rounds: list[PromiseRound] = []
    for step in CROSSFIT_STEPS:
        t = step * delta
        diffs = out_of_fold_at(t)
        r = risk(diffs, delta)
        ok = r <= alpha
        rounds.append(PromiseRound(t, diffs.gap, r, ok, False, None))
        if ok:
            fitted = today if t == delta else fit_at(t)
            return fitted, _promise("crossfit", confidence, delta, fitted, today, rounds, None, n_rows, "",
                                    _risks(rounds, alpha))
    const = fit_constant()
    rounds.append(PromiseRound(0.0, 0.0, 0.0, True, True, const.accuracy))
    why = (f"even at the tightest training bound, {100 * rounds[-2].training_bound:.2f} pp, the gaps of trees judged "
           "on rows they had not seen were too uncertain")
    return const, _promise("crossfit", confidence, delta, const, today, rounds, None, n_rows, why,
                           _risks(rounds, alpha))


def _promise(method, confidence, delta, chosen: Fitted, first: Fitted, rounds, smallest, rows_used, why,
             details: str = "", held_out_rows: int | None = None) -> FairnessPromise:
    known = PROMISE_KNOWN[method]
    label = _constant_label(chosen.model) if chosen.constant else None
    if chosen.constant and why:
        said = HELD_OUT_SMALLEST if known == "proved" else SMALLEST_DELTA
        extra = said.format(value=100 * smallest) if smallest is not None else NO_SMALLEST
        shown = NOT_SHOWN[known].format(delta=100 * delta, confidence=confidence)
        message = CONSTANT_ONLY.format(n=rows_used, tightest=100 * TIGHTEST_SHARE * delta, shown=shown, why=why,
                                       label=label, smallest=extra)
    elif known == "proved":
        message = KEPT_PROVED.format(method=method, delta=100 * delta, confidence=confidence,
                                     held=held_out_rows or 0, bound=100 * chosen.training_bound, fitted=rows_used,
                                     accuracy=100 * chosen.accuracy, today=100 * first.accuracy)
    else:
        message = KEPT_ESTIMATED.format(method=method, delta=100 * delta, confidence=confidence,
                                        bound=100 * chosen.training_bound, accuracy=100 * chosen.accuracy,
                                        today=100 * first.accuracy)
    return FairnessPromise(
        confidence=float(confidence), method=method, guarantee=PROMISE_METHODS[method], delta=float(delta),
        training_bound=float(chosen.training_bound), kept=True, constant=bool(chosen.constant),
        training_accuracy=float(chosen.accuracy), accuracy_at_delta=float(first.accuracy),
        smallest_delta=None if smallest is None else float(smallest), rows_used=int(rows_used),
        rounds=tuple(rounds), message=message, known=known, predicts=label, held_out_rows=held_out_rows,
        details=details,
    )


def _constant_label(model) -> object:
    try:
        tree = model.tree_
        leaf = int(tree.structure.leaves[0])
        value = tree.classes[int(tree.structure.prediction[leaf - 1])]
        return value.item() if hasattr(value, "item") else value
    except (AttributeError, IndexError):  # pragma: no cover - a model without a tree
        return "?"


def is_constant(structure) -> bool:
    """Every leaf predicts the same class (the population gap is then exactly 0)."""
    leaves = structure.leaves
    return bool(np.unique(structure.prediction[leaves - 1]).size <= 1)


def normal_quantile(p: float) -> float:
    return float(norm.ppf(p))
