"""Every page can be the first thing a session opens (a bookmark, a shared link, a tab
reconnecting after a restart), and nothing can bring back Streamlit's old folder router.

Streamlit runs a page script alone, without the entrypoint, when a folder named
``pages/`` sits beside the main script and a session's first request is a page's
address (see /work/shared/notes/STREAMLIT.md): the page scripts live in
``strongtree_studio/screens/`` and these tests keep every main script free of such a
folder.  The same entrance on a fresh server with both cores busy is checked in a
browser by tests/test_browser_entrances.py (8 addresses x 3 fresh servers, reported
in benchmarks/RESULTS.md).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from strongtree_studio.views.explain import MSG_NO_RUNS, MSG_NO_TABLE, MSG_SOLVE_NO_TABLE
from strongtree_studio.page.navigation import SCREENS
from strongtree_studio.page.shown import MSG_NO_TREE

ROOT = Path(__file__).resolve().parents[1]
#: Every script Streamlit may be given as the main script.
MAIN_SCRIPTS = (ROOT / "app.py", ROOT / "strongtree_studio" / "entry" / "app.py")
NO_TABLE_SIDEBAR = "No table yet: choose one on the **Data** page."
#: Page -> what it says before a table is chosen (in the page, or in the sidebar every page shares).
FIRST_WORDS = {
    "data": MSG_NO_TABLE,
    "model": NO_TABLE_SIDEBAR,
    "solve": MSG_SOLVE_NO_TABLE,
    "tree": MSG_NO_TREE,
    "fairness": MSG_NO_TREE,
    "tradeoffs": "Choose a table with a protected attribute on the Data page first: a sweep measures fairness "
                 "between its groups.",
    "runs": MSG_NO_RUNS,
    "learn": NO_TABLE_SIDEBAR,
}


@pytest.mark.parametrize("main", MAIN_SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_pages_folder_sits_beside_a_main_script(main):
    """A pages/ folder beside the main script would let Streamlit run a page alone on a first request: none may exist."""
    assert main.is_file()
    assert not (main.parent / "pages").exists(), (
        f"{main.parent / 'pages'} would make Streamlit run its scripts alone when their address is the first "
        "request: keep page scripts in strongtree_studio/screens/")


def test_every_screen_is_a_page_of_the_navigation_and_nothing_else_is():
    """The router names each script of screens/ once (through navigation.screen), so no page is
    reachable only by a file path."""
    tree = ast.parse((ROOT / "strongtree_studio" / "page" / "router.py").read_text(encoding="utf-8"))
    named = [node.args[0].value for node in ast.walk(tree) if isinstance(node, ast.Call)
             and getattr(node.func, "id", None) == "screen" and isinstance(node.args[0], ast.Constant)]
    pages = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and getattr(node.func, "attr", None) == "Page"]
    scripts = sorted(p.stem for p in SCREENS.glob("*.py"))
    assert len(pages) == len(scripts) == len(FIRST_WORDS)
    assert sorted(set(named)) == scripts == sorted(FIRST_WORDS)


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("STRONGTREE_RUNS_DB", str(tmp_path / "runs.sqlite3"))
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


@pytest.mark.parametrize("page", list(FIRST_WORDS))
def test_a_page_opened_first_without_a_table_says_what_to_do(page, fresh):
    """The page shows itself and says what to do (in the page, or the sidebar's 'No table yet'), no error."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()  # the entrypoint's first run (AppTest needs it before a page switch)
    at.switch_page(f"strongtree_studio/page/screens/{page}.py").run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    shown = [m.value for m in [*at.info, *at.markdown, *at.sidebar.markdown]]
    assert FIRST_WORDS[page] in shown, shown
