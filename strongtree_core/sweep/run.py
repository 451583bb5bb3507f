"""``sweep`` and ``iter_sweep``: a grid of estimator settings over folds, one tidy row per point."""

from __future__ import annotations

import threading
import time
import uuid
import warnings
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.base import clone

from strongtree_core.errors import BackendLostWarning, StrongTreeError
from strongtree_core.estimator.classifier import X_NOT_2D, StrongTreeClassifier
from strongtree_core.estimator.training import LENGTH_MISMATCH
from strongtree_core.sweep import backends, dask_backend
from strongtree_core.relays import DaskRelay
from strongtree_core.sweep.grid import (
    MAX_POINTS,
    TOO_MANY_POINTS,
    Fold,
    GridSettings,
    Point,
    expand_grid,
    make_folds,
    make_points,
)
from strongtree_core.sweep.point import (
    PARTS,
    SETTINGS,
    Codes,
    Problem,
    gather_credentials,
    measured_notions,
    result_columns,
)
from strongtree_core.vocabulary import FAIRNESS_NOTIONS


#: What a sweep says when its backend failed (a :class:`~strongtree_core.errors.BackendLostWarning`); tests assert it.
BACKEND_FAILED_AT_START = (
    "The {backend} backend could not start ({reason}): the sweep runs its points in this process instead."
)
BACKEND_LOST = (
    "The {backend} backend failed after {done:,} of {total:,} points ({reason}): every finished point is kept, and "
    "the {left:,} point(s) left run in this process."
)
BACKEND_FAILED_AT_CLOSE = "The {backend} backend failed while closing ({reason}); every point had finished."


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass(frozen=True)
class SweepProgress:
    """A point finished.

    Attributes
    ----------
    row : dict
        The point's row (the columns of :func:`sweep`).
    done, total : int
        Points finished so far, and in the whole sweep.
    elapsed : float
        Seconds since the sweep started.

    Examples
    --------
    >>> import pandas as pd
    >>> from strongtree_core import StrongTreeClassifier
    >>> X = pd.DataFrame({'score': [1, 5, 2, 8, 7, 3, 9, 4], 'group': list('abababab')})
    >>> y = ['no', 'yes', 'no', 'yes', 'yes', 'no', 'yes', 'no']
    >>> from strongtree_core.sweep import iter_sweep
    >>> first = next(iter_sweep(StrongTreeClassifier(time_limit=10), X, y, grid={'depth': [1]}))
    >>> type(first).__name__, first.done, first.total
    ('SweepProgress', 1, 1)
    """

    row: dict
    done: int
    total: int
    elapsed: float


def _frame(X) -> pd.DataFrame:
    if isinstance(X, pd.DataFrame):
        return X.reset_index(drop=True)
    arr = np.asarray(X)
    if arr.ndim != 2:
        raise StrongTreeError(X_NOT_2D.format(shape=arr.shape))
    return pd.DataFrame(arr, columns=[f"x{j}" for j in range(arr.shape[1])])


def make_problem(estimator, X, y, sensitive_features, legitimate_features, folds: Sequence[Fold]) -> Problem:
    """The data every point shares, checked once: rows aligned, protected and legitimate columns resolved."""
    table = _frame(X)
    n = len(table)
    target = y.reset_index(drop=True) if isinstance(y, pd.Series) else pd.Series(np.asarray(y).ravel())
    if len(target) != n:
        raise StrongTreeError(LENGTH_MISMATCH.format(n_x=n, name="y", n_other=len(target)))
    sensitive, _ = StrongTreeClassifier._columns(table, sensitive_features, "sensitive_features", n)
    legitimate, _ = StrongTreeClassifier._columns(table, legitimate_features, "legitimate_features", n)
    return Problem(
        estimator=clone(estimator), X=table if isinstance(X, pd.DataFrame) else np.asarray(X), y=target,
        sensitive=sensitive, legitimate=legitimate, folds=tuple(folds),
        notions=measured_notions(sensitive, legitimate), credentials=gather_credentials(),
        groups=Codes.of(sensitive, "sensitive_features"), levels=Codes.of(legitimate, "legitimate_features"),
    )


def _checked(candidate) -> None:
    for check in ("_check_params", "_fairness_list"):
        if hasattr(candidate, check):
            getattr(candidate, check)()


def _check(estimator, settings: Mapping[str, Any]) -> None:
    _checked(clone(estimator).set_params(**settings))


