"""Rendering helpers shared by the pages: the job's state, the solve's progress
(chart specs and the solver's log) and the badges of the status vocabulary.

The progress views are pure functions of a job snapshot, computed once per job
version and shared by every session watching (:func:`progress_view`).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from threading import Lock
from typing import Any, Sequence

import pandas as pd
import streamlit as st

from strongtree_core.tree.claim import Claim, claim
from strongtree_core.tree.record import SolveRecord
from strongtree_studio.jobs.job_registry import JobSnapshot, drawn_point
from strongtree_studio.views.ticks import seconds_x
from strongtree_studio.views.status_words import JOB_STATE, bound_words, claim_of, count_of, event_words, fmt, page_words, status_word

MSG_QUEUED = (
    "Waiting for a free solver: {running} running now (the server runs at most {limit} at a time) "
    "and {waiting} waiting ahead of this one."
)
#: Rows of the solver's log shown (newest first).
LOG_ROWS = 10
BEST_COLOUR, BOUND_COLOUR, GAP_COLOUR = "#1f6f8b", "#c0392b", "#7d5ba6"


def queue_message(snapshot: JobSnapshot, limit: int) -> str:
    """Why a queued solve waits: the solves running and those queued before it."""
    ahead = max(snapshot.queue_position - 1, 0)
    return MSG_QUEUED.format(running=count_of(snapshot.running, "solve"), limit=limit,
                             waiting=count_of(ahead, "other solve") if ahead else "no other solve")


def job_state_key(snapshot: JobSnapshot) -> str:
    """The key of :data:`strongtree_studio.views.status_words.JOB_STATE` that says what the job is doing."""
    if snapshot.stop_requested and snapshot.active:
        return "stopping"
    if snapshot.state == "running" and snapshot.phase == "baseline":
        return "baseline"
    return snapshot.state


def result_claim(snapshot: JobSnapshot) -> Claim | None:
    """How the solve ended, in :func:`~strongtree_core.tree.claim.claim`'s words, once its tree is final
    (also while the comparison tree is still being solved) or once it proved that no tree meets the
    constraints ("No tree fits"); else None (also for jobs whose result is not a tree, such as the
    formulation comparison)."""
    if snapshot.main.result:
        return claim_of(snapshot.main.result)
    return claim(snapshot.main.record) if snapshot.main.record is not None else None


def claim_badges(said: Claim) -> None:
    """The claim's badge, and beside it how a promise on new rows is known ("promise estimated")."""
    st.badge(said.label, icon=said.icon, color=said.colour)
    if said.promise_label:
        st.badge(said.promise_label, icon=PROMISE_ICONS[said.promise_state],
                 color="green" if said.promise_state == "proved" else "blue")


#: The icon beside how a promise is known.
PROMISE_ICONS = {"estimated": ":material/query_stats:", "proved": ":material/verified_user:"}


def job_state_badge(snapshot: JobSnapshot) -> None:
    """A coloured badge with the job's state in words (short enough not to be cut); once the solve's
    tree is final, or no tree was proved to fit, the claim's label ("Proven optimal", "Optimal over kept
    thresholds", "No tree fits"), the one the Solve page's banner or its message says."""
    label, icon, colour = job_state_words(snapshot)
    st.badge(label, icon=icon, color=colour)


def job_state_words(snapshot: JobSnapshot) -> tuple[str, str, str]:
    """The label, icon and colour of :func:`job_state_badge`."""
    said = result_claim(snapshot)
    if said is not None and snapshot.state in ("running", "finished"):
        return said.label, said.icon, said.colour
    word = JOB_STATE[job_state_key(snapshot)]
    label = word.label
    if snapshot.state == "queued" and snapshot.queue_position:
        label = f"Queued ({snapshot.queue_position})"
    return label, word.icon, word.colour


def job_ending(snapshot: JobSnapshot) -> bool:
    """Say how a job that did not give its result ended (cancelled, an error, a failed
    worker); True when it was cancelled before it started (nothing else to show)."""
    from strongtree_studio.views.markup import md

    if snapshot.state == "cancelled":
        st.info(md(snapshot.message), icon=":material/cancel:")
        return True
    if snapshot.main.error:  # a proof that no tree fits carries its claim's icon (a result, not a failure)
        said = claim(snapshot.main.record) if snapshot.main.record is not None else None
        st.error(md(page_words(snapshot.main.error)), icon=said.icon if said is not None else ":material/error:")
    elif snapshot.state == "failed":
        st.error(md(snapshot.message), icon=":material/error:")
    return False


