"""Process-wide resources of the app: secrets, the run store, the browser store and the job registry."""

from __future__ import annotations

from typing import Any

import streamlit as st

from strongtree_studio.stores.browsers import KEY_NAME, BrowserStore, browsers_db_path
from strongtree_studio.stores.browsers import session_key as read_session_key
from strongtree_studio.jobs.job_registry import JobRegistry
from strongtree_studio.jobs.wls_licence import install_wls_licence
from strongtree_studio.jobs.solve_job import drop_journal, finish_job, journal_job
from strongtree_studio.stores.run_history import RunStore, RunStoreError, runs_db_path, server_id
from strongtree_studio.sweeps.sweep_job import SweepContext
from strongtree_studio.sweeps.history import finish_sweep


def secrets() -> dict[str, Any]:
    """The app's secrets, or an empty dict when there is no secrets file."""
    try:
        return {k: st.secrets[k] for k in st.secrets}
    except FileNotFoundError:  # StreamlitSecretNotFoundError derives from it
        return {}


@st.cache_resource(show_spinner=False)
def licence_note() -> str:
    """Install a WLS licence from the secrets once per server; a note when it is incomplete."""
    return install_wls_licence(secrets())


@st.cache_resource(show_spinner=False)
def run_store() -> RunStore:
    """The history database (see :func:`strongtree_studio.stores.run_history.runs_db_path`); the solves a server
    killed mid-solve left running are marked interrupted first (:func:`recover_runs`)."""
    store = RunStore(runs_db_path(secrets()))
    recover_runs(store)
    return store


def recover_runs(store: RunStore) -> list[int]:
    """Mark interrupted the runs whose server stopped during their solve (their last tree and bound kept)."""
    try:
        return store.recover()
    except RunStoreError:  # the page that uses the history says why
        return []


@st.cache_resource(show_spinner=False, on_release=JobRegistry.shutdown)
def job_registry() -> JobRegistry:
    """The server's solve and sweep jobs, shared by every session.  Each finished job
    opens the history afresh, so a history that cannot be used is a warning on the page
    of that job (and the Runs page says why), never a run lost in silence."""
    licence_note()  # solver processes inherit the licence environment
    path = runs_db_path(secrets())
    server = server_id()
    try:
        recover_runs(RunStore(path))
    except RunStoreError:
        pass

    def finished(job) -> None:
        finish = finish_sweep if isinstance(job.context, SweepContext) else finish_job
        finish(job, lambda: RunStore(path))

    return JobRegistry(on_finished=finished, on_progress=lambda job: journal_job(job, lambda: RunStore(path), server),
                       on_dropped=lambda job: drop_journal(job, lambda: RunStore(path)))


@st.cache_resource(show_spinner=False)
def session_key() -> bytes:
    """The key that signs the browser tokens this server issues (beside the store; see :mod:`strongtree_studio.page.restore`)."""
    return read_session_key(browsers_db_path(secrets()).with_name(KEY_NAME))


@st.cache_resource(show_spinner=False)
def browser_store() -> BrowserStore:
    """Each browser's work, kept for a reload (see :mod:`strongtree_studio.page.restore`)."""
    return BrowserStore(browsers_db_path(secrets()))
