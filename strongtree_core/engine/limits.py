"""Memory as a limit: what the machine allows, and what a solve would need,
estimated before anything large is built.

``memory_limit`` (estimator parameter, bytes) defaults to half of the memory this
process may use (the smaller of the machine's RAM and a cgroup limit).  A solve
whose estimate exceeds it is refused with a message naming both figures and
what to change; the exact search keeps its working arrays in blocks (``accel``),
so its estimate is dominated by the table itself.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from strongtree_core.encoding.patterns import PatternData
from strongtree_core.errors import StrongTreeError

#: Share of the available memory used when memory_limit is not given.
DEFAULT_SHARE = 0.5
#: Bytes a solve needs per non-zero of the constraint matrix, all copies
#: together (our arrays, the solver's matrix, presolve, factorization, search):
#: measured 305 (HiGHS) and 278 (SCIP) at their peak in the first 10 s on a
#: FlowOCT model of 1.9 million non-zeros (depth 4, 2,000 rows).
MIO_BYTES_PER_NONZERO = 400
#: Bytes per row and per column of a model (bounds, names, solver bookkeeping).
MIO_BYTES_PER_ROW_OR_COLUMN = 200

TOO_LARGE = (
    "This solve would need about {need} of memory, more than the {limit} allowed (memory_limit). "
    "{what} {fix}"
)
MIO_WHAT = "{formulation} for {patterns:,} distinct rows at depth {depth} has about {rows:,} constraints, {cols:,} variables and {nnz:,} non-zeros."
MIO_FIX = ("Use formulation='auto' (the exact search needs far less), a smaller depth, fewer rows, "
           "or raise memory_limit.")
EXACT_WHAT = "The exact search keeps {patterns:,} distinct rows x {features:,} binary features in memory."
NO_MEMORY_FIGURE = (
    "The memory of this machine could not be read (psutil, os.sysconf, /proc/meminfo and Windows' "
    "GlobalMemoryStatusEx all failed): pass memory_limit=<bytes> to fit."
)
EXACT_FIX = "Use fewer rows or columns (fewer buckets with n_buckets=), or raise memory_limit."


#: n_jobs=0 asks for no worker at all.
NO_JOBS = ("n_jobs=0 asks for no thread at all: give a positive number, -1 for every core (-2 for all but one), "
           "or None for one.")


def cores_for(n_jobs: int | None) -> int:
    """Threads for ``n_jobs`` in scikit-learn's sense: None is 1, a positive number is
    itself, -1 every core this process may use, -2 all but one, and so on (at least 1)."""
    if n_jobs is None:
        return 1
    if n_jobs == 0:
        raise ValueError(NO_JOBS)
    if n_jobs > 0:
        return int(n_jobs)
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, usable + 1 + int(n_jobs))


def physical_memory() -> int:
    """Bytes of physical memory of this machine, on Linux, macOS and Windows alike.

    Asked of psutil (BSD-3-Clause, a default dependency with wheels for all three); where
    it cannot answer, of ``os.sysconf`` (POSIX), ``/proc/meminfo`` (Linux) or Windows'
    ``GlobalMemoryStatusEx``.  Windows has no ``os.sysconf``: calling it there raised
    ``AttributeError`` in every default ``fit``.

    Examples
    --------
    >>> physical_memory() > 0
    True
    """
    for source in (_psutil_total, _sysconf_total, _meminfo_total, _windows_total):
        total = source()
        if total:
            return total
    raise StrongTreeError(NO_MEMORY_FIGURE)


def _psutil_total() -> int | None:
    try:
        import psutil
    except ImportError:
        return None
    try:
        return int(psutil.virtual_memory().total)
    except (OSError, RuntimeError, AttributeError):
        return None


def _sysconf_total() -> int | None:
    sysconf = getattr(os, "sysconf", None)
    if sysconf is None:  # Windows
        return None
    try:
        return int(sysconf("SC_PAGE_SIZE")) * int(sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError):
        return None


def _meminfo_total() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        return None
    return None


def _windows_total() -> int | None:
    if sys.platform != "win32":
        return None
    import ctypes

    class MemoryStatusEx(ctypes.Structure):
        _fields_ = [("dwLength", ctypes.c_ulong), ("dwMemoryLoad", ctypes.c_ulong),
                    ("ullTotalPhys", ctypes.c_ulonglong), ("ullAvailPhys", ctypes.c_ulonglong),
                    ("ullTotalPageFile", ctypes.c_ulonglong), ("ullAvailPageFile", ctypes.c_ulonglong),
                    ("ullTotalVirtual", ctypes.c_ulonglong), ("ullAvailVirtual", ctypes.c_ulonglong),
                    ("ullAvailExtendedVirtual", ctypes.c_ulonglong)]

    status = MemoryStatusEx()
    status.dwLength = ctypes.sizeof(MemoryStatusEx)
    if not ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):  # type: ignore[attr-defined]
        return None
    return int(status.ullTotalPhys)


def available_memory() -> int:
    """Bytes this process may use: physical memory, or a smaller cgroup limit.

    Examples
    --------
    >>> available_memory() <= physical_memory()
    True
    """
    total = physical_memory()
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path, encoding="utf-8") as file:
                text = file.read().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return int(total)


def default_memory_limit() -> int:
    return int(DEFAULT_SHARE * available_memory())


#: A solve worker's address space may grow to this many times the default memory
#: limit: the estimates refuse, in words, what they see above the limit; the cap is
#: the floor under a wrong estimate, so that one solve cannot take the machine.
WORKER_HEADROOM = 1.5
OUT_OF_MEMORY = (
    "The solve needed more memory than one solve may use on this machine ({limit}) and was ended. "
    "Use a smaller depth, fewer rows or columns (fewer buckets with n_buckets=), or formulation='auto'."
)


def cap_address_space(limit: int) -> bool:
    """Make allocations past ``limit`` bytes of address space fail in this process
    (``MemoryError``) instead of taking the machine's memory (Unix ``RLIMIT_AS``;
    never above a hard limit already set).  True when the cap was applied."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return False
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = int(limit) if hard == resource.RLIM_INFINITY else min(int(limit), hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):  # pragma: no cover - below what is already mapped
        return False
    return True


