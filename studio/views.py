"""Small rendering helpers shared by the pages."""

from __future__ import annotations

import math
from typing import Any, Sequence

import plotly.graph_objects as go
import streamlit as st

from studio.jobs import JobSnapshot

STATE_LABELS = {
    "queued": ("Queued", ":material/hourglass_top:", "gray"),
    "starting": ("Starting", ":material/hourglass_top:", "blue"),
    "running": ("Solving", ":material/autorenew:", "blue"),
    "finished": ("Finished", ":material/check_circle:", "green"),
    "failed": ("Failed", ":material/error:", "red"),
    "cancelled": ("Cancelled", ":material/cancel:", "gray"),
}

STATUS_WORDS = {
    "optimal": "proven optimal",
    "time_limit": "best tree at the time limit (not proven optimal)",
    "time_limit_no_tree": "no tree within the time limit",
    "infeasible": "no tree satisfies the constraints",
    "interrupted": "stopped by the user (best tree kept)",
    "error": "solver error",
    "running": "in progress",
}


MSG_QUEUED = (
    "Waiting for a free solver: {running} running now (the server runs at most {limit} at a time) "
    "and {waiting} waiting ahead of this one."
)


def count_of(n: int, word: str) -> str:
    """``n`` and ``word``, plural unless ``n`` is 1: "1 solve", "2 solves"."""
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def queue_message(snapshot: JobSnapshot, limit: int) -> str:
    """Why a queued solve waits: the solves running and those queued before it."""
    ahead = max(snapshot.queue_position - 1, 0)
    return MSG_QUEUED.format(running=count_of(snapshot.running, "solve"), limit=limit,
                             waiting=count_of(ahead, "other solve") if ahead else "no other solve")


def job_state_badge(snapshot: JobSnapshot) -> None:
    """A coloured badge with the job's state in words."""
    label, icon, color = STATE_LABELS[snapshot.state]
    if snapshot.state == "queued" and snapshot.queue_position:
        label = f"Queued (position {snapshot.queue_position})"
    if snapshot.state == "running" and snapshot.phase == "baseline":
        label = "Solving the comparison tree"
    if snapshot.stop_requested and snapshot.active:
        label = "Stopping"
    st.badge(label, icon=icon, color=color)


def fmt(value: Any, kind: str = "number") -> str:
    """Format a possibly missing number for a card or a table cell."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if kind == "gap":
        return f"{value:.3f}"
    if kind == "percent":
        return f"{value:.1%}"
    if kind == "seconds":
        return f"{value:.1f} s"
    if kind == "int":
        return f"{int(value):,}"
    return f"{value:,.4g}"


def convergence_figure(history: Sequence[dict[str, Any]], now: float | None = None) -> go.Figure:
    """Incumbent objective and best bound against solver time (plotly).

    Both lines hold their last value up to ``now`` (the solver's current time),
    so the chart keeps moving while the solver is quiet.
    """
    t = [p["elapsed"] for p in history]
    incumbent = [p["objective"] for p in history]
    bound = [p["bound"] for p in history]
    sizes = [6] * len(t)
    if now is not None and t and now > t[-1]:
        t, incumbent, bound, sizes = t + [now], incumbent + incumbent[-1:], bound + bound[-1:], sizes + [0]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=t, y=incumbent, name="best tree (incumbent)", mode="lines+markers",
            line={"shape": "hv", "color": "#1f6f8b"}, marker={"size": sizes},
        )
    )
    fig.add_trace(
        go.Scatter(
            x=t, y=bound, name="bound (best possible)", mode="lines",
            line={"shape": "hv", "dash": "dash", "color": "#c0392b"},
        )
    )
    values = [v for v in incumbent + bound if v is not None]
    pad = max((max(values) - min(values)) * 0.08, 1.0) if values else 1.0
    fig.update_layout(
        height=320,
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis={"title": "seconds", "rangemode": "tozero"},
        yaxis={"title": "objective", "tickformat": ",~g",
               "range": [min(values) - pad, max(values) + pad] if values else None},
        legend={"orientation": "h", "y": -0.3},
    )
    return fig
