"""The one exception type for errors a user can cause."""


class StrongTreeError(ValueError):
    """A problem the user can fix (bad input, infeasible constraints, licence too
    small, no tree within the time limit); the message says what and how."""
