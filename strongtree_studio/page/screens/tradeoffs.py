"""Trade-offs: what fairness costs in accuracy. One optimal tree per fairness notion x bound δ
(x depth x λ), solved one after another in a worker process while the points appear on the
frontier; open any point's tree, download the table, reopen earlier sweeps."""

import streamlit as st

from strongtree_studio.page.navigation import screen
from strongtree_studio.data.choices import ModelConfig
from strongtree_studio.views.explain import FAIRNESS_NOTIONS
from strongtree_studio.views.fairness_view import PROMISE_LEVELS
from strongtree_studio.views.markup import md, md_table, plain_text
from strongtree_studio.stores.run_history import RunStoreError
from strongtree_studio.page.services import job_registry, run_store
from strongtree_studio.page.session import (
    FRONTIER_SEEN,
    GOTO_TREE,
    MODEL,
    ROLES,
    SPLIT,
    SWEEP,
    SWEEP_JOB,
    SWEEP_NOTICE,
    SWEEP_SHOWN,
    SWEEP_STARTED,
    TABLE,
    VIEW_RUN,
    widget_value,
)
from strongtree_studio.page.state import field, run_owner, run_viewer
from strongtree_studio.sweeps.frontier_view import circle_words, frontier_figure
from strongtree_studio.sweeps.sweep_grid import MSG_NO_PROTECTED, SweepChoice, allowed_notions, check_sweep
from strongtree_studio.sweeps.sweep_job import sweep_context, sweep_spec
from strongtree_studio.sweeps.points import (
    MSG_POINT_NEEDS_TABLE,
    MSG_POINT_NO_TREE,
    certified_labels,
    csv_bytes,
    is_promise,
    picked_point,
    point_label,
    point_run,
    points_table,
    shown_table,
)
from strongtree_studio.sweeps.history import SWEEP_STATUS
from strongtree_studio.page.status import job_state_badge, queue_message
from strongtree_studio.views.status_words import POINTS_NOTE, count_of, fmt, status_word

#: The frontier chart's key.
FRONTIER_KEY = "tradeoffs.frontier"
#: Seconds between refreshes of the progress, and of the figure and the table, while a sweep runs.
STATUS_POLL, DRAWING_POLL = 1.0, 2.0
DEPTHS = (1, 2, 3, 4, 5)

MSG_NO_TABLE = "Choose a table with a protected attribute on the Data page first: a sweep measures fairness between its groups."
MSG_NO_SWEEP = ("No sweep yet. **Run sweep** solves one tree per notion, bound δ, depth and λ, one after another in "
                "the background: the points appear here as they are solved, and you can visit other pages meanwhile.")
MSG_NO_POINTS = "No point has finished yet: the first appears as soon as its tree is solved."
PROMISE_NOTE = ("Stars promise their bound on new rows with the level in the table: their training bound is tightened "
                "(\"trained at\"), so they sit left of and below the trees with δ on the training rows only; on the test "
                "rows their gaps should stay within their δ. ")



def promise_chip(level: float | None) -> str:
    """A promise level as a short chip ("training rows only", "90 %"): two fit side by side at 1280 px."""
    return "training rows only" if level is None else f"{round(100 * level)} %"


if GOTO_TREE.pop():
    st.switch_page(screen("tree"))

st.title("Trade-offs")
registry = job_registry()
snapshot = registry.snapshot(SWEEP_JOB.get())
active = snapshot is not None and snapshot.active
table = TABLE.get()
roles = ROLES.get()
model: ModelConfig = MODEL.get()
split = SPLIT.get()

grid, problems = None, []
if table is None:
    st.info(MSG_NO_TABLE, icon=":material/info:")
    st.page_link(screen("data"), label="Go to Data", icon=":material/table_chart:")
