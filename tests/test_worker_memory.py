"""One solve cannot take the host's memory: the worker's address space is capped,
and a solve that reaches the cap ends with a message, not a crash."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from strongtree_core.engine.limits import OUT_OF_MEMORY, WORKER_HEADROOM, default_memory_limit, human_bytes
from strongtree_studio.jobs import worker

resource = pytest.importorskip("resource")


def test_past_the_cap_an_allocation_fails_instead_of_growing():
    # In a child process (the cap cannot be lifted again): 1 GB more than what is
    # mapped now is allowed; a 2 GB array is refused, a 100 MB one is not.
    script = textwrap.dedent(
        """
        import resource, numpy as np
        from strongtree_core.engine.limits import cap_address_space
        pages = int(open("/proc/self/statm").read().split()[0])
        assert cap_address_space(pages * resource.getpagesize() + 2**30)
        np.ones(100 * 2**20, dtype=np.uint8)
        try:
            np.ones(2 * 2**30, dtype=np.uint8)
        except MemoryError:
            print("refused")
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "refused"


def test_the_worker_cap_is_the_default_memory_limit_with_headroom():
    assert worker.worker_memory_cap() == int(WORKER_HEADROOM * default_memory_limit())


class _Box:
    def __init__(self):
        self.sent = []

    def send(self, message):
        self.sent.append(message)


def test_a_solve_that_runs_out_of_memory_says_so(monkeypatch):
    from strongtree_core import StrongTreeClassifier

    def fit(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(StrongTreeClassifier, "fit", fit)
    box = _Box()
    X = pd.DataFrame({"a": np.arange(10) % 2})
    spec = worker.SolveSpec(X=X, y=pd.Series(np.arange(10) % 2), params={"depth": 1})
    worker._fit(spec, spec.params, "main", box, None)
    expected = OUT_OF_MEMORY.format(limit=human_bytes(worker.worker_memory_cap()))
    assert box.sent == [{"kind": "error", "phase": "main", "message": expected, "user_error": True}]
