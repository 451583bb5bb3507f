"""Session state: durable choices in plain (non-widget) keys, initialised once,
and widgets bound to them.

Streamlit drops a widget's state when the page that owns it is left, so each
widget starts from a durable value and writes back to it (see :func:`field`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Sequence

from strongtree_studio.data.choices import Roles
from strongtree_studio.page.session import (
    GENERATIONS,
    MODEL,
    ROLES,
    SESSION_OWNER,
    SPLIT,
    TABLE,
    WORKSPACE,
    Key,
    widget_value,
)
from strongtree_studio.views.stale import settings
from strongtree_studio.stores.table import LoadedTable

__all__ = ["GENERATIONS", "LoadedTable", "bound", "current_settings", "field", "keep", "renew_widgets", "run_owner",
           "run_viewer", "set_roles", "store", "widget_key", "workspace_name"]

#: Longest workspace name kept.
MAX_WORKSPACE = 60


def widget_key(section: Key[Any], name: str) -> str:
    """Key of the widget bound to ``section.name`` in the current generation of ``section``."""
    generation = GENERATIONS.get().get(section.name, 0)
    return f"{section.name}.{name}" + (f".{generation}" if generation else "")


def renew_widgets(section: Key[Any]) -> None:
    """Give the widgets of ``section`` new keys, so they start from the durable
    values (the browser would otherwise keep showing, and send back, the old ones)."""
    generations = dict(GENERATIONS.get())
    generations[section.name] = generations.get(section.name, 0) + 1
    GENERATIONS.set(generations)


def store(section: Key[Any], name: str, key: str, convert: Callable[[Any], Any] | None = None) -> None:
    """``on_change`` callback: copy the widget's value into the durable value."""
    keep(section, name, widget_value(key), convert)


def bound(
    section: Key[Any],
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
    value = getattr(section.get(), name)
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


def keep(section: Key[Any], name: str, value: Any, convert: Callable[[Any], Any] | None = None) -> Any:
    """Make ``value`` (a widget's return value) the durable value ``section.name``.

    Callbacks alone are not enough: a change made while the run that created the
    widget was still going can arrive without its callback.
    """
    if convert is not None:
        value = convert(value)
    elif isinstance(value, list):
        value = tuple(value)
    current = section.get()
    if getattr(current, name) != value:
        section.set(replace(current, **{name: value}))
    return value


def field(
    widget: Callable[..., Any],
    label: str,
    section: Key[Any],
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
    ROLES.set(roles)
    renew_widgets(ROLES)


def workspace_name(text: str) -> str:
    """A typed workspace name: spaces collapsed, at most :data:`MAX_WORKSPACE` characters."""
    return " ".join(str(text).split())[:MAX_WORKSPACE]


def run_owner() -> str:
    """Owner of the runs solved from now on: the named workspace, else this session."""
    workspace = WORKSPACE.get()
    return f"workspace:{workspace}" if workspace else SESSION_OWNER.get()


def run_viewer() -> tuple[str, ...]:
    """The owners whose runs this session lists, opens and may delete: itself and its workspace."""
    workspace = WORKSPACE.get()
    owners = (SESSION_OWNER.get(),)
    return owners + (f"workspace:{workspace}",) if workspace else owners


def current_settings() -> dict[str, Any] | None:
    """The settings a solve started now would use (see :func:`strongtree_studio.views.stale.settings`), or None without a table."""
    table, roles = TABLE.get(), ROLES.get()
    if table is None or roles is None:
        return None
    return settings(table.fingerprint, roles, SPLIT.get(), MODEL.get())
