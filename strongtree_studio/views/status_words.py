"""The dashboard's words: the formatter and solve statuses of
:mod:`strongtree_core.words` (shared with the report and the command line),
and what a job and a comparison of formulations are doing.

Numbers reach the user through :func:`fmt` only; counts with their noun
through :func:`count_of`, counts per class through :func:`class_counts`.
Statuses reach the user through :data:`SOLVE_STATUS`, :data:`JOB_STATE` and
:data:`PROGRESS_EVENTS`, never as the raw keys of the library.
"""

from __future__ import annotations

import re
from functools import lru_cache

from strongtree_core.tree.claim import Claim, tree_claim

from strongtree_core.words import (  # noqa: F401  (the one formatter and vocabulary, re-exported for the pages)
    BACKENDS,
    METHODS,
    MISSING,
    POINTS_NOTE,
    SOLVE_STATUS,
    Kind,
    Word,
    backend_words,
    bound_words,
    class_counts,
    count_of,
    fmt,
    gap_words,
    method_words,
    objective_value,
    objective_words,
    one_line,
    route_words,
    status_word,
)

#: Where one run of a comparison of formulations is.
COMPARISON_STEP: dict[str, Word] = {
    "waiting": Word("Waiting", "waiting for the runs before it", ":material/hourglass_top:", "gray"),
    "running": Word("Solving", "solving", ":material/autorenew:", "blue"),
    "done": Word("Done", "done", ":material/check_circle:", "green"),
}

#: What a solve job is doing.
JOB_STATE: dict[str, Word] = {
    "queued": Word("Queued", "waiting for a free solver", ":material/hourglass_top:", "gray"),
    "starting": Word("Starting", "starting the solver", ":material/hourglass_top:", "blue"),
    "running": Word("Solving", "solving", ":material/autorenew:", "blue"),
    "stopping": Word("Stopping", "stopping and keeping the best tree", ":material/stop_circle:", "orange"),
    "baseline": Word("Comparison tree", "solving the tree without fairness constraints, for comparison",
                     ":material/compare:", "violet"),
    "finished": Word("Finished", "finished", ":material/check_circle:", "green"),
    "failed": Word("Failed", "failed", ":material/error:", "red"),
    "cancelled": Word("Cancelled", "cancelled before it started", ":material/cancel:", "gray"),
}

#: The solver's progress messages in words (the exact search's, and the MIO's warm start).
PROGRESS_EVENTS: dict[str, str] = {
    "new incumbent": "better tree",
    "bound": "tighter bound",
    "searching": "searching",
    "certified optimal": "proven optimal",
    "stopped": "stopped, best kept",
    "stage done": "done",
    "": "solver update",
}


def event_words(message: str) -> str:
    """A progress message in words ("warm start: CART" reads "started from CART")."""
    if message.startswith("warm start: "):
        return "start: " + message.removeprefix("warm start: ")
    return PROGRESS_EVENTS.get(message, message)


@lru_cache(maxsize=256)
def claim_of(tree_json: str) -> Claim | None:
    """The claim of a stored tree's JSON (:func:`strongtree_core.tree.claim.tree_claim`), parsed once per text
    (the Solve page's badge, the sidebar and the Trade-offs table ask for the same trees on every rerun)."""
    return tree_claim(tree_json)


#: The thresholds that keep every cut, as the library's notes and errors name them (``max_thresholds=57``).
_MAX_THRESHOLDS = re.compile(r"\bmax_thresholds=(\d+)")


#: The library's sentences that list the settings in force by their parameter names ("{names}":
#: "min_recall, statistical_parity, objective balanced_accuracy"); only those lists are renamed, so that a column
#: or a group the user named "min_recall" keeps its name.
_LISTING = ("engine.routes:INFEASIBLE", "estimator.classifier:INFEASIBLE_KEPT", "engine.routes:BENDERS_COUPLED",
            "formulation.oct:OCT_REFUSED", "formulation.binoct:BINOCT_REFUSED")


