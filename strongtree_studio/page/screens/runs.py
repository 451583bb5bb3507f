"""Runs: the history of solves; reopen one, compare two, share, delete.

A run belongs to the browser that solved it (a reload keeps it: see
:mod:`strongtree_studio.page.restore`), or to the workspace the user named (see
:mod:`strongtree_studio.stores.run_history`); other browsers see it only when shared.
"""

import pandas as pd
import streamlit as st

from strongtree_studio.page.navigation import screen
from strongtree_studio.stores import run_history as runs
from strongtree_studio.data.choices import ENCODINGS
from strongtree_studio.views.explain import (
    FAIRNESS_NOTIONS,
    MSG_HISTORY_KEPT,
    MSG_LEGACY_HISTORY,
    MSG_NO_RUNS,
    MSG_NOT_YOURS,
    OWNERSHIP_HELP,
)
from strongtree_studio.views.markup import md, md_table, plain_text
from strongtree_studio.stores.run_history import RunStoreError, legacy_history_logged
from strongtree_studio.page.services import run_store
from strongtree_studio.page.shown import roles_from_config, tree_from_json
from strongtree_studio.page.session import (
    RUNS_NOTICE,
    SESSION_OWNER,
    SWEEP_SHOWN,
    VIEW_RUN,
    WORKSPACE,
    set_widget_value,
    widget_value,
)
from strongtree_studio.page.state import run_owner, run_viewer, workspace_name
from strongtree_studio.sweeps.history import sweeps_table
from strongtree_studio.page.tree_chart import size_control, tree_chart
from strongtree_studio.views.tree_view import PAIR_MORE_RUNS, SIZE_NOTES, paired_fit
from strongtree_core.tree.claim import claim
from strongtree_core.vocabulary import setting_name
from strongtree_studio.views.status_words import backend_words, fmt, status_word

st.title("Runs")

try:
    store = run_store()
except RunStoreError as err:
    st.error(md(err), icon=":material/error:")
    st.stop()


def set_workspace() -> None:
    WORKSPACE.set(workspace_name(widget_value("runs.workspace", "")))
    set_widget_value("runs.pick", [])


with st.container(border=True):
    st.markdown(OWNERSHIP_HELP)
    left, right = st.columns([1, 2], vertical_alignment="bottom")
    left.text_input("Workspace", value=WORKSPACE.get(), key="runs.workspace", on_change=set_workspace,
                    max_chars=60, placeholder="none: runs stay with this browser",
                    help="Runs solved while a workspace is set are stored in it. Clear the box to stop using it.")
    workspace = WORKSPACE.get()
    right.caption(f"New runs are stored in the workspace **{md(workspace)}**." if workspace
                  else "New runs belong to this browser only.")

viewer = run_viewer()
try:
    history = store.table(viewer)
except RunStoreError as err:
    st.error(md(err), icon=":material/error:")
    st.stop()

st.caption(MSG_HISTORY_KEPT)  # no path of the server is shown to a visitor
if runs.LEGACY_DB.exists() and store.path.resolve() != runs.LEGACY_DB.resolve():
    st.caption(MSG_LEGACY_HISTORY)
    legacy_history_logged(runs.LEGACY_DB)
notice = RUNS_NOTICE.pop()
if notice:
    st.warning(md(notice), icon=":material/warning:")
try:
    sweeps = store.sweeps(viewer)
except RunStoreError as err:
    sweeps = None
    st.warning(md(err), icon=":material/warning:")
if sweeps is not None and len(sweeps):
    st.markdown("##### Sweeps")
    st.table(md_table(sweeps_table(sweeps)))
    pick, open_col = st.columns([3, 1.4], vertical_alignment="bottom")
    chosen_sweep = pick.selectbox("Sweep", list(sweeps["id"].astype(int)), key="runs.sweep",
                                  format_func=lambda i: plain_text(f"Sweep {fmt(i, 'int')}"))
    if open_col.button("Open on Trade-offs", key="runs.open_sweep", icon=":material/show_chart:", width="stretch",
                       help="Shows its frontier, its points and their trees on the Trade-offs page."):
        SWEEP_SHOWN.set(int(chosen_sweep))
        st.switch_page(screen("tradeoffs"))
    st.markdown("##### Solves")
if history.empty:
    st.info(MSG_NO_RUNS, icon=":material/info:")
    st.stop()


