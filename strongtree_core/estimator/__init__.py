"""The scikit-learn estimator and the ways it fits.

:class:`StrongTreeClassifier` lives in :mod:`~strongtree_core.estimator.classifier`;
:mod:`~strongtree_core.estimator.promise_fit` is the fit that keeps a fairness promise on new rows;
:mod:`~strongtree_core.estimator.changed_leaves` says why a leaf predicts against its majority.
``strongtree_core.estimator.StrongTreeClassifier`` keeps working, loaded on first use so that
importing a sibling module stays light.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from strongtree_core.estimator.classifier import StrongTreeClassifier

__all__ = ["StrongTreeClassifier"]


def __getattr__(name: str):
    if name == "StrongTreeClassifier":
        from strongtree_core.estimator.classifier import StrongTreeClassifier

        return StrongTreeClassifier
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
