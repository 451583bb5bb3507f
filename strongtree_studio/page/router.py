"""StrongTree Studio: provably optimal, fair classification trees.

Started by ``streamlit run app.py`` in a checkout (``app.py`` calls
:func:`main`) or by ``strongtree app``.  This is the router plus the widgets
every page shares (the sidebar summary); each page script in ``screens/`` (see
:mod:`strongtree_studio.page.navigation`) gathers inputs, makes one call into
``strongtree_core`` and renders.

Streamlit runs this file as ``__main__``, so the solve worker processes
(multiprocessing's spawn start method) import it as ``__mp_main__``: the guard
below keeps them from running the app.
"""

from pathlib import Path

#: The browser tab's icon, served by this server.
ICON = Path(__file__).resolve().parents[1] / "assets" / "icon.png"
#: The product's name over the page list, on every page (an image of this package: nothing fetched).
WORDMARK = Path(__file__).resolve().parents[1] / "assets" / "wordmark.svg"


def main() -> None:
    import streamlit as st

    from strongtree_studio.jobs import preparing
    from strongtree_studio.page.navigation import screen
    from strongtree_studio.page.session import GOTO_SOLVE
    from strongtree_studio.page.sidebar import render_sidebar
    from strongtree_studio.page.restore import init_state, keep_token, save_state
    from strongtree_studio.page.style import apply_style

    preparing.start()  # once per server: the exact search's compiled code on a fresh machine
    # A file, not a Material icon: Streamlit fetches those from an internet font host (fails offline).
    st.set_page_config(page_title="StrongTree Studio", page_icon=str(ICON), layout="wide")
    st.logo(str(WORDMARK), size="large", icon_image=str(ICON))
    apply_style()
    init_state()  # the browser's work back after a reload (strongtree_studio.page.restore)
    keep_token()
    page = st.navigation(
        [
            st.Page(screen("data"), title="Data", icon=":material/table_chart:", default=True),
            st.Page(screen("model"), title="Model", icon=":material/tune:"),
            st.Page(screen("solve"), title="Solve", icon=":material/play_circle:"),
            st.Page(screen("tree"), title="Tree", icon=":material/account_tree:"),
            st.Page(screen("fairness"), title="Fairness & performance", icon=":material/balance:"),
            st.Page(screen("tradeoffs"), title="Trade-offs", icon=":material/show_chart:"),
            st.Page(screen("runs"), title="Runs", icon=":material/history:"),
            st.Page(screen("learn"), title="Learn", icon=":material/school:"),
        ]
    )
    # Drawn before the page: nothing can be drawn after a page's st.stop(). Choices
    # reach the durable state in widget callbacks, which run before the script.
    if GOTO_SOLVE.pop() and page.url_path != "solve":  # the live demo was started
        st.switch_page(screen("solve"))
    try:
        render_sidebar(live=page.url_path != "solve")  # the Solve page polls the solve itself
        page.run()
    finally:  # also after st.stop(), st.rerun() and a page switch
        save_state()


if __name__ == "__main__":
    main()
