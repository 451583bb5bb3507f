"""The root of the project's exceptions: every error a user can cause is a
:class:`StrongTreeError`, with a message that says what is wrong and how to fix it.

Below it: ``encoding.EncodingError`` (a table or stored plan the encoding cannot
use), ``solvers.SolverUnavailableError`` (a backend that cannot take the model
here) and ``estimator.ParameterError`` (a parameter outside its values; also
scikit-learn's ``InvalidParameterError``).  It is a ``ValueError``, as bad input is.

Beside them, the warnings: a result that is less than the caller asked for says so through
Python's warning channel, as scikit-learn's estimators do: :class:`NotProvenWarning` when
``fit`` returns a tree it has not proven optimal, :class:`TrivialTreeWarning` when the
tree does no better than guessing.  Both can be filtered like any warning::

    import warnings
    from strongtree_core import NotProvenWarning
    warnings.filterwarnings("ignore", category=NotProvenWarning)
"""

from __future__ import annotations

import sys
import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported on first use (below): it brings scikit-learn
    from strongtree_core.not_proven import NotProvenWarning


def warn_caller(message, category: type[Warning]) -> None:
    """``warnings.warn`` pointed at the first frame outside this library: the user's call of ``fit``
    (or of whatever called it), however many of the library's own steps lie between."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith("strongtree_core."):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


class StrongTreeError(ValueError):
    """A problem the user can fix (bad input, infeasible constraints, licence too
    small, no tree within the time limit); the message says what and how.

    Examples
    --------
    >>> import pandas as pd
    >>> from strongtree_core import StrongTreeClassifier
    >>> X = pd.DataFrame({'score': [1, 5, 2, 8, 7, 3, 9, 4], 'group': list('abababab')})
    >>> y = ['no', 'yes', 'no', 'yes', 'yes', 'no', 'yes', 'no']
    >>> from strongtree_core import StrongTreeError
    >>> try:
    ...     StrongTreeClassifier(depth=1).fit(X, [None] * 8)
    ... except StrongTreeError as error:
    ...     print(str(error)[:40])
    y has no value in 8 of 8 rows (the first
    """


class BackendLostWarning(UserWarning):
    """A sweep's backend failed (its cluster did not start, or lost every worker it could not
    replace): the points it had not finished ran in the calling process, and every finished point
    was kept.  The message says what failed and how many points were left."""


class TrivialTreeWarning(UserWarning):
    """The fitted tree does no better than guessing: its training accuracy is within one
    point of the majority class's, or it predicts one class for nearly every row.

    Examples
    --------
    >>> import warnings
    >>> from strongtree_core import TrivialTreeWarning
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warnings.warn("every row is predicted 'no'", TrivialTreeWarning)
    >>> issubclass(caught[0].category, UserWarning)
    True
    """


#: The message of :class:`NotProvenWarning`, per way a solve ends without a proof; tests assert the text.
NOT_PROVEN: dict[str, str] = {
    "time_limit": (
        "The tree is not proven optimal: the time limit ran out first (status 'time_limit'). It is the best tree "
        "found; record_.gap says how far it may be from the optimum. Give a longer time_limit to prove it."
    ),
    "interrupted": (
        "The tree is not proven optimal: the solve was stopped first (status 'interrupted'). It is the best tree "
        "found; record_.gap says how far it may be from the optimum."
    ),
    "heuristic": (
        "The tree is not proven optimal: formulation='local_search' is a heuristic and never proves optimality "
        "(status 'heuristic'). Use formulation='auto' for a certified tree."
    ),
}
#: For any other status without a proof.
NOT_PROVEN_OTHER = "The tree is not proven optimal (status {status!r}): see record_.message for why."


def not_proven_message(status: str) -> str:
    """The :class:`NotProvenWarning` message for a fit that ended with ``status`` and no proof.

    Examples
    --------
    >>> not_proven_message("interrupted")[:60]
    'The tree is not proven optimal: the solve was stopped first '
    """
    return NOT_PROVEN.get(status, NOT_PROVEN_OTHER.format(status=status))


def __getattr__(name: str):
    # NotProvenWarning is a scikit-learn ConvergenceWarning: importing it imports scikit-learn
    # (about a second), so it lives in strongtree_core.not_proven and comes here on first use.
    if name == "NotProvenWarning":
        from strongtree_core.not_proven import NotProvenWarning

        return NotProvenWarning
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
