"""The machine's memory, read the same way on Linux, macOS and Windows (no ``os.sysconf`` there)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from strongtree_core import StrongTreeClassifier
from strongtree_core.engine import limits


def _meminfo_bytes() -> int | None:
    try:
        line = next(l for l in Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal:"))
    except (OSError, StopIteration):
        return None
    return int(line.split()[1]) * 1024


def test_the_figure_without_os_sysconf_is_the_machine_s(monkeypatch):
    with_sysconf = limits.physical_memory()
    monkeypatch.delattr(os, "sysconf", raising=False)  # as on Windows
    without = limits.physical_memory()
    assert without == with_sysconf > 0
    assert 0 < limits.default_memory_limit() <= without
    # And a default fit runs (it asks for the memory limit before anything large is built).
    X = pd.DataFrame({"a": [0, 1, 0, 1, 1, 0, 1, 0], "b": [1, 1, 0, 0, 1, 0, 0, 1]})
    clf = StrongTreeClassifier(depth=1, time_limit=10).fit(X, np.array([0, 1, 0, 1, 1, 0, 1, 1]))
    assert clf.record_.certified


def test_every_source_agrees_with_an_independent_reading(monkeypatch):
    """psutil, os.sysconf and /proc/meminfo give the same total (within the kernel's reserved pages)."""
    truth = _meminfo_bytes()
    if truth is None:
        pytest.skip("no /proc/meminfo on this system to compare with")
    for source in (limits._psutil_total, limits._sysconf_total, limits._meminfo_total):
        value = source()
        assert value is not None and abs(value - truth) <= 0.01 * truth, source.__name__
    assert limits._windows_total() is None  # not Windows


def test_without_psutil_and_without_os_sysconf_the_next_source_answers(monkeypatch):
    monkeypatch.setitem(sys.modules, "psutil", None)  # import psutil raises ImportError
    monkeypatch.delattr(os, "sysconf", raising=False)
    assert limits._psutil_total() is None and limits._sysconf_total() is None
    if _meminfo_bytes() is None:
        pytest.skip("no /proc/meminfo on this system")
    assert limits.physical_memory() == _meminfo_bytes()


def test_no_source_at_all_is_a_message_that_names_the_way_out(monkeypatch):
    for name in ("_psutil_total", "_sysconf_total", "_meminfo_total", "_windows_total"):
        monkeypatch.setattr(limits, name, lambda: None)
    with pytest.raises(limits.StrongTreeError) as info:
        limits.physical_memory()
    assert str(info.value) == limits.NO_MEMORY_FIGURE


def test_the_machine_s_memory_is_read_only_for_an_estimate_that_could_exceed_it(monkeypatch):
    from strongtree_core.engine import routes as engine

    read: list[int] = []

    def default() -> int:
        read.append(1)
        return 100 * 2**20

    monkeypatch.setattr(engine, "default_memory_limit", default)
    assert engine.over_limit(engine.FITS_ANY_MACHINE, None) is None and read == []
    assert engine.over_limit(engine.FITS_ANY_MACHINE + 1, None) is None and read == [1]
    assert engine.over_limit(200 * 2**20, None) == 100 * 2**20 and read == [1, 1]
    assert engine.over_limit(2000, 1000) == 1000 and read == [1, 1]  # a limit given is always kept
    assert engine.over_limit(1000, 1000) is None
    # the interpreter that runs a fit holds more than twice the bound: no machine refuses what is under it
    import psutil

    assert psutil.Process().memory_info().rss > 2 * engine.FITS_ANY_MACHINE
    from strongtree_core.errors import StrongTreeError

    with pytest.raises(StrongTreeError, match="memory"):
        StrongTreeClassifier(depth=2, memory_limit=1000).fit(np.eye(6, dtype=int), [0, 1] * 3)


@pytest.mark.parametrize("coding, features, widest", [
    ({}, 2_002, "'who' (2,000), 'kind' (1)"),  # the continuous 'a' counted once: its cuts are chosen later
    ({"n_buckets": 4, "max_thresholds": None}, 2_004, "'who' (2,000), 'a' (3), 'kind' (1)"),
], ids=["thresholds", "buckets"])
def test_a_table_too_wide_to_encode_is_refused_before_its_matrix_is_built(coding, features, widest):
    # An identifier read as categories is one binary feature per row: 51,000 rows took 23 GB before the
    # process was killed. The estimate is refused in words against memory_limit, as a solve's is.
    from strongtree_core.encoding import errors as enc
    from strongtree_core.encoding.binarize import encoded_bytes

    n = 2_000
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=n), "who": [f"p{i:05d}" for i in range(n)], "kind": ["x", "y"] * (n // 2)})
    y = (X.a > 0).astype(int)
    need = encoded_bytes(n, features)
    for limit in (need - 1, need // 2):
        with pytest.raises(enc.EncodingError) as info:
            StrongTreeClassifier(depth=1, time_limit=5, memory_limit=limit, **coding).fit(X, y)
        assert str(info.value) == enc.TOO_WIDE.format(need=need / 2**30, limit=limit / 2**30, rows=n,
                                                      features=features, widest=widest)
    # at the estimate the encoding goes on (the solve's own estimate is then compared with the limit)
    with pytest.raises(limits.StrongTreeError) as info:
        StrongTreeClassifier(depth=1, time_limit=5, memory_limit=need, **coding).fit(X, y)
    assert str(info.value).startswith("This solve would need about")
    assert StrongTreeClassifier(depth=1, time_limit=5, memory_limit=2**30, **coding).fit(X, y).score(X, y) > 0.9