def check_settings(estimator, settings: Sequence[Mapping[str, Any]], stop: threading.Event | None = None) -> None:
    """Refuse a bad value of the grid before anything runs (the estimator's own messages).

    Each distinct value of each parameter is checked once, with the estimator's other settings
    (checking every combination took minutes for a grid of 100,000 points, before the first
    point and deaf to Stop).  A value refused there is checked again in the first combination
    of the grid that holds it, so that a value valid only next to another grid value (e.g.
    ``max_thresholds`` where the grid also sets ``n_buckets`` to None) is not refused; a
    combination still refused at fit time is a row with its message, as any refused fit is.
    """
    if isinstance(settings, GridSettings):
        pairs = settings.values_with_a_combination()
    else:
        pairs = ((k, v, combo) for combo in settings for k, v in combo.items())
    candidate = clone(estimator)
    template = candidate.get_params(deep=False)
    quick = getattr(type(estimator), "_valid_alone", None)
    seen: set[tuple[str, str]] = set()
    for n, (key, value, combo) in enumerate(pairs):
        if stop is not None and n % 1024 == 0 and stop.is_set():
            return
        marker = (key, _value_key(value))
        if marker in seen:
            continue
        seen.add(marker)
        if quick is not None and quick(key, value):
            continue  # valid whatever the other settings (checked in bulk: no full check per value)
        try:
            _checked(candidate.set_params(**{key: value}))
        except StrongTreeError:
            _check(estimator, {**combo, key: value})
        finally:
            candidate.set_params(**{key: template[key]})


def _value_key(value) -> str:
    """A grid value as a key that tells values apart even when they compare equal (1, 1.0 and True)."""
    return f"{type(value).__qualname__}:{value!r}"


def plan(estimator, X, y, *, sensitive_features=None, legitimate_features=None, grid=None, cv=None,
         stop: threading.Event | None = None) -> tuple[Problem, list[Point]]:
    """The shared problem and the points of a sweep, checked."""
    settings = expand_grid(estimator, grid)
    check_settings(estimator, settings, stop)
    problem = make_problem(estimator, X, y, sensitive_features, legitimate_features, ())
    folds = make_folds(cv, problem.y, len(problem.y))
    if len(settings) * len(folds) > MAX_POINTS:
        raise StrongTreeError(TOO_MANY_POINTS.format(settings=len(settings), folds=len(folds),
                                                     points=len(settings) * len(folds), limit=MAX_POINTS))
    return replace(problem, folds=tuple(folds)), make_points(settings, folds)


@contextmanager
def runner(backend: str, n_jobs: int | None, scheduler) -> Iterator[Callable[[Problem, Sequence[Point], Any], Iterator[dict]]]:
    """``rows(problem, points, stop)`` on the backend, its workers open for the ``with`` block.

    Sweeps never return nothing when something finished: a backend that fails, at its start or
    later, leaves the points it had not finished to this process (:func:`kept_rows`), with a
    :class:`~strongtree_core.errors.BackendLostWarning` that says what happened."""
    check_backend(backend, scheduler)
    with ExitStack() as stack:
        try:
            rows = stack.enter_context(_backend_rows(backend, n_jobs, scheduler))
        except StrongTreeError:  # a refusal (a bad address, no Dask): the caller's to fix
            raise
        except Exception as exc:  # noqa: BLE001 - a cluster that did not start: the points run here
            warnings.warn(BackendLostWarning(BACKEND_FAILED_AT_START.format(backend=backend, reason=_reason(exc))),
                          stacklevel=3)
            rows = backends.serial_rows
        try:
            yield lambda problem, points, stop: kept_rows(backend, rows, problem, points, stop)
        finally:
            try:
                stack.close()
            except StrongTreeError:
                raise
            except Exception as exc:  # noqa: BLE001 - every row is in; a cluster that fails to close loses none
                warnings.warn(BackendLostWarning(BACKEND_FAILED_AT_CLOSE.format(backend=backend,
                                                                                reason=_reason(exc))), stacklevel=3)


def kept_rows(backend: str, rows: Callable, problem: Problem, points: Sequence[Point], stop) -> Iterator[dict]:
    """The rows of ``rows`` (a backend), then, if the backend fails part way, the points it had not
    finished run in this process: every finished point is kept and each point gives one row."""
    seen: set[int] = set()
    try:
        for row in rows(problem, points, stop):
            seen.add(int(row["point"]))
            yield row
        return
    except StrongTreeError:
        raise
    except Exception as exc:  # noqa: BLE001 - a lost cluster: what is left runs here
        if rows is backends.serial_rows:  # nothing to fall back on: a fault of the point code itself
            raise
        left = [p for p in points if p.index not in seen]
        warnings.warn(BackendLostWarning(BACKEND_LOST.format(backend=backend, done=len(seen), total=len(points),
                                                             reason=_reason(exc), left=len(left))), stacklevel=2)
    if stop is not None and stop.is_set():
        return
    yield from backends.serial_rows(problem, left, stop)