def _listed(template: str) -> re.Pattern:
    """The words around ``{names}`` in ``template`` (up to the fields next to it), the list between them captured."""
    before, after = template.split("{names}")
    return re.compile(re.escape(before.rsplit("}", 1)[-1]) + r"(?P<names>[^()]+?)" + re.escape(after.split("{", 1)[0]))


@lru_cache(maxsize=1)
def _setting_lists() -> tuple[re.Pattern, ...]:
    """The patterns of :data:`_LISTING`, and of the note of a constraint part of which was skipped
    (``SKIPPED_NOTE``: "statistical_parity: skipped ..." at the start of a note; the notes are joined by spaces)."""
    import importlib

    from strongtree_core.estimator.classifier import SKIPPED_NOTE
    from strongtree_core.vocabulary import FAIRNESS_NOTIONS, QUALITY_FLOORS

    lists = []
    for where in _LISTING:
        module, name = where.split(":")
        lists.append(_listed(getattr(importlib.import_module(f"strongtree_core.{module}"), name)))
    constraint = "|".join(map(re.escape, (*FAIRNESS_NOTIONS, *QUALITY_FLOORS)))
    skipped = SKIPPED_NOTE.split("{reason}")[0].split("{name}")[1]
    lists.append(re.compile(rf"(?:^|(?<= ))(?P<names>{constraint}){re.escape(skipped)}"))
    return tuple(lists)


@lru_cache(maxsize=1)
def _mixed_column() -> re.Pattern:
    """The library's refusal of a column of numbers with a few texts, its fields captured as written
    (the page says it with the page's remedies, not pandas code)."""
    from strongtree_core.encoding.errors import MIXED_NUMBERS_TEXT
    from strongtree_core.words import message_pattern

    return message_pattern(MIXED_NUMBERS_TEXT)


def _setting_words(name: str) -> str:
    """One setting of such a list as the Model page names it ("min_recall": "Min. recall", "objective
    balanced_accuracy": "objective balanced accuracy"); anything else as it is ("min leaf 5")."""
    from strongtree_core.vocabulary import FAIRNESS_NOTIONS, OBJECTIVES, QUALITY_FLOORS, setting_name

    lead, _, key = name.rpartition(" ")
    if lead in ("objective", "the objective") and key in OBJECTIVES:
        return f"{lead} {OBJECTIVES[key].lower()}"
    if name in FAIRNESS_NOTIONS:
        return FAIRNESS_NOTIONS[name]
    return setting_name(name) if name in QUALITY_FLOORS else name


def _renamed(found: re.Match) -> str:
    text, (start, end) = found.group(0), found.span("names")
    names = ", ".join(_setting_words(name) for name in found["names"].split(", "))
    return text[:start - found.start()] + names + text[end - found.start():]


def page_words(message: str) -> str:
    """A library note or error with its parameter names said as the Model page names the settings:
    "max_thresholds=57" reads "57 thresholds per numeric column (numeric coding “x ≤ t from the data”)", the
    constraints "min_recall, statistical_parity" read "Min. recall, Statistical parity" where the library lists the
    settings in force (:data:`_LISTING`, and a constraint's skipped part), never elsewhere: a column named
    ``min_recall`` in the same text keeps its name."""
    from strongtree_core.vocabulary import setting_name
    from strongtree_studio.data.choices import ENCODINGS

    mixed = _mixed_column().fullmatch(message)
    if mixed:
        from strongtree_studio.data.column_types import MSG_MIXED_COLUMN

        return MSG_MIXED_COLUMN.format(**mixed.groupdict())
    for listing in _setting_lists():
        message = listing.sub(_renamed, message)
    return _MAX_THRESHOLDS.sub(lambda m: f"{m.group(1)} {setting_name('max_thresholds', inside=True)} "
                                         f"({setting_name('encoding', inside=True)} “{ENCODINGS['data']}”)", message)
