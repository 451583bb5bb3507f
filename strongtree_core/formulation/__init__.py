"""Formulations as solver-neutral arrays: FlowOCT (eqs. 1, 7), the all-datapoints
formulation (11) and the BendersOCT master with its separation (Algorithms 1-2)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

import numpy as np

from strongtree_core.encoding.patterns import PatternData
from strongtree_core.formulation.arrays import ModelArrays
from strongtree_core.formulation.benders import build_benders_master
from strongtree_core.formulation.decode import (
    canonical_splits,
    decode_tree,
    start_vector,
)
from strongtree_core.formulation.flow_all import build_flow_all
from strongtree_core.formulation.flow_oct import build_flow_oct
from strongtree_core.formulation.spec import TreeSpec
from strongtree_core.structure import LEAF, PRUNED, TreeGraph, TreeStructure

Method = Literal["flow", "benders"]
#: Largest row violation of a start vector counted as feasible.
START_TOLERANCE = 1e-6

__all__ = [
    "BuiltModel",
    "LEAF",
    "PRUNED",
    "ModelArrays",
    "TreeGraph",
    "TreeSpec",
    "TreeStructure",
    "build_model",
    "decode_tree",
    "start_vector",
]


@dataclass(frozen=True)
class BuiltModel:
    """A formulation ready for a backend, with what is needed to read its answers."""

    arrays: ModelArrays
    spec: TreeSpec
    method: Method
    balanced: bool
    build_seconds: float

    def decode(self, x: np.ndarray) -> TreeStructure:
        return decode_tree(self.arrays.index, x, self.spec.depth, balanced=self.balanced)

    def start(self, tree: TreeStructure, data: PatternData) -> np.ndarray:
        """``tree`` as a solution vector; when it breaks the single-class subtree
        rows of a balanced model, the same classifier with canonical splits."""
        x = start_vector(self.arrays, tree, data)
        if self.balanced and self.arrays.max_violation(x) > START_TOLERANCE:
            canonical = start_vector(self.arrays, canonical_splits(tree), data)
            if self.arrays.max_violation(canonical) <= START_TOLERANCE:
                return canonical
        return x


def build_model(
    data: PatternData, spec: TreeSpec, method: Method = "flow", *, single_class_rows: bool | None = None
) -> BuiltModel:
    """Choose and build the formulation for ``spec``.

    * constraints or objectives that see every datapoint -> formulation (11)
      (``method="benders"`` is refused: they couple datapoints, Section 4.4);
    * lambda > 0 or a branching bound -> the imbalanced formulation (7) or its master;
    * otherwise the balanced formulation (1) or its master (4).

    ``single_class_rows`` adds the symmetry-breaking rows of
    ``tree_rows.add_single_class_subtree_rows`` to balanced models without a
    feature-count bound; None (default) adds them where they were measured to
    help: the balanced Benders master, not FlowOCT (``benchmarks/mio_speedups.py``).
    """
    start = time.perf_counter()
    if spec.needs_all_datapoints:
        if method == "benders":
            raise ValueError(
                "BendersOCT cannot take constraints that couple datapoints (min leaf, objectives other "
                "than accuracy, recall/precision/fairness): use formulation='flow' or 'auto'"
            )
        arrays = build_flow_all(data, spec)
        balanced = False
    else:
        balanced = not spec.needs_imbalanced
        rows = (method == "benders") if single_class_rows is None else single_class_rows
        if method == "benders":
            arrays = build_benders_master(data, spec, balanced=balanced, single_class_rows=rows)
        else:
            arrays = build_flow_oct(data, spec, balanced=balanced, single_class_rows=rows)
    return BuiltModel(arrays, spec, method, balanced, time.perf_counter() - start)
