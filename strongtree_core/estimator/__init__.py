"""The scikit-learn estimator and the ways it fits.

:class:`StrongTreeClassifier` lives in :mod:`~strongtree_core.estimator.classifier`;
:mod:`~strongtree_core.estimator.promise_fit` is the fit that keeps a fairness promise on new rows;
:mod:`~strongtree_core.estimator.changed_leaves` says why a leaf predicts against its majority.
``strongtree_core.estimator.StrongTreeClassifier`` keeps working, loaded on first use so that
importing a sibling module stays light.
"""

from typing import TYPE_CHECKING

from strongtree_core.lazy import lazy_names

if TYPE_CHECKING:
    from strongtree_core.estimator.classifier import StrongTreeClassifier

__all__ = ["StrongTreeClassifier"]


__getattr__, __dir__ = lazy_names(__name__, {"StrongTreeClassifier": "strongtree_core.estimator.classifier"})
