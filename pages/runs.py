"""Runs: the history of solves; reopen one, compare two, delete."""

import pandas as pd
import streamlit as st

from studio.runs import RunStoreError
from studio.services import run_store
from studio.shown import roles_from_config, tree_from_json
from studio.views import STATUS_WORDS, fmt

st.title("Runs")

try:
    store = run_store()
    history = store.table()
except RunStoreError as err:
    st.error(str(err), icon=":material/error:")
    st.stop()

st.caption(f"Every finished solve is kept in {store.path}.")
if history.empty:
    st.info("No runs yet: each finished solve is stored here.", icon=":material/info:")
    st.stop()

labels = {int(r.id): f"#{r.id} · {r.created} · {r.dataset} · depth {r.depth} · {r.fairness}" for r in history.itertuples()}

#: History columns shown, in order, with their headers and formats.
COLUMNS = {
    "id": ("run", None), "created": ("when", None), "dataset": ("table", None), "depth": ("depth", None),
    "fairness": ("fairness", None), "delta": ("δ", "number"), "status": ("status", None),
    "train_accuracy": ("train accuracy", "percent"), "test_accuracy": ("test accuracy", "percent"),
    "train_worst_gap": ("train gap", "gap"), "test_worst_gap": ("test gap", "gap"),
    "runtime": ("solve time", "seconds"), "backend": ("backend", None), "gap": ("optimality gap", "percent"),
}
shown_history = history[[c for c in COLUMNS if c in history.columns]].copy()
for column, (_, kind) in COLUMNS.items():
    if kind is not None and column in shown_history:
        shown_history[column] = shown_history[column].map(lambda v, k=kind: fmt(v, k))
st.dataframe(shown_history.rename(columns={c: h for c, (h, _) in COLUMNS.items()}), hide_index=True)
st.caption("Train and test gap: the largest measured gap among the fairness notions the run constrained.")

picked = st.multiselect("Select one run to open or delete, or two to compare", list(labels), format_func=labels.get,
                        max_selections=2, key="runs.pick")


def open_run(run_id: int) -> None:
    st.session_state["view_run"] = run_id


def delete_runs(run_ids: list[int]) -> None:
    for run_id in run_ids:
        store.delete(run_id)
        if st.session_state["view_run"] == run_id:
            st.session_state["view_run"] = None
    st.session_state["runs.pick"] = []


a, b, c, _ = st.columns([1, 1, 1, 3])
a.button("Open", key="runs.open", icon=":material/open_in_new:", disabled=len(picked) != 1,
         on_click=open_run, args=(picked[0] if picked else None,), width="stretch")
b.button("Compare", key="runs.compare", icon=":material/compare:", disabled=len(picked) != 2, width="stretch")
c.button("Delete", key="runs.delete", icon=":material/delete:", disabled=not picked,
         on_click=delete_runs, args=(list(picked),), width="stretch")

view_run = st.session_state["view_run"]
if view_run is not None and view_run in labels:
    st.success(f"Showing {labels[view_run]} on the Tree and Fairness pages.", icon=":material/visibility:")
    x, y, _ = st.columns([1, 1, 2])
    x.page_link("pages/tree.py", label="Open its tree", icon=":material/account_tree:")
    y.page_link("pages/fairness.py", label="Its fairness & performance", icon=":material/balance:")

if len(picked) == 2:
    entries = [store.get(run_id) for run_id in picked]
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
    st.table(table[differs] if only_diff else table)
    cols = st.columns(2)
    for col, entry in zip(cols, entries):
        with col:
            st.markdown(f"**#{entry.id}** · {entry.dataset}")
            st.graphviz_chart(tree_from_json(entry.tree).to_dot())
