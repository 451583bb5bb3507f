"""The fitted tree as a plain value: predict, explain, draw, export and store it without a solver."""

from strongtree_core.tree.context import FitContext
from strongtree_core.tree.fitted import ChangedLeaf, FittedTree, StoredTreeError, node_class_counts
from strongtree_core.tree.record import FINAL_STATUSES, STATUSES, SolveRecord
from strongtree_core.tree.rules import Condition, Rule

__all__ = ["ChangedLeaf", "Condition", "FINAL_STATUSES", "FitContext", "FittedTree", "Rule", "STATUSES", "SolveRecord",
           "StoredTreeError", "node_class_counts"]
