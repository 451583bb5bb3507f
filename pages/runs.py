"""Runs: the history of solves; reopen one, compare two, share, delete.

A run belongs to the browser session that solved it, or to the workspace the
user named (see :mod:`studio.runs`); other sessions see it only when shared.
"""

import pandas as pd
import streamlit as st

from studio import runs
from studio.explain import MSG_LEGACY_HISTORY, MSG_NO_RUNS, MSG_NOT_YOURS, OWNERSHIP_HELP
from studio.markup import md, md_table
from studio.runs import RunStoreError
from studio.services import run_store
from studio.shown import roles_from_config, tree_from_json
from studio.state import run_owner, run_viewer, workspace_name
from studio.views import STATUS_WORDS, fmt

st.title("Runs")

try:
    store = run_store()
except RunStoreError as err:
    st.error(md(err), icon=":material/error:")
    st.stop()


def set_workspace() -> None:
    st.session_state["workspace"] = workspace_name(st.session_state["runs.workspace"])
    st.session_state["runs.pick"] = []


with st.container(border=True):
    st.markdown(OWNERSHIP_HELP)
    left, right = st.columns([1, 2], vertical_alignment="bottom")
    left.text_input("Workspace", value=st.session_state["workspace"], key="runs.workspace", on_change=set_workspace,
                    max_chars=60, placeholder="none: runs stay with this session",
                    help="Runs solved while a workspace is set are stored in it. Clear the box to stop using it.")
    workspace = st.session_state["workspace"]
    right.caption(f"New runs are stored in the workspace **{md(workspace)}**." if workspace
                  else "New runs belong to this browser session only.")

viewer = run_viewer()
try:
    history = store.table(viewer)
except RunStoreError as err:
    st.error(md(err), icon=":material/error:")
    st.stop()

st.caption(f"The history is kept in {md(store.path)}.")
if runs.LEGACY_DB.exists() and store.path.resolve() != runs.LEGACY_DB.resolve():
    st.caption(MSG_LEGACY_HISTORY.format(path=md(runs.LEGACY_DB)))
notice = st.session_state.pop("runs.notice", None)
if notice:
    st.warning(md(notice), icon=":material/warning:")
if history.empty:
    st.info(MSG_NO_RUNS, icon=":material/info:")
    st.stop()


def owner_words(owner: str) -> str:
    """Whose a run is, from this session's point of view."""
    if owner == st.session_state["session_owner"]:
        return "this session"
    if owner == run_owner() and owner.startswith("workspace:"):
        return "this workspace"
    return "no owner (an older run)" if not owner else "another session or workspace"


labels = {int(r.id): f"#{r.id} · {r.created} · {r.dataset} · depth {r.depth} · {r.fairness}" for r in history.itertuples()}
mine = {int(r.id) for r in history.itertuples() if r.owner in viewer}
shared = {int(r.id) for r in history.itertuples() if r.shared}

#: History columns shown, in order, with their headers and formats.
COLUMNS = {
    "id": ("run", None), "created": ("when", None), "dataset": ("table", None), "depth": ("depth", None),
    "fairness": ("fairness", None), "delta": ("δ", "number"), "status": ("status", None),
    "train_accuracy": ("train accuracy", "percent"), "test_accuracy": ("test accuracy", "percent"),
    "train_worst_gap": ("train gap", "gap"), "test_worst_gap": ("test gap", "gap"),
    "runtime": ("solve time", "seconds"), "backend": ("backend", None), "gap": ("optimality gap", "percent"),
    "owner": ("whose", None),
}
shown_history = history[[c for c in COLUMNS if c in history.columns]].copy()
for column, (_, kind) in COLUMNS.items():
    if kind is not None and column in shown_history:
        shown_history[column] = shown_history[column].map(lambda v, k=kind: fmt(v, k))
shown_history["owner"] = [owner_words(o) + (", shared" if s else "") for o, s in zip(history["owner"], history["shared"])]
st.dataframe(shown_history.rename(columns={c: h for c, (h, _) in COLUMNS.items()}), hide_index=True)
st.caption("Train and test gap: the largest measured gap among the fairness notions the run constrained.")

