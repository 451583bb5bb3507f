"""Where the dashboard's pages live, and what each is called.

Each page is a thin script in ``pages/`` at the top of the checkout (``pages/2_model.py``: set up
the session, then its screen), and a screen in ``screens/`` beside this module that draws it.  The
wheel carries the same page scripts beside the script ``strongtree app`` runs
(``strongtree_studio/entry/pages``, in a checkout a link to the top-level folder), so the same
:data:`PAGE_FOLDER` serves both.

Streamlit treats a ``pages/`` folder beside the main script as its old multipage router until some
session has run ``st.navigation``: a page's address as a server's first request then runs its
script alone.  A page script does its own set-up (:func:`strongtree_studio.page.show`), so it
renders the same under either router, and its address (the file's name without its number,
``2_model.py`` -> ``/model``) is the ``url_path`` the navigation gives it.  Every page link and
page switch names its page through :func:`screen`.
"""

from __future__ import annotations

from pathlib import Path

#: The page scripts (resolved: in a checkout, the top-level ``pages/``).
PAGE_FOLDER = (Path(__file__).resolve().parents[1] / "entry" / "pages").resolve()
#: The screens, one script per page, that the page scripts run.
SCREENS = Path(__file__).resolve().parent / "screens"
#: Each page in the order of the page list: its name (its address), its title and its icon.
PAGES = (
    ("data", "Data", ":material/table_chart:"),
    ("model", "Model", ":material/tune:"),
    ("solve", "Solve", ":material/play_circle:"),
    ("tree", "Tree", ":material/account_tree:"),
    ("fairness", "Fairness & performance", ":material/balance:"),
    ("tradeoffs", "Trade-offs", ":material/show_chart:"),
    ("runs", "Runs", ":material/history:"),
    ("learn", "Learn", ":material/school:"),
)
NAMES = tuple(name for name, _, _ in PAGES)


def screen(name: str) -> str:
    """Absolute path of the page script of ``name`` (e.g. ``"solve"``), as Streamlit's page functions take it."""
    if name not in NAMES:
        raise ValueError(f"No page called {name!r}: the pages are {', '.join(NAMES)}.")
    return str(PAGE_FOLDER / f"{NAMES.index(name) + 1}_{name}.py")


def screen_script(name: str) -> Path:
    """The screen that draws the page ``name``."""
    path = SCREENS / f"{name}.py"
    if name not in NAMES or not path.is_file():
        raise ValueError(f"No screen called {name!r} in {SCREENS}.")
    return path
