"""The work of each browser, kept on the server so a reload brings it back.

A browser is known by a random token in a cookie (see :mod:`strongtree_studio.page.restore`);
this store never sees the token, only its SHA-256 (:func:`browser_key`), so the file
does not hold what a browser would need to claim another's work.  Each durable
session entry (:data:`strongtree_studio.page.session.DURABLE`) is one row, written only
when it changes, so a new model setting does not rewrite the table.

Values are pickled (compressed): the table keeps its exact types, codes and column
order, which a text format would not.  Only this server writes the file, next to the
run history and with the same trust (as ``st.cache_data(persist="disk")`` pickles
to disk); nothing a browser sends is ever unpickled, and a row that cannot be read
is dropped, never shown as an error.

Limits: an entry over :data:`MAX_ENTRY_BYTES` (compressed) is not kept (the page
says so); a browser not seen for :data:`TTL_SECONDS` is forgotten; past
:data:`MAX_STORE_BYTES` in all, the browsers seen longest ago are forgotten first.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import sqlite3
import time
import zlib
from contextlib import closing
from pathlib import Path
from typing import Any, Mapping

from strongtree_studio.stores.private import private_file, private_folder
from strongtree_studio.stores.run_history import runs_db_path, user_data_dir

#: File name of the store, beside the run history unless STRONGTREE_BROWSERS_DB says otherwise.
DB_NAME = "browsers.sqlite3"
#: File name of the server's key that signs browser tokens (beside the store, 0600).
KEY_NAME = "session.key"
#: Bytes of that key.
KEY_BYTES = 32
#: A browser not seen for this long is forgotten (the cookie expires at the same age).
TTL_SECONDS = 30 * 24 * 3600
#: Largest entry kept (compressed bytes): about a 1-million-row, 10-column table.
MAX_ENTRY_BYTES = 64 * 2**20
#: Largest store: past it, the browsers seen longest ago are forgotten.
MAX_STORE_BYTES = 2 * 2**30
#: Bumped when the stored form changes: rows of another version are ignored.
FORMAT = 1

ERR_STORE = "This browser's work cannot be kept for a reload just now ({reason}); the page works as before."
NOTE_TOO_LARGE = ("The table is too large to be kept for a reload ({size}; the limit is {limit}): after a reload, "
                  "load it again. Settings and runs are kept.")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS browsers (
    browser TEXT PRIMARY KEY,
    seen REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS entries (
    browser TEXT NOT NULL,
    name TEXT NOT NULL,
    format INTEGER NOT NULL,
    value BLOB NOT NULL,
    PRIMARY KEY (browser, name)
);
"""


class BrowserStoreError(Exception):
    """The store cannot be read or written; the message says why."""


