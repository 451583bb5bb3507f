"""One number formatter and the solve-status vocabulary for every surface: the
dashboard, the HTML report and the command line.

Numbers reach the user through :func:`fmt` only, so a rate, a gap, a duration
or a count reads the same on a card, in a table, a chart, a report and a
sentence.  A count goes with its noun through :func:`count_of` ("1 row",
"2,525 rows"), and counts per class through :func:`class_counts`
("1: 225 · 2: 525"), so a class name is never glued to a number.  How a
solve ended reaches the user through :data:`SOLVE_STATUS`, never as the raw
keys of the library.

Units: a rate (accuracy, share predicted positive, true-positive rate) is a
percentage; a fairness gap or the bound δ is a difference of two rates, so it
is in percentage points ("pp"): 47.6% and 52.6% differ by 5.0 pp.  A ratio
(the four-fifths rule) is a plain number with two decimals.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Literal, Sequence

Kind = Literal["number", "int", "percent", "points", "ratio", "seconds"]

#: What "pp" means, said once where gaps are shown.
POINTS_NOTE = "Gaps are in percentage points (pp): rates of 47.6% and 52.6% differ by 5.0 pp."
MISSING = "–"


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return math.isnan(float(value))
    except (TypeError, ValueError):
        return False


def fmt(value: Any, kind: Kind = "number") -> str:
    """``value`` for a card, a table cell, a chart label or a sentence ("–" when missing).

    ``number``: whole numbers with thousands separators, others with three
    significant decimals at most; ``int``: rounded, thousands separators;
    ``percent``: a share 0-1 as "75.3%"; ``points``: a difference of shares as
    "4.9 pp"; ``ratio``: "0.91"; ``seconds``: "12.3 s", "2 min 05 s", "1 h 02 min".
    """
    if _missing(value):
        return MISSING
    value = float(value)
    if kind == "int":
        return f"{round(value):,}"
    if kind == "percent":
        return _percent(value)
    if kind == "points":
        points = 100.0 * value
        return f"{points:.1f} pp" if abs(points) >= 0.05 or points == 0 else "<0.1 pp"
    if kind == "ratio":
        return f"{value:.2f}"
    if kind == "seconds":
        return _duration(value)
    if value == round(value) and abs(value) < 1e15:
        return f"{round(value):,}"
    if abs(value) >= 100:
        return f"{value:,.1f}"
    return f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}".rstrip("0").rstrip(".")


def _percent(share: float) -> str:
    percent = 100.0 * share
    if percent == 0 or abs(percent) >= 0.1:
        return f"{percent:.1f}%"
    return "<0.1%" if percent > 0 else "-<0.1%"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        minutes, rest = divmod(int(round(seconds)), 60)
        return f"{minutes} min {rest:02d} s"
    hours, rest = divmod(int(round(seconds)) // 60, 60)
    return f"{hours} h {rest:02d} min"


def count_of(n: int, word: str, plural: str | None = None) -> str:
    """``n`` and ``word``, plural unless ``n`` is 1: "1 solve", "2,525 solves"."""
    return f"{fmt(n, 'int')} " + (word if n == 1 else plural or word + "s")


def class_counts(classes: Sequence[Any], counts: Sequence[float]) -> str:
    """Rows per class, the name apart from its count: "1: 225 · 2: 1,525".

    A coded class written right before its count ("1 225 · 2 525") reads as one
    number with a thousands separator; the colon keeps them apart.
    """
    return " · ".join(f"{label_text(c)}: {fmt(n, 'int')}" for c, n in zip(classes, counts))


def one_line(value: Any) -> str:
    """``value`` as text on one line (control characters written as escapes)."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in str(value))


#: Shown for a label with no character, and for one of spaces only (which would read as nothing).
EMPTY_LABEL = "(empty)"
BLANK_LABEL = "({n} space{s})"
#: Longest label (characters) a drawing shows; a longer one is cut with :data:`CUT_MARK`.
LABEL_LIMIT = 80
#: Longest tooltip (characters) that holds a cut label's text (Graphviz reads no string over 16,384).
TOOLTIP_LIMIT = 2000
CUT_MARK = "…"


def label_text(value: Any) -> str:
    """A label (column name, category value, class or group) as visible text on one line:
    control characters as escapes (:func:`one_line`, so a NUL byte reads ``\\x00``), an empty
    label as :data:`EMPTY_LABEL`, one of spaces only as "(3 spaces)"."""
    return shown_name(one_line(value))


def shown_name(value: Any) -> str:
    """``str(value)``, or :data:`EMPTY_LABEL` / "(3 spaces)" when it is empty or spaces only."""
    text = str(value)
    if not text:
        return EMPTY_LABEL
    if not text.strip(" "):
        return BLANK_LABEL.format(n=len(text), s="" if len(text) == 1 else "s")
    return text


