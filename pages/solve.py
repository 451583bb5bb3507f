"""Solve: start the solve in a worker process, watch it improve, stop it."""

import streamlit as st

from studio.config import check_model, check_roles, split_table
from studio.explain import FAIRNESS_NOTIONS, MSG_LAST_TREE_KEPT
from studio.jobs import JobSnapshot
from studio.markup import md
from studio.outcome import SolveContext, solve_spec
from studio.roles import class_values
from studio.services import job_registry
from studio.shown import tree_from_json
from studio.sidebar import SHOWN_ACTIVE
from studio.state import run_owner
from studio.views import STATUS_WORDS, convergence_figure, fmt, job_state_badge, queue_message

#: Seconds between refreshes of the live numbers, the tree and the chart.
PANEL_POLL = 0.5
TREE_POLL = 1.0
CHART_POLL = 2.0

st.title("Solve")

table = st.session_state["table"]
if table is None:
    st.info("Choose a table on the Data page first.", icon=":material/info:")
    st.page_link("pages/data.py", label="Go to Data", icon=":material/table_chart:")
    st.stop()

roles = st.session_state["roles"]
split = st.session_state["split"]
model = st.session_state["model"]
frame = table.frame
registry = job_registry()

problems = check_roles(frame, roles, model.allow_protected_splits)
if not problems:
    problems = check_model(model, roles, len(class_values(frame, roles.target)))

with st.container(border=True):
    a, b, c = st.columns(3)
    rows = ""
    if not problems:
        parts = split_table(frame, roles, split)
        rows = f"  \n{len(parts.train):,} training rows · {len(parts.test):,} test rows"
    a.markdown(f"**Data**  \n{md(table.name)}  \ntarget {md(roles.target)}"
               + (f", positive class {md(roles.positive)}" if roles.positive is not None else "") + rows)
    fairness = ", ".join(FAIRNESS_NOTIONS[n].name for n in model.fairness) or "none"
    b.markdown(f"**Tree**  \ndepth {model.depth} · objective {model.objective.replace('_', ' ')}  \n"
               f"fairness: {fairness}" + (f" (δ = {model.fairness_bound:.2f})" if model.fairness else ""))
    c.markdown(f"**Solver**  \n{model.solver} · {model.formulation}  \ntime limit {model.time_limit:.0f} s")

for problem in problems:
    st.error(md(problem), icon=":material/error:")


def start_solve() -> None:
    tables = split_table(frame, roles, split)
    context = SolveContext(table.name, table.fingerprint, roles, split, model, tables, owner=run_owner())
    st.session_state["job_id"] = registry.submit(solve_spec(context), context)
    st.session_state["view_run"] = None


def stop_solve() -> None:
    registry.stop(st.session_state["job_id"])


snapshot = registry.snapshot(st.session_state["job_id"])
# Also while the sidebar, drawn just before, still showed the solve running: the
# progress fragment then sees it ended and reruns, so page and sidebar agree.
active = snapshot is not None and (snapshot.active or st.session_state.get(SHOWN_ACTIVE, False))
left, right, _ = st.columns([1, 1, 4])
left.button("Solve", key="solve.start", type="primary", icon=":material/play_arrow:", on_click=start_solve,
            disabled=bool(problems) or active, width="stretch")
right.button("Stop", key="solve.stop", icon=":material/stop:", on_click=stop_solve,
             disabled=not active or snapshot.stop_requested, width="stretch",
             help="Ends the solve and keeps the best tree found so far.")

if snapshot is None:
    st.caption("The solve runs in its own process: you can visit other pages meanwhile; it keeps going.")
    st.stop()


def reported(snap: JobSnapshot) -> list[dict]:
    """The progress points of the solve, closed by its final record once it has ended."""
    points = list(snap.main.history)
    if snap.main.result is not None:
        record = tree_from_json(snap.main.result).record
        last = points[-1] if points else {"elapsed": 0.0, "nodes": 0}
        points.append({"elapsed": max(record.runtime, last["elapsed"]), "objective": record.objective,
                       "bound": record.bound, "gap": record.gap, "nodes": last["nodes"], "message": ""})
    return points


