"""History of solves and trade-off sweeps in a local SQLite database.

The database path comes from the ``STRONGTREE_RUNS_DB`` environment variable, else
the ``runs_db`` key of ``.streamlit/secrets.toml``, else ``runs.sqlite3`` in the
user's data folder (``$XDG_DATA_HOME/strongtree-studio``, by default
``~/.local/share/strongtree-studio``; ``%LOCALAPPDATA%`` on Windows,
``~/Library/Application Support`` on macOS), never inside the code.

Every run has an owner: the browser session that solved it (``session:<id>``) or
a workspace the user named (``workspace:<name>``).  Only its owner lists, opens,
shares or deletes it; a shared run can be listed and opened by everyone, and
deleted or unshared by its owner only.  Runs stored before owners existed count
as shared.  Sweeps (:class:`SweepEntry`) live in a table of their own, with owners
the same way; older files gain it when first opened and older versions ignore it.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import sys
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd

from strongtree_core.tree.claim import Claim, claim
from strongtree_core.renames import translate_keys
from strongtree_core.tree.record import STATUSES, SolveRecord
from strongtree_studio.stores.private import private_file, private_folder

#: Folder of the app's files inside the user's data folder.
APP_FOLDER = "strongtree-studio"
DB_NAME = "runs.sqlite3"
#: Where earlier versions kept the history by default (inside the code's folder).
LEGACY_DB = Path(__file__).resolve().parents[2] / "runs" / DB_NAME

ERR_NO_RUN = "Run {run_id} is not in the history (it may have been deleted)."
ERR_NO_SWEEP = "Sweep {sweep_id} is not in the history (it may have been deleted)."
ERR_NOT_OWNER = (
    "Run {run_id} belongs to another session or workspace: only its owner can change or delete it."
)
#: What a visitor reads when the history fails: never the server's paths (they go to the server's log).
ERR_DB = (
    "The run history cannot be used: {reason}. The server's operator can set STRONGTREE_RUNS_DB to a writable file "
    "(its log names the file)."
)
ERR_BUSY = (
    "The run history is busy: another program has kept it locked for more than {seconds:g} s ({reason}). "
    "Try again in a moment; if it stays locked, the server's operator can close the other program that has the "
    "file open (a second dashboard on the same history, or a database browser)."
)
LOG = logging.getLogger(__name__)
#: Seconds a statement waits for another connection's lock on the history before it gives up.
LOCK_WAIT = 10.0

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
    baseline TEXT,
    owner TEXT,
    shared INTEGER NOT NULL DEFAULT 0
)
"""
#: Trade-off sweeps (a table of their own, so older versions read the same file unchanged).
_SWEEPS_SCHEMA = """
CREATE TABLE IF NOT EXISTS sweeps (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    dataset TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status TEXT NOT NULL,
    config TEXT NOT NULL,
    points TEXT NOT NULL,
    owner TEXT,
    shared INTEGER NOT NULL DEFAULT 0
)
"""
#: Columns added since the first schema, with their definitions (older files are upgraded).  ``job`` and
#: ``server`` belong to a solve still running: the job's id, and the server process it runs under.
_ADDED_COLUMNS = {"owner": "TEXT", "shared": "INTEGER NOT NULL DEFAULT 0", "job": "TEXT", "server": "TEXT"}
#: The status of a run whose solve is still going (not listed: it is on the Solve page).
RUNNING = "running"
#: The status a run is given when its server stopped during the solve (killed, crashed, restarted).
INTERRUPTED = "interrupted"


#: Keys that versions before 0.2 stored under other names (translated on read, so older runs open as they were).
RENAMED_CONFIG: dict[str, dict[str, str]] = {
    "roles": {"positive": "pos_label"},
    "model": {"max_features": "max_features_used", "positive_class": "pos_label"},
    "grid": {"bounds": "fairness_bounds"},
}
RENAMED_SUMMARY: dict[str, str] = {"delta": "fairness_bound"}
RENAMED_EVALUATION: dict[str, str] = {"delta": "fairness_bound", "positive": "pos_label"}