def cut_text(text: str, limit: int = LABEL_LIMIT) -> str:
    """``text`` if it has at most ``limit`` characters, else its first ``limit - 1`` and :data:`CUT_MARK`."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + CUT_MARK


def drawn_text(value: Any) -> str:
    """A label as a drawing or a sentence shows it: visible (:func:`label_text`) and cut to
    :data:`LABEL_LIMIT` characters before any layout (the whole text goes in a tooltip or a table)."""
    return cut_text(label_text(value))


def drawn_test(label: str, source: Any) -> str:
    """A test's text for a drawing: its column's name and the rest of the test each cut on their own
    (a long name keeps its "≤ 7.5"); see :func:`drawn_text`."""
    name = shown_name(source)
    if label.startswith(name + " ") and len(label) > len(name) + 1:
        return f"{drawn_text(name)} {drawn_text(label[len(name) + 1:])}"
    return drawn_text(label)


class Shortened:
    """Names longer than :data:`LABEL_LIMIT` characters shown cut in sentences, before any layout
    (a 20,000-character column name is no sentence); :attr:`full` keeps each cut name's whole text
    for a tooltip or a table.

    ``names`` are the column names, classes, levels and groups a text may hold: :meth:`text` cuts every
    long one met in a sentence (as :func:`label_text` writes it), :meth:`name` cuts one name.
    """

    def __init__(self, names: Sequence[Any]) -> None:
        self.full: dict[str, str] = {}  # cut form -> whole text, in the order met
        self._long: dict[str, str] = {}
        for name in names:
            whole = label_text(name)
            if drawn_text(whole) != whole:
                self._long[whole] = drawn_text(whole)
        self._order = sorted(self._long, key=len, reverse=True)  # a name inside another: the longer first

    @classmethod
    def of_tree(cls, tree: Any, extra: Sequence[Any] = ()) -> "Shortened":
        """For the texts about ``tree``: its target, columns, classes and category levels, and ``extra``."""
        levels = [f.level for f in tree.encoding.features if f.level is not None]
        return cls([tree.target, *tree.feature_names, *tree.classes, *levels, *extra])

    def name(self, value: Any) -> str:
        """``value`` as a label, cut when long (and then kept in :attr:`full`)."""
        whole = label_text(value)
        cut = drawn_text(whole)
        if cut != whole:
            self.full.setdefault(cut, whole)
        return cut

    def text(self, sentence: str) -> str:
        """``sentence`` with every long name in it cut."""
        for whole in self._order:
            if whole in sentence:
                sentence = sentence.replace(whole, self._long[whole])
                self.full.setdefault(self._long[whole], whole)
        return sentence


@dataclass(frozen=True)
class Word:
    """How a status reads: a short label (badges, table cells), a sentence, an icon and a colour."""

    label: str
    sentence: str
    icon: str
    colour: Literal["green", "orange", "red", "blue", "gray", "violet"]


#: How a solve ended (the record's status), "heuristic" for CART and the local search, and
#: in a comparison of formulations a run that was refused or failed.
SOLVE_STATUS: dict[str, Word] = {
    "optimal": Word("Proven optimal", "no tree of this depth does better under these constraints",
                    ":material/verified:", "green"),
    "time_limit": Word("Not proven (time limit)", "the best tree found before the time limit; not proven optimal",
                       ":material/timer_off:", "orange"),
    "time_limit_no_tree": Word("No tree in time", "no tree was found within the time limit",
                               ":material/timer_off:", "red"),
    "infeasible": Word("No tree fits", "no tree of this depth satisfies all the constraints",
                       ":material/block:", "red"),
    "interrupted": Word("Stopped (not proven)", "stopped before the proof; the best tree so far is kept, "
                        "not proven optimal", ":material/stop_circle:", "orange"),
    "error": Word("Ended early (not proven)", "the solver ended without a final answer; this is the last tree it "
                  "reported, not proven optimal", ":material/error:", "red"),
    "running": Word("Best so far", "the best tree so far; the solve is still running", ":material/autorenew:", "blue"),
    "heuristic": Word("Heuristic (no proof)", "a heuristic's tree (greedy or local search): no optimality claim",
                      ":material/bolt:", "gray"),
    "reference": Word("Reference (not a tree)", "a model for comparison: not a tree, no optimality claim",
                      ":material/straighten:", "gray"),
    "refused": Word("Refused", "this formulation cannot take these settings; nothing was solved",
                    ":material/block:", "gray"),
    "failed": Word("Failed", "the solve ended with an error", ":material/error:", "red"),
}

#: Solver backends as the user knows them.
BACKENDS: dict[str, str] = {
    "numpy": "built-in exact search",
    "pystreed": "STreeD dynamic program",
    "highs": "HiGHS",
    "scip": "SCIP",
    "gurobi": "Gurobi",
    "auto": "automatic",
}

#: How a tree was found, as the user knows it (the record's ``method``).
METHODS: dict[str, str] = {
    "exact": "exact search",
    "flow": "FlowOCT",
    "benders": "BendersOCT",
    "dp": "dynamic programming",
    "enumeration": "exhaustive search",
}


#: A solve ended by its time limit or a Stop whose bound meets the best tree: "gap 0.0%" beside "Not proven"
#: read as a contradiction (the words fit both ends: a Stop is no time running out).
GAP_MET_AT_LIMIT = (
    "gap 0.0% (the bound meets the best tree's value, but the solver ended before it declared the proof finished)"
)


#: Where a search has proved no bound better than "every row right": a bound of all the rows
#: would say nothing, so none is shown.
NO_BOUND_YET = "none yet"
#: A heuristic's tree: it never proves a bound.
NO_BOUND_HEURISTIC = "none (a heuristic proves no bound)"


def bound_words(bound: Any, status: str = "running", objective: str | None = None, regularization: float = 0.0,
                n_rows: int | None = None) -> str:
    """A bound for a card, a log row or a sentence: the number (with ``objective``, what it
    caps: "at most 700 correct rows (91.1%)"), else "none yet" (a search stopped or still
    at work before it proved one), or a heuristic's "none"."""
    if not _missing(bound):
        if objective is None:
            return fmt(bound)
        return "at most " + objective_value(bound, objective, regularization, n_rows)
    return NO_BOUND_HEURISTIC if status == "heuristic" else NO_BOUND_YET


