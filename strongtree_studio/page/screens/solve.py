"""Solve: start the solve in a worker process, watch the best tree rise and the bound
fall, read the solver's steps, stop it."""

import streamlit as st

from strongtree_core.tree.claim import GAP_ZERO, bound_and_gap, bound_help, claim, gap_help
from strongtree_studio.page import mio_live_panel
from strongtree_studio.page.navigation import screen
from strongtree_studio.page.actions import start_demo, start_solve
from strongtree_studio.data.choices import FORMULATIONS, OBJECTIVES, SOLVERS, ModelConfig, check_model, check_roles, split_table
from strongtree_studio.data.demo_tables import DEMO
from strongtree_studio.views.explain import FAIRNESS_NOTIONS, MSG_LAST_TREE_KEPT, MSG_SOLVE_NO_TABLE
from strongtree_studio.views.fairness_view import promise_words
from strongtree_studio.jobs.job_registry import JobSnapshot
from strongtree_studio.views.markup import md
from strongtree_studio.data.roles import class_values
from strongtree_studio.page.services import job_registry
from strongtree_studio.page.shown import lost_solve, tree_from_json
from strongtree_studio.jobs import preparing
from strongtree_studio.page.session import (
    DEMO_WAITING,
    JOB_ID,
    JOB_SETTINGS,
    MODEL,
    ROLES,
    SIDEBAR_ACTIVE,
    SIDEBAR_STATE,
    SPLIT,
    TABLE,
)
from strongtree_studio.views.stale import stale_message
from strongtree_studio.page.state import current_settings
from strongtree_studio.page.tree_chart import size_control, tree_chart
from strongtree_studio.views.tree_view import FIT_NOTE_NO_COLLAPSE, SIZE_NOTES, legend_html, readable_fit
from strongtree_studio.page.status import (
    closed_points,
    drawn_point,
    job_ending,
    job_state_badge,
    job_state_key,
    progress_view,
    queue_message,
    series_legend_html,
    stages_words,
)
from strongtree_studio.views.status_words import (
    backend_words,
    bound_words,
    fmt,
    objective_value,
    objective_words,
    page_words,
    route_words,
)

def _in_line(choice: str) -> str:
    """A choice of the Model page inside the settings' line: "automatic", a name as it is written ("FlowOCT", not
    "flowoct"; "HiGHS", not "highs")."""
    return choice.lower() if choice == "Automatic" else choice


#: The banner of each claim colour: green alone is a success; blue (a certificate over kept thresholds) an
#: information; orange and red (not proven, a constant tree, no tree) a warning.
BANNERS = {"green": st.success, "blue": st.info}

#: Seconds between refreshes of the live numbers, and of the chart, the log and the tree.
PANEL_POLL = 1.0
DRAWING_POLL = 3.0

# The title and the buttons share one row: on a projector's 1280x720 the banner of a certificate, the
# numbers and the whole progress chart then fit the first screen (the buttons are filled in below).
title, *button_slots = st.columns([2, 1, 1, 1.2], vertical_alignment="center")
title.title("Solve")


def wait_for_the_compiled_code() -> None:
    """The live demo on a fresh machine: what it waits for and how far that is, until it can start."""
    if preparing.waiting():
        st.info(f"The live demo starts when the exact search is ready. {preparing.status().words()}",
                icon=":material/hourglass_top:")
        return
    DEMO_WAITING.set(False)
    start_solve()
    st.rerun()


if DEMO_WAITING.get():
    st.fragment(run_every=1.0)(wait_for_the_compiled_code)()
    st.stop()
registry = job_registry()
snapshot = registry.snapshot(JOB_ID.get())
table = TABLE.get()


def stop_solve() -> None:
    registry.stop(JOB_ID.get())


def draw_buttons(problems: list[str]) -> None:
    """Solve, Stop and Live demo in the title's row (Solve needs a table without problems)."""
    button_slots[0].button("Solve", key="solve.start", type="primary", icon=":material/play_arrow:",
                           on_click=start_solve, disabled=table is None or bool(problems) or active, width="stretch")
    button_slots[1].button("Stop", key="solve.stop", icon=":material/stop:", on_click=stop_solve,
                           disabled=not active or snapshot.stop_requested, width="stretch",
                           help="Ends the solve and keeps the best tree found so far.")
    button_slots[2].button("Live demo", key="solve.demo", icon=":material/slideshow:", on_click=start_demo,
                           disabled=active, width="stretch", help=DEMO.summary)