picked = [p for p in st.multiselect("Select one run to open, two to compare, or runs to share or delete",
                                    list(labels), format_func=labels.get, key="runs.pick") if p in labels]


def open_run(run_id: int) -> None:
    st.session_state["view_run"] = run_id


def change_runs(action: str, run_ids: list[int]) -> None:
    """Share, unshare, move to the workspace or delete ``run_ids`` (runs of this session or workspace)."""
    for run_id in run_ids:
        try:
            if action == "delete":
                store.delete(run_id, viewer)
                if st.session_state["view_run"] == run_id:
                    st.session_state["view_run"] = None
            elif action == "move":
                store.set_owner(run_id, run_owner(), viewer)
            else:
                store.set_shared(run_id, action == "share", viewer)
        except RunStoreError as err:
            st.session_state["runs.notice"] = str(err)
    if action == "delete":
        st.session_state["runs.pick"] = []


own_pick = bool(picked) and set(picked) <= mine
share_action = "unshare" if picked and set(picked) <= shared else "share"
cols = st.columns(5)
cols[0].button("Open", key="runs.open", icon=":material/open_in_new:", disabled=len(picked) != 1,
               on_click=open_run, args=(picked[0] if picked else None,), width="stretch")
cols[1].button("Compare", key="runs.compare", icon=":material/compare:", disabled=len(picked) != 2, width="stretch")
cols[2].button("Stop sharing" if share_action == "unshare" else "Share", key="runs.share", icon=":material/share:",
               disabled=not own_pick, on_click=change_runs, args=(share_action, list(picked)), width="stretch",
               help="A shared run can be opened by every session; only its own session or workspace can delete it.")
cols[3].button("Move to workspace", key="runs.move", icon=":material/drive_file_move:",
               disabled=not own_pick or not workspace, on_click=change_runs, args=("move", list(picked)),
               width="stretch", help="Keep the selected runs of this session in the workspace, across reloads.")
cols[4].button("Delete", key="runs.delete", icon=":material/delete:", disabled=not own_pick,
               on_click=change_runs, args=("delete", list(picked)), width="stretch")
if picked and not own_pick:
    st.caption(MSG_NOT_YOURS)

view_run = st.session_state["view_run"]
if view_run is not None and view_run in labels:
    st.success(f"Showing {md(labels[view_run])} on the Tree and Fairness pages.", icon=":material/visibility:")
    x, y, _ = st.columns([1, 1, 2])
    x.page_link("pages/tree.py", label="Open its tree", icon=":material/account_tree:")
    y.page_link("pages/fairness.py", label="Its fairness & performance", icon=":material/balance:")

if len(picked) == 2:
    try:
        entries = [store.get(run_id, viewer) for run_id in picked]
    except RunStoreError as err:
        st.error(md(err), icon=":material/error:")
        st.stop()
    st.markdown("##### Side by side")
    settings = {}
    for entry in entries:
        roles = roles_from_config(entry.config)
        flat = {"dataset": entry.dataset, "status": STATUS_WORDS.get(entry.status, entry.status),
                "target": roles.target, "protected": ", ".join(roles.protected) or "none"}
        flat.update({k: v for k, v in entry.config["model"].items()})
        flat.update({f"split {k}": v for k, v in entry.config["split"].items()})
        flat.update({k: v for k, v in entry.summary.items() if k not in flat})
        settings[f"#{entry.id}"] = {k: "–" if v is None or v == [] else str(v) for k, v in flat.items()}
    table = pd.DataFrame(settings)
    differs = table.nunique(axis=1) > 1
    only_diff = st.toggle("Only what differs", value=True, key="runs.only_diff")
    st.table(md_table(table[differs] if only_diff else table))
    cols = st.columns(2)
    for col, entry in zip(cols, entries):
        with col:
            st.markdown(f"**#{entry.id}** · {md(entry.dataset)}")
            st.graphviz_chart(tree_from_json(entry.tree).to_dot())
