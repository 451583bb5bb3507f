"""The run history database."""

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from strongtree_studio.stores import run_history as runs_module
from strongtree_studio.stores.run_history import (
    ERR_BUSY,
    ERR_NO_RUN,
    ERR_NOT_OWNER,
    RunEntry,
    RunStore,
    RunStoreError,
    UnknownRun,
    runs_db_path,
    user_data_dir,
)


def entry(dataset: str = "hiring", depth: int = 2) -> RunEntry:
    return RunEntry(
        dataset=dataset,
        fingerprint="abc",
        status="optimal",
        config={"roles": {"target": "hired", "pos_label": "yes"}, "model": {"depth": depth}},
        summary={"depth": depth, "train_accuracy": 0.75, "gap": None},
        evaluation={"splits": {"train": {"quality": {"accuracy": 0.75}}}},
        tree='{"format": "x"}',
    )


def test_save_get_table_delete(tmp_path):
    store = RunStore(tmp_path / "sub" / "runs.sqlite3")
    first = store.save(entry(depth=2))
    second = store.save(entry("wine", depth=3))
    got = store.get(first)
    assert got.id == first and got.config == entry(depth=2).config and got.tree == '{"format": "x"}'
    assert got.evaluation == entry().evaluation and got.baseline is None and got.created_at
    table = store.table()
    assert list(table["id"]) == [second, first]  # newest first
    assert list(table["depth"]) == [3, 2] and table["gap"].isna().all()
    store.delete(first)
    assert list(store.table()["id"]) == [second]
    with pytest.raises(RunStoreError) as err:
        store.get(first)
    assert str(err.value) == ERR_NO_RUN.format(run_id=first)


def test_empty_table_has_columns(tmp_path):
    table = RunStore(tmp_path / "r.sqlite3").table()
    assert table.empty and list(table.columns) == ["id", "created", "dataset", "status", "owner", "shared", "claim"]


def test_unusable_path_is_a_readable_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(RunStoreError, match="cannot be used"):
        RunStore(blocker / "runs.sqlite3")


def test_a_history_another_program_holds_locked_cannot_be_written_and_says_wait_not_move(tmp_path, monkeypatch):
    """After "database is locked" the advice was to set STRONGTREE_RUNS_DB, which would hide the runs kept in
    the file: a lock held past the wait says that another program holds it, and to try again."""
    path = tmp_path / "runs.sqlite3"
    store = RunStore(path)
    monkeypatch.setattr(runs_module, "LOCK_WAIT", 0.2)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(RunStoreError) as err:
            store.save(entry())
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert str(err.value) == ERR_BUSY.format(seconds=0.2, reason="database is locked")
    assert "STRONGTREE_RUNS_DB" not in str(err.value)
    assert store.get(store.save(entry())).dataset == "hiring"  # the lock gone, the history works again


def test_path_comes_from_env_then_secrets(tmp_path, monkeypatch):
    monkeypatch.delenv("STRONGTREE_RUNS_DB", raising=False)
    assert runs_db_path({"runs_db": str(tmp_path / "s.db")}) == tmp_path / "s.db"
    assert runs_db_path({}).name == "runs.sqlite3"
    monkeypatch.setenv("STRONGTREE_RUNS_DB", str(tmp_path / "e.db"))
    assert runs_db_path({"runs_db": "ignored"}) == tmp_path / "e.db"


def test_database_is_plain_sqlite(tmp_path):
    path = tmp_path / "r.sqlite3"
    RunStore(path).save(entry())
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT dataset, status FROM runs").fetchall() == [("hiring", "optimal")]


ME, TEAM, OTHER = "session:me", "workspace:team", "session:other"