def check_backend(backend: str, scheduler) -> None:
    """Refuse an unknown backend, and a scheduler given to another backend than Dask."""
    if backend not in backends.BACKENDS:
        raise StrongTreeError(backends.BAD_BACKEND.format(value=backend, allowed=", ".join(map(repr, backends.BACKENDS))))
    if scheduler is not None and backend != "dask":
        raise StrongTreeError(backends.SCHEDULER_NOT_DASK.format(value=scheduler, backend=backend))


@contextmanager
def _backend_rows(backend: str, n_jobs: int | None, scheduler) -> Iterator[Callable]:
    slots = backends.n_workers(n_jobs) if backend != "serial" else 1
    if backend == "serial":
        yield backends.serial_rows
    elif backend == "threads":
        yield lambda problem, points, stop: backends.thread_rows(problem, points, stop, slots)
    elif backend == "processes":
        yield lambda problem, points, stop: backends.process_rows(problem, points, stop, slots)
    else:
        with dask_backend.dask_client(scheduler, slots) as client:
            yield lambda problem, points, stop: dask_backend.dask_rows(
                problem, points, stop, client, DaskRelay(f"strongtree-stop-{uuid.uuid4().hex}", client))


def progress_events(rows: Iterator[dict], total: int) -> Iterator[SweepProgress]:
    started = time.perf_counter()
    for done, row in enumerate(rows, start=1):
        yield SweepProgress(row, done, total, time.perf_counter() - started)


def iter_sweep(
    estimator, X, y, *, sensitive_features=None, legitimate_features=None, grid=None, cv=None,
    backend: str = "serial", n_jobs: int | None = None, scheduler=None, stop: threading.Event | None = None,
) -> Iterator[SweepProgress]:
    """The points of :func:`sweep` as they finish, in the order they finish.

    Each item is a :class:`SweepProgress` (the row, how many are done of how many).
    Set ``stop`` to end the sweep: running fits stop with their best tree so far
    (status "interrupted"), points not started are dropped.  Leaving the loop early
    stops the sweep too.  Parameters as in :func:`sweep`.

    Examples
    --------
    >>> import pandas as pd
    >>> from strongtree_core import StrongTreeClassifier
    >>> X = pd.DataFrame({'score': [1, 5, 2, 8, 7, 3, 9, 4], 'group': list('abababab')})
    >>> y = ['no', 'yes', 'no', 'yes', 'yes', 'no', 'yes', 'no']
    >>> from strongtree_core.sweep import iter_sweep
    >>> done = [p.done for p in iter_sweep(StrongTreeClassifier(time_limit=10), X, y, grid={'depth': [1, 2]})]
    >>> done
    [1, 2]
    """
    problem, points = plan(estimator, X, y, sensitive_features=sensitive_features,
                           legitimate_features=legitimate_features, grid=grid, cv=cv, stop=stop)
    with runner(backend, n_jobs, scheduler) as rows:
        yield from progress_events(rows(problem, points, stop), len(points))


def columns_in_order(frame: pd.DataFrame, notions: Sequence[str]) -> pd.DataFrame:
    """point, fold, the four settings, other settings (as the grid names them), then the results."""
    results = result_columns(tuple(notions))
    head = ["point", "fold", *SETTINGS]
    middle = [c for c in frame.columns if c not in head and c not in results]
    return frame.reindex(columns=head + middle + results)


def to_table(rows: list[dict], notions: Sequence[str] | None = None) -> pd.DataFrame:
    """Rows (e.g. collected from :func:`iter_sweep`) as :func:`sweep` returns them: sorted by point, the
    columns in order.  ``notions``: the fairness notions measured (None: those the rows have).

    Examples
    --------
    >>> import pandas as pd
    >>> from strongtree_core import StrongTreeClassifier
    >>> X = pd.DataFrame({'score': [1, 5, 2, 8, 7, 3, 9, 4], 'group': list('abababab')})
    >>> y = ['no', 'yes', 'no', 'yes', 'yes', 'no', 'yes', 'no']
    >>> from strongtree_core.sweep import iter_sweep, to_table
    >>> rows = [p.row for p in iter_sweep(StrongTreeClassifier(time_limit=10), X, y, grid={'depth': [2, 1]})]
    >>> to_table(rows)['depth'].tolist()
    [2, 1]
    """
    if notions is None:
        keys = set().union(*rows) if rows else set()
        notions = [n for n in FAIRNESS_NOTIONS if f"train_{n}" in keys]
    frame = pd.DataFrame(rows)
    if frame.empty:
        frame = pd.DataFrame(columns=["point"])
    return columns_in_order(frame.sort_values("point", kind="stable").reset_index(drop=True), notions)


