"""Names of a package loaded from their modules on first use (PEP 562).

A package's ``__init__`` that imports every module it names makes any of its modules cost
them all: importing ``strongtree_core.encoding.patterns`` ran ``strongtree_core.encoding``'s
``__init__``, which loaded pandas and scikit-learn for the table encoder.  With
:func:`lazy_names` a package's ``__init__`` lists where each name lives and loads a module
only when one of its names is asked for, so a process that needs the patterns alone (a
sweep's worker) pays for the patterns alone.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping


def lazy_names(package: str, where: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: each name of ``where`` is loaded from its module
    on first use and kept in the package's namespace."""

    def __getattr__(name: str) -> Any:
        if name in where:
            value = getattr(importlib.import_module(where[name]), name)
            setattr(importlib.import_module(package), name, value)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(vars(importlib.import_module(package))) | set(where))

    return __getattr__, __dir__