# Also while the sidebar, drawn just before, still showed the solve running: the
# progress fragment then sees it ended and reruns, so page and sidebar agree.
active = snapshot is not None and (snapshot.active or SIDEBAR_ACTIVE.get())
if table is None:
    draw_buttons([])
    st.info(MSG_SOLVE_NO_TABLE, icon=":material/info:")
    st.page_link(screen("data"), label="Go to Data", icon=":material/table_chart:")
    if snapshot is None:
        _, server_went_away = lost_solve()
        if server_went_away:
            st.warning(server_went_away, icon=":material/cloud_off:")
        mio_live_panel.section()
        st.stop()

roles = ROLES.get()
split = SPLIT.get()
model = MODEL.get()

problems: list[str] = []
if table is not None:
    frame = table.frame
    problems = check_roles(frame, roles, model.allow_protected_splits)
    if not problems:
        problems = check_model(model, roles, len(class_values(frame, roles.target)))
    rows = ""
    if not problems:
        parts = split_table(frame, roles, split)
        rows = f" · {fmt(len(parts.train), 'int')} training rows · {fmt(len(parts.test), 'int')} test rows"
    fairness = ", ".join(FAIRNESS_NOTIONS[n].name for n in model.fairness)
    fair_words = f"{fairness} within {fmt(model.fairness_bound, 'points')}" if fairness else "no fairness constraint"
    if fairness and model.fairness_confidence is not None:
        fair_words += f", {promise_words(model.fairness_confidence)}"
    positive = f" (positive class {md(roles.pos_label)})" if roles.pos_label is not None else ""
    st.markdown(
        f"**{md(table.name)}** · target {md(roles.target)}{positive}{rows}  \n"
        f"Depth {model.depth} · {OBJECTIVES[model.objective].lower()} · {fair_words} · "
        + (f"{model.coding_words()} · " if model.encoding != "thermometer" else "") +
        f"{_in_line(FORMULATIONS[model.formulation])} route, {_in_line(SOLVERS[model.solver])} solver · "
        f"time limit {fmt(model.time_limit, 'seconds')}"
    )
for problem in problems:
    st.error(md(problem), icon=":material/error:")

if table is not None:
    draw_buttons(problems)

if snapshot is None:
    _, server_went_away = lost_solve()  # this tab's solve ran on a server that has stopped since
    if server_went_away:
        st.warning(server_went_away, icon=":material/cloud_off:")
    st.caption("The solve runs in its own process: you can visit other pages meanwhile; it keeps going.")
    mio_live_panel.section()
    st.stop()

job_settings = JOB_SETTINGS.get()
stale = stale_message(job_settings, current_settings()) if job_settings else ""
if stale:
    st.warning(stale, icon=":material/history:")
# The words below describe the solve on screen, which may predate the current settings.
model = ModelConfig.from_dict(job_settings["config"]["model"]) if job_settings else model


def reported(snap: JobSnapshot) -> list[dict]:
    """The progress points of the solve, closed once it has ended by one point in the claim's words
    ("final: Optimal over kept thresholds"): the last of a fit made of several fits too."""
    return closed_points(snap.main.history, tree_from_json(snap.main.result).record if snap.main.result else None)


def explored_words() -> str:
    if model.formulation == "auto":
        return "partial trees the exact search has visited"
    return "branch-and-bound nodes of the MIO solver"


def solver_seconds(snap: JobSnapshot, points: list[dict]) -> float:
    """The one elapsed time on the page: the solver's clock, which the chart and the log count
    too; once the tree is final, the time of its last point (the solve's own time)."""
    if snap.main.result is not None and points:
        return points[-1]["elapsed"]
    if snap.main.now is not None:
        return snap.main.now
    return snap.elapsed


