"""The Solve page's live MIO section: one click solves a small table with FlowOCT on
HiGHS and BendersOCT on SCIP alone, then with the exact search, in a worker, and draws
each run's best tree and bound as the solvers report them (:mod:`strongtree_studio.learn.mio_live`)."""

from __future__ import annotations

import streamlit as st

from strongtree_studio.learn import mio_live
from strongtree_studio.jobs.comparison_job import ComparisonResult
from strongtree_studio.learn.comparison_view import progress_table, run_progress
from strongtree_studio.views.markup import md_table
from strongtree_studio.learn.mio_live import (
    LIVE_CAPTION,
    MSG_NO_TREE_YET,
    live_spec,
    live_summary,
    outcome_sentences,
    results_table,
    run_chart,
    run_label,
    run_points,
    shared_domain,
)
from strongtree_studio.page.services import job_registry
from strongtree_studio.page.session import MIO_LIVE_JOB
from strongtree_studio.page.status import job_ending, job_state_badge, queue_message
from strongtree_studio.views.status_words import COMPARISON_STEP

#: Seconds between refreshes while the runs go.
POLL = 1.0
#: The section's title (an expander on the Solve page).
TITLE = "The paper's MIO, live: FlowOCT and BendersOCT alone, beside the exact search"


def has_job() -> bool:
    """Whether this session has started the live MIO (the section then opens by itself)."""
    return job_registry().snapshot(MIO_LIVE_JOB.get()) is not None


def section() -> None:
    """The section as the Solve page shows it: an expander that opens by itself once started."""
    with st.expander(TITLE, icon=":material/school:", expanded=has_job()):
        render()


def _start() -> None:
    MIO_LIVE_JOB.set(job_registry().submit(live_spec()))


def _stop() -> None:
    job_registry().stop(MIO_LIVE_JOB.get())


def render() -> None:
    """The button, then the runs as they go and, once they end, their table and what they show."""
    registry = job_registry()
    snapshot = registry.snapshot(MIO_LIVE_JOB.get())
    active = snapshot is not None and snapshot.active
    st.caption(live_summary())
    buttons = st.columns([2.2, 0.8, 2])
    buttons[0].button("Solve with FlowOCT and BendersOCT alone", key="solve.mio.start", icon=":material/play_arrow:",
                      on_click=_start, disabled=active, width="stretch")
    buttons[1].button("Stop", key="solve.mio.stop", icon=":material/stop:", on_click=_stop,
                      disabled=not active or snapshot.stop_requested, width="stretch",
                      help="Ends the run that is going (its best tree is kept) and skips the rest.")
    if snapshot is None:
        return
    st.fragment(run_every=POLL if active else None)(_runs)(active)


def _runs(was_active: bool) -> None:
    snap = job_registry().snapshot(MIO_LIVE_JOB.get())
    if snap is None:
        return
    result = ComparisonResult.from_json(snap.main.result) if snap.main.result is not None else None
    head, info = st.columns([1, 4], vertical_alignment="center")
    with head:
        job_state_badge(snap)
    if snap.state == "queued":
        info.markdown(queue_message(snap, job_registry().max_running))
    elif snap.active:
        steps = run_progress(snap.main.history, mio_live.LIVE.formulations, True)
        going = next((r for r in steps if r.step == "running"), None)
        if going is not None:
            info.caption(f"{COMPARISON_STEP['running'].label} {run_label(going.word)}: its best tree rises and its "
                         "bound falls until they meet.")
    if not snap.active and job_ending(snap):
        return
    now = snap.main.now if snap.active else None
    series = {word: run_points(snap.main.history, result, word, now) for word in mio_live.LIVE.formulations}
    domain = shared_domain(list(series.values()))
    lp = {} if result is None else {r["word"]: r.get("lp_bound") for r in result.rows}
    columns = st.columns(len(mio_live.LIVE.formulations), gap="medium")
    for column, word in zip(columns, mio_live.LIVE.formulations):
        with column:
            st.markdown(f"**{run_label(word)}**")
            spec = None if domain is None else run_chart(series[word], domain, lp.get(word))
            if spec is None:
                st.caption(MSG_NO_TREE_YET)
            else:
                st.vega_lite_chart(spec=spec, width="stretch", height=220)
    st.caption(LIVE_CAPTION.format(depth=mio_live.LIVE.depth))
    if result is None:
        if snap.active:
            st.table(md_table(progress_table(run_progress(snap.main.history, mio_live.LIVE.formulations, True))),
                     hide_index=True)
    else:
        st.table(md_table(results_table(result)), hide_index=True)
        for sentence in outcome_sentences(result, snap.main.history):
            st.markdown(sentence)
    if was_active and not snap.active:
        st.rerun()  # the whole page: the buttons follow
