"""Everything that reads or writes the page: the only folder of the dashboard whose modules import Streamlit.

The router and the shared set-up of every page, the session's entries (declared once in
:mod:`~strongtree_studio.page.session`), the sidebar, the styles, the job's status on the page, and
``screens/``: one script per page.  No module outside this folder imports one inside it
(``tests/test_architecture.py``).
"""