else:
    options = allowed_notions(roles)
    with st.container(border=True):
        top = st.columns([3, 2], vertical_alignment="bottom")
        field(top[0].multiselect, "Fairness notions", SWEEP, "notions", options=options,
              format_func=lambda n: FAIRNESS_NOTIONS[n].name, disabled=not options,
              placeholder="Choose one or more" if options else "No protected attribute chosen",
              help="Each notion is a frontier of its own. Conditional statistical parity needs a legitimate factor.")
        field(top[1].multiselect, "Depths", SWEEP, "depths", options=DEPTHS,
              help="Every depth is tried at every bound; the figure shows them all.")
        low = st.columns([1.8, 0.9, 1.6, 2.7], vertical_alignment="bottom")
        field(low[0].text_input, "Bounds δ (percentage points)", SWEEP, "fairness_bounds",
              help="The largest gap each tree may have, in percentage points, separated by commas.")
        field(low[1].text_input, "λ values", SWEEP, "lambdas",
              help="The price of a split (0: none), separated by commas; each is tried at every bound.")
        field(low[2].number_input, "Time limit per point (s)", SWEEP, "time_limit", 1.0, 3600.0, step=1.0,
              format="%.0f",
              help="Each tree stops at this limit; one not proven by then is marked as such.")
        field(low[3].multiselect, "Promise on new rows", SWEEP, "confidences", options=PROMISE_LEVELS,
              format_func=lambda level: plain_text(promise_chip(level)), placeholder="Choose one or more",
              help="Each level is tried at every bound. 'Training rows only': δ holds on the training rows. A "
                   "level such as 90 %: the gap on new rows from the same population stays within δ with that "
                   "confidence; the training bound is tightened to keep it (about 13 fits per point within its "
                   "time limit), or the tree is constant when nothing else can. Stars on the figure.")
    choice: SweepChoice = SWEEP.get()
    if roles is None:
        problems = [MSG_NO_PROTECTED]
    else:
        grid, problems = check_sweep(table.frame, roles, split, model, choice)
    for problem in problems:
        st.error(md(problem), icon=":material/error:")
    if grid is not None:
        st.caption(
            f"{count_of(grid.n_points, 'point')}: {count_of(len(grid.notions), 'notion')} × "
            f"{count_of(len(grid.fairness_bounds), 'bound')} × {count_of(len(grid.depths), 'depth')} × "
            f"{count_of(len(grid.lambdas), 'λ value')}"
            + (f" × {count_of(len(grid.confidences), 'promise level')}" if grid.promises else "")
            + f", and {count_of(grid.n_references, 'tree')} without a "
            f"fairness constraint for reference; at most {fmt(grid.n_total * choice.time_limit, 'seconds')} "
            "in all. Other settings as on the Model page; trees learn from the training rows.")


def start_sweep() -> None:
    """Submit the sweep of the current grid; it is this session's sweep from now on."""
    frame, chosen = TABLE.get(), SWEEP.get()
    checked, _ = check_sweep(frame.frame, ROLES.get(), SPLIT.get(), MODEL.get(), chosen)
    if checked is None:
        return
    context = sweep_context(frame.name, frame.fingerprint, frame.frame, ROLES.get(), SPLIT.get(), MODEL.get(),
                            checked, chosen.time_limit, run_owner())
    SWEEP_JOB.set(job_registry().submit(sweep_spec(context), context))
    SWEEP_STARTED.set({"dataset": frame.name, "fingerprint": frame.fingerprint, "config": context.config()})
    SWEEP_SHOWN.set(None)


def stop_sweep() -> None:
    registry.stop(SWEEP_JOB.get())


buttons = st.columns([1.3, 1, 3.7], vertical_alignment="bottom")
buttons[0].button("Run sweep", key="tradeoffs.start", type="primary", icon=":material/play_arrow:",
                  on_click=start_sweep, disabled=grid is None or active, width="stretch")
buttons[1].button("Stop", key="tradeoffs.stop", icon=":material/stop:", on_click=stop_sweep,
                  disabled=not active or snapshot.stop_requested, width="stretch",
                  help="Ends the sweep: the point being solved keeps its best tree, the finished points are kept.")

# -- which sweep is shown: this session's, or one kept in the history ---------------------------------
try:
    store = run_store()
    kept = store.sweeps(run_viewer())
