"""StrongTree: provably optimal, fair classification trees by mixed-integer optimization.

Data flows one way: ``encoding`` (tables to binary features and weighted
patterns) -> ``formulation`` (FlowOCT / BendersOCT as arrays) -> ``solvers``
(HiGHS, SCIP, Gurobi) -> ``tree`` (the fitted tree as a plain value) ->
``metrics`` and exports.  :class:`StrongTreeClassifier` ties them together.
"""

import sys as _sys

if _sys.argv and (_sys.argv[0] == "-m" or _sys.argv[0].rsplit("/", 1)[-1] == "strongtree"):
    # Started as the command line: a Ctrl-C while the libraries load is one line and exit code 130
    # (strongtree_core.command takes over once they are loaded).
    from strongtree_core.command import quit_quietly_while_starting

    quit_quietly_while_starting()

from strongtree_core.errors import NotProvenWarning, StrongTreeError, TrivialTreeWarning  # noqa: E402

__version__ = "0.2.0"

__all__ = ["StrongTreeClassifier", "StrongTreeError", "FittedTree", "NotProvenWarning", "TrivialTreeWarning",
           "__version__"]


def __getattr__(name: str):
    # Lazy, so that importing a submodule (e.g. the formulations) stays light.
    if name == "StrongTreeClassifier":
        from strongtree_core.estimator import StrongTreeClassifier

        return StrongTreeClassifier
    if name == "FittedTree":
        from strongtree_core.tree import FittedTree

        return FittedTree
    raise AttributeError(name)
