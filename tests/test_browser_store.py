"""The store of each browser's work (strongtree_studio.stores.browsers): exact round trips,
one browser never reading another's, size limits, expiry, and failures that are messages."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import time
import zlib

import numpy as np
import pandas as pd
import pytest

from strongtree_studio.stores.browsers import (
    ERR_STORE,
    MOVED_MODULES,
    TTL_SECONDS,
    BrowserStore,
    BrowserStoreError,
    browser_key,
    browsers_db_path,
    pack,
    unpack,
)
from strongtree_studio.data.column_types import ColumnEdit
from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig
from strongtree_studio.data.demo_tables import make_hiring
from strongtree_studio.stores.table import LoadedTable

TOKEN = "A" * 43
OTHER = "B" * 43


def mixed_table() -> pd.DataFrame:
    """Types a text format would change: categories, nullable integers, mixed objects, NaN, datetimes."""
    return pd.DataFrame({
        "code": pd.Series([1, None, 3, 4], dtype="Int64"),
        "level": pd.Categorical(["b", "a", "b", "c"], categories=["c", "b", "a"], ordered=True),
        "mixed": [1, "one", 2.5, None],
        "when": pd.to_datetime(["2020-01-01", "2021-06-30", None, "1999-12-31"]),
        "y": ["yes", "no", "yes", "no"],
    }, index=[10, 11, 12, 13])


def test_work_comes_back_exactly(tmp_path):
    store = BrowserStore(tmp_path / "b.sqlite3")
    frame = mixed_table()
    values = {
        "table": LoadedTable("t.csv", frame, "fp", ("note",), raw=frame),
        "roles": Roles("y", "yes", ("level",)),
        "edits": {"code": ColumnEdit("category", (("1", "one"),))},
        "model": ModelConfig(depth=3, fairness=("statistical_parity",), fairness_bound=0.02),
        "split": SplitConfig(test_size=0.3, seed=7),
        "job_id": "job-1",
    }
    assert store.save(browser_key(TOKEN), values) == {}
    back = BrowserStore(tmp_path / "b.sqlite3").load(browser_key(TOKEN))
    assert back.keys() == values.keys()
    pd.testing.assert_frame_equal(back["table"].frame, frame)
    assert list(back["table"].frame.dtypes) == list(frame.dtypes)
    assert back["table"].name == "t.csv" and back["table"].notes == ("note",)
    for name in ("roles", "edits", "model", "split", "job_id"):
        assert back[name] == values[name], name


def test_another_browser_reads_nothing_and_the_file_holds_no_token(tmp_path):
    """Another token's hash reads nothing; the file holds hashes, never a token, and only its owner may read it (0600)."""
    path = tmp_path / "b.sqlite3"
    store = BrowserStore(path)
    store.save(browser_key(TOKEN), {"workspace": "mine"})
    assert store.load(browser_key(OTHER)) == {}
    assert store.load(browser_key(TOKEN)) == {"workspace": "mine"}
    assert TOKEN.encode() not in path.read_bytes()
    assert browser_key(TOKEN) == "0f007385b6f9d4b7eeb2748605afe1a984a0a3bfa3f014d09e2a784ce9e5cd1a"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_only_changed_entries_are_written_and_later_values_win(tmp_path):
    store = BrowserStore(tmp_path / "b.sqlite3")
    key = browser_key(TOKEN)
    store.save(key, {"model": ModelConfig(depth=2), "workspace": "a"})
    store.save(key, {"model": ModelConfig(depth=4)})
    assert store.load(key) == {"model": ModelConfig(depth=4), "workspace": "a"}


def test_an_entry_too_large_is_not_kept_and_its_old_value_goes(tmp_path):
    """An entry over max_entry_bytes is reported, not stored, and its earlier value is dropped (never a stale table)."""
    store = BrowserStore(tmp_path / "b.sqlite3", max_entry_bytes=10_000)
    key = browser_key(TOKEN)
    small = make_hiring(20, seed=1)
    store.save(key, {"table": LoadedTable("small", small, "a"), "workspace": "w"})
    noise = pd.DataFrame(np.random.default_rng(0).random((2_000, 5)))  # incompressible: far over 10 kB
    too_large = store.save(key, {"table": LoadedTable("big", noise, "b")})
    assert list(too_large) == ["table"] and too_large["table"] > 10_000
    assert store.load(key) == {"workspace": "w"}


