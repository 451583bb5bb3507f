"""The fitted tree as a plain value: predict, explain, draw, export and store it without a solver."""

from typing import TYPE_CHECKING

from strongtree_core.lazy import lazy_names

if TYPE_CHECKING:  # the lazy names below, as type checkers should see them
    from strongtree_core.tree.context import FitContext
    from strongtree_core.tree.fitted import ChangedLeaf, FittedTree, StoredTreeError, node_class_counts
    from strongtree_core.tree.record import FINAL_STATUSES, STATUSES, SolveRecord
    from strongtree_core.tree.rules import Condition, Rule

__all__ = ["ChangedLeaf", "Condition", "FINAL_STATUSES", "FitContext", "FittedTree", "Rule", "STATUSES", "SolveRecord",
           "StoredTreeError", "node_class_counts"]

#: Loaded on first use: the solve's record alone (what the engine returns) needs no pandas.
__getattr__, __dir__ = lazy_names(__name__, {
    "FitContext": "strongtree_core.tree.context",
    **dict.fromkeys(("ChangedLeaf", "FittedTree", "StoredTreeError", "node_class_counts"), "strongtree_core.tree.fitted"),
    **dict.fromkeys(("FINAL_STATUSES", "STATUSES", "SolveRecord"), "strongtree_core.tree.record"),
    **dict.fromkeys(("Condition", "Rule"), "strongtree_core.tree.rules"),
})
