"""Compiled kernels, built once per installation and loaded in milliseconds.

A module declares its kernels with a :class:`KernelLibrary`::

    library = KernelLibrary(__name__)

    @library.kernel("f8(f8[:], i8)")
    def total(values, n):  # plain Python that numba can compile
        ...

    if library.ready():          # compiled now, without waiting?
        value = total(values, n)  # the compiled kernel
    else:
        value = numpy_path(...)   # the same result without compiled code

Where the compiled code comes from, fastest first:

1. **Ahead of time** (``numba.pycc``): one extension module per kernel module,
   built in a background process the first time any process needs it and kept
   in the user's cache folder (:func:`cache_root`), keyed by the kernels'
   source, Python, numpy, numba and the machine.  Every later process (a CLI
   run, a sweep worker, a Dask worker) loads it in about 10 ms, without
   importing numba.  Generic code for the machine's architecture: a cache in a
   home folder shared by several machines stays valid.
2. **numba's JIT with its on-disk cache** (``cache=True``, numba's own folders:
   ``__pycache__`` beside the source, or numba's per-user folder when that is
   read-only, or ``NUMBA_CACHE_DIR``), when the ahead-of-time build failed (no C
   compiler, numba without ``pycc``); the same background process fills that
   cache first, and each process then spends about 0.3 s loading it.
3. **Nothing compiled** while the build runs: :meth:`KernelLibrary.ready` is
   False and callers take their numpy path, so a fit never waits for a
   compiler and its time limit holds in the first process of a fresh install.
   A long fit switches to the compiled kernels as soon as they land.

Calling a kernel directly before it is ready compiles it in this process
(JIT) and waits: tests that compare kernels call them that way.

``STRONGTREE_KERNELS`` chooses: ``auto`` (the default, as above), ``jit``
(numba's JIT in this process, compiled on first use, no background build) or
``numpy`` (never compiled code).  ``STRONGTREE_CACHE_DIR`` moves the cache
folder; ``python -m strongtree_core.accel.prepare`` builds every kernel
library now and says where it is (for an image or a CI cache).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import math
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import types
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Literal

import numpy as np

from strongtree_core.errors import StrongTreeError

Mode = Literal["auto", "jit", "numpy"]
MODES: tuple[Mode, ...] = ("auto", "jit", "numpy")
#: Environment variables read here.
MODE_VARIABLE = "STRONGTREE_KERNELS"
CACHE_VARIABLE = "STRONGTREE_CACHE_DIR"
#: Seconds between two looks at the cache folder while a build runs.
RECHECK_SECONDS = 0.5
#: A build lock older than this is taken to belong to a builder that died.
STALE_LOCK_SECONDS = 900.0
#: Bump when the layout of the cache folder or of a built library changes
#: (2: the ahead-of-time kernels release the interpreter's lock).
FORMAT = 2

BAD_MODE = "{variable}={value!r} is not one of {modes}: unset it, or pick one of those."

#: Marker files in a library's folder.
LOCK_FILE = "build.lock"
FAILED_FILE = "aot-failed.txt"
JIT_READY_FILE = "jit-ready"
LOG_FILE = "build.log"
#: What a running build has done so far (JSON: done, total, stage, started), for those who wait for it.
PROGRESS_FILE = "progress.json"
#: Scheduling priority (Unix ``nice``) of a build started by a fit: the fit in the foreground comes first.
#: A build someone waits for (the dashboard's first start, ``prepare``) keeps its starter's priority.
BACKGROUND_NICENESS = 10


def mode() -> Mode:
    """How kernels are compiled, from ``STRONGTREE_KERNELS`` (default ``auto``)."""
    value = os.environ.get(MODE_VARIABLE, "auto").strip().lower() or "auto"
    if value not in MODES:
        raise StrongTreeError(BAD_MODE.format(variable=MODE_VARIABLE, value=value, modes=", ".join(MODES)))
    return value  # type: ignore[return-value]


def cache_root() -> Path:
    """The folder that holds built kernel libraries.

    ``STRONGTREE_CACHE_DIR`` if set; else the platform's per-user cache folder
    (``$XDG_CACHE_HOME/strongtree`` or ``~/.cache/strongtree`` on Linux,
    ``~/Library/Caches/strongtree`` on macOS, ``%LOCALAPPDATA%\\strongtree\\Cache``
    on Windows); a per-user folder under the temporary directory when there is
    no home folder.
    """
    given = os.environ.get(CACHE_VARIABLE)
    if given:
        return Path(given).expanduser()
    home = Path.home() if "HOME" in os.environ or os.name == "nt" else None
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
        if base:
            return Path(base) / "strongtree" / "Cache"
    elif sys.platform == "darwin" and home is not None:
        return home / "Library" / "Caches" / "strongtree"
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "strongtree"
    if home is not None:
        return home / ".cache" / "strongtree"
    return Path(tempfile.gettempdir()) / f"strongtree-{_user()}"


def _user() -> str:
    return str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")


@dataclass(frozen=True)
class Kernel:
    """One kernel: its Python source function, numba signature and library."""

    name: str
    signature: str
    py_func: Callable
    library: "KernelLibrary"

    def __call__(self, *args):
        impl = self.library.implementation(self.name)
        return impl(*args)


@dataclass(frozen=True)
class LibraryStatus:
    """Where one kernel library stands, for a page or a terminal that waits for it.

    ``state``: ``"ready"`` (built, or loaded), ``"building"`` (a build runs: ``done`` of ``total``
    steps, ``seconds`` since it started), ``"not built"`` (none runs yet), ``"not used"`` (numba
    missing, or ``STRONGTREE_KERNELS=numpy``: the numpy path, nothing to wait for).
    """

    name: str
    state: Literal["ready", "building", "not built", "not used"]
    done: int = 0
    total: int = 0
    seconds: float = 0.0


def _numba_version_stamp() -> str | None:
    """numba's location and modification time (no metadata scan: that costs 50 ms), or None without numba."""
    spec = importlib.util.find_spec("numba")
    if spec is None or spec.origin is None:
        return None
    return f"{spec.origin}:{os.stat(spec.origin).st_mtime_ns}"