def human_bytes(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"  # pragma: no cover


def exact_search_bytes(data: PatternData, n_quantities: int) -> int:
    """Working memory of the exact search: the features as floats and as lists of
    ones, the per-pattern quantities (three copies), and the kernel's blocks."""
    P, F, K = data.n_patterns, data.n_features, data.n_classes
    ones = int(np.count_nonzero(data.X))
    kernel = 20 * 8 * min(F * F, 1 << 20)  # the depth-2 kernel's (block, F) arrays
    return int(8 * P * F + 16 * ones + 3 * 8 * P * K * (1 + n_quantities) + kernel + 64 * P)


def subset(data: PatternData, idx: np.ndarray) -> PatternData:
    """The patterns ``idx`` only (for building a small model to measure)."""
    return replace(
        data, X=data.X[idx], y=data.y[idx], weight=data.weight[idx], count=data.count[idx],
        group=None if data.group is None else data.group[idx], legit=None if data.legit is None else data.legit[idx],
        row_to_pattern=None,
    )


def extrapolate(small: tuple[int, int, int], larger: tuple[int, int, int], n_small: int, n_larger: int, n: int) -> tuple[int, int, int]:
    """(rows, columns, non-zeros) at ``n`` patterns from two models built on fewer:
    every formulation here grows linearly in the patterns."""
    return tuple(int(a + (b - a) * (n - n_small) / max(1, n_larger - n_small)) for a, b in zip(small, larger))


def mio_bytes(rows: int, cols: int, nnz: int) -> int:
    return int(MIO_BYTES_PER_NONZERO * nnz + MIO_BYTES_PER_ROW_OR_COLUMN * (rows + cols))
