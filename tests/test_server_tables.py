"""Tables on the server: only the folders its owner allows, picked from a list, large ones sampled evenly."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from strongtree_studio.stores import server_tables as server


def parquet(folder, rows: int, parts: int = 2):
    folder.mkdir(parents=True)
    df = pd.DataFrame({"x": np.arange(rows), "kind": np.where(np.arange(rows) % 3 == 0, "a", "b"),
                       "y": np.arange(rows) % 2})
    for k, piece in enumerate(np.array_split(np.arange(rows), parts)):
        df.iloc[piece].to_parquet(folder / f"part-{k}.parquet", index=False)
    return df


def test_only_the_allowed_folders_are_listed_and_a_link_out_is_refused(tmp_path):
    allowed, secret = tmp_path / "data", tmp_path / "secret"
    parquet(allowed / "claims", 50)
    parquet(secret / "payroll", 50)
    (allowed / "notes.txt").write_text("not a table")
    (allowed / "payroll").symlink_to(secret / "payroll")  # a link that leads out of the allowed folder
    folders = server.allowed_folders({server.DATA_DIR_ENV: f"{allowed}{os.pathsep}{tmp_path / 'absent'}"})
    assert folders == (allowed.resolve(),)
    assert [t.label for t in server.list_tables(folders)] == ["data/claims/"]
    with pytest.raises(ValueError) as err:
        server.pick("data/payroll/", folders)
    assert str(err.value) == server.ERR_NOT_ALLOWED.format(name="data/payroll/")
    with pytest.raises(ValueError):
        server.pick("../secret/payroll", folders)
    assert server.allowed_folders({}) == ()


def test_a_small_table_is_loaded_whole_and_a_large_one_as_an_even_sample(tmp_path):
    df = parquet(tmp_path / "data" / "claims", 1_000, parts=3)
    folders = (tmp_path.joinpath("data").resolve(),)
    entry = server.pick("data/claims/", folders)
    whole, notes = server.load(entry, rows=1_000)
    assert notes == () and whole["x"].tolist() == df["x"].tolist()
    assert whole["kind"].dtype == df["kind"].dtype  # texts come back as texts
    sample, notes = server.load(entry, rows=300)
    assert sample["x"].tolist() == list(range(0, 1_000, 4))  # every 4th row of the whole table, across its files
    assert notes == (server.NOTE_SAMPLE.format(name="data/claims/", total=1_000, kept=250, step=4),)


def test_the_data_page_offers_the_servers_tables_only_when_its_owner_names_a_folder(tmp_path, monkeypatch):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    app = str(Path(__file__).resolve().parents[1] / "app.py")
    monkeypatch.delenv(server.DATA_DIR_ENV, raising=False)
    at = AppTest.from_file(app, default_timeout=60).run()
    assert at.tabs and not any("On this server" in t.label for t in at.tabs)
    df = parquet(tmp_path / "data" / "claims", 300)
    monkeypatch.setenv(server.DATA_DIR_ENV, str(tmp_path / "data"))
    at = AppTest.from_file(app, default_timeout=60).run()
    assert any("On this server" in t.label for t in at.tabs)
    assert at.selectbox(key="data.server_table").options == ["data/claims/"]
    at.button(key="data.load_server").click().run()
    assert not at.exception and not at.error
    table = at.session_state["table"]
    assert table.name == "data/claims/" and table.frame["x"].tolist() == df["x"].tolist()


def test_a_table_that_cannot_be_read_is_named_as_listed_never_by_the_servers_path(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "broken.parquet").write_bytes(b"not parquet")
    entry = server.pick("data/broken.parquet", (folder.resolve(),))
    with pytest.raises(ValueError) as err:
        server.load(entry)
    said = str(err.value)
    assert said.startswith("Could not read 'data/broken.parquet': Could not read data/broken.parquet: ")
    assert str(tmp_path) not in said  # a visitor is told no path of the server