class KernelLibrary:
    """The compiled kernels of one module (see the module docstring)."""

    def __init__(self, module_name: str) -> None:
        self.module_name = module_name
        self.kernels: dict[str, Kernel] = {}
        self._lock = threading.Lock()
        self._impl: dict[str, Callable] | None = None
        self._tier: str | None = None  # "aot", "jit" or None
        self._next_look = 0.0
        self._folder: Path | None = None
        self._key: str | None = None
        self._numba: str | None | bool = False  # False: not looked up yet
        self._builder: subprocess.Popen | None = None

    # -- declaring ------------------------------------------------------------
    def kernel(self, signature: str) -> Callable[[Callable], Kernel]:
        """Declare ``func`` a kernel of this library with the numba ``signature``
        (exact argument types: the ahead-of-time build compiles that one)."""

        def declare(func: Callable) -> Kernel:
            k = Kernel(func.__name__, signature, func, self)
            self.kernels[k.name] = k
            return k

        return declare

    # -- state ----------------------------------------------------------------
    @property
    def build_started(self) -> bool:
        """Whether this process started the background build."""
        return self._builder is not None

    @property
    def tier(self) -> str | None:
        """``"aot"`` or ``"jit"`` once loaded, else None."""
        return self._tier

    def key(self) -> str:
        """Hash of what the built library depends on: the module's source, the
        kernels' names and signatures, Python, numpy, numba and the machine."""
        if self._key is None:
            module = sys.modules[self.module_name]
            source = Path(module.__file__).read_bytes()
            h = hashlib.blake2b(digest_size=8)
            for part in (str(FORMAT), sys.version, np.__version__, str(self._numba_stamp()), platform.machine(),
                         sys.platform, *(f"{k.name}:{k.signature}" for k in self.kernels.values())):
                h.update(part.encode() + b"\0")
            h.update(source)
            self._key = h.hexdigest()
        return self._key

    def folder(self) -> Path:
        """This library's folder in the cache, for this key."""
        if self._folder is None:
            short = self.module_name.rsplit(".", 1)[-1]
            self._folder = cache_root() / "kernels" / f"{short}-{self.key()}"
        return self._folder

    def extension_name(self) -> str:
        return f"strongtree_{self.module_name.rsplit('.', 1)[-1]}_{self.key()}"

    def _numba_stamp(self) -> str | None:
        if self._numba is False:
            self._numba = _numba_version_stamp()
        return self._numba  # type: ignore[return-value]

    def ready(self) -> bool:
        """True when compiled kernels can run now; never waits for a compiler.

        In ``auto`` mode the first call without a built library starts the
        background build, and later calls look again at most every
        :data:`RECHECK_SECONDS`."""
        if self._impl is not None:
            return True
        m = mode()
        if m == "numpy" or self._numba_stamp() is None:
            return False
        if m == "jit":
            return self._load_jit()
        now = time.monotonic()
        if now < self._next_look:
            return False
        with self._lock:
            if self._impl is not None:
                return True
            self._next_look = now + RECHECK_SECONDS
            return self._look()

    def usable(self) -> bool:
        """Whether compiled kernels can run in this process, now or once built
        (numba installed and ``STRONGTREE_KERNELS`` is not ``numpy``)."""
        return self._impl is not None or (mode() != "numpy" and self._numba_stamp() is not None)

    def preload(self) -> None:
        """Load the built library if the cache already holds it (a few
        milliseconds, done when the kernel module is imported); never builds."""
        try:
            if mode() != "auto" or self._numba_stamp() is None:
                return
            built = self._built_file(self.folder())
            if built is not None:
                with self._lock:
                    if self._impl is None:
                        self._load_aot(built)
        except (StrongTreeError, OSError, ImportError):
            return  # said or handled by the first ready()

    def implementation(self, name: str) -> Callable:
        """The compiled ``name``, compiling in this process if nothing is ready."""
        if self._impl is None and not self.ready():
            if self._numba_stamp() is None:
                raise RuntimeError(f"The kernel {name!r} needs numba, which is not installed.")
            self._load_jit()
        return self._impl[name]  # type: ignore[index]

    def _look(self) -> bool:
        """Load what the cache holds, or make sure a build is under way."""
        try:
            folder = self.folder()
            built = self._built_file(folder)
            if built is not None:
                try:
                    return self._load_aot(built)
                except ImportError:  # unreadable: built again
                    built.unlink(missing_ok=True)
                    return False
            if (folder / JIT_READY_FILE).exists():
                return self._load_jit()
            self._start_build(folder)
        except OSError:
            # No usable cache folder (read-only, full): the temporary folder's, else
            # the numpy path for good (never a compiler inside a fit).
            fallback = Path(tempfile.gettempdir()) / f"strongtree-{_user()}" / "kernels" / self.folder().name
            if self._folder == fallback:
                self._next_look = math.inf
            else:
                self._folder = fallback
                self._next_look = 0.0
        return False

    def _built_file(self, folder: Path) -> Path | None:
        name = self.extension_name()
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = folder / (name + suffix)
            if path.exists():
                return path
        return None

    def _load_aot(self, path: Path) -> bool:
        name = self.extension_name()
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            return False
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        self._impl = {k: getattr(module, k) for k in self.kernels}
        self._tier = "aot"
        return True

    def _load_jit(self) -> bool:
        if self._numba_stamp() is None:
            return False
        self._impl = jit_dispatchers(self)
        self._tier = "jit"
        return True

    def status(self) -> LibraryStatus:
        """Where this library stands (reads the cache folder; starts nothing)."""
        short = self.module_name.rsplit(".", 1)[-1]
        if self._impl is not None:
            return LibraryStatus(short, "ready")
        if not self.usable():
            return LibraryStatus(short, "not used")
        if mode() == "jit":  # compiled in the process on first use: nothing to wait for
            return LibraryStatus(short, "ready")
        folder = self.folder()
        if self._built_file(folder) is not None or (mode() == "auto" and (folder / JIT_READY_FILE).exists()):
            return LibraryStatus(short, "ready")
        lock = folder / LOCK_FILE
        if lock.exists() and not _stale(lock):
            try:
                seen = json.loads((folder / PROGRESS_FILE).read_text())
                return LibraryStatus(short, "building", int(seen["done"]), int(seen["total"]),
                                     max(0.0, time.time() - float(seen["started"])))
            except (OSError, ValueError, KeyError, TypeError):
                return LibraryStatus(short, "building", 0, len(self.kernels) + 1, 0.0)
        return LibraryStatus(short, "not built")

    def start_build(self, foreground: bool = False) -> None:
        """Start building this library in another process unless it is built or a build runs;
        ``foreground``: at this process's priority (someone waits for it), else at
        :data:`BACKGROUND_NICENESS`.  Never waits; :meth:`status` tells how it goes."""
        if mode() != "auto" or not self.usable() or self._impl is not None:
            return
        with self._lock:
            folder = self.folder()
            if self._built_file(folder) is not None or (folder / JIT_READY_FILE).exists():
                return
            try:
                self._start_build(folder, foreground)
            except OSError:
                return

    # -- building -------------------------------------------------------------
    def _start_build(self, folder: Path, foreground: bool = False) -> None:
        """Start the background build unless one runs (the lock file is taken here,
        so processes that start together start one build)."""
        if self._builder is not None and self._builder.poll() is None:
            return
        folder.mkdir(parents=True, exist_ok=True)
        lock = folder / LOCK_FILE
        if not _take_lock(lock):
            return
        env = dict(os.environ)
        package_parent = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join([package_parent, *filter(None, [env.get("PYTHONPATH")])])
        env.pop(MODE_VARIABLE, None)
        try:
            with open(folder / LOG_FILE, "ab") as log:
                self._builder = subprocess.Popen(
                    [sys.executable, "-m", "strongtree_core.accel.prepare", "--build-one", self.module_name,
                     "--lock", str(lock), *(["--foreground"] if foreground else [])],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, cwd=str(folder),
                    start_new_session=True, close_fds=True,
                )
        except (OSError, ValueError):  # no interpreter to start (an embedded Python): the numpy path
            lock.unlink(missing_ok=True)
            self._next_look = math.inf
            return
        # the builder holds the lock from now on: this process may end before the builder has started
        # and written its own number, and a lock naming a process that is gone counts as stale
        lock.write_text(f"{socket.gethostname()} {self._builder.pid} {time.time()}\n")

    def stop_build(self) -> None:
        """End the background build this process started, and the compiler processes under it
        (the lock goes with it: the next process that needs the kernels starts it again)."""
        builder, self._builder = self._builder, None
        if builder is None or builder.poll() is not None:
            return
        import psutil

        try:
            tree = psutil.Process(builder.pid)
            doomed = [*tree.children(recursive=True), tree]
        except psutil.NoSuchProcess:
            doomed = []
        for process in doomed:
            try:
                process.kill()
            except psutil.Error:
                pass
        builder.wait()
        psutil.wait_procs(doomed, timeout=10)
        (self.folder() / LOCK_FILE).unlink(missing_ok=True)

    def build(self, report: Callable[[int, int, str], None] | None = None) -> str:
        """Build this library now (in this process): the ahead-of-time module, or
        when that fails numba's cache; returns the tier built.  Each step (a kernel
        compiled, then the module's machine code written and linked) goes to
        ``report(done, total, stage)`` and to the folder's progress file."""
        folder = self.folder()
        folder.mkdir(parents=True, exist_ok=True)
        if self._built_file(folder) is not None:
            return "aot"
        progress = _Progress(folder / PROGRESS_FILE, len(self.kernels) + 1, report)
        if not (folder / FAILED_FILE).exists():
            try:
                _build_aot(self, folder, progress)
                return "aot"
            except Exception as exc:  # noqa: BLE001 - recorded, then the JIT cache is filled instead
                (folder / FAILED_FILE).write_text(f"{type(exc).__name__}: {exc}\n")
        progress.restart(len(self.kernels))
        for name, impl in jit_dispatchers(self).items():
            progress.step(f"compiling {name} (numba's JIT cache)")
            impl.compile(self.kernels[name].signature)
        (folder / JIT_READY_FILE).write_text("numba's cache is filled\n")
        progress.finish()
        return "jit"


