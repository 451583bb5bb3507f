"""Session state: durable choices in plain (non-widget) keys, initialised once,
and widgets bound to them.

Streamlit drops a widget's state when the page that owns it is left, so each
widget is seeded from a durable value on creation and writes back on change.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

import pandas as pd
import streamlit as st

from studio.config import ModelConfig, Roles, SplitConfig


@dataclass(frozen=True)
class LoadedTable:
    """The table the user is working on."""

    name: str
    frame: pd.DataFrame
    fingerprint: str
    description: str = ""


#: Durable session keys and their initial values (factories).
DEFAULTS: dict[str, Callable[[], Any]] = {
    "table": lambda: None,  # LoadedTable | None
    "roles": lambda: None,  # Roles | None
    "split": SplitConfig,
    "model": ModelConfig,
    "job_id": lambda: None,  # the job this session started last
    "view_run": lambda: None,  # run id shown on the Tree and Fairness pages
    "compare_runs": lambda: (),
}


def init_state() -> None:
    """Create the durable keys once per session."""
    if st.session_state.get("_studio_ready"):
        return
    for key, make in DEFAULTS.items():
        st.session_state.setdefault(key, make())
    st.session_state["_studio_ready"] = True


def widget_key(section: str, name: str) -> str:
    return f"{section}.{name}"


def bind(section: str, name: str, allowed: Any = None) -> str:
    """Key of a widget showing field ``name`` of the durable value ``section``.

    Seeds the widget from the durable value when the widget is (re)created.
    ``allowed``, when given, is the widget's option list: a durable value not in
    it is replaced by the first option.
    """
    key = widget_key(section, name)
    if key not in st.session_state:
        value = getattr(st.session_state[section], name)
        if allowed is not None:
            options = list(allowed)
            if isinstance(value, (tuple, list)):
                value = [v for v in value if v in options]
            elif value not in options:
                value = options[0] if options else None
        st.session_state[key] = list(value) if isinstance(value, tuple) else value
    return key


def store(section: str, name: str, convert: Callable[[Any], Any] | None = None) -> None:
    """``on_change`` callback: copy the widget's value into the durable value."""
    value = st.session_state[widget_key(section, name)]
    if convert is not None:
        value = convert(value)
    elif isinstance(value, list):
        value = tuple(value)
    st.session_state[section] = replace(st.session_state[section], **{name: value})


def bound_kwargs(section: str, name: str, allowed: Any = None, convert: Callable[[Any], Any] | None = None) -> dict:
    """``key``/``on_change``/``args`` for a widget bound to ``section.name``."""
    return {
        "key": bind(section, name, allowed),
        "on_change": store,
        "args": (section, name),
        "kwargs": {"convert": convert},
    }


def forget_widgets(section: str) -> None:
    """Drop the widget state of ``section`` so widgets re-seed from the durable value."""
    prefix = section + "."
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith(prefix)]:
        del st.session_state[key]


def set_roles(roles: Roles | None) -> None:
    st.session_state["roles"] = roles
    forget_widgets("roles")
