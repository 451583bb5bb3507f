"""What the buttons do that several pages share: use a table, start a solve, start the demo.

These run in widget callbacks (before the script), so the whole run that
follows, sidebar included, sees their effect.
"""

from __future__ import annotations

import streamlit as st

from strongtree_studio.config import Roles, split_table
from strongtree_studio.demo_data import DEMO, DEMOS
from strongtree_studio.loading import fingerprint
from strongtree_studio.outcome import SolveContext, solve_spec
from strongtree_studio.roles import suggest_roles
from strongtree_studio.services import job_registry
from strongtree_studio.state import LoadedTable, current_settings, renew_widgets, run_owner, set_roles

def use_table(table: LoadedTable, roles: Roles) -> None:
    """Work on ``table`` from now on, with ``roles`` (its column edits start afresh)."""
    st.session_state["table"] = table
    st.session_state["edits"] = {}
    st.session_state["edits_undo"] = []
    st.session_state["codebook_report"] = None
    set_roles(roles)


def load_demo_table(name: str) -> None:
    """Use the built-in table ``name`` with its suggested roles."""
    demo = DEMOS[name]
    frame = demo.load()
    use_table(LoadedTable(demo.name, frame, fingerprint(frame), raw=frame), suggest_roles(frame, demo))


def start_solve() -> None:
    """Submit a solve of the current table, roles, split and model; it is this session's job from now on."""
    table, roles = st.session_state["table"], st.session_state["roles"]
    split, model = st.session_state["split"], st.session_state["model"]
    tables = split_table(table.frame, roles, split)
    context = SolveContext(table.name, table.fingerprint, roles, split, model, tables, owner=run_owner())
    st.session_state["job_id"] = job_registry().submit(solve_spec(context), context)
    st.session_state["job_settings"] = current_settings()
    st.session_state["view_run"] = None


#: Session key: a page asks the next run to go to the Solve page (a callback cannot switch pages).
GOTO_SOLVE = "_goto_solve"


def start_demo() -> None:
    """The demo: its table, roles and preset (see :data:`strongtree_studio.demo_data.DEMO`), then solve."""
    st.session_state["data.demo"] = DEMO.table
    st.session_state[GOTO_SOLVE] = True
    load_demo_table(DEMO.table)
    st.session_state["split"] = DEMO.split
    st.session_state["model"] = DEMO.model
    renew_widgets("model")
    renew_widgets("split")
    start_solve()