def browser_key(token: str) -> str:
    """What the store knows a browser by: the SHA-256 of its token, in hex."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def browsers_db_path(secrets: Mapping[str, Any] | None = None) -> Path:
    """``STRONGTREE_BROWSERS_DB``, else :data:`DB_NAME` beside the run history."""
    configured = os.environ.get("STRONGTREE_BROWSERS_DB")
    return Path(configured).expanduser() if configured else runs_db_path(secrets).with_name(DB_NAME)


def session_key(path: Path) -> bytes:
    """The server's key for signing the tokens it issues (:mod:`strongtree_studio.page.restore`): read from
    ``path``, or made once (random, 0600 in a 0700 folder) when there is none.  When the file cannot be
    read or made, a key for this process alone: tokens then last as long as the server runs."""
    path = Path(path)
    try:
        private_folder(path.parent, own=path.parent == user_data_dir())
        for _ in range(3):
            try:
                handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                key = path.read_bytes()
                if len(key) == KEY_BYTES:
                    private_file(path)  # narrowed if it was found wider
                    return key
                time.sleep(0.05)  # another server is writing it
                continue
            key = os.urandom(KEY_BYTES)
            try:
                if os.name == "posix":
                    os.fchmod(handle, 0o600)
                os.write(handle, key)
            finally:
                os.close(handle)
            return key
    except OSError:
        pass
    return _PROCESS_KEY


_PROCESS_KEY = os.urandom(KEY_BYTES)


def human_size(n_bytes: int) -> str:
    return f"{n_bytes / 2**20:,.1f} MB"


def pack(value: Any) -> bytes:
    return zlib.compress(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), 1)


#: Modules whose classes a store written before the dashboard was grouped in folders names by their
#: earlier paths (a pickle names a class by its module): read there, they load from where they are now.
MOVED_MODULES = {
    "strongtree_studio.table": "strongtree_studio.stores.table",
    "strongtree_studio.config": "strongtree_studio.data.choices",
    "strongtree_studio.columns": "strongtree_studio.data.column_types",
    "strongtree_studio.sweep_grid": "strongtree_studio.sweeps.sweep_grid",
    "strongtree_studio.learn_view": "strongtree_studio.learn.comparison_view",
}


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        return super().find_class(MOVED_MODULES.get(module, module), name)


def unpack(blob: bytes) -> Any:
    return _Unpickler(io.BytesIO(zlib.decompress(blob))).load()


class BrowserStore:
    """Durable session entries per browser in a SQLite file (see the module docstring)."""

    def __init__(self, path: Path | str, ttl: float = TTL_SECONDS, max_entry_bytes: int = MAX_ENTRY_BYTES,
                 max_store_bytes: int = MAX_STORE_BYTES) -> None:
        self.path = Path(path)
        self.ttl = ttl
        self.max_entry_bytes = max_entry_bytes
        self.max_store_bytes = max_store_bytes
        self._ready = False

    def _connect(self) -> sqlite3.Connection:
        try:
            if not self._ready:
                # The server's own file, made 0600 in a 0700 folder before SQLite writes to it.
                private_folder(self.path.parent, own=self.path.parent == user_data_dir())
                private_file(self.path)
                connection = sqlite3.connect(self.path, timeout=5)
                with connection:
                    connection.executescript(_SCHEMA)
                self._ready = True
                return connection
            return sqlite3.connect(self.path, timeout=5)
        except sqlite3.Error as err:
            raise BrowserStoreError(ERR_STORE.format(reason=err)) from None
        except OSError as err:  # its path is the server's business: the reason alone
            raise BrowserStoreError(ERR_STORE.format(reason=err.strerror or type(err).__name__)) from None

    def known(self, browser: str) -> bool:
        """Whether ``browser`` has been kept here within the time to live (a token of an earlier version,
        which this server did not sign, is adopted only then)."""
        try:
            with closing(self._connect()) as connection:
                seen = connection.execute("SELECT seen FROM browsers WHERE browser = ?", (browser,)).fetchone()
        except sqlite3.Error as err:
            raise BrowserStoreError(ERR_STORE.format(reason=err)) from None
        return seen is not None and seen[0] >= time.time() - self.ttl

    def load(self, browser: str) -> dict[str, Any]:
        """The entries kept for ``browser`` (name -> value); unreadable ones are dropped.

        Raises
        ------
        BrowserStoreError
            When the file cannot be read.
        """
        values: dict[str, Any] = {}
        broken: list[str] = []
        try:
            with closing(self._connect()) as connection, connection:
                seen = connection.execute("SELECT seen FROM browsers WHERE browser = ?", (browser,)).fetchone()
                if seen is None or seen[0] < time.time() - self.ttl:
                    return {}
                rows = connection.execute("SELECT name, format, value FROM entries WHERE browser = ?",
                                          (browser,)).fetchall()
                for name, stored_format, blob in rows:
                    try:
                        if stored_format != FORMAT:
                            raise ValueError(stored_format)
                        values[name] = unpack(blob)
                    except Exception:  # noqa: BLE001 - any unreadable row is dropped, never shown
                        broken.append(name)
                connection.executemany("DELETE FROM entries WHERE browser = ? AND name = ?",
                                       [(browser, name) for name in broken])
                connection.execute("UPDATE browsers SET seen = ? WHERE browser = ?", (time.time(), browser))
        except sqlite3.Error as err:
            raise BrowserStoreError(ERR_STORE.format(reason=err)) from None
        return values

    def save(self, browser: str, changed: Mapping[str, Any]) -> dict[str, int]:
        """Keep the ``changed`` entries of ``browser``; returns those too large to keep (name -> bytes),
        whose earlier values are dropped too.

        Raises
        ------
        BrowserStoreError
            When the file cannot be written, or a value cannot be pickled.
        """
        blobs, too_large = {}, {}
        for name, value in changed.items():
            try:
                blob = pack(value)
            except Exception as err:  # noqa: BLE001 - a value that cannot be kept is a message
                raise BrowserStoreError(ERR_STORE.format(reason=f"{name}: {type(err).__name__}")) from None
            if len(blob) > self.max_entry_bytes:
                too_large[name] = len(blob)
            else:
                blobs[name] = blob
        try:
            with closing(self._connect()) as connection, connection:
                connection.execute("INSERT INTO browsers (browser, seen) VALUES (?, ?) ON CONFLICT(browser) "
                                   "DO UPDATE SET seen = excluded.seen", (browser, time.time()))
                connection.executemany(
                    "INSERT INTO entries (browser, name, format, value) VALUES (?, ?, ?, ?) ON CONFLICT(browser, name) "
                    "DO UPDATE SET format = excluded.format, value = excluded.value",
                    [(browser, name, FORMAT, blob) for name, blob in blobs.items()])
                connection.executemany("DELETE FROM entries WHERE browser = ? AND name = ?",
                                       [(browser, name) for name in too_large])
        except sqlite3.Error as err:
            raise BrowserStoreError(ERR_STORE.format(reason=err)) from None
        return too_large

    def forget(self, browser: str) -> None:
        """Drop everything kept for ``browser``."""
        try:
            with closing(self._connect()) as connection, connection:
                connection.execute("DELETE FROM entries WHERE browser = ?", (browser,))
                connection.execute("DELETE FROM browsers WHERE browser = ?", (browser,))
        except sqlite3.Error as err:
            raise BrowserStoreError(ERR_STORE.format(reason=err)) from None

    def prune(self, now: float | None = None) -> int:
        """Forget browsers not seen within the time to live, then the least recently seen
        until the store is within :attr:`max_store_bytes`; returns how many were forgotten."""
        now = time.time() if now is None else now
        try:
            with closing(self._connect()) as connection, connection:
                stale = [b for (b,) in connection.execute("SELECT browser FROM browsers WHERE seen < ?",
                                                          (now - self.ttl,))]
                sizes = connection.execute(
                    "SELECT b.browser, COALESCE(SUM(LENGTH(e.value)), 0) FROM browsers b LEFT JOIN entries e "
                    "ON e.browser = b.browser WHERE b.seen >= ? GROUP BY b.browser ORDER BY b.seen DESC",
                    (now - self.ttl,)).fetchall()
                total, over = 0, []
                for browser, size in sizes:  # newest first: the oldest go once the total is past the cap
                    total += size
                    if total > self.max_store_bytes:
                        over.append(browser)
                gone = stale + over
                connection.executemany("DELETE FROM entries WHERE browser = ?", [(b,) for b in gone])
                connection.executemany("DELETE FROM browsers WHERE browser = ?", [(b,) for b in gone])
                # Entries whose browser row is gone (an interrupted write) go too.
                connection.execute("DELETE FROM entries WHERE browser NOT IN (SELECT browser FROM browsers)")
        except sqlite3.Error as err:
            raise BrowserStoreError(ERR_STORE.format(reason=err)) from None
        return len(gone)

    def size(self) -> int:
        """Bytes of values kept, all browsers together."""
        try:
            with closing(self._connect()) as connection:
                return int(connection.execute("SELECT COALESCE(SUM(LENGTH(value)), 0) FROM entries").fetchone()[0])
        except sqlite3.Error as err:
            raise BrowserStoreError(ERR_STORE.format(reason=err)) from None
