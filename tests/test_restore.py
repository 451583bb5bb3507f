"""A reload brings the browser's work back (strongtree_studio.page.restore), through the entrypoint.

AppTest cannot send cookies, so the browser's cookie is stood in for by patching
``restore.cookie_token``: a new AppTest is a new session (a reload), with the same
token (the same browser) or another (another browser).  The real cookie is tested in
a browser (tests/test_browser_reload.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from strongtree_studio.page import restore
from strongtree_studio.stores.browsers import ERR_STORE, NOTE_TOO_LARGE, browser_key, human_size
from strongtree_studio.views.explain import MSG_NO_TABLE
from strongtree_studio.views.markup import md
from strongtree_studio.page.services import browser_store
from strongtree_studio.page.session import GENERATIONS, ROLES

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("STRONGTREE_RUNS_DB", str(tmp_path / "runs.sqlite3"))
    monkeypatch.delenv("STRONGTREE_BROWSERS_DB", raising=False)
    st.cache_resource.clear()
    yield tmp_path
    st.cache_resource.clear()


def open_app(monkeypatch, token: str | None) -> AppTest:
    """A new session of a browser whose cookie holds ``token`` (None: no cookie yet)."""
    monkeypatch.setattr(restore, "cookie_token", lambda: token)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    return at


def role_key(at: AppTest, name: str) -> str:
    generation = at.session_state[GENERATIONS.name].get(ROLES.name, 0)
    return f"roles.{name}" + (f".{generation}" if generation else "")


def test_a_reload_brings_the_work_back_and_another_browser_sees_none(monkeypatch):
    """A new session with the same cookie gets the table, roles, model settings and runs owner back; another cookie gets none of them."""
    first = open_app(monkeypatch, None)
    token = first.session_state["_browser_token"]
    assert restore.TOKEN_SHAPE.match(token)
    owner = first.session_state["session_owner"]
    assert owner == f"session:{browser_key(token)[:32]}"
    first.button(key="data.load_demo").click().run()
    first.multiselect(key=role_key(first, "protected")).set_value(["gender"]).run()
    first.switch_page("pages/2_model.py").run()
    first.slider(key="model.depth").set_value(3).run()
    first.number_input(key="model.time_limit").set_value(17.0).run()
    assert not first.exception

    again = open_app(monkeypatch, token)  # F5: a new session, the same cookie
    assert again.session_state["table"].name == first.session_state["table"].name
    assert again.session_state["table"].fingerprint == first.session_state["table"].fingerprint
    assert again.session_state["roles"].protected == ("gender",)
    assert again.session_state["model"].depth == 3 and again.session_state["model"].time_limit == 17.0
    assert again.session_state["session_owner"] == owner
    assert again.multiselect(key=role_key(again, "protected")).value == ["gender"]

    other = open_app(monkeypatch, "Z" * 43)  # another browser
    assert other.session_state["table"] is None
    assert other.session_state["model"].depth != 3
    assert other.session_state["session_owner"] != owner
    assert [i.value for i in other.info] == [MSG_NO_TABLE]


@pytest.mark.parametrize("value", ["x'; DROP TABLE browsers; --", "A" * 42, "A" * 44, "A" * 42 + "\n", "",
                                   "A" * 42 + "=", None, 42])
def test_a_malformed_cookie_is_not_trusted(value):
    """A cookie that is not 43 URL-safe characters is ignored: the session takes a new token, nobody's work."""
    assert restore.token_from({restore.COOKIE: value}) is None


def test_a_well_formed_cookie_is_the_token():
    """The token is read from its own cookie, whatever others the browser sends."""
    assert restore.token_from({restore.COOKIE: "aZ09_-" * 7 + "q", "other": "x"}) == "aZ09_-" * 7 + "q"
    assert restore.token_from({}) is None


def test_a_broken_store_never_breaks_the_page(monkeypatch, isolated):
    """A folder where the store's file should be: the page works, and the sidebar says the work cannot be kept."""
    folder = isolated / "not a file"
    folder.mkdir()
    monkeypatch.setenv("STRONGTREE_BROWSERS_DB", str(folder))
    at = open_app(monkeypatch, None)
    at.button(key="data.load_demo").click().run()
    assert not at.exception and at.session_state["table"] is not None
    notice = md(ERR_STORE.format(reason="unable to open database file"))
    assert notice in [c.value for c in at.sidebar.caption]


def test_a_table_too_large_to_keep_says_so_and_comes_back_without_its_roles(monkeypatch):
    """A table over the entry limit: the sidebar gives its size and the limit; after a reload the settings are back, the table and its roles are not."""
    at = open_app(monkeypatch, None)
    token = at.session_state["_browser_token"]
    store = browser_store()
    store.max_entry_bytes = 2_000
    at.button(key="data.load_demo").click().run()
    at.run()  # the notice of the save at the end of the last run
    captions = [c.value for c in at.sidebar.caption]
    assert any(c.startswith(md(NOTE_TOO_LARGE.split("(")[0])) for c in captions), captions
    assert md(human_size(2_000)) in " ".join(captions)
    at.switch_page("pages/2_model.py").run()
    at.slider(key="model.depth").set_value(4).run()

    again = open_app(monkeypatch, token)
    assert again.session_state["table"] is None and again.session_state["roles"] is None
    assert again.session_state["model"].depth == 4  # the settings are kept


def test_two_browsers_that_both_saved_each_get_only_their_own_back(monkeypatch):
    """Two browsers each keep a table, roles and model settings; a reload of either brings back its own, never the
    other's (the same entries, different values), and each keeps its own runs owner."""
    first = open_app(monkeypatch, None)  # each browser gets a token the server issued
    token_a = first.session_state["_browser_token"]
    first.button(key="data.load_demo").click().run()
    first.multiselect(key=role_key(first, "protected")).set_value(["gender"]).run()
    first.switch_page("pages/2_model.py").run()
    first.slider(key="model.depth").set_value(3).run()
    first.number_input(key="model.time_limit").set_value(17.0).run()

    second = open_app(monkeypatch, None)
    token_b = second.session_state["_browser_token"]
    assert token_b != token_a and second.session_state["table"] is None  # nothing of the first browser's
    second.button(key="data.load_demo").click().run()
    second.multiselect(key=role_key(second, "protected")).set_value(["education"]).run()
    second.switch_page("pages/2_model.py").run()
    second.slider(key="model.depth").set_value(5).run()
    second.number_input(key="model.time_limit").set_value(23.0).run()
    assert not first.exception and not second.exception

    for token, protected, depth, limit, owner in ((token_a, ("gender",), 3, 17.0, first.session_state["session_owner"]),
                                                  (token_b, ("education",), 5, 23.0,
                                                   second.session_state["session_owner"])):
        again = open_app(monkeypatch, token)
        assert again.session_state["roles"].protected == protected
        assert again.session_state["model"].depth == depth and again.session_state["model"].time_limit == limit
        assert again.session_state["session_owner"] == owner == f"session:{browser_key(token)[:32]}"
        assert again.session_state["table"].fingerprint == first.session_state["table"].fingerprint
    assert first.session_state["session_owner"] != second.session_state["session_owner"]
