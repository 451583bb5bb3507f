"""A Stop is read between slices of the compiled exact search, checked without a wall clock: a stop
request that answers "no" to its first k reads and "yes" from then on ends the search right after
the slice that preceded the (k+1)-th read, every time, whatever the machine's speed.

(The compiled code cannot read a Python event, so the search runs in slices and the request is read
between them; tests/test_dynamic_program.py times the same with a real event, as a ``timing`` test.)"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from strongtree_core.accel import treedp
from strongtree_core.accel.dp import Deadline, GainDP, NumpyGainDP, SearchStopped
from test_dynamic_program import _instance


class FlipAfter:
    """``is_set()`` is False for the first ``k`` reads made by the thread that built it, True from
    then on; reads from any other thread (the deadline's watching thread) answer without counting."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.reads = 0
        self.owner = threading.get_ident()
        self.flipped = False

    def is_set(self) -> bool:
        if threading.get_ident() == self.owner and not self.flipped:
            self.reads += 1
            self.flipped = self.reads > self.k
        return self.flipped


@pytest.fixture
def slices(monkeypatch):
    """Slices of 0.2-0.4 ms, and a log of every kernel call: (the stop's reads so far, whether it had flipped)."""
    monkeypatch.setattr(treedp, "SLICE_NS", 200_000)
    monkeypatch.setattr(treedp, "MAX_SLICE_NS", 400_000)
    log: list[tuple[int, bool]] = []
    watched: list[FlipAfter] = []
    for name in ("_solve", "_deep"):
        kernel = getattr(treedp, name)

        def counted(E, *args, _kernel=kernel):
            stop = watched[0] if watched else None
            log.append((stop.reads if stop else -1, stop.flipped if stop else False))
            return _kernel(E, *args)

        monkeypatch.setattr(treedp, name, counted)
    return log, watched


def _problem(seed: int = 4):
    rng = np.random.default_rng(seed)
    X, s, count = _instance(rng, 400, 24, 2, integer_gains=True)
    return X, s, count, np.arange(400)


@pytest.mark.parametrize("k", [0, 1, 3, 7])
def test_the_search_ends_after_the_slice_before_the_first_yes(slices, k):
    log, watched = slices
    X, s, count, idx = _problem()
    stop = FlipAfter(k)
    watched.append(stop)
    dp = GainDP(X, count, s, 0.0, 0, Deadline(time.perf_counter() + 3600.0, stop))
    with pytest.raises(SearchStopped):
        dp.exact(idx, 4)
    assert stop.reads == k + 1  # read once after each slice: k "no"s, then the "yes" that ended it
    assert len(log) == k + 1  # one kernel call per slice, none after the "yes"
    assert [reads for reads, _ in log] == list(range(k + 1))
    assert not any(flipped for _, flipped in log)


def test_without_a_yes_the_same_search_goes_on_through_many_slices_to_the_optimum(slices):
    log, watched = slices
    X, s, count, idx = _problem()
    stop = FlipAfter(10 ** 9)
    watched.append(stop)
    value, tree = GainDP(X, count, s, 0.0, 0, Deadline(time.perf_counter() + 3600.0, stop)).exact(idx, 4)
    assert len(log) > 8 and stop.reads == len(log) - 1  # the last slice finished the search: no read after it
    assert value == pytest.approx(NumpyGainDP(X, count, s, 0.0, 0).exact(idx, 4)[0], abs=1e-9)


def test_a_search_without_a_stop_to_watch_is_one_call(slices):
    log, _ = slices
    X, s, count, idx = _problem()
    GainDP(X, count, s, 0.0, 0, Deadline(time.perf_counter() + 3600.0, None)).exact(idx, 4)
    assert 1 <= len(log) <= 2 and all(reads == -1 for reads, _ in log)
