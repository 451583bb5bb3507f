"""The warning of a fit without a proof: a scikit-learn ``ConvergenceWarning``.

Kept apart from :mod:`strongtree_core.errors` because subclassing scikit-learn's warning
imports scikit-learn (about a second of CPU): ``import strongtree_core`` stays light, and
this module is loaded when the warning is first named (``strongtree_core.NotProvenWarning``,
``strongtree_core.errors.NotProvenWarning``) or a fit is run.
"""

from __future__ import annotations

from sklearn.exceptions import ConvergenceWarning


class NotProvenWarning(ConvergenceWarning):
    """``fit`` returned a tree that is not proven optimal.

    Raised whenever ``StrongTreeClassifier.fit`` returns without a certificate of
    optimality: the time limit ran out, a Stop ended the solve, the route is a
    heuristic (``formulation="local_search"``), or a forced formulation stopped
    early.  The tree is the best one found and ``record_`` says how it ended
    (``status``, ``gap``, ``message``).  A subclass of scikit-learn's
    :class:`~sklearn.exceptions.ConvergenceWarning`, so ``GridSearchCV``,
    ``cross_val_score`` and filters written for scikit-learn's estimators treat it
    the same way.

    Examples
    --------
    >>> import warnings
    >>> import pandas as pd
    >>> from strongtree_core import StrongTreeClassifier, NotProvenWarning
    >>> X = pd.DataFrame({"a": [0, 1, 0, 1, 1, 0], "b": [1, 1, 0, 0, 1, 0]})
    >>> y = [0, 1, 0, 1, 1, 1]
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     clf = StrongTreeClassifier(depth=1, formulation="local_search").fit(X, y)
    >>> [type(w.message).__name__ for w in caught]
    ['NotProvenWarning']
    >>> clf.record_.certified
    False
    """