def test_runs_belong_to_their_owner_unless_shared(tmp_path):
    store = RunStore(tmp_path / "r.sqlite3")
    mine = store.save(replace(entry("mine"), owner=ME))
    team = store.save(replace(entry("team"), owner=TEAM))
    theirs = store.save(replace(entry("theirs"), owner=OTHER))
    assert list(store.table((ME,))["id"]) == [mine]
    assert list(store.table((ME, TEAM))["id"]) == [team, mine]
    assert list(store.table(None)["id"]) == [theirs, team, mine]  # no viewer: scripts see everything
    for action in (lambda: store.get(theirs, (ME,)), lambda: store.delete(theirs, (ME,)),
                   lambda: store.set_shared(theirs, True, (ME,))):
        with pytest.raises(UnknownRun) as err:  # another owner's run is as good as absent
            action()
        assert str(err.value) == ERR_NO_RUN.format(run_id=theirs)

    store.set_shared(theirs, True, (OTHER,))
    assert store.get(theirs, (ME,)).dataset == "theirs"  # shared: every session may open it
    assert list(store.table((ME,))["id"]) == [theirs, mine]
    assert list(store.table((ME,))["shared"]) == [True, False]
    with pytest.raises(RunStoreError) as err:
        store.delete(theirs, (ME,))  # ... but only its owner deletes it
    assert str(err.value) == ERR_NOT_OWNER.format(run_id=theirs)
    store.get(theirs)

    store.set_owner(mine, TEAM, (ME,))  # a session's run kept in its workspace
    assert store.get(mine, (TEAM,)).owner == TEAM
    with pytest.raises(UnknownRun):
        store.get(mine, (ME,))
    store.delete(mine, (TEAM,))
    assert list(store.table(None)["id"]) == [theirs, team]


def test_sweeps_of_two_owners_that_both_saved_are_each_their_own_unless_shared(tmp_path):
    from strongtree_studio.stores.run_history import ERR_NO_SWEEP, SweepEntry

    store = RunStore(tmp_path / "r.sqlite3")

    def sweep(name: str, owner: str) -> int:
        return store.save_sweep(SweepEntry(name, "fp", "finished", {"grid": name}, [{"depth": 1}, {"depth": 2}],
                                           owner=owner))

    mine, theirs = sweep("mine", ME), sweep("theirs", OTHER)
    assert list(store.sweeps((ME,))["id"]) == [mine] and list(store.sweeps((OTHER,))["id"]) == [theirs]
    assert store.get_sweep(mine, (ME,)).config == {"grid": "mine"}
    assert store.get_sweep(theirs, (OTHER,)).owner == OTHER
    with pytest.raises(UnknownRun) as err:
        store.get_sweep(theirs, (ME,))
    assert str(err.value) == ERR_NO_SWEEP.format(sweep_id=theirs)
    assert list(store.sweeps(None)["id"]) == [theirs, mine]
    assert list(store.sweeps((ME,))["points"]) == [2]
    # runs saved by both owners too: each lists only its own
    run_mine, run_theirs = store.save(replace(entry("a"), owner=ME)), store.save(replace(entry("b"), owner=OTHER))
    assert list(store.table((ME,))["id"]) == [run_mine] and list(store.table((OTHER,))["id"]) == [run_theirs]


def test_a_history_from_before_owners_is_upgraded_and_stays_visible(tmp_path):
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, created_at TEXT NOT NULL, dataset TEXT NOT NULL,"
            " fingerprint TEXT NOT NULL, status TEXT NOT NULL, config TEXT NOT NULL, summary TEXT NOT NULL,"
            " evaluation TEXT, tree TEXT, baseline TEXT)"
        )
        db.execute("INSERT INTO runs (created_at, dataset, fingerprint, status, config, summary)"
                   " VALUES ('2025-01-01', 'old', 'f', 'optimal', '{}', '{}')")
    db.close()
    store = RunStore(path)
    old = store.get(1, (ME,))
    assert old.dataset == "old" and old.shared and old.owner == ""
    with pytest.raises(RunStoreError) as err:
        store.delete(1, (ME,))
    assert str(err.value) == ERR_NOT_OWNER.format(run_id=1)
    new = store.save(replace(entry(), owner=ME))
    assert not store.get(new).shared and RunStore(path).get(new, (ME,)).owner == ME


def test_default_history_is_in_the_users_data_folder_not_the_code(tmp_path, monkeypatch):
    monkeypatch.delenv("STRONGTREE_RUNS_DB", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert runs_db_path({}) == tmp_path / "data" / "strongtree-studio" / "runs.sqlite3"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")  # the XDG rule: only absolute paths count
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert runs_db_path({}) == tmp_path / "home" / ".local" / "share" / "strongtree-studio" / "runs.sqlite3"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert user_data_dir() == tmp_path / "home" / ".local" / "share" / "strongtree-studio"
    code = Path(__file__).resolve().parents[1]
    assert code not in runs_db_path({}).parents
    assert not (tmp_path / "home").exists()  # asking for the path creates nothing