def translate_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """A stored ``config`` with the names of earlier versions replaced by today's."""
    return {section: translate_keys(values, RENAMED_CONFIG[section])
            if section in RENAMED_CONFIG and isinstance(values, Mapping) else values
            for section, values in config.items()}


def _db_problem(path, err: BaseException) -> str:
    """What to say when the history failed: a lock held by another program is a wait, not a wrong path
    (pointing STRONGTREE_RUNS_DB elsewhere would hide the runs kept in this file).  The path goes to the
    server's log only: a visitor is told no path of the server."""
    text = (err.strerror or type(err).__name__) if isinstance(err, OSError) else str(err)
    LOG.warning("the run history at %s cannot be used: %s", path, err)
    if isinstance(err, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        return ERR_BUSY.format(seconds=LOCK_WAIT, reason=text)
    return ERR_DB.format(reason=text)


def run_claim(status: str, record: str | None, promise: str | None = None, scope: str | None = None) -> Claim:
    """The claim of a stored run (:func:`strongtree_core.tree.claim.claim`) from its tree's record, promise
    and scope as stored (JSON texts); a run whose record cannot be read is said by its status alone."""
    try:
        data = {**json.loads(record), **({"promise": json.loads(promise)} if promise else {}),
                **({"scope": json.loads(scope)} if scope else {})}
        return claim(SolveRecord.from_dict(data))
    except (TypeError, ValueError):
        return claim(SolveRecord(status if status in STATUSES else "error"))


class RunStoreError(RuntimeError):
    """The history database cannot be read or written; the message says why."""


class UnknownRun(RunStoreError):
    """The run is not in the history, or not visible to the caller."""


_LOGGED: set[Path] = set()


def legacy_history_logged(path: Path) -> None:
    """Name a history left in the old place in the server's log, once per server (the page does not)."""
    if path not in _LOGGED:
        _LOGGED.add(path)
        LOG.warning("runs of earlier versions are in %s; set STRONGTREE_RUNS_DB to that file to list them", path)


def user_data_dir() -> Path:
    """The app's folder among the user's data (the XDG base-directory rule on Linux)."""
    home = Path.home()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    else:
        configured = os.environ.get("XDG_DATA_HOME", "")
        base = Path(configured) if configured and Path(configured).is_absolute() else home / ".local" / "share"
    return base / APP_FOLDER


def runs_db_path(secrets: Mapping[str, Any] | None = None) -> Path:
    """Where the run history lives (see the module docstring)."""
    configured = os.environ.get("STRONGTREE_RUNS_DB") or (secrets or {}).get("runs_db")
    return Path(configured).expanduser() if configured else user_data_dir() / DB_NAME


@dataclass(frozen=True)
class RunEntry:
    """One stored solve.

    ``config`` holds the column roles, the split and the model settings;
    ``summary`` a few headline numbers for the history table; ``evaluation``
    the full metrics (JSON-ready); ``tree`` / ``baseline`` the fitted trees' JSON;
    ``owner`` the session or workspace it belongs to, ``shared`` whether every
    session may open it.
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
    owner: str = ""
    shared: bool = False


@dataclass(frozen=True)
class SweepEntry:
    """One stored trade-off sweep.

    ``config`` holds the column roles, the split, the model settings every point
    shares and the grid; ``points`` the sweep's rows (one dict per finished point,
    the columns of :func:`strongtree_core.sweep.sweep`, trees as JSON); ``status``
    is "finished", "stopped" or "failed"; ``owner`` and ``shared`` as for a run.
    """

    dataset: str
    fingerprint: str
    status: str
    config: dict[str, Any]
    points: list[dict[str, Any]]
    id: int | None = None
    created_at: str = ""
    owner: str = ""
    shared: bool = False


def server_id() -> str:
    """This server process: host, process id and start time (a process id alone is reused)."""
    import socket

    import psutil

    return f"{socket.gethostname()}/{os.getpid()}/{psutil.Process().create_time():.3f}"


def server_alive(server: str | None) -> bool:
    """Whether the server process ``server`` (:func:`server_id`) still runs; one of another host counts as alive
    (it cannot be asked)."""
    import socket

    import psutil

    try:
        host, pid, started = str(server).rsplit("/", 2)
        pid_number, start_time = int(pid), float(started)
    except ValueError:
        return False
    if host != socket.gethostname():
        return True
    try:
        return abs(psutil.Process(pid_number).create_time() - start_time) < 0.01
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return False


def _now() -> str:
    return datetime.now(timezone.utc).astimezone().strftime("%Y-%m-%d %H:%M:%S")


class RunStore:
    """Save, list, reopen, share and delete runs (one short connection per call,
    so it is safe to use from any thread).

    ``viewer`` arguments are the owners a caller speaks for (a session and its
    workspace); ``None`` means no restriction (scripts and tests).
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            # Every browser's runs: 0600 in a 0700 folder, whatever the umask (strongtree_studio.stores.private).
            private_folder(self.path.parent, own=self.path.parent == user_data_dir())
            private_file(self.path)
            with closing(self._connect()) as db, db:
                db.execute(_SCHEMA)
                db.execute(_SWEEPS_SCHEMA)
                present = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
                for column, definition in _ADDED_COLUMNS.items():
                    if column not in present:
                        db.execute(f"ALTER TABLE runs ADD COLUMN {column} {definition}")
                if "owner" not in present:  # runs from before owners were visible to all: they stay so
                    db.execute("UPDATE runs SET shared = 1 WHERE owner IS NULL")
        except (OSError, sqlite3.Error) as err:
            raise RunStoreError(_db_problem(self.path, err)) from None

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=LOCK_WAIT)

    def _run(self, sql: str, args: tuple = ()) -> tuple[list[tuple], int | None]:
        """Execute one statement; returns (rows, id of the inserted row)."""
        try:
            with closing(self._connect()) as db, db:
                cursor = db.execute(sql, args)
                return cursor.fetchall(), cursor.lastrowid
        except sqlite3.Error as err:
            raise RunStoreError(_db_problem(self.path, err)) from None

    @staticmethod
    def _visible(viewer: Iterable[str] | None) -> tuple[str, tuple]:
        """SQL condition (and its arguments) for the runs ``viewer`` may see."""
        if viewer is None:
            return "1", ()
        owners = tuple(viewer)
        marks = ", ".join("?" * len(owners)) or "NULL"
        return f"(shared = 1 OR owner IN ({marks}))", owners

    def _visible_row(self, table: str, columns: str, row_id: int, viewer: Iterable[str] | None,
                     missing: str) -> list[tuple]:
        """The row ``row_id`` of ``table`` as a one-item list; :class:`UnknownRun` (``missing``) when
        absent or not visible to ``viewer``."""
        condition, args = self._visible(viewer)
        rows, _ = self._run(f"SELECT {columns} FROM {table} WHERE id = ? AND {condition}", (int(row_id), *args))
        if not rows:
            raise UnknownRun(missing)
        return rows

    def save(self, entry: RunEntry) -> int:
        """Store ``entry``; returns its id."""
        created = _now()
        _, run_id = self._run(
            "INSERT INTO runs (created_at, dataset, fingerprint, status, config, summary, evaluation, tree, baseline,"
            " owner, shared) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                entry.owner,
                int(entry.shared),
            ),
        )
        return int(run_id)

    # -- a solve while it runs: journaled, so a server killed mid-solve leaves its run behind --------

    def begin(self, entry: RunEntry, job: str, server: str) -> int:
        """Store a solve that has just started (status :data:`RUNNING`); returns its id."""
        _, run_id = self._run(
            "INSERT INTO runs (created_at, dataset, fingerprint, status, config, summary, evaluation, tree, baseline,"
            " owner, shared, job, server) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (_now(), entry.dataset, entry.fingerprint, RUNNING, json.dumps(entry.config, default=str),
             json.dumps(entry.summary, default=str),
             None if entry.evaluation is None else json.dumps(entry.evaluation, default=str), entry.tree,
             entry.baseline, entry.owner, int(entry.shared), job, server),
        )
        return int(run_id)

    def update(self, run_id: int, entry: RunEntry, final: bool = False) -> None:
        """Write what a solve has reported so far into its run (``final``: its result, and the run is listed)."""
        self._run(
            "UPDATE runs SET status = ?, config = ?, summary = ?, evaluation = ?, tree = ?, baseline = ?"
            + (", server = NULL" if final else "") + " WHERE id = ?" + ("" if final else " AND status = ?"),
            (entry.status if final else RUNNING, json.dumps(entry.config, default=str),
             json.dumps(entry.summary, default=str),
             None if entry.evaluation is None else json.dumps(entry.evaluation, default=str), entry.tree,
             entry.baseline, int(run_id), *(() if final else (RUNNING,))),
        )

    def drop_running(self, run_id: int) -> None:
        """Forget a solve that ended without any tree (its page says why)."""
        self._run("DELETE FROM runs WHERE id = ? AND status = ?", (int(run_id), RUNNING))

    def by_job(self, job: str, viewer: Iterable[str] | None = None) -> RunEntry | None:
        """The run of solve job ``job`` (None when there is none visible to ``viewer``)."""
        condition, args = self._visible(viewer)
        rows, _ = self._run(f"SELECT id FROM runs WHERE job = ? AND {condition} ORDER BY id DESC LIMIT 1",
                            (str(job), *args))
        return self.get(rows[0][0], viewer) if rows else None

    def recover(self, alive=server_alive) -> list[int]:
        """List again every run still :data:`RUNNING` whose server process is gone (killed mid-solve):
        its status becomes its last tree's (:data:`INTERRUPTED` for a tree the solve had not finished,
        as the journal wrote it) or :data:`INTERRUPTED` when it reported none; its summary says
        ``server_stopped``.  Returns their ids."""
        rows, _ = self._run("SELECT id, server, tree, summary FROM runs WHERE status = ?", (RUNNING,))
        gone = []
        for run_id, server, tree, summary in rows:
            if alive(server):
                continue
            status = INTERRUPTED
            try:
                status = str(json.loads(tree)["record"]["status"]) if tree else INTERRUPTED
                summary = json.dumps({**json.loads(summary), "server_stopped": True})
            except (ValueError, TypeError, KeyError):
                pass
            self._run("UPDATE runs SET status = ?, summary = ?, server = NULL WHERE id = ? AND status = ?",
                      (status, summary, int(run_id), RUNNING))
            gone.append(int(run_id))
        return gone

    def get(self, run_id: int, viewer: Iterable[str] | None = None) -> RunEntry:
        """The stored run ``run_id``; raises :class:`RunStoreError` when absent or not visible to ``viewer``."""
        rows = self._visible_row("runs", "id, created_at, dataset, fingerprint, status, config, summary, evaluation,"
                                 " tree, baseline, owner, shared", run_id, viewer, ERR_NO_RUN.format(run_id=run_id))
        rid, created, dataset, fp, status, config, summary, evaluation, tree, baseline, owner, shared = rows[0]
        return RunEntry(
            dataset=dataset,
            fingerprint=fp,
            status=status,
            config=translate_config(json.loads(config)),
            summary=translate_keys(json.loads(summary), RENAMED_SUMMARY),
            evaluation=None if evaluation is None else translate_keys(json.loads(evaluation), RENAMED_EVALUATION),
            tree=tree,
            baseline=baseline,
            id=rid,
            created_at=created,
            owner=owner or "",
            shared=bool(shared),
        )

    def table(self, viewer: Iterable[str] | None = None) -> pd.DataFrame:
        """One row per run ``viewer`` may see, newest first: id, time, dataset, status,
        owner, shared and the summary's numbers."""
        condition, args = self._visible(viewer)
        # the tree's record, promise and scope, read by SQLite from its JSON (the trees are not parsed here)
        beside = ", ".join(f"CASE WHEN json_valid(tree) THEN json_extract(tree, '$.{key}') END"
                           for key in ("record", "fairness_promise", "certificate_scope"))
        rows, _ = self._run(
            f"SELECT id, created_at, dataset, status, owner, shared, summary, {beside} FROM runs WHERE {condition}"
            " AND status != ? ORDER BY id DESC",  # a solve still running is on the Solve page, not here
            (*args, RUNNING),
        )
        records = [
            {"id": rid, "created": created, "dataset": dataset, "status": status, "owner": owner or "",
             "shared": bool(shared), **translate_keys(json.loads(summary), RENAMED_SUMMARY),
             "claim": run_claim(status, record, promise, scope)}
            for rid, created, dataset, status, owner, shared, summary, record, promise, scope in rows
        ]
        columns = ["id", "created", "dataset", "status", "owner", "shared", "claim"]
        return pd.DataFrame.from_records(records, columns=None if records else columns)

    def _owned(self, run_id: int, viewer: Iterable[str] | None) -> None:
        """Raise unless ``viewer`` owns run ``run_id`` (it must be visible to be named)."""
        entry = self.get(run_id, viewer)
        if viewer is not None and entry.owner not in tuple(viewer):
            raise RunStoreError(ERR_NOT_OWNER.format(run_id=run_id))

    def delete(self, run_id: int, viewer: Iterable[str] | None = None) -> None:
        """Delete run ``run_id`` (its owner only)."""
        self._owned(run_id, viewer)
        self._run("DELETE FROM runs WHERE id = ?", (int(run_id),))

    def set_shared(self, run_id: int, shared: bool, viewer: Iterable[str] | None = None) -> None:
        """Let every session open run ``run_id``, or only its owner again (its owner only)."""
        self._owned(run_id, viewer)
        self._run("UPDATE runs SET shared = ? WHERE id = ?", (int(shared), int(run_id)))

    def set_owner(self, run_id: int, owner: str, viewer: Iterable[str] | None = None) -> None:
        """Give run ``run_id`` to ``owner`` (e.g. from a session to its workspace; its owner only)."""
        self._owned(run_id, viewer)
        self._run("UPDATE runs SET owner = ? WHERE id = ?", (owner, int(run_id)))

    # -- trade-off sweeps ----------------------------------------------------

    def save_sweep(self, entry: SweepEntry) -> int:
        """Store a sweep; returns its id (missing numbers are stored as null)."""
        _, sweep_id = self._run(
            "INSERT INTO sweeps (created_at, dataset, fingerprint, status, config, points, owner, shared)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (_now(), entry.dataset, entry.fingerprint, entry.status, json.dumps(entry.config, default=str),
             json.dumps([_plain(p) for p in entry.points], default=str), entry.owner, int(entry.shared)),
        )
        return int(sweep_id)

    def get_sweep(self, sweep_id: int, viewer: Iterable[str] | None = None) -> SweepEntry:
        """The stored sweep ``sweep_id``; raises :class:`UnknownRun` when absent or not visible to ``viewer``."""
        rows = self._visible_row("sweeps", "id, created_at, dataset, fingerprint, status, config, points, owner, shared",
                                 sweep_id, viewer, ERR_NO_SWEEP.format(sweep_id=sweep_id))
        sid, created, dataset, fp, status, config, points, owner, shared = rows[0]
        return SweepEntry(dataset=dataset, fingerprint=fp, status=status, config=translate_config(json.loads(config)),
                          points=json.loads(points), id=sid, created_at=created, owner=owner or "",
                          shared=bool(shared))

    def sweeps(self, viewer: Iterable[str] | None = None) -> pd.DataFrame:
        """One row per sweep ``viewer`` may see, newest first: id, created, dataset, status, points."""
        condition, args = self._visible(viewer)
        rows, _ = self._run(
            f"SELECT id, created_at, dataset, status, json_array_length(points) FROM sweeps WHERE {condition}"
            " ORDER BY id DESC",
            args,
        )
        return pd.DataFrame(rows, columns=["id", "created", "dataset", "status", "points"])


def _plain(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row for JSON: NaN and infinities as null, numpy scalars as Python values."""
    out = {}
    for key, value in row.items():
        if hasattr(value, "item") and not isinstance(value, (str, bytes)):
            value = value.item()
        if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
            value = None
        out[key] = value
    return out