def test_a_browser_not_seen_for_the_time_to_live_is_forgotten(tmp_path):
    """Past the time to live a browser's work is not brought back, and pruning deletes it."""
    store = BrowserStore(tmp_path / "b.sqlite3")
    old, new = browser_key(TOKEN), browser_key(OTHER)
    store.save(old, {"workspace": "old"})
    store.save(new, {"workspace": "new"})
    with sqlite3.connect(store.path) as connection:
        connection.execute("UPDATE browsers SET seen = ? WHERE browser = ?", (time.time() - TTL_SECONDS - 1, old))
    assert store.load(old) == {}  # expired: not brought back even before pruning
    assert store.prune() == 1
    assert store.load(new) == {"workspace": "new"}
    with sqlite3.connect(store.path) as connection:
        assert connection.execute("SELECT COUNT(*) FROM entries WHERE browser = ?", (old,)).fetchone() == (0,)


def test_past_the_store_cap_the_browsers_seen_longest_ago_go_first(tmp_path):
    """Past the store's size cap, pruning forgets the browsers seen longest ago until it fits."""
    store = BrowserStore(tmp_path / "b.sqlite3", max_store_bytes=20_000)
    rng = np.random.default_rng(1)
    keys = [browser_key(c * 43) for c in "CDEF"]
    for i, key in enumerate(keys):  # each about 8 kB, seen one after another
        store.save(key, {"table": rng.random(1_000)})
        with sqlite3.connect(store.path) as connection:
            connection.execute("UPDATE browsers SET seen = ? WHERE browser = ?", (time.time() - 100 + i, key))
    assert store.size() > 30_000
    assert store.prune() == 2
    assert store.size() <= 20_000
    assert [bool(store.load(k)) for k in keys] == [False, False, True, True]


def test_work_stored_before_the_modules_moved_comes_back(tmp_path, monkeypatch):
    """A store written when these classes lived at the package's top (strongtree_studio.config, ...) is read."""
    import sys
    import types

    from strongtree_studio.learn.comparison_view import LearnChoice
    from strongtree_studio.sweeps.sweep_grid import SweepChoice

    values = {
        "table": LoadedTable("t.csv", mixed_table(), "fp"),
        "roles": Roles("y", "yes", ("level",)),
        "edits": {"code": ColumnEdit("category", (("1", "one"),))},
        "model": ModelConfig(depth=3, fairness_bound=0.02),
        "split": SplitConfig(test_size=0.3, seed=7),
        "sweep": SweepChoice(depths=(2, 3)),
        "learn": LearnChoice(rows=150),
    }
    for old, new in MOVED_MODULES.items():  # each class pickled under the path it had then
        earlier = types.ModuleType(old)
        for cls in (LoadedTable, Roles, ColumnEdit, ModelConfig, SplitConfig, SweepChoice, LearnChoice):
            if cls.__module__ == new:
                monkeypatch.setattr(cls, "__module__", old)
                setattr(earlier, cls.__name__, cls)
        monkeypatch.setitem(sys.modules, old, earlier)
    blobs = {name: pack(value) for name, value in values.items()}
    monkeypatch.undo()
    for old in MOVED_MODULES:
        assert old not in sys.modules
    assert b"strongtree_studio.config" in zlib.decompress(blobs["model"])
    back = {name: unpack(blob) for name, blob in blobs.items()}
    pd.testing.assert_frame_equal(back["table"].frame, values["table"].frame)
    for name in ("roles", "edits", "model", "split", "sweep", "learn"):
        assert back[name] == values[name], name


def test_an_unreadable_entry_is_dropped_and_the_others_come_back(tmp_path):
    """A row that does not unpickle is deleted; the browser's other entries come back."""
    store = BrowserStore(tmp_path / "b.sqlite3")
    key = browser_key(TOKEN)
    store.save(key, {"workspace": "w", "model": ModelConfig(depth=3)})
    with sqlite3.connect(store.path) as connection:
        connection.execute("UPDATE entries SET value = ? WHERE name = 'model'", (b"not a stored value",))
    assert store.load(key) == {"workspace": "w"}
    with sqlite3.connect(store.path) as connection:
        assert connection.execute("SELECT name FROM entries").fetchall() == [("workspace",)]


