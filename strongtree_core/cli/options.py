"""How the command line reads the numbers of its options: each option's value through
:mod:`strongtree_core.numbers` (the one reading of typed numbers) and its own range, refused in the
command's words with exit code 2 before anything is read or solved (``--fairness-confidence 1``
and ``--fairness-confidence abc`` alike)."""

from __future__ import annotations

import argparse
from typing import Callable

from strongtree_core.cli.messages import (
    BAD_BOUND,
    BAD_CONFIDENCE,
    BAD_COUNT,
    BAD_DEPTH,
    BAD_JOBS,
    BAD_LAMBDA,
    BAD_SECONDS,
    BAD_SHARE,
    BAD_THREADS,
)
from strongtree_core.numbers import MIN_FAIRNESS_BOUND, bound_too_small, read_integer, read_number

#: Deepest tree the command accepts (the estimator's own limit).
MOST_DEPTH = 8


def _reader(read: Callable[[str], float | int | None], allowed: Callable[[float], bool], message: str,
            **words) -> Callable[[str], float | int]:
    def option(text: str) -> float | int:
        value = read(text)
        if value is None or not allowed(value):
            raise argparse.ArgumentTypeError(message.format(value=text, **words))
        return value

    return option


#: ``--depth`` and ``--depths``.
depth = _reader(read_integer, lambda v: 0 <= v <= MOST_DEPTH, BAD_DEPTH, most=MOST_DEPTH)
#: ``--time-limit`` and ``--baseline-time-limit`` (seconds).
seconds = _reader(read_number, lambda v: v > 0, BAD_SECONDS)
#: ``--threads``.
threads = _reader(read_integer, lambda v: v >= 1, BAD_THREADS)
#: ``--n-jobs`` (joblib's rule: a count, or a negative number counted back from every core).
jobs = _reader(read_integer, lambda v: v != 0, BAD_JOBS)
#: ``--regularization`` (the paper's λ).
regularization = _reader(read_number, lambda v: 0 <= v < 1, BAD_LAMBDA)
#: ``--min-recall``, ``--min-precision``, ``--min-specificity``.
share = _reader(read_number, lambda v: 0 <= v <= 1, BAD_SHARE)
#: ``--fairness-bound``: a share, 0 or at least the smallest bound a solver tells from 0.
bound = _reader(read_number, lambda v: 0 <= v <= 1 and not bound_too_small(v), BAD_BOUND,
                smallest=MIN_FAIRNESS_BOUND)
#: ``--fairness-confidence``.
confidence = _reader(read_number, lambda v: 0 < v < 1, BAD_CONFIDENCE)


def count(least: int, example: int) -> Callable[[str], int]:
    """A whole number of at least ``least`` (``--min-leaf``, ``--max-branching``, ``--max-thresholds``, ...)."""
    return _reader(read_integer, lambda v: v >= least, BAD_COUNT, least=least, example=example)
