"""The root of the project's exceptions: every error a user can cause is a
:class:`StrongTreeError`, with a message that says what is wrong and how to fix it.

Below it: ``encoding.EncodingError`` (a table or stored plan the encoding cannot
use), ``solvers.SolverUnavailableError`` (a backend that cannot take the model
here) and ``estimator.ParameterError`` (a parameter outside its values; also
scikit-learn's ``InvalidParameterError``).  It is a ``ValueError``, as bad input is.
"""


class StrongTreeError(ValueError):
    """A problem the user can fix (bad input, infeasible constraints, licence too
    small, no tree within the time limit); the message says what and how."""


class TrivialTreeWarning(UserWarning):
    """The fitted tree does no better than guessing: its training accuracy is within one
    point of the majority class's, or it predicts one class for nearly every row."""