except RunStoreError as err:
    store, kept = None, None
    st.warning(md(err), icon=":material/warning:")
if kept is not None and len(kept):
    labels = {0: "This session's latest sweep"}
    labels.update({int(r.id): f"Sweep {r.id} · {r.created[5:16]} · {r.dataset} · {count_of(int(r.points), 'point')}"
                                f" · {SWEEP_STATUS.get(r.status, r.status)}" for r in kept.itertuples()})

    def show_sweep() -> None:
        SWEEP_SHOWN.set(widget_value("tradeoffs.shown") or None)

    shown_id = SWEEP_SHOWN.get() if SWEEP_SHOWN.get() in labels else 0
    buttons[2].selectbox("Sweep shown", list(labels), index=list(labels).index(shown_id),
                         format_func=lambda i: plain_text(labels[i]),
                         key="tradeoffs.shown", on_change=show_sweep, label_visibility="collapsed",
                         help="Sweeps are kept in the run history, with this browser or its workspace (Runs page).")
else:
    shown_id = 0

notice = SWEEP_NOTICE.pop()
if notice:
    st.warning(md(notice), icon=":material/warning:")


def sweep_on_screen() -> tuple[list[dict], dict | None, int | None]:
    """The points shown, what they were solved with ({dataset, fingerprint, config}) and the stored id."""
    if shown_id:
        try:
            entry = store.get_sweep(shown_id, run_viewer())
        except RunStoreError as err:
            st.error(md(err), icon=":material/error:")
            return [], None, None
        return entry.points, {"dataset": entry.dataset, "fingerprint": entry.fingerprint,
                              "config": entry.config, "sweep_id": entry.id}, entry.id
    snap = registry.snapshot(SWEEP_JOB.get())
    if snap is None:
        return [], None, None
    entry = snap.outcome.entry if snap.outcome is not None else None
    stored = entry.id if entry is not None else None
    started = SWEEP_STARTED.get()
    if started is not None and entry is not None:  # the stored config holds the references measured at the end
        started = {**started, "config": entry.config}
    return list(snap.main.rows), (None if started is None else {**started, "sweep_id": stored}), stored


def render_status() -> None:
    snap = registry.snapshot(SWEEP_JOB.get())
    if snap is None:
        return
    head, info = st.columns([1, 5], vertical_alignment="center")
    with head:
        job_state_badge(snap)
    done, total = len(snap.main.rows), snap.main.total
    if snap.state == "queued":
        info.markdown(queue_message(snap, registry.max_running))
    else:
        planned = total or (SWEEP_STARTED.get() or {}).get("config", {}).get("grid")
        if total is None and planned:
            total = (len(planned["notions"]) * len(planned["fairness_bounds"])
                     * len(planned.get("confidences") or [None]) + 1) * len(planned["depths"]) * len(planned["lambdas"])
        certified = certified_labels(snap.main.rows) or {"proven optimal": 0}  # in their claims' words
        info.progress(done / total if total else 0.0,
                      text=f"{fmt(done, 'int')} of {count_of(total or 0, 'point')} solved · "
                           + "".join(f"{fmt(n, 'int')} {label} · " for label, n in sorted(certified.items(),
                                                                                          reverse=True))
                           + fmt(snap.elapsed, 'seconds'))
    if active and not snap.active:
        st.rerun()  # the whole page: buttons, outcome and the point list follow


def open_point(meta: dict, row: dict) -> None:
    """Store the point's tree as a run of this session and show it on the Tree page."""
    if not isinstance(row.get("tree"), str):
        SWEEP_NOTICE.set(MSG_POINT_NO_TREE.format(point=row["point"], reason=row.get("error") or
                                                  status_word(row["status"]).sentence))
        return
    loaded = TABLE.get()
    if loaded is None or loaded.fingerprint != meta["fingerprint"]:
        SWEEP_NOTICE.set(MSG_POINT_NEEDS_TABLE.format(dataset=meta["dataset"]))
        return
    try:
        entry = point_run(meta["config"], meta["dataset"], meta["fingerprint"], row, loaded.frame, run_owner(),
                          meta.get("sweep_id"))
        run_id = run_store().save(entry)
    except (RunStoreError, ValueError) as err:
        SWEEP_NOTICE.set(str(err))
        return
    VIEW_RUN.set(run_id)
    GOTO_TREE.set(True)


