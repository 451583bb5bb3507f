"""Private by construction: the run history, each browser's work and the key that signs the browsers'
tokens are readable by the server's account only (0600 files in 0700 folders, whatever the umask); a
session token the server did not issue is never adopted (a cookie ``strongtree_browser=AAAA...`` chosen by
someone else became an identity whose work its chooser could read); no page shows a path of the server."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import sqlite3
import stat
import time
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from strongtree_studio.page import restore
from strongtree_studio.stores.browsers import KEY_BYTES, BrowserStore, browser_key, session_key
from strongtree_studio.views.explain import MSG_HISTORY_KEPT, MSG_LEGACY_HISTORY
from strongtree_studio.stores.private import private_file, private_folder
from strongtree_studio.stores.run_history import ERR_DB, RunStore, RunStoreError, runs_db_path, user_data_dir

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX's")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask():
    """Run the test under a given umask, and give the old one back."""
    old = os.umask(0o022)
    os.umask(old)
    yield lambda value: os.umask(value)
    os.umask(old)


STORES = [
    ("run history", lambda path: RunStore(path).table()),
    ("browser store", lambda path: BrowserStore(path).save("b", {"x": 1})),
    ("signing key", lambda path: session_key(path)),
]


@pytest.mark.parametrize("mask", [0o000, 0o002, 0o022, 0o027, 0o277], ids=lambda m: f"umask {m:03o}")
@pytest.mark.parametrize("what,make", STORES, ids=[s[0] for s in STORES])
def test_the_server_s_files_are_0600_in_0700_folders_under_any_umask(tmp_path, umask, mask, what, make):
    """runs.sqlite3 was made 0644 in a 0755 folder: every local account read every browser's private runs.
    The folders made for it are 0700 (each of them), the file 0600, whatever the umask (one as strict as
    0277 would leave the server's own file unwritable)."""
    umask(mask)
    tmp_path.chmod(0o755)
    path = tmp_path / "made" / "by" / "the server" / "file"
    make(path)
    assert mode(path) == 0o600
    for folder in (tmp_path / "made", tmp_path / "made" / "by", path.parent):
        assert mode(folder) == 0o700, folder
    assert mode(tmp_path) == 0o755  # a folder it did not make is left as it is


def test_the_default_history_folder_is_private_and_narrowed(tmp_path, monkeypatch, umask):
    """The default place (~/.local/share/strongtree-studio) is the app's own: made 0700, and narrowed to
    0700 (its files to 0600) when an earlier version left it 0755 with a 0644 history."""
    umask(0o022)
    monkeypatch.delenv("STRONGTREE_RUNS_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    path = runs_db_path()
    assert path.parent == user_data_dir() == tmp_path / "data" / "strongtree-studio"
    RunStore(path)
    assert mode(path.parent) == 0o700 and mode(path) == 0o600
    path.parent.chmod(0o755)
    path.chmod(0o644)
    RunStore(path)
    assert mode(path.parent) == 0o700 and mode(path) == 0o600
    BrowserStore(path.with_name("browsers.sqlite3")).save("b", {"x": 1})
    assert mode(path.with_name("browsers.sqlite3")) == 0o600


def test_a_folder_the_server_did_not_make_keeps_its_mode(tmp_path, umask):
    """A shared folder named by STRONGTREE_RUNS_DB is not the server's to change; its file is."""
    umask(0o022)
    shared = tmp_path / "team"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    RunStore(shared / "runs.sqlite3")
    assert mode(shared) == 0o755 and mode(shared / "runs.sqlite3") == 0o600


def test_the_journal_sqlite_writes_beside_the_history_is_private_too(tmp_path, umask):
    """SQLite makes its journal with the database's mode: 0600 too, while a write holds it."""
    umask(0o022)
    path = tmp_path / "h" / "runs.sqlite3"
    RunStore(path)
    with sqlite3.connect(path) as db:
        db.execute("BEGIN EXCLUSIVE")
        db.execute("CREATE TABLE probe (x)")
        journal = path.with_name("runs.sqlite3-journal")
        assert journal.exists() and mode(journal) == 0o600
        db.rollback()


def test_private_file_narrows_a_wider_file_and_keeps_its_content(tmp_path):
    path = tmp_path / "f"
    path.write_text("kept")
    path.chmod(0o664)
    private_file(path)
    assert mode(path) == 0o600 and path.read_text() == "kept"
    private_folder(tmp_path / "a" / "b")
    assert mode(tmp_path / "a") == 0o700 and mode(tmp_path / "a" / "b") == 0o700


def test_the_signing_key_is_made_once_and_read_again(tmp_path):
    """One key per store: a second server on the same store signs alike (tokens survive a restart)."""
    path = tmp_path / "k" / "session.key"
    first = session_key(path)
    assert len(first) == KEY_BYTES and session_key(path) == first and path.read_bytes() == first
    (tmp_path / "blocker").write_text("a file where the folder should be")
    process = session_key(tmp_path / "blocker" / "session.key")  # cannot be kept: a key for this process
    assert len(process) == KEY_BYTES and process == session_key(tmp_path / "blocker" / "session.key")


# -- tokens the server did not issue ---------------------------------------------------------------------
KEY = b"k" * 32
OTHER_KEY = b"o" * 32


def _sign(key: bytes, nonce: str) -> str:
    digest = hmac.new(key, b"strongtree-browser:" + nonce.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


NONCE = "n" * 43
FORGED = [
    ("43 A's (a cookie chosen by someone else)", "A" * 43),
    ("43 URL-safe characters", "aZ09_-" * 7 + "q"),
    ("a nonce with no signature", NONCE + "."),
    ("a signature of another server", f"{NONCE}.{_sign(OTHER_KEY, NONCE)}"),
    ("a signature of another nonce", f"{'m' * 43}.{_sign(KEY, NONCE)}"),
    ("a signature one character off", f"{NONCE}.{_sign(KEY, NONCE)[:-1]}{'A' if _sign(KEY, NONCE)[-1] != 'A' else 'B'}"),
    ("the signature first", f"{_sign(KEY, NONCE)}.{NONCE}"),
    ("43 A's signed with a key of zeros", f"{'A' * 43}.{_sign(bytes(32), 'A' * 43)}"),
    ("an empty signature part", "A" * 43 + "." + "A" * 43),
]


@pytest.mark.parametrize("case,token", FORGED, ids=[c[0] for c in FORGED])
def test_a_token_the_server_did_not_issue_is_never_adopted(case, token):
    """A forged or foreign token, well formed or not, is no identity: the session gets a token of its own."""
    assert restore.adopted(token, KEY, known=lambda key: False) is None


def test_an_issued_token_is_adopted_and_only_by_its_server():
    token = restore.issue_token(KEY)
    assert restore.TOKEN_SHAPE.fullmatch(token) and restore.token_from({restore.COOKIE: token}) == token
    assert restore.adopted(token, KEY) == token
    assert restore.adopted(token, OTHER_KEY) is None
    assert restore.issue_token(KEY) != token  # random each time


@pytest.mark.timing
def test_a_token_of_an_earlier_version_is_adopted_only_when_the_store_keeps_its_work(tmp_path):
    """Unsigned tokens of earlier versions: adopted when their work is in the store (so an upgrade loses no
    one's work); a made-up one is not, whatever its shape."""
    store = BrowserStore(tmp_path / "b.sqlite3")
    legacy = "L" * 43
    assert restore.adopted(legacy, KEY, store.known) is None
    store.save(browser_key(legacy), {"x": 1})
    assert restore.adopted(legacy, KEY, store.known) == legacy
    assert restore.adopted("A" * 43, KEY, store.known) is None
    old = BrowserStore(tmp_path / "b.sqlite3", ttl=0.0)  # past its time to live it is a stranger again
    time.sleep(0.01)
    assert restore.adopted(legacy, KEY, old.known) is None


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("STRONGTREE_RUNS_DB", str(tmp_path / "runs.sqlite3"))
    monkeypatch.delenv("STRONGTREE_BROWSERS_DB", raising=False)
    st.cache_resource.clear()
    yield tmp_path
    st.cache_resource.clear()


def open_app(monkeypatch, token: str | None) -> AppTest:
    """A new session of a browser whose cookie holds ``token``."""
    monkeypatch.setattr(restore, "cookie_token", lambda: token)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    return at


def test_a_forged_cookie_becomes_no_identity_in_the_app(isolated, monkeypatch):
    """Session fixation: a victim whose browser holds a cookie chosen by an attacker works under a token the
    server issued; the attacker, presenting the chosen cookie, finds nothing of the victim's."""
    forged = "A" * 43
    victim = open_app(monkeypatch, forged)
    token = victim.session_state["_browser_token"]
    assert token != forged and restore.TOKEN_SHAPE.fullmatch(token)
    victim.button(key="data.load_demo").click().run()
    assert victim.session_state["table"] is not None
    attacker = open_app(monkeypatch, forged)
    assert attacker.session_state["table"] is None
    assert attacker.session_state["session_owner"] != victim.session_state["session_owner"]
    again = open_app(monkeypatch, token)  # the victim's reload: the issued token brings the work back
    assert again.session_state["table"] is not None
    assert mode(isolated / "browsers.sqlite3") == 0o600 and mode(isolated / "session.key") == 0o600


# -- no server path on any page --------------------------------------------------------------------------
def test_the_runs_page_names_no_path_of_the_server(isolated, monkeypatch):
    """The Runs page said 'The history is kept in /home/.../runs.sqlite3' to every visitor."""
    at = open_app(monkeypatch, None)
    at.switch_page("pages/7_runs.py").run()
    assert MSG_HISTORY_KEPT in [c.value for c in at.caption]
    assert str(isolated) not in str(at)


def test_a_history_that_cannot_be_used_says_why_without_its_path(tmp_path, caplog):
    """The reason reaches the visitor; the path reaches the server's log only."""
    garbage = tmp_path / "runs.sqlite3"
    garbage.write_bytes(b"not a database " * 100)
    with pytest.raises(RunStoreError) as info:
        RunStore(garbage)
    assert str(info.value) == ERR_DB.format(reason="file is not a database")
    assert str(tmp_path) not in str(info.value)
    assert str(garbage) in caplog.text
    (tmp_path / "blocker").write_text("a file where the folder should be")
    with pytest.raises(RunStoreError) as info:
        RunStore(tmp_path / "blocker" / "runs" / "runs.sqlite3")
    assert str(info.value) == ERR_DB.format(reason="Not a directory") and str(tmp_path) not in str(info.value)


def test_the_old_history_is_named_in_the_log_not_on_the_page(isolated, monkeypatch, caplog):
    from strongtree_studio.stores import run_history as runs

    old = isolated / "old" / "runs.sqlite3"
    RunStore(old)
    monkeypatch.setattr(runs, "LEGACY_DB", old)
    monkeypatch.setattr(runs, "_LOGGED", set())
    at = open_app(monkeypatch, None)
    at.switch_page("pages/7_runs.py").run()
    assert MSG_LEGACY_HISTORY in [c.value for c in at.caption]
    assert str(isolated) not in str(at) and str(old) in caplog.text
