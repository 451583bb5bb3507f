"""The sidebar every page shares: the table in use and the state of this session's solve."""

from __future__ import annotations

import streamlit as st

from strongtree_studio.page.navigation import PAGES, screen
from strongtree_studio.jobs.job_registry import JobSnapshot
from strongtree_studio.views.markup import md
from strongtree_studio.page.services import job_registry
from strongtree_studio.page.session import JOB_ID, ROLES, SIDEBAR_ACTIVE, SIDEBAR_STATE, STORE_NOTICE, TABLE
from strongtree_studio.page.status import job_state_badge, job_state_key
from strongtree_studio.views.status_words import count_of, fmt

#: Seconds between refreshes of the sidebar's solve status while a solve runs.
SIDEBAR_POLL = 1.0


def render_sidebar(live: bool = True) -> None:
    """The table in use and this session's solve; ``live`` refreshes the solve's state while it runs."""
    with st.sidebar:
        table = TABLE.get()
        roles = ROLES.get()
        st.caption("TABLE")
        if table is None:
            st.markdown("No table yet: choose one on the **Data** page.")
        else:
            st.markdown(f"**{md(table.name)}**  \n{count_of(len(table.frame), 'row')} × {count_of(table.frame.shape[1], 'column')}")
            if roles is not None:
                protected = ", ".join(md(c) for c in roles.protected) or "none"
                st.markdown(f"Target {md(roles.target)} · protected: {protected}")
        if STORE_NOTICE.get():
            st.caption(md(STORE_NOTICE.get()))
        snapshot = job_registry().snapshot(JOB_ID.get())
        if snapshot is not None:
            st.caption("SOLVE")
            _solve_status(live and snapshot.active)


def page_list() -> None:
    """The product's pages by their titles (Streamlit's own list is hidden: under its old pages-folder
    router it would name the script files)."""
    with st.sidebar, st.container(key="page_list"):
        for name, title, icon in PAGES:
            st.page_link(screen(name), label=md(title), icon=icon)


def _solve_status(poll: bool) -> None:
    @st.fragment(run_every=SIDEBAR_POLL if poll else None)
    def status() -> None:
        snapshot: JobSnapshot | None = job_registry().snapshot(JOB_ID.get())
        if snapshot is None:
            return
        # The Solve page, drawn after the sidebar, reruns once if the solve ended in between.
        was_active = SIDEBAR_ACTIVE.get()
        SIDEBAR_ACTIVE.set(snapshot.active)
        SIDEBAR_STATE.set(job_state_key(snapshot))
        job_state_badge(snapshot)
        latest = snapshot.main.latest
        # While the tree is being solved: the solver's clock, the one the Solve page shows (once the
        # tree is final, the badge says how it ended and the comparison tree's time is not another clock).
        if snapshot.active and snapshot.main.result is None and latest is not None and latest["gap"] is not None:
            clock = snapshot.main.now if snapshot.main.now is not None else snapshot.elapsed
            st.caption(f"{fmt(clock, 'seconds')} · gap {fmt(latest['gap'], 'percent')}")
        st.page_link(screen("solve"), label="Open the solve", icon=":material/play_circle:")
        if was_active and not snapshot.active:
            # The solve (and its comparison tree) just ended while a page waited for it ("the
            # result appears here when it ends"): draw the page again (once: now it reads inactive).
            st.rerun()

    status()