class _Progress:
    """A build's steps, written to its progress file (atomically) and handed to a callback."""

    def __init__(self, path: Path, total: int, report: Callable[[int, int, str], None] | None) -> None:
        self.path, self.total, self.report = path, total, report
        self.done = 0
        self.started = time.time()
        self._write("starting")

    def restart(self, total: int) -> None:
        self.total, self.done = total, 0
        self._write("starting again with numba's JIT cache")

    def step(self, stage: str) -> None:
        """Say that ``stage`` starts (the steps before it are done)."""
        self._write(stage)
        self.done += 1

    def finish(self) -> None:
        self.done = self.total
        self._write("done")

    def _write(self, stage: str) -> None:
        done = min(self.done, self.total)
        if self.report is not None:
            self.report(done, self.total, stage)
        try:
            partial = self.path.with_suffix(".partial")
            partial.write_text(json.dumps({"done": done, "total": self.total, "stage": stage,
                                           "started": self.started}))
            os.replace(partial, self.path)
        except OSError:
            pass


def _take_lock(lock: Path) -> bool:
    """Create the lock file (False when another live build holds it)."""
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            if not _stale(lock):
                return False
            try:
                lock.unlink()
            except FileNotFoundError:
                pass
            continue
        with os.fdopen(fd, "w") as f:
            f.write(f"{socket.gethostname()} {os.getpid()} {time.time()}\n")
        return True
    return False


