"""The run history database."""

import sqlite3

import pytest

from studio.runs import ERR_NO_RUN, RunEntry, RunStore, RunStoreError, runs_db_path


def entry(dataset: str = "hiring", depth: int = 2) -> RunEntry:
    return RunEntry(
        dataset=dataset,
        fingerprint="abc",
        status="optimal",
        config={"roles": {"target": "hired", "positive": "yes"}, "model": {"depth": depth}},
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
    assert table.empty and list(table.columns) == ["id", "created", "dataset", "status"]


def test_unusable_path_is_a_readable_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(RunStoreError, match="cannot be used"):
        RunStore(blocker / "runs.sqlite3")


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