def gap_words(status: str, gap: Any) -> str:
    """The gap beside a solve's status: "gap 1.2%", or what a zero gap means when the solve was not proven."""
    if status != "optimal" and not _missing(gap) and float(gap) == 0.0:
        return GAP_MET_AT_LIMIT
    return f"gap {fmt(gap, 'percent')}"


def status_word(status: str) -> Word:
    """The :class:`Word` of a solve status (an unknown one reads as itself, in gray)."""
    return SOLVE_STATUS.get(status) or Word(str(status), str(status), ":material/help:", "gray")


def backend_words(backend: str) -> str:
    return BACKENDS.get(backend, backend)


def method_words(method: str) -> str:
    return METHODS.get(method, method)


def route_words(method: str, backend: str) -> str:
    """How a tree was found: "exact search (built in)", "FlowOCT on HiGHS"."""
    if method == "exact" and backend == "numpy":
        return "exact search (built in)"
    return f"{method_words(method)} on {backend_words(backend)}"


def objective_words(objective: str, regularization: float, n_rows: int | None = None) -> str:
    """What the objective's number counts, in words (the engine states every objective in rows)."""
    base = {
        "accuracy": "correct training rows",
        "balanced_accuracy": "balanced accuracy × training rows",
        "worst_case_accuracy": "worst-class accuracy × training rows",
        "sensitivity": "recall of the positive class × training rows",
    }.get(objective, objective.replace("_", " "))
    if regularization:
        return f"(1 − λ)·{base} − λ·splits, λ = {fmt(regularization)}"
    return base


def objective_value(value: Any, objective: str, regularization: float, n_rows: int | None) -> str:
    """An objective value with its meaning: "569 correct rows (94.8%)" or "75.1% balanced accuracy"."""
    if _missing(value):
        return MISSING
    if regularization:
        return f"score {fmt(value)}"
    share = f" ({fmt(value / n_rows, 'percent')})" if n_rows else ""
    if objective == "accuracy":
        return f"{fmt(value)} correct rows{share}"
    name = {"balanced_accuracy": "balanced accuracy", "worst_case_accuracy": "worst-class accuracy",
            "sensitivity": "recall"}.get(objective, objective)
    return f"{fmt(value / n_rows, 'percent')} {name}" if n_rows else f"{fmt(value)} ({name} × rows)"


def message_pattern(template: str) -> re.Pattern:
    """A regular expression that reads the fields back out of a message ``template`` (``{name}``,
    ``{name!r}``, ``{name:,}``), each as the text the message shows; a field named twice reads the same
    text twice. Another surface then says the library's message in its own words.

    >>> message_pattern("{n:,} rows of {name!r}").match("1,200 rows of 'age'").groupdict()
    {'n': '1,200', 'name': "'age'"}
    """
    parts = re.split(r"\{(\w+)(?:![rs])?(?::[^}]*)?\}", template)
    out, seen = [], set()
    for i, part in enumerate(parts):
        if i % 2 == 0:
            out.append(re.escape(part))
        elif part in seen:
            out.append(f"(?P={part})")
        else:
            seen.add(part)
            out.append(f"(?P<{part}>.+?)")
    return re.compile("".join(out) + "$", re.S)
