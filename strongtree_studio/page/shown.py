"""Which result the Tree and Fairness pages show, and the rows it was learned on.

A page shows the run the user reopened from the history, else the outcome of
the last solve this session started.  Rows are available when the table in use
is the one the run was learned on (same content fingerprint): the split is
then re-made from the stored settings, which is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pandas as pd

from strongtree_core.metrics.group_summary import group_labels
from strongtree_core.tree import FittedTree
from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig, SplitTables, split_table
from strongtree_studio.views.markup import md
from strongtree_studio.views.status_words import page_words
from strongtree_studio.jobs.solve_job import MSG_SERVER_STOPPED
from strongtree_studio.stores.run_history import RunEntry, RunStoreError, UnknownRun
from strongtree_studio.page.services import job_registry, run_store
from strongtree_studio.page.session import JOB_ID, TABLE, VIEW_RUN
from strongtree_studio.views.stale import stale_message
from strongtree_studio.sweeps.points import point_origin
from strongtree_studio.page.state import current_settings, run_viewer

MSG_NO_TREE = "No tree yet: solve one on the **Solve** page, or reopen a run on the **Runs** page."
MSG_RUNNING = "A solve is running: its latest tree is on the **Solve** page; the result appears here when it ends."
MSG_COMPARING = ("The solve's tree is final (see the **Solve** page); the tree without fairness constraints is now "
                 "being solved for the comparison, and the result appears here when it is done.")
MSG_NO_RESULT = "The last solve has no tree to show."
#: The open tab of a solve whose server stopped (killed, restarted) while it ran.
MSG_SERVER_WENT_AWAY = (
    "The server stopped during this solve (it was killed or restarted), so the solve ended. Its last tree is kept "
    "as run {run_id} in the history, not proven optimal: it is on the Tree and Fairness pages."
)
MSG_SERVER_WENT_AWAY_AFTER = (
    "The server stopped (it was killed or restarted) after this solve's tree was final, before the tree without "
    "the fairness constraint was solved for comparison: the tree is kept as run {run_id} in the history, on the "
    "Tree and Fairness pages."
)
MSG_SERVER_WENT_AWAY_NO_TREE = (
    "The server stopped during this solve (it was killed or restarted), before the solve reported a tree: there "
    "is nothing to keep. Solve again."
)
MSG_FROM_HISTORY = "Run {run_id} reopened from the history: it shows the settings it was solved with."
MSG_RUN_GONE = (
    "Run {run_id} of the last solve is no longer in this session's history (it was deleted or moved to another "
    "workspace), so it is not shown. Solve again, or open a run on the **Runs** page."
)


@dataclass(frozen=True)
class Shown:
    """A run on screen: the entry, its trees, its settings and (if at hand) its rows."""

    entry: RunEntry
    tree: FittedTree
    baseline: FittedTree | None
    roles: Roles
    model: ModelConfig
    tables: SplitTables | None

    @property
    def title(self) -> str:
        run = f"run {self.entry.id}" if self.entry.id is not None else "unsaved run"
        return f"{self.entry.dataset} · {run} · depth {self.model.depth}"


@lru_cache(maxsize=64)
def tree_from_json(text: str) -> FittedTree:
    """Parse a tree once (trees are immutable values, safe to share)."""
    return FittedTree.from_json(text)


def roles_from_config(config: dict[str, Any]) -> Roles:
    values = dict(config["roles"])
    for key in ("protected", "legitimate", "ignored"):
        values[key] = tuple(values.get(key) or ())
    return Roles(**values)


def shown_entry() -> tuple[RunEntry | None, str]:
    """The entry to show and, when there is none, a message saying why."""
    view_run = VIEW_RUN.get()
    if view_run is not None:
        try:
            return run_store().get(view_run, run_viewer()), ""
        except RunStoreError as err:
            return None, md(err)
    snapshot = job_registry().snapshot(JOB_ID.get())
    if snapshot is None:
        entry, message = lost_solve()
        return (entry, "") if entry is not None and entry.tree else (None, message or MSG_NO_TREE)
    if snapshot.active:
        return None, MSG_COMPARING if snapshot.main.result is not None else MSG_RUNNING
    if snapshot.outcome is None or snapshot.outcome.entry is None:
        reason = (snapshot.outcome.error if snapshot.outcome else "") or snapshot.message or snapshot.main.error
        return None, f"{MSG_NO_RESULT} {md(page_words(reason))}" if reason else MSG_NO_RESULT
    entry = snapshot.outcome.entry
    if entry.id is not None:  # stored: it is shown while it stays in this session's history
        try:
            run_store().get(entry.id, run_viewer())
        except UnknownRun:
            return None, MSG_RUN_GONE.format(run_id=entry.id)
        except RunStoreError:
            pass  # the history cannot be read just now: the result in memory is still this session's
    return entry, ""


def lost_solve() -> tuple[RunEntry | None, str]:
    """This session's solve when the server that ran it has stopped since (this server does not know
    the job): its run, marked interrupted when the server restarted, and what to say; (None, "") else."""
    job = JOB_ID.get()
    if job is None or job_registry().snapshot(job) is not None:
        return None, ""
    try:
        entry = run_store().by_job(job, run_viewer())
    except RunStoreError:
        return None, ""
    if entry is None or not entry.summary.get("server_stopped"):  # ended here (this server forgot it since)
        return None, ""
    if entry.tree is None:  # written when the solve started, never completed
        return entry, MSG_SERVER_WENT_AWAY_NO_TREE
    if tree_from_json(entry.tree).record.message != MSG_SERVER_STOPPED:  # its tree was final
        return entry, MSG_SERVER_WENT_AWAY_AFTER.format(run_id=entry.id)
    return entry, MSG_SERVER_WENT_AWAY.format(run_id=entry.id)


def shown() -> tuple[Shown | None, str]:
    """The :class:`Shown` result of this session, or None and a message."""
    entry, message = shown_entry()
    if entry is None:
        return None, message
    roles = roles_from_config(entry.config)
    model = ModelConfig.from_dict(entry.config["model"])
    table = TABLE.get()
    tables = None
    if table is not None and table.fingerprint == entry.fingerprint:
        tables = split_table(table.frame, roles, SplitConfig(**entry.config["split"]))
    baseline = tree_from_json(entry.baseline) if entry.baseline else None
    return Shown(entry, tree_from_json(entry.tree), baseline, roles, model, tables), ""


def shown_label(result: Shown) -> tuple[str, bool]:
    """A line above a result that says where it comes from, and whether it is stale.

    A run reopened from the history is labelled as such; the last solve of the
    session is labelled stale when the settings have changed since it started
    (:func:`strongtree_studio.views.stale.stale_message`).  Returns ("", False) for a current result.
    """
    if VIEW_RUN.get() is not None:
        origin = point_origin(result.entry.config)
        run = MSG_FROM_HISTORY.format(run_id=result.entry.id)
        return (f"{md(origin)} {run}" if origin else run), False
    then = {"fingerprint": result.entry.fingerprint, "config": result.entry.config}
    text = stale_message(then, current_settings())
    return text, bool(text)


def group_mix(tree: FittedTree, frame: pd.DataFrame, columns: tuple[str, ...]) -> dict[int, dict[str, int]]:
    """Rows of each protected group reaching every node (counted at the leaves, summed upwards)."""
    leaves = tree.apply(frame)
    groups = group_labels(frame, list(columns)).to_numpy()  # named as the metrics name them
    mix: dict[int, dict[str, int]] = {}
    for leaf, group in zip(leaves.tolist(), groups.tolist()):
        node = int(leaf)
        while node >= 1:
            counts = mix.setdefault(node, {})
            counts[group] = counts.get(group, 0) + 1
            node //= 2
    return {node: dict(sorted(counts.items())) for node, counts in mix.items()}
