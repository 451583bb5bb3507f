"""StrongTree: provably optimal, fair classification trees by mixed-integer optimization.

Data flows one way: ``encoding`` (tables to binary features and weighted
patterns) -> ``formulation`` (FlowOCT / BendersOCT as arrays) -> ``solvers``
(HiGHS, SCIP, Gurobi) -> ``tree`` (the fitted tree as a plain value) ->
``metrics`` and exports.  :class:`StrongTreeClassifier` ties them together.

Importing the package does nothing but define names: no signal handler, no thread, no
process, and no heavy library (scikit-learn, pandas and numba load with the first name
that needs them).  Ctrl-C is the command line's business (:mod:`strongtree_core.command`).
"""

from typing import TYPE_CHECKING

from strongtree_core.errors import StrongTreeError, TrivialTreeWarning
from strongtree_core.lazy import lazy_names
from strongtree_core.version import __version__

if TYPE_CHECKING:  # the lazy names below, as type checkers should see them
    from strongtree_core.estimator.classifier import StrongTreeClassifier
    from strongtree_core.not_proven import NotProvenWarning
    from strongtree_core.tree import FittedTree

__all__ = ["StrongTreeClassifier", "StrongTreeError", "FittedTree", "NotProvenWarning", "TrivialTreeWarning",
           "__version__"]

#: Names loaded on first use (so that importing the package or a submodule, e.g. the formulations,
#: stays light), and the module each comes from.
__getattr__, __dir__ = lazy_names(__name__, {
    "StrongTreeClassifier": "strongtree_core.estimator.classifier",
    "FittedTree": "strongtree_core.tree",
    "NotProvenWarning": "strongtree_core.not_proven",
})
