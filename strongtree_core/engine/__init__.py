"""The engine: from a problem to a solved tree by the route that fits it.

:mod:`~strongtree_core.engine.routes` picks the route (the exact search, a MIO solver, the local
search) and runs it; :mod:`~strongtree_core.engine.limits` holds the time and memory limits it keeps;
:mod:`~strongtree_core.engine.starts` the first incumbents handed to a MIO.
"""
