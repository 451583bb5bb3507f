"""Numbers typed in a text box: the bounds δ and the λ values of a sweep's grid."""

from __future__ import annotations

import math
import re


class Unreadable(ValueError):
    """A token that is not a finite number (its text is the message)."""


def parse_numbers(text: str) -> tuple[float, ...]:
    """Numbers typed with commas, semicolons or spaces between them, sorted, each once ("pp" and "%" allowed)."""
    tokens = [t for t in re.split(r"[,;\s]+", str(text).replace("pp", " ").replace("%", " ")) if t]
    values = []
    for token in tokens:
        try:
            value = float(token)
        except ValueError:
            raise Unreadable(token) from None
        if not math.isfinite(value):
            raise Unreadable(token)
        values.append(value)
    return tuple(sorted(set(values)))
