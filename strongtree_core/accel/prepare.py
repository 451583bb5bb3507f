"""Build the compiled kernels now: ``python -m strongtree_core.accel.prepare``.

Prints each step (a kernel compiled, the machine code written) and where each kernel
library went.  Useful in an image, a CI cache or a shared installation; otherwise the
first process that needs the kernels starts the same build in the background
(:mod:`strongtree_core.accel.compiled`).  ``--build-one MODULE --lock FILE
[--foreground]`` is that background build.

:func:`preparation` says where the one-time preparation stands, in words a page or a
terminal can show, and can start it (the dashboard does at its first start).
"""

from __future__ import annotations

import importlib
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from strongtree_core.accel.compiled import BACKGROUND_NICENESS, KernelLibrary, LibraryStatus

#: Modules that declare kernels (one :class:`KernelLibrary` each).
KERNEL_MODULES = ("strongtree_core.accel.kernels", "strongtree_core.accel.ordered", "strongtree_core.accel.treedp")
#: Seconds the preparation takes on an idle 2-core machine, said to whoever waits for it.
TYPICAL_SECONDS = 60

PREPARING = (
    "Preparing the exact search's compiled code, once on this machine (about a minute; longer when the "
    "machine is busy): {ready} of {parts} parts ready{detail}."
)
PREPARING_DETAIL = "; {name}: {done} of {total} steps, {seconds:.0f} s so far"
PREPARED = "The exact search's compiled code is ready."


@dataclass(frozen=True)
class Preparation:
    """Where the one-time preparation of every kernel library stands."""

    parts: tuple[LibraryStatus, ...]

    @property
    def ready(self) -> bool:
        """Nothing left to wait for: every library built, or not used here (the numpy path)."""
        return all(part.state in ("ready", "not used") for part in self.parts)

    def words(self) -> str:
        """One sentence for a page or a terminal."""
        if self.ready:
            return PREPARED
        used = [part for part in self.parts if part.state != "not used"]
        building = [part for part in used if part.state == "building"]
        detail = "".join(PREPARING_DETAIL.format(name=p.name, done=p.done, total=p.total, seconds=p.seconds)
                         for p in building)
        return PREPARING.format(ready=sum(p.state == "ready" for p in used), parts=len(used), detail=detail)


def _library_of(module_name: str) -> KernelLibrary:
    module = importlib.import_module(module_name)
    libraries = [v for v in vars(module).values() if isinstance(v, KernelLibrary)]
    if len(libraries) != 1:
        raise SystemExit(f"{module_name} declares {len(libraries)} kernel libraries, expected 1")
    return libraries[0]


def preparation(start: bool = False, foreground: bool = False) -> Preparation:
    """Where the preparation stands; with ``start``, the libraries not built yet start building in
    other processes (``foreground``: at this process's priority, for someone who waits)."""
    libraries = [_library_of(name) for name in KERNEL_MODULES]
    if start:
        for library in libraries:
            if library.status().state == "not built":
                library.start_build(foreground=foreground)
    return Preparation(tuple(library.status() for library in libraries))


def _at_background_priority() -> None:
    """At least :data:`BACKGROUND_NICENESS` (an absolute level: a build started by a niced process is not
    pushed further down)."""
    if hasattr(os, "nice"):
        current = os.nice(0)
        if current < BACKGROUND_NICENESS:
            os.nice(BACKGROUND_NICENESS - current)


def main(argv: list[str] | None = None) -> int:
    """Build every kernel library now (or, with ``--build-one``, the background build of one)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--build-one"]:  # the background build started by KernelLibrary.ready / start_build
        module_name, lock = args[1], Path(args[3])
        if "--foreground" not in args:
            _at_background_priority()  # a fit in the foreground comes first
        lock.write_text(f"{socket.gethostname()} {os.getpid()} {time.time()}\n")  # this process holds it now
        try:
            _library_of(module_name).build()
        finally:
            try:
                lock.unlink()
            except FileNotFoundError:
                pass
        return 0
    for module_name in KERNEL_MODULES:
        library = _library_of(module_name)
        started = time.perf_counter()
        short = module_name.rsplit(".", 1)[-1]

        def said(done: int, total: int, stage: str) -> None:
            print(f"{short}: step {done + 1 if done < total else total} of {total}: {stage} "
                  f"({time.perf_counter() - started:.1f} s)", flush=True)

        tier = library.build(report=said)
        what = "ahead-of-time module" if tier == "aot" else "numba's JIT cache (the ahead-of-time build failed)"
        print(f"{module_name}: {what} in {library.folder()} ({time.perf_counter() - started:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
