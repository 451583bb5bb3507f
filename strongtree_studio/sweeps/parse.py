"""Numbers typed in a text box: the bounds δ and the λ values of a sweep's grid."""

from __future__ import annotations

import re

from strongtree_core.numbers import finer_than, read_number


class Unreadable(ValueError):
    """A token that is not a finite number (its text is the message)."""


class TooFine(Unreadable):
    """A number with more decimals than the grid keeps (its text is the message): rounded, it would
    become another value typed, or a value nobody typed."""


def parse_numbers(text: str, decimals: int | None = None) -> tuple[float, ...]:
    """Numbers typed with commas, semicolons or spaces between them, sorted, each once ("pp" and "%" allowed).

    ``decimals``: the grid keeps values to this many decimals; a number finer than that is refused
    (:class:`TooFine`), never rounded onto another (0.00004 pp became a second δ = 0 point).
    """
    tokens = [t for t in re.split(r"[,;\s]+", str(text).replace("pp", " ").replace("%", " ")) if t]
    values = []
    for token in tokens:
        value = read_number(token)  # the one reading of a typed number (strongtree_core.numbers)
        if value is None:
            raise Unreadable(token)
        if decimals is not None:
            if finer_than(value, decimals):  # relative to its size: 1e-300 is as fine as 0.000001
                raise TooFine(token)
            value = round(value, decimals) + 0.0  # -0.0 reads as 0
        values.append(value)
    return tuple(sorted(set(values)))