def sweep(
    estimator, X, y, *, sensitive_features=None, legitimate_features=None, grid=None, cv=None,
    backend: str = "serial", n_jobs: int | None = None, scheduler=None,
    progress: Callable[[SweepProgress], None] | None = None, stop: threading.Event | None = None,
) -> pd.DataFrame:
    """Fit the estimator at every point of a grid (on every fold) and measure each tree on its predictions.

    Parameters
    ----------
    estimator : StrongTreeClassifier
        The template; each point is ``clone(estimator).set_params(**settings)``.
    X : DataFrame or 2-D array, shape (n_rows, n_columns)
    y : array-like, shape (n_rows,)
    sensitive_features, legitimate_features : column name(s) of X, or values per row, optional
        As in ``StrongTreeClassifier.fit``; with them every fairness gap is measured on every part.
    grid : dict or list of dicts, optional
        Parameter name to the values to try (e.g. ``{"fairness": ["statistical_parity"],
        "fairness_bound": [0.01, 0.05], "depth": [2, 3]}``); every combination is a setting.
        None: the estimator as it is.
    cv : None, int, splitter or list of splits, optional
        None: fit on every row.  An int k or a scikit-learn splitter: k folds, the held-out
        rows as ``test``.  A list of (train, test) or (train, calibration, test) row positions.
    backend : {"serial", "threads", "processes", "dask"}, default "serial"
    n_jobs : int, optional
        Workers (threads, processes, or a local Dask cluster's process workers); None: every core.
    scheduler : str or dask.distributed.Client, optional
        With ``backend="dask"``: a scheduler address ("tcp://host:8786"), or a Client.  None: the
        address in the environment variable ``STRONGTREE_DASK_SCHEDULER``, else a LocalCluster of
        ``n_jobs`` process workers started for the sweep.
    progress : callable, optional
        Called with a :class:`SweepProgress` as each point finishes (in the calling thread).
    stop : threading.Event, optional
        Set it (from another thread) to end the sweep; the finished points are kept.

    Returns
    -------
    DataFrame, one row per finished point, sorted by ``point``
        ``point``, ``fold``; the settings ``fairness`` (notions joined by "+"; None: unconstrained),
        ``fairness_bound`` (NaN when unconstrained), ``depth``, ``regularization`` and any other
        parameter the grid sets; ``status``, ``certified``, ``claim`` (what the solve proved, the
        label of :func:`strongtree_core.tree.claim.claim`), ``objective``, ``bound``,
        ``optimality_gap`` (relative), ``time`` (seconds of the fit), ``method``; ``n_<part>``,
        ``<part>_accuracy`` and ``<part>_gap`` (the largest gap of the point's own notions) for the
        parts train, calibration and test, with ``<part>_gap_low`` / ``<part>_gap_high`` (its 95 %
        interval) and ``<part>_verdict`` (against δ, :func:`strongtree_core.metrics.verdict.gap_verdict`'s
        words), and ``<part>_<notion>`` for every notion that can be measured; ``error`` (why a point has no tree: infeasible, no tree in time, ...) and
        ``tree`` (the fitted tree as JSON, ``FittedTree.from_json``).  When the grid sets
        ``fairness_confidence`` (a promise on new rows), also ``training_bound`` (the tightened
        bound the tree was fitted at; ``fairness_bound`` for a point without a promise) and
        ``promise_constant`` (whether only a constant tree could keep the promise).

    Examples
    --------
    >>> import pandas as pd
    >>> from strongtree_core import StrongTreeClassifier
    >>> X = pd.DataFrame({'score': [1, 5, 2, 8, 7, 3, 9, 4], 'group': list('abababab')})
    >>> y = ['no', 'yes', 'no', 'yes', 'yes', 'no', 'yes', 'no']
    >>> from strongtree_core.sweep import sweep
    >>> table = sweep(StrongTreeClassifier(time_limit=10), X, y, grid={'depth': [1, 2]})
    >>> table[['depth', 'status', 'train_accuracy']].to_dict('records')
    [{'depth': 1, 'status': 'optimal', 'train_accuracy': 1.0}, {'depth': 2, 'status': 'optimal', 'train_accuracy': 1.0}]
    """
    problem, points = plan(estimator, X, y, sensitive_features=sensitive_features,
                           legitimate_features=legitimate_features, grid=grid, cv=cv, stop=stop)
    with runner(backend, n_jobs, scheduler) as rows:
        return collect(rows(problem, points, stop), problem, len(points), progress)


def collect(rows: Iterator[dict], problem: Problem, total: int, progress) -> pd.DataFrame:
    """The rows of a run as a table, each one reported to ``progress`` as it arrives."""
    finished = []
    for event in progress_events(rows, total):
        finished.append(event.row)
        if progress is not None:
            progress(event)
    return to_table(finished, problem.notions)


__all__ = ["PARTS", "SweepProgress", "iter_sweep", "sweep", "to_table"]