def status_badge(status: str) -> None:
    """A coloured badge with a solve status in words."""
    word = status_word(status)
    st.badge(word.label, icon=word.icon, color=word.colour)


@dataclass(frozen=True)
class ProgressView:
    """What the Solve page draws for one job version."""

    points: tuple[dict[str, Any], ...]
    objective_chart: dict[str, Any] | None
    gap_chart: dict[str, Any] | None
    log: pd.DataFrame


_VIEWS: "OrderedDict[tuple, ProgressView]" = OrderedDict()
_VIEWS_LOCK = Lock()
#: Progress views kept (a few per watched job).
MAX_VIEWS = 64


def progress_view(snapshot: JobSnapshot, points: Sequence[dict[str, Any]], now: float | None) -> ProgressView:
    """The charts and the log of ``points``, computed once per (job, version, phase,
    second of ``now``) and shared by every session that watches the job."""
    key = (snapshot.id, snapshot.version, snapshot.phase, None if now is None else round(now))
    with _VIEWS_LOCK:
        view = _VIEWS.get(key)
        if view is not None:
            _VIEWS.move_to_end(key)
            return view
    view = ProgressView(tuple(points), objective_spec(points, now), gap_spec(points, now), solver_log(points))
    with _VIEWS_LOCK:
        _VIEWS[key] = view
        while len(_VIEWS) > MAX_VIEWS:
            _VIEWS.popitem(last=False)
    return view


def _extended(points: Sequence[dict[str, Any]], now: float | None) -> list[dict[str, Any]]:
    """The points, with the last values held up to ``now`` (the chart keeps moving while the solver is quiet)."""
    out = list(points)
    if now is not None and out and now > out[-1]["elapsed"]:
        out.append({**out[-1], "elapsed": now, "held": True})
    return out


def _integral(values: list[float]) -> bool:
    return bool(values) and all(float(v).is_integer() for v in values)


def series_legend_html() -> str:
    """The convergence chart's legend (HTML, inline): a solid line for the best tree, a dashed
    line for the bound, each in its colour and wide enough to read on a projector."""
    def entry(name: str, colour: str, line: str) -> str:
        mark = (f'<span style="display:inline-block;width:30px;border-top:3px {line} {colour};'
                f'vertical-align:middle"></span>')
        return (f'<span style="display:inline-flex;align-items:center;gap:6px;margin-left:18px;'
                f'white-space:nowrap;font-weight:400">{mark}{name}</span>')
    return entry("best tree", BEST_COLOUR, "solid") + entry("bound", BOUND_COLOUR, "dashed")


#: "half-sample refit 3 of 10", "fold 2 of 4 at the training bound 4.00 pp": one of several alike.
_ONE_OF = re.compile(r"^(?P<what>.+?) \d+ of (?P<n>\d+)(?P<rest>.*)$")


def phase_of(stage: str) -> str:
    """The phase a stage belongs to: alike refits are one ("half-sample refit 3 of 10" -> "10 half-sample
    refits"); every other stage is its own."""
    found = _ONE_OF.match(stage)
    return f"{found['n']} {found['what']}s{found['rest']}" if found else stage


def stage_bands(points: Sequence[dict[str, Any]], now: float | None = None) -> list[dict[str, Any]]:
    """The phases of a fit made of several fits, in order: ``stage`` (the phase's name, alike refits as one),
    ``start``, ``end`` (seconds, on the one clock of the whole fit) and ``drawn`` (its values are drawn as
    lines); empty for a plain solve."""
    bands: list[dict[str, Any]] = []
    for p in points:
        stage = p.get("stage") or ""
        if not stage:
            continue
        phase = phase_of(stage)
        if bands and bands[-1]["stage"] == phase:
            bands[-1]["end"] = p["elapsed"]
        else:
            if bands:
                bands[-1]["end"] = max(bands[-1]["end"], p["elapsed"])
            bands.append({"stage": phase, "start": p["elapsed"], "end": p["elapsed"], "drawn": drawn_point(p)})
    if bands and now is not None:
        bands[-1]["end"] = max(bands[-1]["end"], now)
    for i, band in enumerate(bands):
        band["start"], band["end"] = round(band["start"], 2), round(band["end"], 2)
        band["shade"] = i % 2
    return bands


def stages_words(points: Sequence[dict[str, Any]], now: float | None = None) -> str:
    """The phases of a fit made of several fits, for the caption under its chart: "fit at δ = 5.0 pp
    (0.0-0.3 s) · 10 half-sample refits (0.3-1.5 s) · ..." ("" for a plain solve)."""
    return " · ".join(f"{b['stage']} ({fmt(b['start'], 'seconds').removesuffix(' s')}-{fmt(b['end'], 'seconds')})"
                      for b in stage_bands(points, now))


