"""Stop, relayed to where the points run: the caller's event in this process, a file that
process workers on this machine look at, a Dask ``Event`` on a cluster.

A running fit stops and returns its best tree, a point not yet started returns nothing.  Light
on purpose (no pandas, no scikit-learn, and outside :mod:`strongtree_core.sweep`, whose package
loads both): a process worker unpickles its relay with every point.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

#: Seconds between two looks at Stop while waiting for rows, and between two looks at a relay in a worker.
POLL = 0.2


class LocalRelay:
    """Stop in this process: the caller's event itself."""

    def __init__(self, event: threading.Event | None = None) -> None:
        self.event = event if event is not None else threading.Event()

    def is_set(self) -> bool:
        return self.event.is_set()

    def set(self) -> None:
        self.event.set()

    @contextmanager
    def watching(self) -> Iterator[threading.Event]:
        yield self.event


class _Watched:
    """A relay read by polling: a thread in the worker copies it into a local event for the fit."""

    @contextmanager
    def watching(self) -> Iterator[threading.Event]:
        local, done = threading.Event(), threading.Event()

        def watch() -> None:
            while not done.wait(POLL):
                if self.is_set():
                    local.set()
                    return

        watcher = threading.Thread(target=watch, name="strongtree-sweep-stop", daemon=True)
        watcher.start()
        try:
            yield local
        finally:
            done.set()
            watcher.join()

    def is_set(self) -> bool:  # pragma: no cover - overridden
        raise NotImplementedError


class FileRelay(_Watched):
    """Stop for process workers on this machine: a file that exists once Stop was pressed."""

    def __init__(self, path: str) -> None:
        self.path = path

    def is_set(self) -> bool:
        return os.path.exists(self.path)

    def set(self) -> None:
        Path(self.path).touch()


class DaskRelay(_Watched):
    """Stop for the workers of a Dask cluster: a named ``distributed.Event``."""

    def __init__(self, name: str, client=None) -> None:
        self.name = name
        self._client = client
        self._event = None

    def __getstate__(self) -> dict:
        return {"name": self.name, "_client": None, "_event": None}  # a worker finds its own client

    def _get(self):
        if self._event is None:
            from dask.distributed import Event

            self._event = Event(self.name, client=self._client)
        return self._event

    def is_set(self) -> bool:
        return bool(self._get().is_set())

    def set(self) -> None:
        self._get().set()
