"""Everything that reads or writes the page: the only folder of the dashboard whose modules import Streamlit.

The router and the shared set-up of every page, the session's entries (declared once in
:mod:`~strongtree_studio.page.session`), the sidebar, the styles, the job's status on the page, and
``screens/``: one script per page.  No module outside this folder imports one inside it
(``tests/test_architecture.py``).
"""


def show(name: str) -> None:
    """What a page script in ``pages/`` calls: set up the session, draw the page ``name``'s screen
    (:func:`strongtree_studio.page.router.show`)."""
    from strongtree_studio.page.router import show as show_page

    show_page(name)
