"""A finished sweep kept in the run history (a stopped one keeps its finished points)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import pandas as pd

from strongtree_core.metrics import fairness_gap, positive_present
from strongtree_core.report.references import cart_reference
from strongtree_core.tree import FittedTree

from strongtree_studio.jobs.job_registry import Job
from strongtree_studio.stores.run_history import RunStore, RunStoreError, SweepEntry
from strongtree_studio.sweeps.sweep_job import SweepContext
from strongtree_studio.views.status_words import fmt

ERR_SAVE_SWEEP = "This sweep could not be stored in the history. {reason}"

#: How a sweep ended, as stored.
SWEEP_STATUS = {"finished": "Finished", "stopped": "Stopped (finished points kept)", "failed": "Failed"}


@dataclass(frozen=True)
class SweepOutcome:
    """A finished sweep job's stored entry (``job.outcome``); ``error`` says why it could not be stored."""

    entry: SweepEntry | None
    error: str = ""


def cart_references(context: SweepContext, rows: list[dict]) -> list[dict]:
    """CART of each depth of the sweep, measured as the points are (accuracy and every notion's gap per part),
    on the binary questions of a point of that depth: the frontier's other reference."""
    parts = {"train": context.tables.train}
    if len(context.tables.test):
        parts["test"] = context.tables.test
    roles = context.roles
    notions = [n for n in dict.fromkeys(context.grid.notions) if n != "conditional_statistical_parity" or roles.legitimate]
    out = []
    for depth in context.grid.depths:
        tree_json = next((r.get("tree") for r in rows if r.get("depth") == depth and isinstance(r.get("tree"), str)), None)
        if tree_json is None:
            continue
        cart = cart_reference(FittedTree.from_json(tree_json), parts, roles.target, int(depth))
        row = {"model": cart.name, "depth": int(depth), "leaves": cart.leaves}
        for part, frame in parts.items():
            truth = frame[roles.target].to_numpy()
            row[f"{part}_accuracy"] = float(np.mean(cart.predictions[part] == truth))
            measurable = positive_present(truth, cart.predictions[part], roles.pos_label)
            for notion in notions:
                if not measurable:  # no positive row, true or predicted: no rate to compare
                    row[f"{part}_{notion}"] = None
                    continue
                gap = fairness_gap(notion, truth, cart.predictions[part], sensitive_features=frame[list(roles.protected)],
                                   legitimate_features=frame[list(roles.legitimate)] if roles.legitimate else None,
                                   pos_label=roles.pos_label)
                row[f"{part}_{notion}"] = None if gap.difference != gap.difference else float(gap.difference)
        out.append(row)
    return out


def finish_sweep(job: Job, open_store: Callable[[], RunStore]) -> None:
    """``on_finished`` hook for sweep jobs: store the finished points (a stopped sweep keeps them)."""
    context: SweepContext | None = job.context
    main = job.phases["main"]
    if context is None:
        return
    status = "stopped" if job.stop_requested is not None else "finished" if main.done else "failed"
    config = {**context.config(), "references": cart_references(context, list(main.rows))}
    entry = SweepEntry(context.dataset, context.fingerprint, status, config, list(main.rows), owner=context.owner)
    try:
        entry = replace(entry, id=open_store().save_sweep(entry))
    except RunStoreError as err:
        job.outcome = SweepOutcome(entry, ERR_SAVE_SWEEP.format(reason=err))
        return
    job.run_id = entry.id
    job.outcome = SweepOutcome(entry)


def sweeps_table(sweeps: pd.DataFrame) -> pd.DataFrame:
    """The stored sweeps (:meth:`strongtree_studio.stores.run_history.RunStore.sweeps`) in words, one row each, newest first."""
    return pd.DataFrame({
        "sweep": [f"Sweep {int(i)}" for i in sweeps["id"]],
        "made": [str(c)[:16] for c in sweeps["created"]],
        "table": sweeps["dataset"].astype(str).tolist(),
        "points": [fmt(n, "int") for n in sweeps["points"]],
        "status": [SWEEP_STATUS.get(s, s) for s in sweeps["status"]],
    }).set_index("sweep")