def _band_layers(points: Sequence[dict[str, Any]], now: float | None) -> list[dict[str, Any]]:
    """Shaded bands behind a staged fit's lines, one per phase, named in the tooltip (and in the caption
    under the chart: names written on the chart would overlap where phases are short)."""
    bands = stage_bands(points, now)
    if not bands:
        return []
    return [
        {"data": {"values": bands},
         "mark": {"type": "rect", "opacity": 0.5},
         "encoding": {"x": {"field": "start", "type": "quantitative"}, "x2": {"field": "end"},
                      "color": {"field": "shade", "type": "nominal", "legend": None,
                                "scale": {"domain": [0, 1], "range": ["#eef2f6", "#dce3ec"]}},
                      "tooltip": [{"field": "stage", "title": "stage"}, {"field": "start", "format": ".1f"},
                                  {"field": "end", "format": ".1f"}]}},
    ]


def objective_spec(points: Sequence[dict[str, Any]], now: float | None = None) -> dict[str, Any] | None:
    """Vega-Lite spec: the best tree's objective and the bound against time, as steps.

    A fit made of several fits (points with a ``stage``) is one chart on one clock: each stage a
    shaded band (its name in the tooltip), the lines of the fits on every training row drawn stage by
    stage (a new fit does not continue the last one's line)."""
    rows = []
    for p in _extended(points, now):
        if not drawn_point(p):
            continue
        for series, field in (("best tree", "objective"), ("bound", "bound")):
            if p.get(field) is not None:
                rows.append({"seconds": round(p["elapsed"], 2), "value": p[field], "series": series,
                             "held": bool(p.get("held")), "stage": p.get("stage") or ""})
    if not rows:
        return None
    values = [r["value"] for r in rows]
    axis: dict[str, Any] = {"title": None, "format": ",d" if _integral(values) else ",.4~g"}
    if _integral(values):
        axis["tickMinStep"] = 1
    lines = [
        {"mark": {"type": "line", "interpolate": "step-after", "strokeWidth": 2.5},
         "encoding": {"strokeDash": {"field": "series", "type": "nominal", "legend": None,
                                     "scale": {"domain": ["best tree", "bound"], "range": [[1, 0], [6, 4]]}},
                      "detail": {"field": "stage", "type": "nominal"}}},
        {"mark": {"type": "point", "filled": True, "size": 36},
         "transform": [{"filter": "!datum.held"}]},
    ]
    encoding = {
        "x": seconds_x(rows),
        "y": {"field": "value", "type": "quantitative", "scale": {"zero": False, "domain": y_domain(rows), "clamp": True},
              "axis": axis},
        # The legend is drawn beside the chart's heading (series_legend_html): Vega-Lite's own
        # merged the line's dash and the points into a blob for the bound.
        "color": {"field": "series", "type": "nominal", "title": None, "legend": None,
                  "scale": {"domain": ["best tree", "bound"], "range": [BEST_COLOUR, BOUND_COLOUR]}},
        "tooltip": [{"field": "series"}, {"field": "seconds", "format": ".1f"},
                    {"field": "value", "format": ",.6~g"}],
    }
    bands = _band_layers(points, now)
    if bands:  # the lines' encoding moves into their own layer, the bands keep theirs
        encoding["tooltip"] = encoding["tooltip"] + [{"field": "stage"}]
        return {"layer": bands + [{"data": {"values": rows}, "encoding": encoding, "layer": lines}],
                "resolve": {"scale": {"color": "independent"}}}
    # The scale clamps: a first bound far above every tree runs along the top edge
    # instead of shrinking the plot.
    return {"data": {"values": rows}, "encoding": encoding, "layer": lines}


def y_domain(rows: list[dict[str, Any]]) -> list[float]:
    """The objective axis: from the lowest best tree to the highest bound that says something.

    A first bound far above every tree (every row at its best class) would flatten the
    steps that matter, so bounds more than the best trees' own spread (at least 5 %)
    above the best tree are drawn along the top edge (the scale clamps them).
    """
    best = [r["value"] for r in rows if r["series"] == "best tree"]
    bounds = [r["value"] for r in rows if r["series"] == "bound"]
    if not best:
        return [min(bounds), max(bounds)]
    low, top = min(best), max(best)
    reach = top + max(top - low, 0.05 * abs(top), 1.0)
    shown = [b for b in bounds if b <= reach]
    high = max([top, *shown])
    pad = max((high - low) * 0.06, 0.5)
    return [low - pad, high + pad]