def render_numbers() -> None:
    snap = registry.snapshot(JOB_ID.get())
    if snap is None:
        return
    points = reported(snap)
    drawn = [p for p in points if drawn_point(p)]  # a refit on part of the rows counts other rows: not shown here
    latest = drawn[-1] if drawn else None
    stage = next((p.get("stage") for p in reversed(points) if p.get("stage")), "")
    if snap.main.result is None:  # once the tree is final, the banner above says how the solve ended
        head, info = st.columns([1, 4], vertical_alignment="center")
        with head:
            job_state_badge(snap)
        if snap.state == "queued":
            info.markdown(queue_message(snap, registry.max_running))
        elif snap.active and stage:
            info.caption(md(f"A promise on new rows is several fits in one solve: now {stage}."))
        elif snap.active:
            info.caption(f"The best tree rises, the bound falls; when they meet, {GAP_ZERO}.")
    cols = st.columns(5)
    cols[0].metric("Elapsed", fmt(solver_seconds(snap, points), "seconds"),
                   help="Time the solver has worked on this tree (the chart and the log count the same clock).")
    cols[1].metric("Best tree", fmt(latest["objective"] if latest else None),
                   help=md("The objective of the best tree found so far: "
                           + objective_words(model.objective, model.regularization) + "."))
    # Once the tree is final, the cards say what its bound covers (the claim's scope); a constant tree a promise
    # left shows none (the last stage's bound holds over constant trees only).
    final = tree_from_json(snap.main.result).record if snap.main.result is not None else None
    constant = final is not None and claim(final).state == "constant"
    # A proof that no tree fits has no tree to bound: the last bound the search reported says nothing more.
    no_bound = constant or snap.main.record is not None
    cols[2].metric("Bound", fmt(None) if no_bound else bound_words(latest["bound"]) if latest else fmt(None),
                   help=md(bound_help(final)))
    cols[3].metric("Gap", fmt(None) if no_bound else fmt(latest["gap"] if latest else None, "percent"),
                   help=md(gap_help(final)))
    cols[4].metric("Explored", fmt(latest["nodes"] if latest else None, "int"), help=md(explored_words().capitalize()))
    shown_state = SIDEBAR_STATE.get()
    if (active and not snap.active) or (shown_state is not None and shown_state != job_state_key(snap)) \
            or (snap.main.result is not None and not banner_drawn):
        st.rerun()  # the whole page: the banner, the sidebar, the buttons and the outcome follow the new state


def render_progress() -> None:
    snap = registry.snapshot(JOB_ID.get())
    points = reported(snap) if snap is not None else []
    if not points:
        if snap is not None and snap.active:
            st.caption("The first numbers appear as soon as the solver reports.")
        return
    view = progress_view(snap, points, snap.main.now if snap.active and snap.main.result is None else None)
    chart, log = st.columns([3, 2], gap="medium")
    with chart:
        st.markdown(f"**Best tree and bound**{series_legend_html()}", unsafe_allow_html=True)
        if view.objective_chart is not None:
            st.vega_lite_chart(spec=view.objective_chart, width="stretch", height=210)
        if view.gap_chart is not None:
            st.vega_lite_chart(spec=view.gap_chart, width="stretch", height=130)
        stages = stages_words(points, snap.main.now if snap.active and snap.main.result is None else None)
        st.caption(f"Values count {objective_words(model.objective, model.regularization)}. A bound far above the "
                   f"best tree runs along the top edge. The gap reaches 0 when {GAP_ZERO}."
                   + (f" One solve in stages (shaded; the refits on parts of the rows count other rows and are not "
                      f"drawn): {md(stages)}." if stages else ""))
    with log, st.container(key="solve-log"):  # its times on one line each (style.py)
        st.markdown("**What the solver did** (newest first)")
        st.table(view.log, hide_index=True)
        st.caption(f"Explored: {explored_words()}.")


def render_tree() -> None:
    snap = registry.snapshot(JOB_ID.get())
    best = snap.main.best_tree if snap is not None else None
    if best is not None:
        tree = tree_from_json(best)
        words, sizes = st.columns([3, 2], vertical_alignment="center")
        size = size_control(sizes, "solve.tree_size", label_visibility="collapsed")  # one row: the tree stays high
        # Fitted to the panel, a deep tree opens as many levels as read at 10 px or more (as on the Tree page).
        collapsed, levels_open = readable_fit(tree, compact=True) if size == "fit" else ([], "")
        words.caption(("The final tree. " if snap.main.result else "The best tree so far; it is redrawn as the "
                       "solver finds better ones. ")  # no user text in these; this page has no control to collapse subtrees
                      + (levels_open or (FIT_NOTE_NO_COLLAPSE if size == "fit" else SIZE_NOTES[size])))
        tree_chart(tree, "solve", size=size, collapsed=collapsed, compact=True, note=False)
        st.markdown(legend_html(tree, answers=True, collapsed=bool(collapsed)), unsafe_allow_html=True)
    elif snap is not None and snap.active:
        st.caption("The first tree appears as soon as the solver has one.")