#: How each setting compared side by side reads (its name is the one name of the setting, SETTING_NAMES).
SETTING_KINDS = {
    "depth": "int", "formulation": None, "objective": None, "fairness": None, "fairness_bound": "points",
    "fairness_confidence": "percent", "time_limit": "seconds", "regularization": "number", "min_leaf": "int",
    "n_buckets": "int", "max_thresholds": "int", "encoding": None, "solver": None, "allow_protected_splits": None,
    "max_branching": "int", "max_features_used": "int", "min_recall": "percent", "min_precision": "percent",
    "min_specificity": "percent",
}
#: Settings and results compared side by side: label and how each value reads.
COMPARED = {
    **{name: (setting_name(name), kind) for name, kind in SETTING_KINDS.items()},
    "split test_size": ("test share", "percent"), "split seed": ("random seed", None),
    "split stratify": ("stratified", None),
    "objective_value": ("best tree", "number"), "gap": ("optimality gap", "percent"),
    "runtime": ("solve time", "seconds"), "backend": ("solver used", None),
    "train_accuracy": ("training accuracy", "percent"), "test_accuracy": ("test accuracy", "percent"),
    "train_worst_gap": ("training gap", "points"), "test_worst_gap": ("test gap", "points"),
}


def compare_values(entry) -> dict[str, str]:
    """One run's settings and results in words, for the side-by-side table."""
    roles = roles_from_config(entry.config)
    status = claim(tree_from_json(entry.tree).record).short if entry.tree else status_word(entry.status).label
    flat = {"table": entry.dataset, "status": status, "target": roles.target,
            "positive class": "none" if roles.pos_label is None else str(roles.pos_label),
            "protected": ", ".join(roles.protected) or "none", "legitimate": ", ".join(roles.legitimate) or "none",
            "ignored": ", ".join(roles.ignored) or "none"}
    values = dict(entry.config["model"])
    # the amount that the numeric coding does not use reads "–" (older runs knew only buckets)
    values.pop("n_buckets" if values.get("encoding") == "data" else "max_thresholds", None)
    values.update({f"split {k}": v for k, v in entry.config["split"].items()})
    summary = dict(entry.summary)
    summary["objective_value"] = summary.pop("objective", None)
    values.update(summary)
    for key, (label, kind) in COMPARED.items():
        value = values.get(key)
        if key == "fairness":
            value = ", ".join(FAIRNESS_NOTIONS[n].name for n in (value or []) if n in FAIRNESS_NOTIONS) or "none"
        elif key == "backend":
            value = backend_words(value) if value else None
        elif key in ("fairness_bound", "fairness_confidence") and not values.get("fairness"):
            value = None
        if isinstance(value, bool):
            flat[label] = "yes" if value else "no"
        elif value is None or value == []:
            flat[label] = "–"
        elif kind is not None:
            flat[label] = fmt(value, kind)
        else:
            flat[label] = {"auto": "automatic", "flow": "FlowOCT", "benders": "BendersOCT",
                           **ENCODINGS}.get(value, str(value))
    return flat


def owner_words(owner: str) -> str:
    """Whose a run is, from this browser's point of view."""
    if owner == SESSION_OWNER.get():
        return "this browser"
    if owner == run_owner() and owner.startswith("workspace:"):
        return "this workspace"
    return "everyone (older run)" if not owner else "another browser"


def short_time(created: str) -> str:
    """ "2026-11-26 08:40:12" as "11-26 08:40" (the year and seconds add little in a list)."""
    return created[5:16] if len(created) >= 16 else created


def ratio_pair(train, test, kind: str) -> str:
    return f"{fmt(train, kind)} / {fmt(test, kind)}" if test is not None and test == test else fmt(train, kind)


labels = {int(r.id): f"#{r.id} · {short_time(r.created)} · {r.dataset} · depth {r.depth} · {r.fairness} · "
                     f"{owner_words(r.owner)}" + (", shared" if r.shared else "") for r in history.itertuples()}
mine = {int(r.id) for r in history.itertuples() if r.owner in viewer}
shared = {int(r.id) for r in history.itertuples() if r.shared}


def column(name: str):
    return history[name] if name in history.columns else pd.Series([None] * len(history), index=history.index)


shown_history = pd.DataFrame({
    "run": history["id"].astype(int),
    "table": history["dataset"],
    "depth": column("depth"),
    "fairness": [f if f == "none" or d is None or d != d else f"{f} ≤ {fmt(d, 'points')}"
                 for f, d in zip(column("fairness").fillna("none"), column("fairness_bound"))],
    "status": [said.short for said in history["claim"]],
    "accuracy train / test": [ratio_pair(a, b, "percent") for a, b in zip(column("train_accuracy"),
                                                                            column("test_accuracy"))],
    "gap train / test": [ratio_pair(a, b, "points") for a, b in zip(column("train_worst_gap"),
                                                                      column("test_worst_gap"))],
    "time": column("runtime").map(lambda v: fmt(v, "seconds")),
})
# A table that wraps its cells (a data grid would cut them at a projector's width).
st.table(md_table(shown_history.set_index("run")), height=min(48 + 64 * len(shown_history), 460))  # rows of two lines
st.caption("Gap: the largest measured gap among the fairness notions the run constrained, in percentage points. "
           "The list below says when each run was solved and whose it is; compare two for every setting.")

