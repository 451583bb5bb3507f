"""Build the compiled kernels now: ``python -m strongtree_core.accel.prepare``.

Prints where each kernel library went.  Useful in an image, a CI cache or a
shared installation; otherwise the first process that needs the kernels starts
the same build in the background (:mod:`strongtree_core.accel.compiled`).
``--build-one MODULE --lock FILE`` is that background build.
"""

from __future__ import annotations

import importlib
import os
import socket
import sys
import time
from pathlib import Path

from strongtree_core.accel.compiled import KernelLibrary

#: Modules that declare kernels (one :class:`KernelLibrary` each).
KERNEL_MODULES = ("strongtree_core.accel.kernels", "strongtree_core.accel.ordered", "strongtree_core.accel.treedp",
                  "strongtree_core.accel.fronts")


def _library_of(module_name: str) -> KernelLibrary:
    module = importlib.import_module(module_name)
    libraries = [v for v in vars(module).values() if isinstance(v, KernelLibrary)]
    if len(libraries) != 1:
        raise SystemExit(f"{module_name} declares {len(libraries)} kernel libraries, expected 1")
    return libraries[0]


def main(argv: list[str] | None = None) -> int:
    """Build every kernel library now (or, with ``--build-one``, the background build of one)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--build-one"]:  # the background build started by KernelLibrary.ready
        module_name, lock = args[1], Path(args[3])
        if hasattr(os, "nice"):
            os.nice(10)  # a fit in the foreground comes first
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
        tier = library.build()
        what = "ahead-of-time module" if tier == "aot" else "numba's JIT cache (the ahead-of-time build failed)"
        print(f"{module_name}: {what} in {library.folder()} ({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