def render_progress() -> None:
    snap = registry.snapshot(st.session_state["job_id"])
    if snap is None:
        return
    points = reported(snap)
    latest = points[-1] if points else None
    if snap.active:
        head, info = st.columns([1, 3], vertical_alignment="center")
        with head:
            job_state_badge(snap)
        if snap.state == "queued":
            info.markdown(queue_message(snap, registry.max_running))
        elif latest is not None:
            info.caption(md(latest["message"] or ""))
    cols = st.columns(5)
    cols[0].metric("Elapsed", fmt(snap.elapsed, "seconds"))
    cols[1].metric("Best objective", fmt(latest["objective"] if latest else None))
    cols[2].metric("Bound", fmt(latest["bound"] if latest else None))
    cols[3].metric("Gap", fmt(latest["gap"] if latest else None, "percent"))
    cols[4].metric("Nodes explored", fmt(latest["nodes"] if latest else None, "int"))
    if active and not snap.active:
        st.rerun()


def render_tree() -> None:
    snap = registry.snapshot(st.session_state["job_id"])
    best = snap.main.best_tree if snap is not None else None
    if best is not None:
        st.markdown("**Final tree**" if snap.main.result else "**Best tree so far**")
        st.graphviz_chart(tree_from_json(best).to_dot())
    elif snap is not None and snap.active:
        st.caption("The first tree appears as soon as the solver has one.")


def render_chart() -> None:
    snap = registry.snapshot(st.session_state["job_id"])
    points = reported(snap) if snap is not None else []
    if not points:
        return
    st.plotly_chart(convergence_figure(points, snap.main.now if snap.active else None), key="solve.chart",
                    config={"displayModeBar": False})
    st.caption("The incumbent is the best tree found so far; the bound caps what any tree can reach. "
               "They meet when the tree is proven optimal.")


def render_outcome() -> None:
    """How the finished solve ended, in words, with links to the results."""
    if snapshot.state == "cancelled":
        st.info(md(snapshot.message), icon=":material/cancel:")
        return
    if snapshot.main.error:
        st.error(md(snapshot.main.error), icon=":material/error:")
    elif snapshot.state == "failed":
        st.error(md(snapshot.message), icon=":material/error:")
    outcome = snapshot.outcome
    if snapshot.main.result is not None:
        record = tree_from_json(snapshot.main.result).record
        words = STATUS_WORDS.get(record.status, record.status)
        st.success(f"Tree {words} · objective {fmt(record.objective)} · gap {fmt(record.gap, 'percent')} · "
                   f"{fmt(record.runtime, 'seconds')} with {record.backend}", icon=":material/check_circle:")
        if snapshot.message:
            st.warning(md(snapshot.message), icon=":material/warning:")
        with st.expander("How it was solved", icon=":material/info:"):
            size = (f"{record.n_variables:,} variables, {record.n_constraints:,} constraints"
                    if record.method in ("flow", "benders") else "no MIO model was needed")
            st.markdown(f"**Formulation:** {md(record.formulation)} ({record.method})  \n"
                        f"**Model size:** {size}; {record.n_rows:,} rows in {record.n_patterns:,} patterns  \n"
                        f"**Why this route:** {md(record.choice)}")
            if record.message:
                st.caption(md(record.message))
        baseline = snapshot.baseline
        if baseline is not None and baseline.error:
            st.caption(f"The comparison tree without fairness constraints could not be solved: {md(baseline.error)}")
    elif outcome is not None and outcome.entry is not None:  # the worker ended early: its last tree is kept
        stored = f" as run {outcome.entry.id}" if outcome.entry.id is not None else ""
        st.warning(MSG_LAST_TREE_KEPT.format(stored=stored), icon=":material/warning:")
    if outcome is not None and outcome.error:
        st.warning(md(outcome.error), icon=":material/warning:")
    if outcome is not None and outcome.entry is not None:
        a, b, _ = st.columns([1, 1, 2])
        a.page_link("pages/tree.py", label="Explore the tree", icon=":material/account_tree:")
        b.page_link("pages/fairness.py", label="Fairness & performance", icon=":material/balance:")


if not active:
    render_outcome()

# Three fragments: the numbers refresh fastest, the drawings less often (a redraw in
# the numbers' fragment would stretch their refresh interval).
panel, chart = st.columns([3, 2], gap="large")
with panel:
    st.fragment(run_every=PANEL_POLL if active else None)(render_progress)()
    st.fragment(run_every=TREE_POLL if active else None)(render_tree)()
with chart:
    st.fragment(run_every=CHART_POLL if active else None)(render_chart)()
