"""A reload, or a closed and reopened tab, brings the work back; another browser does not see it.

Each browser holds a token in a cookie, set by a small component (:data:`TOKEN_JS`) and
read by the server from the request that opens each session (``st.context.cookies``).  The
server issues every token (:func:`issue_token`): 256 random bits and the server's signature
of them (HMAC-SHA-256 with a key kept 0600 beside the store, :func:`~strongtree_studio.stores.browsers.session_key`).
A token the server did not issue is never adopted (:func:`adopted`): a cookie a visitor or
another site chose (``strongtree_browser=AAAA...``) would otherwise become an identity whose
work its chooser could later read (session fixation).  Tokens of earlier versions, unsigned,
are adopted only when the store already keeps work for them.  The token never travels in an
address, so a shared link cannot carry it.  Its SHA-256 names:

* the browser's durable session entries in the :class:`strongtree_studio.stores.browsers.BrowserStore`
  (written at the end of every run in which one of them changed, read when a session starts);
* the owner of the runs and sweeps the browser solves (``session:<first 32 hex digits>``),
  so the Runs page lists them again after a reload.

A cookie with a malformed or unsigned value is ignored and replaced.  Nothing here may break a
page: when the store cannot be used, the session works as before (without its work
coming back) and the sidebar says so once.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from typing import Any, Mapping

import streamlit as st

from strongtree_studio.stores.browsers import NOTE_TOO_LARGE, BrowserStoreError, browser_key, human_size
from strongtree_studio.page.services import browser_store, session_key
from strongtree_studio.page.session import (
    BROWSER,
    DURABLE,
    READY,
    ROLES,
    SAVED,
    SESSION_OWNER,
    STORE_NOTICE,
    TABLE,
    TOKEN,
    EDIT_NOTES,
    EDITS,
    init_entries,
)

#: The cookie's name.
COOKIE = "strongtree_browser"
#: What a token looks like: 43 random URL-safe characters (``secrets.token_urlsafe(32)``), a dot and the
#: server's signature of them (43 more).
TOKEN_SHAPE = re.compile(r"^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}$")
#: A token of an earlier version: the random part alone (adopted only when the store knows it).
LEGACY_SHAPE = re.compile(r"^[A-Za-z0-9_-]{43}$")
#: Seconds the cookie lives (each new session of the browser sets it again).
COOKIE_MAX_AGE = 30 * 24 * 3600
#: Entries that describe the table: brought back only with it (a table too large to keep is not).
TABLE_ENTRIES = (ROLES, EDITS, EDIT_NOTES)
#: Seconds between two prunings of the store by this server.
PRUNE_EVERY = 3600.0

#: Sets the cookie in the page (no iframe); SameSite=Strict, Secure over HTTPS.
TOKEN_JS = r"""
export default function(component) {
    const { data } = component;
    if (!data || !/^[A-Za-z0-9_-]{43}(\.[A-Za-z0-9_-]{43})?$/.test(data.token) || !/^[a-z_]+$/.test(data.name)) return;
    const secure = window.location.protocol === "https:" ? "; Secure" : "";
    document.cookie = `${data.name}=${data.token}; Max-Age=${Number(data.max_age)}; Path=/; SameSite=Strict${secure}`;
}
"""
_token_setter = st.components.v2.component("strongtree_browser_token", js=TOKEN_JS)


def token_from(cookies: Mapping[str, Any]) -> str | None:
    """The token among a request's ``cookies``, or None when there is none or it is malformed
    (whether the server issued it is :func:`adopted`'s question)."""
    value = cookies.get(COOKIE)
    if not isinstance(value, str):
        return None
    return value if TOKEN_SHAPE.fullmatch(value) or LEGACY_SHAPE.fullmatch(value) else None


def _signature(key: bytes, nonce: str) -> str:
    digest = hmac.new(key, b"strongtree-browser:" + nonce.encode("ascii"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def issue_token(key: bytes) -> str:
    """A new token: 256 random bits and the server's signature of them."""
    nonce = secrets.token_urlsafe(32)
    return f"{nonce}.{_signature(key, nonce)}"


def signed(token: str, key: bytes) -> bool:
    """Whether ``token`` carries the signature ``key`` gives it (compared in constant time)."""
    nonce, _, signature = token.partition(".")
    return bool(TOKEN_SHAPE.fullmatch(token)) and hmac.compare_digest(signature, _signature(key, nonce))


def adopted(token: str | None, key: bytes, known=None) -> str | None:
    """``token`` when this server issued it: signed with ``key``, or a token of an earlier version whose
    work the store keeps (``known(browser_key(token))``); else None, and the session gets a new token."""
    if token is None:
        return None
    if signed(token, key):
        return token
    if LEGACY_SHAPE.fullmatch(token) and known is not None:
        try:
            return token if known(browser_key(token)) else None
        except BrowserStoreError:
            return None
    return None


def cookie_token() -> str | None:
    """The token the browser sent when this session opened (see :func:`token_from`)."""
    try:
        cookies = st.context.cookies
    except Exception:  # noqa: BLE001 - no request context (a bare run): no token
        return None
    return token_from(cookies)


def owner_of(key: str) -> str:
    """The runs owner of the browser whose store key is ``key``."""
    return f"session:{key[:32]}"


def init_state() -> None:
    """Set up a new session once: the browser's token, its runs owner and its work brought back."""
    if READY.get():
        return
    signing = session_key()
    store = None
    notice = ""
    try:
        store = browser_store()
    except BrowserStoreError as err:
        notice = str(err)
    token = adopted(cookie_token(), signing, store.known if store is not None else None) or issue_token(signing)
    key = browser_key(token)
    values: dict[str, Any] = {}
    try:
        if store is not None:
            values = store.load(key)
            _prune(store)
    except BrowserStoreError as err:
        notice = str(err)
    if TABLE.name not in values:
        for entry in TABLE_ENTRIES:
            values.pop(entry.name, None)
    init_entries(values)
    TOKEN.set(token)
    BROWSER.set(key)
    SESSION_OWNER.set(owner_of(key))
    SAVED.set({k.name: k.get() for k in DURABLE if k.name in values})
    STORE_NOTICE.set(notice)
    READY.set(True)


def keep_token() -> None:
    """Give the browser its token (again: each session renews the cookie's lifetime)."""
    _token_setter(data={"name": COOKIE, "token": TOKEN.get(), "max_age": COOKIE_MAX_AGE}, key="app.browser_token")


def save_state() -> None:
    """Store the durable entries that changed since they were last stored (compared by identity:
    entries are replaced, never changed in place).  Never raises: a failure becomes the sidebar's notice."""
    if not READY.get():
        return
    saved = SAVED.get()
    changed = {k.name: k.get() for k in DURABLE if saved.get(k.name, _UNSEEN) is not k.get()}
    if not changed:
        return
    try:
        too_large = browser_store().save(BROWSER.get(), changed)
    except BrowserStoreError as err:
        STORE_NOTICE.set(str(err))
        return
    except Exception as err:  # noqa: BLE001 - the store must never break a page
        STORE_NOTICE.set(f"This browser's work cannot be kept for a reload just now ({type(err).__name__}).")
        return
    SAVED.set({**saved, **changed})
    if too_large:
        size = max(too_large.values())
        STORE_NOTICE.set(NOTE_TOO_LARGE.format(size=human_size(size), limit=human_size(
            browser_store().max_entry_bytes)))
    elif STORE_NOTICE.get():
        STORE_NOTICE.set("")


_UNSEEN = object()
_last_prune = [0.0]


def _prune(store) -> None:
    """Forget expired browsers, at most every :data:`PRUNE_EVERY` seconds."""
    now = time.monotonic()
    if now - _last_prune[0] >= PRUNE_EVERY:
        _last_prune[0] = now
        store.prune()
