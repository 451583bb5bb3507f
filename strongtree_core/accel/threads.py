"""One BLAS thread for the exact search, at the cost of a function call.

``threadpoolctl.threadpool_limits`` looks up every shared library of the
process on each use (9.5 ms with numpy, scipy and scikit-learn loaded; 60 ms
the first time), more than a whole search on a small table.  The libraries are
looked up once here, when this module is imported; limiting them afterwards
takes about 30 microseconds.  BLAS libraries loaded later are not limited
(numpy's and scipy's are loaded before this module).
"""

from __future__ import annotations

from contextlib import nullcontext

from threadpoolctl import ThreadpoolController

_blas = ThreadpoolController().select(user_api="blas")


#: Patterns x features below which no matrix product of a search is large enough for BLAS
#: to take threads: the limit is not set (setting and lifting it took 20-100 microseconds of
#: a search of the paper's small tables).
SMALL_CELLS = 100_000


def one_blas_thread(cells: float = float("inf")):
    """A context manager that holds every BLAS library of the process to one
    thread inside its block (threadpoolctl's limiter: the previous limits come back);
    nothing for a problem of fewer than ``SMALL_CELLS`` patterns x features."""
    if cells < SMALL_CELLS:
        return nullcontext()
    return _blas.limit(limits=1)
