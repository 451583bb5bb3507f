"""Where the dashboard's pages live: one script per page in ``screens/``.

The folder is deliberately not called ``pages/``: Streamlit treats a ``pages/``
folder beside the main script as its old multipage router, which runs a page
script alone when its address is the first request a server gets.  Every page
link and page switch names its page through :func:`screen`, so the paths work
whichever main script started the server (``app.py`` in a checkout, or
``strongtree app`` from an installed package).
"""

from __future__ import annotations

from pathlib import Path

#: Folder of the page scripts.
SCREENS = Path(__file__).resolve().parent / "screens"


def screen(name: str) -> str:
    """Absolute path of the page script ``name`` (e.g. ``"solve"``), as Streamlit's page functions take it."""
    path = SCREENS / f"{name}.py"
    if not path.is_file():
        raise ValueError(f"No page called {name!r} in {SCREENS}.")
    return str(path)
