"""Numbers as people give them: one reading of typed text and one set of limits, shared by the
library, the command line and the dashboard.

A number typed anywhere (a command-line option, a grid of bounds on the Trade-offs page) is read
by :func:`read_number` / :func:`read_integer`: decimal digits with an optional sign, point and
exponent.  ``nan``, ``inf``, ``1_000``, ``0x10`` and digits of other scripts (``１２``), which
Python's ``float`` reads, are not numbers here.

A fairness bound δ above 0 but below :data:`MIN_FAIRNESS_BOUND` is refused everywhere
(:func:`bound_too_small`): solvers compare the rates of the groups only to about a millionth, so
such a bound would be solved as δ = 0 while it reads as something else (``1e-300`` was solved as 0
while ``0.00001`` was refused).  Whether a number has more decimals than a grid keeps is measured
relative to its size (:func:`finer_than`), so ``1e-300`` is as much finer than 4 decimals as
``0.000001`` is.

Numbers written with commas are told apart by their shape: ``1,200`` and ``12,500,000.75`` have commas
between groups of three digits (:func:`thousands_comma`); ``51,26`` and ``1.234,5`` have a decimal
comma (:func:`read_decimal_comma`), as spreadsheets write them where the comma is the decimal mark
(and fields are then separated by semicolons).  A shape of both (``1,200``) is read by the caller's
context: a table separated by semicolons has decimal commas.
"""

from __future__ import annotations

import math
import re

#: The smallest fairness bound δ above 0 (a share): 0.0001 percentage points, one row in a million.
#: A bound between 0 and this is refused: a solver's tolerances cannot tell it from 0.
MIN_FAIRNESS_BOUND = 1e-6

_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_THOUSANDS_COMMA = re.compile(r"[+-]?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?")
_DECIMAL_COMMA = re.compile(r"([+-]?)((?:[0-9]{1,3}(?:\.[0-9]{3})+)|[0-9]*),([0-9]+)")


def read_number(text: str) -> float | None:
    """The finite number written in ``text`` (spaces around it allowed), or None when it is not one.

    Examples
    --------
    >>> read_number(" 0.05 "), read_number("1e-3"), read_number("-0")
    (0.05, 0.001, 0.0)
    >>> [read_number(t) for t in ("nan", "inf", "1_000", "0x10", "", "1e999")]
    [None, None, None, None, None, None]
    """
    text = str(text).strip()
    if not _NUMBER.fullmatch(text):
        return None
    value = float(text)
    return value + 0.0 if math.isfinite(value) else None  # + 0.0: -0 reads as 0


def read_integer(text: str) -> int | None:
    """The whole number written in ``text`` (digits with an optional sign), or None when it is not one.

    >>> read_integer("3"), read_integer("-1"), read_integer("3.0"), read_integer("1e3")
    (3, -1, None, None)
    """
    text = str(text).strip()
    return int(text) if _INTEGER.fullmatch(text) else None


def finer_than(value: float, decimals: int) -> bool:
    """Whether ``value`` has more than ``decimals`` decimals, measured relative to its size
    (``1e-300`` is finer than 4 decimals; ``0.1 + 0.2`` is not finer than 1).

    >>> finer_than(1e-300, 4), finer_than(0.000001, 4), finer_than(0.0001, 4), finer_than(0.1 + 0.2, 1)
    (True, True, False, False)
    """
    kept = round(value, decimals)
    return abs(kept - value) > 1e-9 * abs(value)


def bound_too_small(value: float) -> bool:
    """Whether a fairness bound is above 0 but below :data:`MIN_FAIRNESS_BOUND` (refused: see the module).

    >>> bound_too_small(1e-300), bound_too_small(0.0), bound_too_small(1e-6)
    (True, False, False)
    """
    return 0.0 < value < MIN_FAIRNESS_BOUND


def thousands_comma(text: str) -> bool:
    """Whether ``text`` is a number with commas between its groups of three digits (``1,200``, ``-12,500.5``).

    >>> [thousands_comma(t) for t in ("1,200", "12,500,000.75", "51,26", "1200", "1,2000")]
    [True, True, False, False, False]
    """
    return _THOUSANDS_COMMA.fullmatch(str(text).strip()) is not None


def read_decimal_comma(text: str) -> float | None:
    """The number written in ``text`` with a decimal comma, dots perhaps grouping its thousands
    (``51,26``, ``-0,5``, ``1.234,5``), or None when it is not written so (a number without a comma
    is not).

    >>> read_decimal_comma("51,26"), read_decimal_comma(" -1.234,5 "), read_decimal_comma(",5")
    (51.26, -1234.5, 0.5)
    >>> [read_decimal_comma(t) for t in ("51.26", "7", "1,2,3", "1.23,4", "", "a,b")]
    [None, None, None, None, None, None]
    """
    match = _DECIMAL_COMMA.fullmatch(str(text).strip())
    if match is None:
        return None
    sign, whole, decimals = match.groups()
    return float(f"{sign}{whole.replace('.', '') or '0'}.{decimals}") + 0.0