def gap_spec(points: Sequence[dict[str, Any]], now: float | None = None) -> dict[str, Any] | None:
    """Vega-Lite spec: the optimality gap (%) against time; it reaches 0 when the tree is proven optimal
    (a staged fit: its stages as bands, the gaps of the fits on every row stage by stage)."""
    rows = [{"seconds": round(p["elapsed"], 2), "gap": 100.0 * p["gap"], "stage": p.get("stage") or ""}
            for p in _extended(points, now) if p.get("gap") is not None and drawn_point(p)]
    if not rows:
        return None
    line = {
        "mark": {"type": "line", "interpolate": "step-after", "color": GAP_COLOUR, "strokeWidth": 2.5,
                 "point": {"filled": True, "size": 30, "color": GAP_COLOUR}},
        "encoding": {
            "x": seconds_x(rows),
            "y": {"field": "gap", "type": "quantitative", "title": "gap %", "scale": {"type": "sqrt", "zero": True},
                  "axis": {"format": ".2~f"}},
            "detail": {"field": "stage", "type": "nominal"},
            "tooltip": [{"field": "seconds", "format": ".1f"}, {"field": "gap", "format": ".2f", "title": "gap %"}],
        },
    }
    bands = _band_layers(points, now)
    if bands:
        return {"layer": bands + [{"data": {"values": rows}, **line}]}
    return {"data": {"values": rows}, **line}


def solver_log(points: Sequence[dict[str, Any]], rows: int = LOG_ROWS) -> pd.DataFrame:
    """The solver's steps in words, newest first: every new best tree, bound, proof or stop
    (the exact search's messages; for an MIO, every change of the best tree or the bound).

    A fit made of several fits (points with a ``stage``) is one log: one line per internal fit, its
    end ("half-sample refit 3 of 10: done", with that fit's best tree and bound), and the whole fit
    ends once, with the claim's words (the point whose message starts "final: ")."""
    entries = []
    previous: dict[str, Any] | None = None
    staged = any(p.get("stage") for p in points)  # one line per internal fit: its end (its steps are its own)
    for p in points:
        message = p.get("message") or ""
        stage = p.get("stage") or ""
        if staged and message != "stage done" and not message.startswith(FINAL):
            previous = p
            continue
        changed = previous is None or p["objective"] != previous["objective"] or p["bound"] != previous["bound"]
        if message.startswith(FINAL):
            what = message.removeprefix(FINAL)
        elif message in ("new incumbent", "bound", "certified optimal", "stopped", "stage done") \
                or message.startswith("warm start") or (changed and message in ("", "searching")):
            what = event_words(message) if message not in ("", "searching") else _what_changed(p, previous)
        else:
            previous = p
            continue
        if stage and not message.startswith(FINAL):
            what = f"{stage}: {what}"
        entries.append({"time": fmt(p["elapsed"], "seconds"), "step": what, "best": fmt(p["objective"]),
                        "bound": bound_words(p["bound"]), "gap": fmt(p["gap"], "percent")})
        previous = p
    return pd.DataFrame(entries[::-1][:rows], columns=["time", "step", "best", "bound", "gap"])


#: The message of a solve's last point, before the claim's label ("final: Optimal over kept thresholds").
FINAL = "final: "


def closed_points(history: Sequence[dict[str, Any]], record: SolveRecord | None) -> list[dict[str, Any]]:
    """The progress points of a solve, closed by its final record once it has ended: the last point
    says the claim's label ("final: Proven optimal", "final: Constant tree (promise)") instead of the
    engine's "certified optimal" (which an internal fit of a promise, or a certificate over kept
    thresholds, would overstate); a point of its own when the record's values differ from the last."""
    points = [dict(p) for p in history]
    if record is None:
        return points
    final = FINAL + claim(record).short
    last = points[-1] if points else None
    if last is not None and (record.objective, record.bound) == (last.get("objective"), last.get("bound")) \
            and not last.get("stage"):
        last["message"] = final
        return points
    elapsed = max(record.runtime, last["elapsed"] if last else 0.0)
    # a promise's tree may count other rows than the fits drawn (the holdout's fitting part): logged, not drawn
    points.append({"elapsed": elapsed, "objective": record.objective, "bound": record.bound, "gap": record.gap,
                   "nodes": last["nodes"] if last else 0, "message": final, "log_only": bool(record.promise)})
    return points


def _what_changed(point: dict[str, Any], previous: dict[str, Any] | None) -> str:
    if previous is None:
        return "first report"
    better = point["objective"] != previous["objective"]
    tighter = point["bound"] != previous["bound"]
    if better and tighter:
        return "better tree, tighter bound"
    return event_words("new incumbent") if better else event_words("bound")