def _stale(lock: Path) -> bool:
    """A lock left by a build that died: too old, or its process gone (same machine)."""
    try:
        text = lock.read_text().split()
        age = time.time() - lock.stat().st_mtime
    except (OSError, ValueError):
        return False
    if age > STALE_LOCK_SECONDS:
        return True
    if len(text) >= 3 and text[0] == socket.gethostname() and text[1].isdigit():
        try:
            taken = float(text[2])
        except ValueError:
            return False
        return not _alive(int(text[1]), taken)
    return False


def _alive(pid: int, since: float) -> bool:
    """Whether process ``pid`` runs and is the one that took a lock at ``since`` (a pid the system
    gave to a later process, or a zombie, is not)."""
    import psutil

    try:
        process = psutil.Process(pid)
        return process.status() != psutil.STATUS_ZOMBIE and process.create_time() <= since + 1.0
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:  # not ours to look at: taken to be alive
        return True


def _compilable(kernel: Kernel) -> tuple[types.FunctionType, dict]:
    """A copy of the kernel's function and of its global names, so that the
    library's other kernels can be put there as numba functions (a kernel may
    call another; numba reads the names when it compiles, not before)."""
    f = kernel.py_func
    scope = dict(f.__globals__)
    g = types.FunctionType(f.__code__, scope, f.__name__, f.__defaults__, f.__closure__)
    g.__qualname__, g.__module__, g.__doc__ = f.__qualname__, f.__module__, f.__doc__
    return g, scope


