"""Names of earlier versions and the names that replaced them, refused with a message that gives the new one.

Version 0.2 gave borrowed names the meaning they have in scikit-learn and fairlearn
and one name to each quantity from the page to the solver (see CHANGELOG.md):

=====================  =====================  ==============================================
earlier name           name now               why
=====================  =====================  ==============================================
``positive_class``     ``pos_label``          scikit-learn's and fairlearn's name
``positive_label``     ``pos_label``          (metrics functions) the same
``max_features``       ``max_features_used``  scikit-learn's ``max_features`` is features
                                              tried per split, not features in the tree
``warm_start``         ``heuristic_start``    scikit-learn's ``warm_start`` reuses the last
                                              fit; this one starts from cheap trees
``accelerator``        ``exact_search``       it switches the exact search on or off
``bounds`` / ``delta``  ``fairness_bound``    δ keeps one name end to end
=====================  =====================  ==============================================

Stored runs and saved files written with the earlier names are read through
:func:`translate_keys`; code that passes them gets a :class:`RenamedParameterError`.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Mapping, TypeVar

from strongtree_core.errors import StrongTreeError

#: Parameters of the estimator (and of ``sweep`` grids) renamed in 0.2: old name -> new name.
RENAMED_PARAMETERS: dict[str, str] = {
    "positive_class": "pos_label",
    "max_features": "max_features_used",
    "warm_start": "heuristic_start",
    "accelerator": "exact_search",
    "delta": "fairness_bound",
}
#: Keyword arguments of the metrics functions renamed in 0.2.
RENAMED_METRIC_ARGUMENTS: dict[str, str] = {"positive_label": "pos_label"}
#: Keyword arguments of :func:`strongtree_core.sweep.frontier` renamed in 0.2.
RENAMED_FRONTIER_ARGUMENTS: dict[str, str] = {"bounds": "fairness_bound"}

#: The message for a renamed parameter; tests assert its text.
RENAMED_PARAMETER = "{owner} has no parameter {old!r}: it is now called {new!r} (same meaning). Write {new}=... instead."
#: The message for a name that never existed (as Python's own).
UNEXPECTED_PARAMETER = "{owner} got an unexpected keyword argument {name!r}"


class RenamedParameterError(StrongTreeError, TypeError):
    """A parameter passed under a name of an earlier version; the message gives its name now.

    A ``TypeError`` (as Python's own for an unknown keyword) and a ``ValueError``
    (as scikit-learn's ``set_params`` for an unknown parameter).

    Examples
    --------
    >>> from strongtree_core import StrongTreeClassifier
    >>> StrongTreeClassifier(positive_class="yes")
    Traceback (most recent call last):
    ...
    strongtree_core.renames.RenamedParameterError: StrongTreeClassifier has no parameter 'positive_class': it is now called 'pos_label' (same meaning). Write pos_label=... instead.
    """


def refuse_renamed(owner: str, names, renamed: Mapping[str, str] = RENAMED_PARAMETERS) -> None:
    """Raise for the first of ``names`` that is an earlier name in ``renamed``, or else for the first name at all.

    Parameters
    ----------
    owner : str
        Who is called, as the message names it (e.g. ``"StrongTreeClassifier"``).
    names : iterable of str
        The keyword arguments that were not accepted.
    renamed : mapping, default RENAMED_PARAMETERS
        Earlier name -> name now.

    Raises
    ------
    RenamedParameterError
        When one of ``names`` was renamed.
    TypeError
        Otherwise (a name that never existed), with Python's own wording.

    Examples
    --------
    >>> refuse_renamed("frontier", ["bounds"], RENAMED_FRONTIER_ARGUMENTS)
    Traceback (most recent call last):
    ...
    strongtree_core.renames.RenamedParameterError: frontier has no parameter 'bounds': it is now called 'fairness_bound' (same meaning). Write fairness_bound=... instead.
    """
    names = list(names)
    for name in names:
        if name in renamed:
            raise RenamedParameterError(RENAMED_PARAMETER.format(owner=owner, old=name, new=renamed[name]))
    if names:
        raise TypeError(UNEXPECTED_PARAMETER.format(owner=owner, name=names[0]))


F = TypeVar("F", bound=Callable[..., Any])


def refuses_renamed(renamed: Mapping[str, str]) -> Callable[[F], F]:
    """Decorator: the function refuses the earlier keyword names in ``renamed`` with their names now.

    Examples
    --------
    >>> @refuses_renamed({"positive_label": "pos_label"})
    ... def recall(y_true, y_pred, *, pos_label):
    ...     return pos_label
    >>> recall([1], [1], positive_label=1)
    Traceback (most recent call last):
    ...
    strongtree_core.renames.RenamedParameterError: recall has no parameter 'positive_label': it is now called 'pos_label' (same meaning). Write pos_label=... instead.
    """

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def checked(*args: Any, **kwargs: Any) -> Any:
            old = [name for name in kwargs if name in renamed]
            if old:
                refuse_renamed(func.__name__, old, renamed)
            return func(*args, **kwargs)

        return checked  # type: ignore[return-value]

    return decorate


def translate_keys(values: Mapping[str, Any], renamed: Mapping[str, str]) -> dict[str, Any]:
    """A copy of ``values`` with earlier names replaced by the names now (a name now wins over an earlier one).

    Examples
    --------
    >>> translate_keys({"depth": 2, "max_features": 3}, RENAMED_PARAMETERS)
    {'depth': 2, 'max_features_used': 3}
    """
    out = {renamed.get(key, key): value for key, value in values.items() if key not in renamed}
    for key, value in values.items():
        if key in renamed:
            out.setdefault(renamed[key], value)
    order = [renamed.get(key, key) for key in values]
    return {key: out[key] for key in dict.fromkeys(order)}
