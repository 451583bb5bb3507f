"""Round tick values for a chart's axis."""

from __future__ import annotations

import math


def nice_ticks(low: float, high: float, target: int = 5) -> list[float]:
    """Round tick values covering [low, high], about ``target`` of them."""
    span = max(high - low, 1e-9)
    raw = span / target
    step = min((s * 10 ** math.floor(math.log10(raw)) for s in (1, 2, 2.5, 5, 10)),
               key=lambda s: (s < raw, abs(s - raw)))
    start = math.floor(low / step) * step
    ticks = [round(start + i * step, 10) for i in range(int(math.ceil((high - start) / step)) + 1)]
    return [t for t in ticks if low - 1e-9 <= t <= high + 1e-9] or [low]


#: The time axis of the progress charts: seconds written on the labels, no title.
SECONDS_AXIS = {"labelExpr": "datum.label + ' s'", "labelFontSize": 12, "tickMinStep": 0.5}
#: The shortest span the time axis shows (a solve done within a millisecond has all its
#: points at 0 s, and a zero-width axis labels its one tick "0.000000 s").
SHORTEST_SPAN = 1.0


def seconds_x(rows: list[dict]) -> dict:
    """The x encoding of a progress chart whose ``rows`` carry ``seconds``: from 0, at
    least :data:`SHORTEST_SPAN` wide."""
    scale: dict = {"zero": True}
    if max((r["seconds"] for r in rows), default=0.0) < SHORTEST_SPAN:
        scale["domain"] = [0.0, SHORTEST_SPAN]
    return {"field": "seconds", "type": "quantitative", "title": None, "scale": scale, "axis": SECONDS_AXIS}
