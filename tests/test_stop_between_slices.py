"""A Stop in the main thread is read before the compiled exact search, after its first slice and, while
the rest of the search runs beside the main thread, at every look the main thread takes; checked
without a wall clock: a stop request that answers "no" to its first k reads and "yes" from then on
ends the search at the (k+1)-th read, every time, whatever the machine's speed.

The compiled code cannot read a Python event, and a Ctrl-C reaches the main thread only between two
calls of compiled code: so the search runs a first slice there, then the rest in a kept background
thread while the main thread waits where the Ctrl-C and the stop request reach it
(``treedp.Engine._sliced``).  Here the first slice ends at its first look at the clock, and the call
made beside the main thread waits for the search's stop flag before it begins, so the number of reads
is the test's choice; tests/test_dynamic_program.py times the same with a real event, as ``timing``."""

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
def kernels(monkeypatch):
    """A first slice that ends at its first look at the clock, the main thread's looks 1 ms apart, and a
    log of every kernel call: (made in the main thread, the stop's reads so far, whether it had
    flipped).  With ``hold`` set, the call made beside the main thread begins only once the search's
    stop flag is set (the flag the main thread sets when the request says yes)."""
    monkeypatch.setattr(treedp, "SLICE_NS", 1)
    monkeypatch.setattr(treedp, "WAIT_SECONDS", 0.001)
    log: list[tuple[bool, int, bool]] = []
    watched: list[FlipAfter] = []
    hold = threading.Event()
    for name in ("_solve", "_deep"):
        kernel = getattr(treedp, name)

        def counted(E, *args, _kernel=kernel):
            stop = watched[0] if watched else None
            main = threading.current_thread() is threading.main_thread()
            log.append((main, stop.reads if stop else -1, stop.flipped if stop else False))
            for _ in range(30_000):  # until the main thread stops the search (30 s at most: then the test fails)
                if not (hold.is_set() and not main and not E[8][0]):
                    break
                threading.Event().wait(0.001)
            return _kernel(E, *args)

        monkeypatch.setattr(treedp, name, counted)
    return log, watched, hold


def _problem(seed: int = 4):
    rng = np.random.default_rng(seed)
    X, s, count = _instance(rng, 400, 24, 2, integer_gains=True)
    return X, s, count, np.arange(400)


def _search(stop):
    X, s, count, idx = _problem()
    return GainDP(X, count, s, 0.0, 0, Deadline(time.perf_counter() + 3600.0, stop)).exact(idx, 4)


def test_a_yes_before_the_search_ends_it_in_its_first_call(kernels, monkeypatch):
    log, watched, _ = kernels
    monkeypatch.setattr(treedp, "SLICE_NS", 3600 * 10 ** 9)  # a first slice that would run the search to its end
    stop = FlipAfter(0)
    watched.append(stop)
    with pytest.raises(SearchStopped):
        _search(stop)
    assert log == [(True, 1, True)]  # read once before the call, which ends at once; nothing beside it


def test_a_yes_after_the_first_slice_ends_the_search_there(kernels):
    log, watched, _ = kernels
    stop = FlipAfter(1)
    watched.append(stop)
    with pytest.raises(SearchStopped):
        _search(stop)
    assert log == [(True, 1, False)]  # the first slice only
    assert stop.reads == 2  # before it, and after it: the "yes"


@pytest.mark.parametrize("k", [2, 3, 7])
def test_the_search_beside_the_main_thread_ends_at_the_first_yes(kernels, k):
    log, watched, hold = kernels
    hold.set()
    stop = FlipAfter(k)
    watched.append(stop)
    with pytest.raises(SearchStopped):
        _search(stop)
    # the first slice, then the rest beside the main thread (which may have looked again before that call began)
    assert log[0] == (True, 1, False) and [main for main, _, _ in log] == [True, False]
    assert stop.reads == k + 1  # k "no"s, then the "yes" that stopped it: no read after it


def test_without_a_yes_the_search_goes_on_beside_the_main_thread_to_the_optimum(kernels):
    log, watched, _ = kernels
    stop = FlipAfter(10 ** 9)
    watched.append(stop)
    X, s, count, idx = _problem()
    value, tree = _search(stop)
    assert log[0] == (True, 1, False) and [main for main, _, _ in log] == [True, False]  # begun again once, only once
    assert value == pytest.approx(NumpyGainDP(X, count, s, 0.0, 0).exact(idx, 4)[0], abs=1e-9)


def test_a_search_without_a_stop_to_watch_is_one_call(kernels):
    log, _, _ = kernels
    _search(None)
    assert log == [(True, -1, False)]
