"""Formulations as solver-neutral arrays: FlowOCT (eqs. 1, 7), the all-datapoints
formulation (11), the BendersOCT master with its separation (Algorithms 1-2),
and the baselines of Theorem 1: OCT (Bertsimas and Dunn 2017, formulation (24))
and BinOCT (Verwer and Zhang 2019).

Equation, section, algorithm and theorem numbers are those of the paper: Sina Aghaei, Andrés Gómez and Phebe Vayanos, *Strong Optimal Classification Trees*,
arXiv:2103.15965 (Operations Research).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

import numpy as np

from strongtree_core.encoding.patterns import PatternData
from strongtree_core.formulation.arrays import ModelArrays
from strongtree_core.formulation.benders import build_benders_master
from strongtree_core.formulation.binoct import binoct_start_vector, build_binoct, decode_binoct
from strongtree_core.formulation.decode import (
    canonical_splits,
    decode_tree,
    start_vector,
)
from strongtree_core.formulation.flow_all import build_flow_all
from strongtree_core.formulation.flow_oct import build_flow_oct
from strongtree_core.formulation.oct import build_oct, decode_oct, oct_start_vector
from strongtree_core.formulation.spec import TreeSpec
from strongtree_core.structure import LEAF, PRUNED, TreeGraph, TreeStructure

Method = Literal["flow", "benders", "oct", "binoct"]
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
    "relaxation_arrays",
    "start_vector",
]


@dataclass(frozen=True)
class BuiltModel:
    """A formulation ready for a backend, with what is needed to read its answers.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from strongtree_core.encoding import TableEncoder, collapse_patterns
    >>> X = pd.DataFrame({'a': [0, 1, 0, 1, 1, 0], 'b': [1, 1, 0, 0, 1, 0]})
    >>> y = np.array([0, 1, 0, 1, 1, 1])
    >>> plan = TableEncoder().fit(X)
    >>> data = collapse_patterns(plan.transform(X), y, 2)
    >>> from strongtree_core.formulation import TreeSpec, build_model
    >>> built = build_model(data, TreeSpec(depth=1), 'flow')
    >>> type(built).__name__, built.arrays.name
    ('BuiltModel', 'FlowOCT (eq. 1)')
    """

    arrays: ModelArrays
    spec: TreeSpec
    method: Method
    balanced: bool
    build_seconds: float
    #: Whether the symmetry-breaking rows of ``tree_rows.add_single_class_subtree_rows`` were asked for.
    single_class_rows: bool = False

    def decode(self, x: np.ndarray) -> TreeStructure:
        """The tree a (near-integral) solution vector ``x`` of this model describes."""
        if self.method == "oct":
            return decode_oct(self.arrays.index, x, self.spec.depth)
        if self.method == "binoct":
            return decode_binoct(self.arrays.index, x, self.spec.depth)
        return decode_tree(self.arrays.index, x, self.spec.depth, balanced=self.balanced)

    def start(self, tree: TreeStructure, data: PatternData) -> np.ndarray:
        """``tree`` as a solution vector; when it breaks the single-class subtree
        rows of a balanced model, the same classifier with canonical splits."""
        if self.method == "oct":
            return oct_start_vector(self.arrays, tree, data)
        if self.method == "binoct":
            return binoct_start_vector(self.arrays, tree, data)
        x = start_vector(self.arrays, tree, data)
        if self.balanced and self.arrays.max_violation(x) > START_TOLERANCE:
            canonical = start_vector(self.arrays, canonical_splits(tree), data)
            if self.arrays.max_violation(canonical) <= START_TOLERANCE:
                return canonical
        return x


def build_model(
    data: PatternData, spec: TreeSpec, method: Method = "flow", *, single_class_rows: bool | None = None
) -> BuiltModel:
    """Choose and build the formulation for ``spec``: one of the paper's [1]_ formulations, or
    a baseline of its Theorem 1.

    * constraints or objectives that see every datapoint -> formulation (11)
      (``method="benders"`` is refused: they couple datapoints, Section 4.4);
    * lambda > 0 or a branching bound -> the imbalanced formulation (7) or its master;
    * otherwise the balanced formulation (1) or its master (4);
    * ``method="oct"``: formulation (24) of Bertsimas and Dunn, balanced unless
      lambda or a minimum leaf size asks for its free ``p``; ``method="binoct"``:
      Verwer and Zhang's BinOCT (balanced trees only).  Both raise ValueError
      with :data:`~strongtree_core.formulation.oct.OCT_REFUSED` /
      :data:`~strongtree_core.formulation.binoct.BINOCT_REFUSED` for what they
      cannot express.

    ``single_class_rows`` adds the symmetry-breaking rows of
    ``tree_rows.add_single_class_subtree_rows`` to balanced models without a
    feature-count bound; None (default) adds them where they were measured to
    help: the balanced Benders master, not FlowOCT (``benchmarks/mio_speedups.py``).

    References
    ----------
    .. [1] Sina Aghaei, Andrés Gómez and Phebe Vayanos, *Strong Optimal Classification Trees*,
       arXiv:2103.15965 (Operations Research).

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from strongtree_core.encoding import TableEncoder, collapse_patterns
    >>> X = pd.DataFrame({'a': [0, 1, 0, 1, 1, 0], 'b': [1, 1, 0, 0, 1, 0]})
    >>> y = np.array([0, 1, 0, 1, 1, 1])
    >>> plan = TableEncoder().fit(X)
    >>> data = collapse_patterns(plan.transform(X), y, 2)
    >>> from strongtree_core.formulation import TreeSpec, build_model
    >>> built = build_model(data, TreeSpec(depth=1), 'flow')
    >>> built.arrays.n_cols > 0 and built.arrays.n_rows > 0
    True
    """
    start = time.perf_counter()
    if method == "oct":
        balanced = not spec.needs_imbalanced
        return BuiltModel(build_oct(data, spec, balanced=balanced), spec, method, balanced, time.perf_counter() - start)
    if method == "binoct":
        return BuiltModel(build_binoct(data, spec), spec, method, True, time.perf_counter() - start)
    rows = False
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
    return BuiltModel(arrays, spec, method, balanced, time.perf_counter() - start, single_class_rows=rows)


def relaxation_arrays(data: PatternData, built: BuiltModel) -> ModelArrays:
    """The arrays whose LP relaxation is ``built``'s formulation's.

    The model itself, except for a Benders master: with every cut-set
    inequality (4b) it is problem (6), whose LP relaxation is FlowOCT's (for
    fixed fractional b, w the cut-set inequalities of a datapoint bound g by
    the minimum cut, which equals its maximum flow), so FlowOCT with the same
    tree rows (symmetry-breaking rows included) is returned; the master as
    built, without cuts, would only give the trivial bound sum_i weight_i.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from strongtree_core.encoding import TableEncoder, collapse_patterns
    >>> X = pd.DataFrame({'a': [0, 1, 0, 1, 1, 0], 'b': [1, 1, 0, 0, 1, 0]})
    >>> y = np.array([0, 1, 0, 1, 1, 1])
    >>> plan = TableEncoder().fit(X)
    >>> data = collapse_patterns(plan.transform(X), y, 2)
    >>> from strongtree_core.formulation import TreeSpec, build_model
    >>> built = build_model(data, TreeSpec(depth=1), 'flow')
    >>> from strongtree_core.formulation import relaxation_arrays
    >>> relaxed = relaxation_arrays(data, built)
    >>> bool(relaxed.integrality.any())
    True
    """
    if built.method != "benders":
        return built.arrays
    return build_flow_oct(data, built.spec, balanced=built.balanced, single_class_rows=built.single_class_rows)
