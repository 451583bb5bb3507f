"""What the buttons do that several pages share: use a table, start a solve, start the demo.

These run in widget callbacks (before the script), so the whole run that
follows, sidebar included, sees their effect.
"""

from __future__ import annotations

from strongtree_studio.data.choices import Roles, split_table
from strongtree_studio.data.demo_tables import DEMO, DEMOS
from strongtree_studio.data.loading import fingerprint
from strongtree_studio.jobs.solve_job import SolveContext, solve_spec
from strongtree_studio.jobs import preparing
from strongtree_studio.data.roles import suggest_roles
from strongtree_studio.page.services import job_registry
from strongtree_studio.page.session import (
    CODEBOOK_REPORT,
    DEMO_WAITING,
    EDITS,
    EDITS_UNDO,
    GOTO_SOLVE,
    JOB_ID,
    JOB_SETTINGS,
    MODEL,
    ROLES,
    SPLIT,
    TABLE,
    VIEW_RUN,
    set_widget_value,
)
from strongtree_studio.page.state import current_settings, renew_widgets, run_owner, set_roles
from strongtree_studio.stores.table import LoadedTable

def use_table(table: LoadedTable, roles: Roles) -> None:
    """Work on ``table`` from now on, with ``roles`` (its column edits start afresh)."""
    TABLE.set(table)
    EDITS.set({})
    EDITS_UNDO.set([])
    CODEBOOK_REPORT.set(None)
    set_roles(roles)


def load_demo_table(name: str) -> None:
    """Use the built-in table ``name`` with its suggested roles."""
    demo = DEMOS[name]
    frame = demo.load()
    use_table(LoadedTable(demo.name, frame, fingerprint(frame), raw=frame), suggest_roles(frame, demo))


def start_solve() -> None:
    """Submit a solve of the current table, roles, split and model; it is this session's job from now on."""
    table, roles = TABLE.get(), ROLES.get()
    split, model = SPLIT.get(), MODEL.get()
    tables = split_table(table.frame, roles, split)
    codes = {column: {"kind": edit.kind, "labels": edit.label_map} for column, edit in EDITS.get().items()}
    context = SolveContext(table.name, table.fingerprint, roles, split, model, tables, owner=run_owner(), codes=codes)
    JOB_ID.set(job_registry().submit(solve_spec(context), context))
    JOB_SETTINGS.set(current_settings())
    VIEW_RUN.set(None)


def start_demo() -> None:
    """The demo: its table, roles and preset (see :data:`strongtree_studio.data.demo_tables.DEMO`), then solve,
    or, on a fresh machine whose compiled exact search is still being prepared, wait for it (the Solve
    page says so and starts the solve once it is ready: its minute would otherwise run on the slow path)."""
    set_widget_value("data.demo", DEMO.table)
    GOTO_SOLVE.set(True)  # a callback cannot switch pages: the next run does
    load_demo_table(DEMO.table)
    SPLIT.set(DEMO.split)
    MODEL.set(DEMO.model)
    renew_widgets(MODEL)
    renew_widgets(SPLIT)
    if preparing.waiting():
        DEMO_WAITING.set(True)
        JOB_ID.set(None)
        return
    start_solve()
