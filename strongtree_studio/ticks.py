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