picked = [p for p in st.multiselect("Select one run to open, two to compare, or runs to share or delete",
                                    list(labels), format_func=lambda i: plain_text(labels[i]), key="runs.pick")
          if p in labels]


def open_run(run_id: int) -> None:
    VIEW_RUN.set(run_id)


def change_runs(action: str, run_ids: list[int]) -> None:
    """Share, unshare, move to the workspace or delete ``run_ids`` (runs of this session or workspace)."""
    for run_id in run_ids:
        try:
            if action == "delete":
                store.delete(run_id, viewer)
                if VIEW_RUN.get() == run_id:
                    VIEW_RUN.set(None)
            elif action == "move":
                store.set_owner(run_id, run_owner(), viewer)
            else:
                store.set_shared(run_id, action == "share", viewer)
        except RunStoreError as err:
            RUNS_NOTICE.set(str(err))
    if action == "delete":
        set_widget_value("runs.pick", [])


own_pick = bool(picked) and set(picked) <= mine
share_action = "unshare" if picked and set(picked) <= shared else "share"
cols = st.columns(5)
cols[0].button("Open", key="runs.open", icon=":material/open_in_new:", disabled=len(picked) != 1,
               on_click=open_run, args=(picked[0] if picked else None,), width="stretch")
cols[1].button("Compare", key="runs.compare", icon=":material/compare:", disabled=len(picked) != 2, width="stretch")
cols[2].button("Stop sharing" if share_action == "unshare" else "Share", key="runs.share", icon=":material/share:",
               disabled=not own_pick, on_click=change_runs, args=(share_action, list(picked)), width="stretch",
               help="A shared run can be opened by every session; only its own session or workspace can delete it.")
cols[3].button("To workspace", key="runs.move", icon=":material/drive_file_move:",
               disabled=not own_pick or not workspace, on_click=change_runs, args=("move", list(picked)),
               width="stretch",
               help="Keep the selected runs of this browser in the workspace, where other browsers can open them.")
cols[4].button("Delete", key="runs.delete", icon=":material/delete:", disabled=not own_pick,
               on_click=change_runs, args=("delete", list(picked)), width="stretch")
if picked and not own_pick:
    st.caption(MSG_NOT_YOURS)

view_run = VIEW_RUN.get()
if view_run is not None and view_run in labels:
    st.success(f"Showing {md(labels[view_run])} on the Tree and Fairness pages.", icon=":material/visibility:")
    x, y, _ = st.columns([1, 1, 2])
    x.page_link(screen("tree"), label="Open its tree", icon=":material/account_tree:")
    y.page_link(screen("fairness"), label="Its fairness & performance", icon=":material/balance:")

if len(picked) == 2:
    try:
        entries = [store.get(run_id, viewer) for run_id in picked]
    except RunStoreError as err:
        st.error(md(err), icon=":material/error:")
        st.stop()
    st.markdown("##### Side by side")
    settings = {}
    for entry in entries:
        settings[f"#{entry.id}"] = compare_values(entry)
    table = pd.DataFrame(settings)
    differs = table.nunique(axis=1) > 1
    only_diff = st.toggle("Only what differs", value=True, key="runs.only_diff")
    st.table(md_table(table[differs] if only_diff else table))
    size = size_control(st, "runs.tree_size")
    trees = [tree_from_json(entry.tree) for entry in entries]
    # Fitted to the panels, the trees open the levels that read at 10 px or more, one above the other when
    # side by side they would not.
    side_by_side, collapsed, words = (paired_fit(trees, [f"#{e.id}" for e in entries], PAIR_MORE_RUNS)
                                      if size == "fit" else (True, [[], []], SIZE_NOTES[size]))
    st.caption(words)  # once, above both panels, so the two drawings start level (no user text in it)
    cols = st.columns(2, gap="medium") if side_by_side else [st.container(), st.container()]
    for i, (col, entry, tree) in enumerate(zip(cols, entries, trees)):
        with col:
            st.markdown(f"**#{entry.id}** · {md(entry.dataset)}")
            tree_chart(tree, f"runs-{i}", size=size, collapsed=collapsed[i], compact=True, note=False)
