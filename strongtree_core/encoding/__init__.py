"""From raw tables to weighted binary patterns.

:class:`TableEncoder` fits an :class:`EncodingPlan` (binarization whose
columns keep their meaning); :func:`collapse_patterns` merges identical rows
into the weighted patterns every formulation takes.
"""

from typing import TYPE_CHECKING

from strongtree_core.lazy import lazy_names

if TYPE_CHECKING:  # the lazy names below, as type checkers should see them
    from strongtree_core.encoding.binarize import EncodingPlan, TableEncoder
    from strongtree_core.encoding.columns import ColumnEncoding
    from strongtree_core.encoding.errors import EncodingError
    from strongtree_core.encoding.features import BinaryFeature
    from strongtree_core.encoding.patterns import PatternData, collapse_patterns

__all__ = [
    "BinaryFeature",
    "ColumnEncoding",
    "EncodingError",
    "EncodingPlan",
    "PatternData",
    "TableEncoder",
    "collapse_patterns",
]

#: Loaded on first use: the patterns alone (what the exact search reads) need neither pandas nor scikit-learn.
__getattr__, __dir__ = lazy_names(__name__, {
    "EncodingPlan": "strongtree_core.encoding.binarize",
    "TableEncoder": "strongtree_core.encoding.binarize",
    "ColumnEncoding": "strongtree_core.encoding.columns",
    "EncodingError": "strongtree_core.encoding.errors",
    "BinaryFeature": "strongtree_core.encoding.features",
    "PatternData": "strongtree_core.encoding.patterns",
    "collapse_patterns": "strongtree_core.encoding.patterns",
})
