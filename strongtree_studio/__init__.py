"""App-side helpers of StrongTree Studio: data loading, demo tables, the solve
job runner, the run store and small view helpers.  No solver logic lives here:
every tree comes from :mod:`strongtree_core`.

Two layers, guarded by ``tests/test_architecture.py``:

* Streamlit-bound modules (:data:`STREAMLIT_BOUND`) read or write the page:
  widgets, session state (declared once in :mod:`strongtree_studio.session`),
  styles, the sidebar; a module that imports one of them is bound too.
* Every other module is plain Python (jobs and workers, the run store,
  loading, columns and roles, words, markup, the tree and fairness views
  as data): it never imports Streamlit nor a Streamlit-bound module, so it is
  tested without a browser or AppTest and could serve another front end.
"""

#: Modules of this package that import Streamlit; all others must not.  The launcher (``launch``, run as
#: ``__main__``) reads Streamlit's own options to check those it is given before Streamlit starts.
STREAMLIT_BOUND = frozenset(
    {"actions", "app", "mio_live_panel", "restore", "services", "session", "shown", "sidebar", "state", "style",
     "treechart", "views", "launch", "__main__"}
)
