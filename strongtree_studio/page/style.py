"""The page's own CSS: tighter top space (so a projector's 1280x720 shows more),
labels, values and badges that wrap instead of being cut with "…", and the tree
panels' sizes (:func:`strongtree_studio.views.tree_view.chart_css`)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from strongtree_studio.views.tree_view import chart_css

#: The tree panels' script: the root in view at presentation size, drag to move (a file of this package).
PANEL_SCRIPT = (Path(__file__).resolve().parents[1] / "assets" / "tree_panel.js").read_text(encoding="utf-8")

CSS = """
<style>
[data-testid="stMainBlockContainer"] { padding-top: 2.6rem; padding-bottom: 3rem; }
h1 { font-size: 2.1rem !important; padding-top: 0.2rem !important; padding-bottom: 0.4rem !important; }
[data-testid="stMetricValue"] { font-size: 1.75rem; }
[data-testid="stMetricValue"] *, [data-testid="stMetricLabel"] *, [data-testid="stMetricDelta"] * {
  overflow: visible !important; text-overflow: clip !important; white-space: normal !important;
}
[data-testid="stMetricLabel"] { height: auto !important; min-height: 1.4rem; }
.stBadge, .stBadge *, span.stMarkdownBadge, span.stMarkdownBadge * {  /* st.badge's span, a long verdict wrapped */
  white-space: normal !important; overflow: visible !important; text-overflow: clip !important; }
.st-key-app-browser_token { display: none; }  /* the cookie setter (strongtree_studio.page.restore): nothing to see */
.st-key-app-tree_panels { display: none; }  /* the tree panels' script: nothing to see */
.st-key-solve-log td:first-child, .st-key-solve-log td:first-child * { white-space: nowrap !important; }  /* "18.6 s" on one line */
""" + chart_css() + """
</style>
"""


def apply_style() -> None:
    """Add the CSS and the tree panels' script to the page (no visible element).

    The script is this package's own file, with no user text in it, so running it
    (``unsafe_allow_javascript``) runs nothing a user wrote.
    """
    st.html(CSS)
    with st.container(key="app-tree_panels"):
        st.html(f"<script>{PANEL_SCRIPT}</script>", unsafe_allow_javascript=True)