def _compilable_all(library: KernelLibrary, wrap: Callable[[Callable], Callable]) -> dict[str, Callable]:
    """Every kernel as ``wrap(function)``, each seeing the others wrapped the same way."""
    made = {name: _compilable(kernel) for name, kernel in library.kernels.items()}
    wrapped = {name: wrap(g) for name, (g, _) in made.items()}
    for g, scope in made.values():
        for name, value in list(scope.items()):
            if isinstance(value, Kernel) and value.library is library:
                scope[name] = wrapped[value.name]
            elif not isinstance(value, type) and hasattr(value, "compiled_extension"):  # made only to compile
                scope[name] = value.compiled_extension()
    return wrapped


def jit_dispatchers(library: KernelLibrary) -> dict[str, Callable]:
    """numba JIT dispatchers of every kernel (``cache=True``: numba's own cache folders)."""
    from numba import njit

    return _compilable_all(library, njit(cache=True, nogil=True))


def _import_pycc():
    """``numba.pycc``, whose own notice is a *pending* deprecation (numba 0.57 on): numba's maintainers
    will not remove it before a replacement exists and a real deprecation has been announced for two
    releases (numba's deprecation notices).  That notice is silenced here, where the build alone sees
    it; a real deprecation is raised instead, so that the build takes numba's JIT cache (same kernels,
    same speed, 0.6 s more per process to load: docs/compiled-kernels.md) and says why in
    ``aot-failed.txt``."""
    import warnings

    from numba.core.errors import NumbaDeprecationWarning, NumbaPendingDeprecationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaPendingDeprecationWarning)
        warnings.simplefilter("error", NumbaDeprecationWarning)
        return importlib.import_module("numba.pycc")


