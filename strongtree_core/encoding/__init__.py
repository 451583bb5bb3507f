"""From raw tables to weighted binary patterns.

:class:`TableEncoder` fits an :class:`EncodingPlan` (binarization whose
columns keep their meaning); :func:`collapse_patterns` merges identical rows
into the weighted patterns every formulation takes.
"""

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