def render_points() -> None:
    rows, meta, _ = sweep_on_screen()
    if not rows:
        if meta is not None and (shown_id or active):
            st.caption(MSG_NO_POINTS)
        return
    points = points_table(rows)
    bounds = (meta or {}).get("config", {}).get("grid", {}).get("fairness_bounds", [])
    references = (meta or {}).get("config", {}).get("references", [])
    clicked = st.plotly_chart(frontier_figure(points, [float(b) for b in bounds], references), width="stretch",
                              config={"displayModeBar": False}, key=FRONTIER_KEY, on_select="rerun",
                              selection_mode="points")
    picked = picked_point(clicked)
    seen = (shown_id, picked)
    if picked is None:
        FRONTIER_SEEN.pop()  # no selection (e.g. back from the Tree page): the next click counts
    elif seen != FRONTIER_SEEN.get():
        # A click on a point opens its tree once the sweep has ended (a click is acted on once).
        FRONTIER_SEEN.set(seen)
        row = {int(r["point"]): r for r in points.to_dict("records")}.get(picked)
        if row is not None and meta is not None and not active:
            open_point(meta, row)
            st.rerun()
    st.caption("Accuracy against the measured gap of each point's own notion: one colour per notion, the line "
               "joins the training frontier (no other point is both more accurate and fairer). Filled circles are "
               f"{circle_words(points)}; open diamonds are the best trees found before the time limit or Stop. Dotted "
               "lines mark the bounds δ; the dashed line is the accuracy of predicting the majority class; crosses "
               "are the trees without a fairness constraint and open squares CART of the same depth, placed at each "
               "notion's gap. On the "
               "test rows each point's bar is the 95 % interval of its gap. "
               + (PROMISE_NOTE if "fairness_confidence" in points and points.apply(is_promise, axis=1).any() else "")
               + "Click a point to open its tree. " + POINTS_NOTE)
    # A table that wraps its cells (a data grid would cut them at a projector's width).
    st.table(md_table(shown_table(points).set_index("point")), height=min(40 + 31 * len(points), 460))


if shown_id == 0 and snapshot is not None:
    st.fragment(run_every=STATUS_POLL if active else None)(render_status)()
    if not active:
        if snapshot.main.error:
            st.error(md(snapshot.main.error), icon=":material/error:")
        elif snapshot.state == "failed" and snapshot.message:
            st.error(md(snapshot.message), icon=":material/error:")
        elif snapshot.message:
            st.warning(md(snapshot.message), icon=":material/warning:")
        if snapshot.outcome is not None and snapshot.outcome.error:
            st.warning(md(snapshot.outcome.error), icon=":material/warning:")
elif shown_id == 0:
    st.info(MSG_NO_SWEEP, icon=":material/info:")
st.fragment(run_every=DRAWING_POLL if active and shown_id == 0 else None)(render_points)()


if not (shown_id == 0 and active):
    rows, meta, stored_id = sweep_on_screen()
    if rows and meta is not None:
        points = points_table(rows)
        by_point = {int(r["point"]): r for r in points.to_dict("records")}
        chosen = st.selectbox("Point", list(by_point), format_func=lambda p: plain_text(point_label(by_point[p])),
                             key="tradeoffs.point", help="Its tree opens on the Tree page (and is kept as a run).")
        action, download, _ = st.columns([1, 1, 2])
        action.button("Open its tree", key="tradeoffs.open", icon=":material/account_tree:", width="stretch",
                      on_click=open_point, args=(meta, by_point.get(chosen, {})), disabled=chosen is None)
        name = f"sweep_{stored_id}.csv" if stored_id is not None else "sweep.csv"
        download.download_button("Table (CSV)", csv_bytes(points, meta), file_name=name, mime="text/csv",
                                 key="tradeoffs.csv", icon=":material/download:", width="stretch")