def render_banner() -> bool:
    """How the solve ended, in one banner, as soon as its tree is final (the comparison tree may
    still be solving); False when there is nothing more to show."""
    if job_ending(snapshot):
        return False
    outcome = snapshot.outcome
    if snapshot.main.result is not None:
        record = tree_from_json(snapshot.main.result).record
        said = claim(record)
        value = objective_value(record.objective, model.objective, model.regularization, record.n_rows)
        stored = f" · run {outcome.entry.id}" if outcome is not None and outcome.entry is not None and \
            outcome.entry.id is not None else ""
        text = (f"**{said.short}**{stored} · best tree {value} · {route_words(record.method, record.backend)}"
                f"  \n{md(said.words)}")
        BANNERS.get(said.colour, st.warning)(text, icon=said.icon)
        if snapshot.message:
            st.warning(md(snapshot.message), icon=":material/warning:")
    elif outcome is not None and outcome.entry is not None:  # the worker ended early: its last tree is kept
        stored = f" as run {outcome.entry.id}" if outcome.entry.id is not None else ""
        st.warning(MSG_LAST_TREE_KEPT.format(stored=stored), icon=":material/warning:")
    if outcome is not None and outcome.error:
        st.warning(md(outcome.error), icon=":material/warning:")
    return True


def render_details() -> None:
    """Under the drawings: how the tree was solved, the comparison tree, and where to look next."""
    outcome = snapshot.outcome
    if snapshot.main.result is not None:
        record = tree_from_json(snapshot.main.result).record
        with st.expander("How it was solved", icon=":material/info:"):
            size = (f"{fmt(record.n_variables, 'int')} variables and {fmt(record.n_constraints, 'int')} constraints"
                    if record.method in ("flow", "benders") else "no MIO model was needed")
            st.markdown(f"**Route:** {md(record.formulation)}  \n"
                        f"**Solver:** {md(backend_words(record.backend))}; {size}  \n"
                        f"**Rows:** {fmt(record.n_rows, 'int')} training rows in {fmt(record.n_patterns, 'int')} "
                        f"distinct patterns  \n**Bound:** {' · '.join(bound_and_gap(record))}"
                        f"  \n**Why this route:** {md(record.choice)}")
            if record.message:
                st.caption(md(page_words(record.message)))
        baseline = snapshot.baseline
        if snapshot.active:
            st.caption("Now solving the tree without fairness constraints, for the comparison on the Fairness page; "
                       "the run is stored when it is done.")
        elif baseline is not None and baseline.error:
            st.caption(f"The comparison tree without fairness constraints could not be solved: {md(baseline.error)}")
    if outcome is not None and outcome.entry is not None:
        a, b, _ = st.columns([1, 1, 2])
        a.page_link(screen("tree"), label="Explore the tree", icon=":material/account_tree:")
        b.page_link(screen("fairness"), label="Fairness & performance", icon=":material/balance:")


# The banner first (one line of status), then the numbers and the chart, so that on a
# projector's 1280x720 the chart stays in the first screen while solving and after;
# the details of the route and the links come under the drawings.
banner_drawn = snapshot.main.result is not None or not active
more = render_banner() if banner_drawn else True
# The numbers refresh fastest; the drawings less often, in fragments of their own
# (a redraw in the numbers' fragment would stretch their refresh interval). The
# progress and the tree share the space under the numbers, so both open above the fold.
st.fragment(run_every=PANEL_POLL if active else None)(render_numbers)()
progress_tab, tree_tab = st.tabs([":material/show_chart: Progress", ":material/account_tree: Best tree"])
with progress_tab:
    st.fragment(run_every=DRAWING_POLL if active else None)(render_progress)()
with tree_tab:
    st.fragment(run_every=DRAWING_POLL if active else None)(render_tree)()
if banner_drawn and more:
    render_details()

# Last, so the solve above keeps the first screen: the paper's MIO alone on a small table of its own.
mio_live_panel.section()
