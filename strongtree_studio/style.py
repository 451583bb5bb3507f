"""The page's own CSS: tighter top space (so a projector's 1280x720 shows more) and
labels, values and badges that wrap instead of being cut with "…"."""

from __future__ import annotations

import streamlit as st

CSS = """
<style>
[data-testid="stMainBlockContainer"] { padding-top: 2.6rem; padding-bottom: 3rem; }
h1 { font-size: 2.1rem !important; padding-top: 0.2rem !important; padding-bottom: 0.4rem !important; }
[data-testid="stMetricValue"] { font-size: 1.75rem; }
[data-testid="stMetricValue"] *, [data-testid="stMetricLabel"] *, [data-testid="stMetricDelta"] * {
  overflow: visible !important; text-overflow: clip !important; white-space: normal !important;
}
[data-testid="stMetricLabel"] { height: auto !important; min-height: 1.4rem; }
.stBadge, .stBadge * { white-space: normal !important; overflow: visible !important; text-overflow: clip !important; }
.tree-panel svg text { user-select: text; }
.st-key-app-browser_token { display: none; }  /* the cookie setter (strongtree_studio.restore): nothing to see */
</style>
"""


def apply_style() -> None:
    """Add the CSS to the page (no visible element)."""
    st.html(CSS)
