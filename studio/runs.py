"""History of solves in a local SQLite database.

The database path comes from the ``STRONGTREE_RUNS_DB`` environment variable, else
the ``runs_db`` key of ``.streamlit/secrets.toml``, else ``runs/runs.sqlite3``
next to the app (a folder git ignores).
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

DEFAULT_DB = Path(__file__).resolve().parents[1] / "runs" / "runs.sqlite3"

ERR_NO_RUN = "Run {run_id} is not in the history (it may have been deleted)."
ERR_DB = "The run history at {path} cannot be used: {reason}. Set STRONGTREE_RUNS_DB to a writable file."

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    dataset TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status TEXT NOT NULL,
    config TEXT NOT NULL,
    summary TEXT NOT NULL,
    evaluation TEXT,
    tree TEXT,
    baseline TEXT
)
"""


class RunStoreError(RuntimeError):
    """The history database cannot be read or written; the message says why."""


def runs_db_path(secrets: Mapping[str, Any] | None = None) -> Path:
    """Where the run history lives (see the module docstring)."""
    configured = os.environ.get("STRONGTREE_RUNS_DB") or (secrets or {}).get("runs_db")
    return Path(configured).expanduser() if configured else DEFAULT_DB


@dataclass(frozen=True)
class RunEntry:
    """One stored solve.

    ``config`` holds the column roles, the split and the model settings;
    ``summary`` a few headline numbers for the history table; ``evaluation``
    the full metrics (JSON-ready); ``tree`` / ``baseline`` the fitted trees' JSON.
    """

    dataset: str
    fingerprint: str
    status: str
    config: dict[str, Any]
    summary: dict[str, Any]
    evaluation: dict[str, Any] | None = None
    tree: str | None = None
    baseline: str | None = None
    id: int | None = None
    created_at: str = ""


class RunStore:
    """Save, list, reopen and delete runs (one short connection per call, so it is
    safe to use from any thread)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with closing(self._connect()) as db, db:
                db.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as err:
            raise RunStoreError(ERR_DB.format(path=self.path, reason=err)) from None

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=10)

    def _run(self, sql: str, args: tuple = ()) -> tuple[list[tuple], int | None]:
        """Execute one statement; returns (rows, id of the inserted row)."""
        try:
            with closing(self._connect()) as db, db:
                cursor = db.execute(sql, args)
                return cursor.fetchall(), cursor.lastrowid
        except sqlite3.Error as err:
            raise RunStoreError(ERR_DB.format(path=self.path, reason=err)) from None

    def save(self, entry: RunEntry) -> int:
        """Store ``entry``; returns its id."""
        created = datetime.now(timezone.utc).astimezone().strftime("%Y-%m-%d %H:%M:%S")
        _, run_id = self._run(
            "INSERT INTO runs (created_at, dataset, fingerprint, status, config, summary, evaluation, tree, baseline)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                created,
                entry.dataset,
                entry.fingerprint,
                entry.status,
                json.dumps(entry.config, default=str),
                json.dumps(entry.summary, default=str),
                None if entry.evaluation is None else json.dumps(entry.evaluation, default=str),
                entry.tree,
                entry.baseline,
            ),
        )
        return int(run_id)

    def get(self, run_id: int) -> RunEntry:
        """The stored run ``run_id``; raises :class:`RunStoreError` when absent."""
        rows, _ = self._run(
            "SELECT id, created_at, dataset, fingerprint, status, config, summary, evaluation, tree, baseline"
            " FROM runs WHERE id = ?",
            (int(run_id),),
        )
        if not rows:
            raise RunStoreError(ERR_NO_RUN.format(run_id=run_id))
        rid, created, dataset, fp, status, config, summary, evaluation, tree, baseline = rows[0]
        return RunEntry(
            dataset=dataset,
            fingerprint=fp,
            status=status,
            config=json.loads(config),
            summary=json.loads(summary),
            evaluation=None if evaluation is None else json.loads(evaluation),
            tree=tree,
            baseline=baseline,
            id=rid,
            created_at=created,
        )

    def table(self) -> pd.DataFrame:
        """One row per run, newest first: id, time, dataset, status and the summary's numbers."""
        rows, _ = self._run("SELECT id, created_at, dataset, status, summary FROM runs ORDER BY id DESC")
        records = [
            {"id": rid, "created": created, "dataset": dataset, "status": status, **json.loads(summary)}
            for rid, created, dataset, status, summary in rows
        ]
        return pd.DataFrame.from_records(records, columns=None if records else ["id", "created", "dataset", "status"])

    def delete(self, run_id: int) -> None:
        self._run("DELETE FROM runs WHERE id = ?", (int(run_id),))
