"""Heuristics: good trees fast, with no bound and no optimality claim.

Kept apart from :mod:`strongtree_core.accel`, whose every route returns a
certified optimum, a proven infeasibility or a proven bound: a tree from here
is recorded with status ``heuristic`` and is never certified.

* :mod:`~strongtree_core.heuristics.local_search`: coordinate descent over the
  nodes of a tree from CART and random starts, in the spirit of LST (Bertsimas
  and Dunn), the paper's fast baseline.
"""

from strongtree_core.heuristics.local_search import (
    LOCAL_SEARCH_REFUSED,
    LocalSearchResult,
    local_search,
    local_search_unsupported,
)

__all__ = ["LOCAL_SEARCH_REFUSED", "LocalSearchResult", "local_search", "local_search_unsupported"]
