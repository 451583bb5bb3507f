"""Session state: durable choices in plain (non-widget) keys, initialised once,
and widgets bound to them.

Streamlit drops a widget's state when the page that owns it is left, so each
widget starts from a durable value and writes back to it (see :func:`field`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

import pandas as pd
import streamlit as st

from strongtree_studio.config import ModelConfig, Roles, SplitConfig
from strongtree_studio.stale import settings


@dataclass(frozen=True)
class LoadedTable:
    """The table the user is working on."""

    name: str
    frame: pd.DataFrame  # what the tree learns from: the loaded table with the column edits applied
    fingerprint: str  # of ``frame``
    notes: tuple[str, ...] = ()  # what reading the file assumed (e.g. its text encoding)
    raw: pd.DataFrame | None = None  # the table as loaded, before column edits (None: ``frame`` itself)

    @property
    def loaded(self) -> pd.DataFrame:
        """The table as it was loaded."""
        return self.frame if self.raw is None else self.raw


#: Durable session keys and their initial values (factories).
DEFAULTS: dict[str, Callable[[], Any]] = {
    "table": lambda: None,  # LoadedTable | None
    "roles": lambda: None,  # Roles | None
    "split": SplitConfig,
    "model": ModelConfig,
    "job_id": lambda: None,  # the job this session started last
    "view_run": lambda: None,  # run id shown on the Tree and Fairness pages
    "session_owner": lambda: f"session:{uuid.uuid4().hex}",  # owner of the runs this session solves
    "workspace": lambda: "",  # a workspace name the user typed on the Runs page ("" for none)
    "edits": dict,  # column -> strongtree_studio.columns.ColumnEdit: types and value labels chosen on the Data page
    "edits_undo": list,  # earlier values of "edits", the last one first to come back
    "codebook_report": lambda: None,  # ("done" | "error", sentences) of the last codebook applied
    "job_settings": lambda: None,  # the settings the last solve was started with (strongtree_studio.stale)
}

#: Longest workspace name kept.
MAX_WORKSPACE = 60


def init_state() -> None:
    """Create the durable keys once per session."""
    if st.session_state.get("_studio_ready"):
        return
    for key, make in DEFAULTS.items():
        st.session_state.setdefault(key, make())
    st.session_state["_studio_ready"] = True


#: Session key of the widget generations: section -> int.
GENERATIONS = "_widget_generations"


def widget_key(section: str, name: str) -> str:
    """Key of the widget bound to ``section.name`` in the current generation of ``section``."""
    generation = st.session_state.get(GENERATIONS, {}).get(section, 0)
    return f"{section}.{name}" + (f".{generation}" if generation else "")


def renew_widgets(section: str) -> None:
    """Give the widgets of ``section`` new keys, so they start from the durable
    values (the browser would otherwise keep showing, and send back, the old ones)."""
    generations = dict(st.session_state.get(GENERATIONS, {}))
    generations[section] = generations.get(section, 0) + 1
    st.session_state[GENERATIONS] = generations


def store(section: str, name: str, key: str, convert: Callable[[Any], Any] | None = None) -> None:
    """``on_change`` callback: copy the widget's value into the durable value."""
    keep(section, name, st.session_state[key], convert)


def bound(
    section: str,
    name: str,
    options: Sequence[Any] | None = None,
    convert: Callable[[Any], Any] | None = None,
    on_change: Callable[..., None] | None = None,
) -> dict[str, Any]:
    """Keyword arguments binding a widget to field ``name`` of the durable value ``section``.

    The widget's default is the durable value (``value=``, or ``index=`` /
    ``default=`` when ``options`` are given), so a widget re-created after a page
    change, or re-mounted by the browser, shows and sends the durable value; its
    key makes it keep its identity while the default follows the durable value.
    A value not among ``options`` falls back to the first option.
    """
    value = getattr(st.session_state[section], name)
    key = widget_key(section, name)
    kwargs: dict[str, Any] = {"key": key}
    if on_change is None:
        kwargs.update(on_change=store, args=(section, name, key), kwargs={"convert": convert})
    else:
        kwargs["on_change"] = on_change
    if options is None:
        kwargs["value"] = value
    elif isinstance(value, tuple):
        kwargs["default"] = [v for v in value if v in options]
    else:
        kwargs["index"] = list(options).index(value) if value in options else 0
    return kwargs


def keep(section: str, name: str, value: Any, convert: Callable[[Any], Any] | None = None) -> Any:
    """Make ``value`` (a widget's return value) the durable value ``section.name``.

    Callbacks alone are not enough: a change made while the run that created the
    widget was still going can arrive without its callback.
    """
    if convert is not None:
        value = convert(value)
    elif isinstance(value, list):
        value = tuple(value)
    if getattr(st.session_state[section], name) != value:
        st.session_state[section] = replace(st.session_state[section], **{name: value})
    return value


def field(
    widget: Callable[..., Any],
    label: str,
    section: str,
    name: str,
    *args: Any,
    options: Sequence[Any] | None = None,
    convert: Callable[[Any], Any] | None = None,
    **kwargs: Any,
) -> Any:
    """Render ``widget(label, [options,] *args, **kwargs)`` bound to ``section.name``; returns the value.

    The widget starts from the durable value and writes back through its
    callback (so the sidebar, drawn first, is current) and after it is drawn.
    """
    positional = (label, list(options), *args) if options is not None else (label, *args)
    value = widget(*positional, **bound(section, name, options, convert), **kwargs)
    return keep(section, name, value, convert)


def set_roles(roles: Roles | None) -> None:
    """New column roles (a new table or target): the role widgets start afresh."""
    st.session_state["roles"] = roles
    renew_widgets("roles")


def workspace_name(text: str) -> str:
    """A typed workspace name: spaces collapsed, at most :data:`MAX_WORKSPACE` characters."""
    return " ".join(str(text).split())[:MAX_WORKSPACE]


def run_owner() -> str:
    """Owner of the runs solved from now on: the named workspace, else this session."""
    workspace = st.session_state["workspace"]
    return f"workspace:{workspace}" if workspace else st.session_state["session_owner"]


def run_viewer() -> tuple[str, ...]:
    """The owners whose runs this session lists, opens and may delete: itself and its workspace."""
    workspace = st.session_state["workspace"]
    owners = (st.session_state["session_owner"],)
    return owners + (f"workspace:{workspace}",) if workspace else owners


def current_settings() -> dict[str, Any] | None:
    """The settings a solve started now would use (see :func:`strongtree_studio.stale.settings`), or None without a table."""
    table, roles = st.session_state["table"], st.session_state["roles"]
    if table is None or roles is None:
        return None
    return settings(table.fingerprint, roles, st.session_state["split"], st.session_state["model"])
