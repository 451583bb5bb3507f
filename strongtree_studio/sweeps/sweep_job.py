"""A sweep as a job: what it is run with (:class:`SweepContext`) and the request a
worker process receives (:class:`strongtree_studio.jobs.worker.SweepSpec`): one tree per
notion x bound δ x depth x λ on the training rows, measured on the training and test rows."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

import pandas as pd

from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig, SplitTables, split_table
from strongtree_studio.sweeps.sweep_grid import SweepGrid
from strongtree_studio.jobs.worker import SweepSpec


@dataclass(frozen=True)
class SweepContext:
    """What a sweep job needs to be stored when it ends."""

    dataset: str
    fingerprint: str
    roles: Roles
    split: SplitConfig
    model: ModelConfig  # the settings every point shares (the time limit is the per-point one)
    grid: SweepGrid
    tables: SplitTables
    owner: str = ""

    def config(self) -> dict[str, Any]:
        return {"roles": asdict(self.roles), "split": asdict(self.split), "model": asdict(self.model),
                "grid": asdict(self.grid)}


def sweep_context(dataset: str, fingerprint: str, frame: pd.DataFrame, roles: Roles, split: SplitConfig,
                  model: ModelConfig, grid: SweepGrid, time_limit: float, owner: str) -> SweepContext:
    base = replace(model, fairness=(), time_limit=float(time_limit))
    return SweepContext(dataset, fingerprint, roles, split, base, grid, split_table(frame, roles, split), owner)


def sweep_spec(context: SweepContext) -> SweepSpec:
    """The worker's request: the training rows then the test rows, one fold that trains on the first."""
    roles, tables = context.roles, context.tables
    rows = pd.concat([tables.train, tables.test], ignore_index=True)
    n_train = len(tables.train)
    cv = [(list(range(n_train)), list(range(n_train, len(rows))))]
    return SweepSpec(X=rows[roles.model_columns(rows)], y=rows[roles.target],
                     params=replace(context.model, fairness_confidence=None).estimator_params(roles), grid=context.grid.as_params(), cv=cv,
                     sensitive=tuple(roles.protected), legitimate=tuple(roles.legitimate))
