"""One BLAS thread for the exact search, at the cost of a function call.

``threadpoolctl.threadpool_limits`` looks up every shared library of the
process on each use (9.5 ms with numpy, scipy and scikit-learn loaded; 60 ms
the first time), more than a whole search on a small table.  The libraries are
looked up once here, when this module is imported; limiting them afterwards
takes about 30 microseconds.  BLAS libraries loaded later are not limited
(numpy's and scipy's are loaded before this module).
"""

from __future__ import annotations

from threadpoolctl import ThreadpoolController

_blas = ThreadpoolController().select(user_api="blas")


def one_blas_thread():
    """A context manager that holds every BLAS library of the process to one
    thread inside its block (threadpoolctl's limiter: the previous limits come back)."""
    return _blas.limit(limits=1)