def _build_aot(library: KernelLibrary, folder: Path, progress: _Progress | None = None) -> None:
    """Compile the library with ``numba.pycc`` into a temporary folder, then move it into place."""
    from numba import njit

    pycc = _import_pycc()
    work = Path(tempfile.mkdtemp(prefix="build-", dir=folder))
    try:
        cc = pycc.CC(library.extension_name())
        cc.output_dir = str(work)
        # each exported function sees the library's other kernels as numba functions
        dispatchers = _compilable_all(library, njit(nogil=True))
        for name, kernel in library.kernels.items():
            cc.export(name, kernel.signature)(dispatchers[name].py_func)
        with _wrappers_release_the_lock(), _steps_reported(library, progress):
            cc.compile()
        (built,) = [p for p in work.iterdir() if p.name.startswith(library.extension_name())]
        os.replace(built, folder / built.name)
        if progress is not None:
            progress.finish()
    finally:
        shutil.rmtree(work, ignore_errors=True)


@contextmanager
def _steps_reported(library: KernelLibrary, progress: _Progress | None) -> Iterator[None]:
    """Within this block, each kernel ``numba.pycc`` compiles is a step of ``progress`` (pycc compiles
    its exports one by one through ``compile_extra``); after the last one, the module's optimization,
    machine code and link are the last step."""
    if progress is None:
        yield
        return
    from numba.pycc import compiler

    compile_extra = compiler.compile_extra
    names = list(library.kernels)
    seen = iter(range(len(names)))

    def counted(*args, **kwargs):
        i = next(seen, len(names) - 1)
        progress.step(f"compiling {names[i]}")
        made = compile_extra(*args, **kwargs)
        if i == len(names) - 1:
            progress.step("optimizing, writing the machine code and linking")
        return made

    compiler.compile_extra = counted
    try:
        yield
    finally:
        compiler.compile_extra = compile_extra


@contextmanager
def _wrappers_release_the_lock() -> Iterator[None]:
    """Within this block, ``numba.pycc`` builds wrappers that release the interpreter's lock.

    ``pycc`` compiles its exported wrappers with default flags, so they hold the
    lock for the whole call, as the JIT does without ``nogil``.  The kernels touch
    no Python object (nopython mode, the same code the JIT tier compiles with
    ``nogil=True``), so their wrappers can let it go: the dashboard's other threads
    and the ``n_jobs`` threads of one search then run while a kernel does."""
    from numba.pycc import compiler

    flags_type = compiler.Flags

    def flags(*args, **kwargs):
        made = flags_type(*args, **kwargs)
        made.release_gil = True
        return made

    compiler.Flags = flags
    try:
        yield
    finally:
        compiler.Flags = flags_type