def test_a_store_that_cannot_be_opened_is_a_message(tmp_path):
    """A folder in place of the file: BrowserStoreError with ERR_STORE's text."""
    folder = tmp_path / "a folder"
    folder.mkdir()
    store = BrowserStore(folder)  # a directory where the file should be
    with pytest.raises(BrowserStoreError) as caught:
        store.load(browser_key(TOKEN))
    assert str(caught.value) == ERR_STORE.format(reason="unable to open database file")


def test_a_value_that_cannot_be_pickled_is_a_message(tmp_path):
    """A value that cannot be stored: ERR_STORE naming the entry and why."""
    store = BrowserStore(tmp_path / "b.sqlite3")
    with pytest.raises(BrowserStoreError) as caught:
        store.save(browser_key(TOKEN), {"job_settings": {"lock": threading.Lock()}})
    assert str(caught.value) == ERR_STORE.format(reason="job_settings: TypeError")


def test_the_store_sits_beside_the_run_history_unless_told(monkeypatch, tmp_path):
    monkeypatch.setenv("STRONGTREE_RUNS_DB", str(tmp_path / "h" / "runs.sqlite3"))
    monkeypatch.delenv("STRONGTREE_BROWSERS_DB", raising=False)
    assert browsers_db_path() == tmp_path / "h" / "browsers.sqlite3"
    monkeypatch.setenv("STRONGTREE_BROWSERS_DB", str(tmp_path / "elsewhere.db"))
    assert browsers_db_path() == tmp_path / "elsewhere.db"


def test_two_browsers_that_both_saved_each_read_only_their_own(tmp_path):
    """Both browsers keep the same entries with different values; every operation on one leaves the other's alone."""
    store = BrowserStore(tmp_path / "b.sqlite3", max_entry_bytes=10_000)
    a, b = browser_key(TOKEN), browser_key(OTHER)
    table_a, table_b = make_hiring(20, seed=1), make_hiring(30, seed=2)
    store.save(a, {"model": ModelConfig(depth=2), "workspace": "a", "table": LoadedTable("a.csv", table_a, "fa")})
    store.save(b, {"model": ModelConfig(depth=5), "workspace": "b"})
    store.save(a, {"model": ModelConfig(depth=3)})  # a later value of a's, after b wrote the same name
    store.save(b, {"table": LoadedTable("b.csv", table_b, "fb")})
    mine, theirs = store.load(a), store.load(b)
    assert mine.keys() == theirs.keys() == {"model", "workspace", "table"}
    assert (mine["model"].depth, mine["workspace"], mine["table"].name) == (3, "a", "a.csv")
    assert (theirs["model"].depth, theirs["workspace"], theirs["table"].name) == (5, "b", "b.csv")
    pd.testing.assert_frame_equal(mine["table"].frame, table_a)
    pd.testing.assert_frame_equal(theirs["table"].frame, table_b)

    noise = pd.DataFrame(np.random.default_rng(0).random((2_000, 5)))  # too large: a's old table goes, b's stays
    assert list(store.save(a, {"table": LoadedTable("big", noise, "x")})) == ["table"]
    assert "table" not in store.load(a) and store.load(b)["table"].name == "b.csv"

    with sqlite3.connect(store.path) as connection:  # b's model unreadable: dropped, a's model kept
        connection.execute("UPDATE entries SET value = ? WHERE browser = ? AND name = 'model'", (b"junk", b))
    assert store.load(b).keys() == {"workspace", "table"}
    assert store.load(a)["model"].depth == 3

    store.save(b, {"model": ModelConfig(depth=6)})
    store.forget(a)
    assert store.load(a) == {}
    assert store.load(b)["model"].depth == 6 and store.load(b)["workspace"] == "b"
    store.save(a, {"workspace": "a again"})
    with sqlite3.connect(store.path) as connection:
        connection.execute("UPDATE browsers SET seen = ? WHERE browser = ?", (time.time() - TTL_SECONDS - 1, b))
    assert store.load(b) == {} and store.load(a) == {"workspace": "a again"}
    assert store.prune() == 1
    assert store.load(a) == {"workspace": "a again"}
    with sqlite3.connect(store.path) as connection:
        assert connection.execute("SELECT DISTINCT browser FROM entries").fetchall() == [(a,)]
