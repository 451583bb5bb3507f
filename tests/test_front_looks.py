"""Each part of a long pass over a front looks at the deadline (``accel/fronts.py``), shown without a clock.

A kernel's pass over a front of millions of states has parts (the insertion runs and then the merges of
``_order``; the slots and then the entries of ``_grow``; the copy, each node's box and its partition in
``_kd_build``), and each part looks at the deadline every ``fronts.STRIDE`` entries.  A deadline placed
by the clock lands in whichever part runs then, so timed tests (``test_count_search.py``) never reached
the later parts.  Here the kernels' Python source runs with its look at the deadline (``fronts._halted``)
replaced by a count: the deadline passes at a chosen look, the first that the part under test makes,
and the kernel must stop there.  Without that part's look it finishes the pass (the mutants in
``scripts/mutants.py``, area ``looks``).  The compiled kernels are the same source; nothing here
compiles or reads the clock.
"""

from __future__ import annotations

import math

import numpy as np

from strongtree_core.accel import fronts


class CountedLooks:
    """``fronts._halted`` with the clock replaced by a count of the looks: the deadline passes at look
    ``at`` (the flag is raised then, as the real look raises it), never with ``at=math.inf``."""

    def __init__(self, at: float) -> None:
        self.at, self.looks = at, 0

    def __call__(self, flag: np.ndarray, limit: int) -> bool:
        if flag[0]:
            return True
        self.looks += 1
        if self.looks >= self.at:
            flag[0] = 1
            return True
        return False


def looks_over(n: int, step: int = 1) -> int:
    """The looks a loop ``for i in range(0, n, step)`` makes when it looks at every ``i % STRIDE == 0``."""
    return sum(1 for i in range(0, n, step) if i % fronts.STRIDE == 0)


def test_the_order_looks_at_the_deadline_while_it_merges(monkeypatch) -> None:
    """``_order`` sorts runs of ``RUN`` values by insertion, then merges them: 4,096 values make one look
    in the runs and one in the merges (at ``STRIDE`` merge steps of 7 x 4,096).  With the deadline at the
    merges' look, the order stops unfinished there (without that look it finished the sort)."""
    values = np.random.default_rng(0).integers(0, 50, 4096).astype(float)
    in_runs = looks_over(values.size, fronts.RUN)
    assert in_runs == 1
    clock = CountedLooks(math.inf)
    monkeypatch.setattr(fronts, "_halted", clock)
    order, done = fronts._order.py_func(values, np.zeros(1, np.uint8), 0)
    assert done and np.array_equal(order, np.argsort(-values, kind="stable"))  # the source is the kernel
    assert clock.looks == in_runs + 1
    monkeypatch.setattr(fronts, "_halted", CountedLooks(in_runs + 1))
    flag = np.zeros(1, np.uint8)
    _, done = fronts._order.py_func(values, flag, 0)
    assert not done and flag[0] == 1


def test_a_growth_looks_at_the_deadline_while_it_copies_the_entries(monkeypatch) -> None:
    """``_grow`` makes the slots of a table twice as large, then copies its entries into them: with the
    deadline at the first look of the copy (after the slots' looks), the growth stops there and raises
    the flag, so the caller drops the table (without that look it finished the copy, flag down)."""
    n = fronts.STRIDE + 10
    rng = np.random.default_rng(1)
    slots = np.empty(2 * fronts.STRIDE, dtype=np.int64)  # room for twice the entries: only its size is read
    args = (slots, rng.integers(0, 2**63 - 1, n, dtype=np.int64).astype(np.uint64),
            rng.integers(0, 9, (n, 3)).astype(np.int32), rng.normal(size=n), rng.integers(0, 9, (n, 2)))
    in_slots = looks_over(2 * slots.size)
    clock = CountedLooks(math.inf)
    monkeypatch.setattr(fronts, "_halted", clock)
    new_slots, _, new_keys, new_obj, _ = fronts._grow.py_func(*args, n, np.zeros(1, np.uint8), 0)
    assert np.array_equal(np.sort(new_slots[new_slots >= 0]), np.arange(n))  # every entry has its slot
    assert np.array_equal(new_keys[:n], args[2]) and np.array_equal(new_obj[:n], args[3])
    assert clock.looks == in_slots + looks_over(n)
    monkeypatch.setattr(fronts, "_halted", CountedLooks(in_slots + 1))
    flag = np.zeros(1, np.uint8)
    fronts._grow.py_func(*args, n, flag, 0)
    assert flag[0] == 1


def test_the_index_looks_at_the_deadline_while_it_measures_a_nodes_box(monkeypatch) -> None:
    """``_kd_build`` copies the points, then measures each node's box: a root of ``STRIDE`` + 10 points
    (all alike: the box makes it a leaf, no partition follows) looks twice in the copy, once at the
    root, and once in its box.  With the deadline at the box's look, the index stops unfinished and
    raises the flag (without that look it finished the index, flag down)."""
    n = fronts.STRIDE + 10
    D = np.tile(np.array([[3, -1, 7]], dtype=np.int64), (n, 1))
    vals = np.random.default_rng(2).normal(size=n)
    in_copy = looks_over(n)
    clock = CountedLooks(math.inf)
    monkeypatch.setattr(fronts, "_halted", clock)
    _, _, _, info, lo, hi, top = fronts._kd_build.py_func(D, vals, np.zeros(1, np.uint8), 0)
    assert info.shape[0] == 1 and np.array_equal(lo[0], D[0]) and np.array_equal(hi[0], D[0])  # one leaf
    assert top[0] == vals.max() and info[0, 4] == int(np.argmax(vals))
    assert clock.looks == in_copy + 1 + (n - 1) // fronts.STRIDE
    monkeypatch.setattr(fronts, "_halted", CountedLooks(in_copy + 2))
    flag = np.zeros(1, np.uint8)
    fronts._kd_build.py_func(D, vals, flag, 0)
    assert flag[0] == 1
