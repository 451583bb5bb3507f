"""The exact search's one-time preparation, as the dashboard sees it: started when the server
first runs the app, told in the terminal, read by the pages.

On a fresh machine the compiled kernels of the exact search are not built yet
(:mod:`strongtree_core.accel.compiled`): a solve then runs the numpy path, correct but slower,
until they are.  The server starts their build at its first page run, at its own priority (a
build started by a niced solve worker would crawl behind any other work), prints where it stands
in the terminal every :data:`TERMINAL_EVERY` seconds until it is ready, and the pages read
:func:`status` (the live demo waits for it: see ``screens/solve.py``).
"""

from __future__ import annotations

import sys
import threading
import time

from strongtree_core.accel.prepare import Preparation, preparation

#: Seconds between two lines in the terminal while the preparation runs.
TERMINAL_EVERY = 10.0
#: What the terminal says first, then every TERMINAL_EVERY seconds, then once ready.
TERMINAL_LINE = "StrongTree Studio: {words}"

_started = threading.Event()
_lock = threading.Lock()


def start() -> None:
    """Start the preparation once per server process (a no-op when it is done), and its terminal lines."""
    with _lock:
        if _started.is_set():
            return
        _started.set()
    first = preparation(start=True, foreground=True)
    if first.ready:
        return
    threading.Thread(target=_tell_the_terminal, args=(first,), name="strongtree-kernel-preparation",
                     daemon=True).start()


def status() -> Preparation:
    """Where the preparation stands now (reads the cache folder: a few milliseconds)."""
    return preparation()


def waiting() -> bool:
    """Whether a build of the compiled code runs now, worth waiting for (one that cannot be started,
    e.g. no writable cache folder, is not: the numpy path runs then, as it always can)."""
    return any(part.state == "building" for part in preparation(start=True, foreground=True).parts)


def _tell_the_terminal(first: Preparation) -> None:
    started = time.monotonic()
    now = first
    while not now.ready:
        print(TERMINAL_LINE.format(words=now.words()), file=sys.stderr, flush=True)
        deadline = time.monotonic() + TERMINAL_EVERY
        while time.monotonic() < deadline:
            time.sleep(0.5)
            now = preparation(start=True, foreground=True)  # a build that died is started again
            if now.ready:
                break
    print(TERMINAL_LINE.format(words=f"{now.words()} ({time.monotonic() - started:.0f} s)"), file=sys.stderr,
          flush=True)
