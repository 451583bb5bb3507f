"""App-side helpers of StrongTree Studio: data loading, demo tables, the solve
job runner, the run store and small view helpers.  No solver logic lives here:
every tree comes from :mod:`strongtree_core`.

Two layers, guarded by ``tests/test_architecture.py``:

* ``page/`` (:data:`STREAMLIT_FOLDER`) reads and writes the page: the router, the screens,
  widgets, session state (declared once in :mod:`strongtree_studio.page.session`), styles, the
  sidebar.  It is the only folder whose modules import Streamlit; the launcher
  (:data:`STREAMLIT_LAUNCHER`) reads Streamlit's own options before Streamlit starts.
* Every other folder is plain Python, grouped by what it holds: ``jobs/`` (the registry, the
  worker process, the kinds of job), ``stores/`` (what outlives a session), ``data/`` (the table
  and the user's choices), ``views/`` (views and figures as data), ``sweeps/`` and ``learn/``.  None
  of them imports Streamlit nor a module of ``page/``, so they are tested without a browser or
  AppTest and could serve another front end.
"""

#: The folder of this package whose modules read or write the page; no module outside it imports one inside it.
STREAMLIT_FOLDER = "page"
#: Modules outside that folder that import Streamlit: the launcher (``launch``, run as ``__main__``) reads
#: Streamlit's own options to check those it is given before Streamlit starts.
STREAMLIT_LAUNCHER = frozenset({"launch", "__main__"})
