"""StrongTree Studio: provably optimal, fair classification trees.

Started by ``streamlit run app.py`` in a checkout (``app.py`` calls :func:`main`) or by
``strongtree app``.  :func:`main` is the router: ``st.navigation`` over the page scripts in
``pages/`` (see :mod:`strongtree_studio.page.navigation`), nothing else.  Each page script calls
:func:`show`, which does what every page needs (the page's configuration, the style, the
session's state, the browser's token, the shared sidebar with the page list), runs the page's
screen and saves the session's state: so a page renders the same whether the navigation runs it
or Streamlit's old pages-folder router runs it alone (a page's address as a fresh server's first
request).

Streamlit runs the main script as ``__main__``, so the solve worker processes (multiprocessing's
spawn start method) import it as ``__mp_main__``: its guard keeps them from running the app.
"""

from functools import lru_cache
from pathlib import Path

#: The browser tab's icon, served by this server.
ICON = Path(__file__).resolve().parents[1] / "assets" / "icon.png"
#: The product's name over the page list, on every page (an image of this package: nothing fetched).
WORDMARK = Path(__file__).resolve().parents[1] / "assets" / "wordmark.svg"


def main() -> None:
    """The navigation over the page scripts; the page it runs sets itself up (:func:`show`)."""
    import streamlit as st

    from strongtree_studio.page.navigation import PAGES, screen

    _page_config()  # before the navigation: else the running page's Material icon is the tab's, fetched online
    st.navigation(
        [st.Page(screen(name), title=title, icon=icon, url_path=name, default=name == "data")
         for name, title, icon in PAGES],
        position="hidden",  # the sidebar draws the page list itself (the same under either router)
    ).run()


def _page_config() -> None:
    import streamlit as st

    # A file, not a Material icon: Streamlit fetches those from an internet font host (fails offline).
    st.set_page_config(page_title="StrongTree Studio", page_icon=str(ICON), layout="wide")


@lru_cache(maxsize=32)
def _compiled(path: str, stamp: int):
    return compile(Path(path).read_text(encoding="utf-8"), path, "exec")


def run_screen(name: str) -> None:
    """Run the screen of the page ``name``, as Streamlit runs a page script (read again when it changes)."""
    from strongtree_studio.page.navigation import screen_script

    path = screen_script(name)
    exec(_compiled(str(path), path.stat().st_mtime_ns), {"__name__": "__main__", "__file__": str(path)})


def show(name: str) -> None:
    """Set up the page ``name``, draw the sidebar, run its screen, and keep the session's state."""
    import streamlit as st

    from strongtree_studio.jobs import preparing
    from strongtree_studio.page.navigation import NAMES, screen
    from strongtree_studio.page.restore import init_state, keep_token, save_state
    from strongtree_studio.page.session import GOTO_SOLVE
    from strongtree_studio.page.sidebar import page_list, render_sidebar
    from strongtree_studio.page.style import apply_style

    if name not in NAMES:
        raise ValueError(f"No page called {name!r}: the pages are {', '.join(NAMES)}.")
    preparing.start()  # once per server: the exact search's compiled code on a fresh machine
    _page_config()  # again: the old pages-folder router runs a page script alone
    st.logo(str(WORDMARK), size="large", icon_image=str(ICON))
    apply_style()
    init_state()  # the browser's work back after a reload (strongtree_studio.page.restore)
    keep_token()
    # Drawn before the page: nothing can be drawn after a page's st.stop(). Choices
    # reach the durable state in widget callbacks, which run before the script.
    if GOTO_SOLVE.pop() and name != "solve":  # the live demo was started
        st.switch_page(screen("solve"))
    try:
        page_list()
        render_sidebar(live=name != "solve")  # the Solve page polls the solve itself
        run_screen(name)
    finally:  # also after st.stop(), st.rerun() and a page switch
        save_state()


if __name__ == "__main__":
    main()
