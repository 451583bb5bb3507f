"""Progress of a solve, or of a sweep's points, on standard error.

A solve: on a terminal, a bar redrawn in place once the solve has run for
:data:`BAR_AFTER` seconds: the time used against the limit, then the best
objective, the bound and the gap.  Elsewhere (a log, a pipe) no bar: one line
whenever the best tree changes or the solver has news, and at most every
:data:`LOG_EVERY` seconds otherwise.  A sweep: a bar of the points done (and the
last one's settings and result) on a terminal, one line per finished point elsewhere.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from typing import TextIO

#: Seconds before the bar appears (a quick solve shows none).
BAR_AFTER = 1.0
#: Seconds between two log lines when nothing changed.
LOG_EVERY = 5.0
#: Characters of the bar itself, and of the whole line at most.
BAR_WIDTH, LINE_WIDTH = 24, 110


def reading_line(reading) -> str:
    """A read in progress: ``patterns: 3,250,000 / 10,000,000 rows  591,689 patterns  712 MB``."""
    rows = f"{reading.rows_read:,}" + (f" / {reading.rows_total:,}" if reading.rows_total else "") + " rows"
    parts = [f"reading ({reading.stage}): {rows}"]
    if reading.patterns:
        parts.append(f"{reading.patterns:,} patterns")
    if reading.memory:
        parts.append(f"{reading.memory / 2**20:,.0f} MB in use")
    return "  ".join(parts)


def _figures(ev) -> list[str]:
    """Best objective, bound and gap of a progress event, those it has (what a read has done, during one)."""
    if getattr(ev, "reading", None) is not None:
        return [reading_line(ev.reading)]
    parts = []
    if ev.objective is not None:
        parts.append(f"best {ev.objective:.4g}")
    if ev.bound is not None:
        parts.append(f"bound {ev.bound:.4g}")
    if ev.gap is not None:
        parts.append(f"gap {100 * ev.gap:.2f}%")
    return parts


#: The search's news as a log line says it: the search closing is no claim of its own (over which
#: thresholds, under which promise, the outcome's "proof:" line says once the fit has ended).
LOG_NEWS = {"certified optimal": "search closed (bound met)"}


def describe(ev) -> str:
    """One log line of a progress event: time, best, bound, gap, nodes, news."""
    if getattr(ev, "reading", None) is not None:
        return f"{ev.elapsed:6.1f}s  {reading_line(ev.reading)}"
    parts = [f"{ev.elapsed:6.1f}s", *_figures(ev), f"nodes {ev.nodes}"]
    if ev.message:
        parts.append(LOG_NEWS.get(ev.message, ev.message))
    return "  ".join(parts)


def bar(elapsed: float, limit: float, ev=None) -> str:
    """The terminal line: ``[#####·······]  12.3s / 60s  best 559  bound 560  gap 0.18%``."""
    done = min(1.0, elapsed / limit) if limit > 0 and math.isfinite(limit) else 0.0
    filled = int(round(done * BAR_WIDTH))
    parts = [f"[{'#' * filled}{'·' * (BAR_WIDTH - filled)}]", f"{elapsed:5.1f}s / {limit:g}s"]
    return "  ".join(parts + ([] if ev is None else _figures(ev)))[:LINE_WIDTH]


class _Screen:
    """Standard error as a terminal (a bar redrawn in place) or a log (lines); shared by the bars below."""

    def __init__(self, stream: TextIO | None, clock) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.clock = clock
        self.start = clock()
        self.latest = None
        self.drawn = False
        self.lock = threading.RLock()  # a signal handler may write while the main thread holds it

    def draw(self, line: str) -> None:
        with self.lock:
            self.stream.write("\r" + line[:LINE_WIDTH].ljust(LINE_WIDTH))
            self.stream.flush()
            self.drawn = True

    def log(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()

    def say(self, text: str) -> None:
        """A line of its own (the bar, if any, is cleared first and redrawn by the next tick)."""
        with self.lock:
            self._clear()
            self.log(text)

    def end(self) -> None:
        with self.lock:
            self._clear()

    def _clear(self) -> None:
        if self.drawn:
            self.stream.write("\r" + " " * LINE_WIDTH + "\r")
            self.stream.flush()
            self.drawn = False


class Progress(_Screen):
    """Receives the solve's progress events (from the solving thread) and draws them.

    Call :meth:`tick` from the waiting thread a few times a second (it redraws the
    bar), :meth:`say` for a line of its own, and :meth:`end` when the solve is over.
    """

    def __init__(self, time_limit: float, stream: TextIO | None = None, clock=time.monotonic) -> None:
        super().__init__(stream, clock)
        self.limit = time_limit
        self.last_time = -math.inf
        self.last_best: float | None = None

    def __call__(self, ev) -> None:
        """A progress event of the solve."""
        with self.lock:
            self.latest = ev
            if self.tty:
                return
            news = getattr(ev, "reading", None) is None and (ev.objective != self.last_best or ev.message)
            if ev.elapsed - self.last_time >= LOG_EVERY or news:  # a read's lines: every LOG_EVERY seconds
                self.log(describe(ev))
                self.last_time = ev.elapsed
                self.last_best = ev.objective

    def tick(self) -> None:
        """Redraw the bar (terminal only, after :data:`BAR_AFTER` seconds)."""
        elapsed = self.clock() - self.start
        if not self.tty or elapsed < BAR_AFTER:
            return
        with self.lock:
            self.draw(bar(elapsed, self.limit, self.latest))

def point_line(ev) -> str:
    """One log line of a finished sweep point: count, time, settings, status, accuracy and gap."""
    row = ev.row
    settings = [f"d={row.get('depth')}"]
    if row.get("fairness"):
        settings.insert(0, f"{row['fairness']} δ={row['fairness_bound']:g}")
    if row.get("regularization"):
        settings.append(f"λ={row['regularization']:g}")
    parts = [f"{ev.done}/{ev.total}", f"{ev.elapsed:6.1f}s", " ".join(settings),
             "certified" if row.get("certified") else str(row.get("status"))]
    accuracy, gap = row.get("train_accuracy"), row.get("train_gap")
    if accuracy is not None and accuracy == accuracy:
        parts.append(f"acc {accuracy:.4f}")
    if gap is not None and gap == gap:
        parts.append(f"gap {gap:.4f}")
    return "  ".join(parts)


class SweepBar(_Screen):
    """Receives the finished points of a sweep (from the sweeping thread) and draws them:
    on a terminal a bar of points done, redrawn by :meth:`tick`; elsewhere one line per point."""

    def __init__(self, total: int, stream: TextIO | None = None, clock=time.monotonic) -> None:
        super().__init__(stream, clock)
        self.total = total

    def __call__(self, ev) -> None:
        with self.lock:
            self.latest = ev
            if not self.tty:
                self.log(point_line(ev))

    def tick(self) -> None:
        if not self.tty:
            return
        with self.lock:
            done = 0 if self.latest is None else self.latest.done
            filled = int(round(BAR_WIDTH * done / self.total)) if self.total else BAR_WIDTH
            line = f"[{'#' * filled}{'·' * (BAR_WIDTH - filled)}]  {done}/{self.total} points  {self.clock() - self.start:5.1f}s"
            if self.latest is not None:
                line += "  last: " + point_line(self.latest).split("  ", 2)[2]
            self.draw(line)
