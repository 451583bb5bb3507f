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


#: The constraints as the library's errors name them ("The constraints: min_recall, statistical_parity."), and an
#: objective other than accuracy ("objective balanced_accuracy").
_CONSTRAINT_NAMES = re.compile(r"\b(objective )?(min_recall|min_precision|min_specificity|statistical_parity|"
                               r"conditional_statistical_parity|predictive_equality|equal_opportunity|equalized_odds|"
                               r"balanced_accuracy|worst_case_accuracy|sensitivity)\b")


def _constraint_name(found: re.Match) -> str:
    from strongtree_core.vocabulary import FAIRNESS_NOTIONS, OBJECTIVES, setting_name

    objective, key = found.groups()
    if objective:
        return f"objective {OBJECTIVES[key].lower()}" if key in OBJECTIVES else found.group(0)
    if key in FAIRNESS_NOTIONS:
        return FAIRNESS_NOTIONS[key]
    return setting_name(key) if key.startswith("min_") else key


def page_words(message: str) -> str:
    """A library note or error with its parameter names said as the Model page names the settings:
    "max_thresholds=57" reads "57 thresholds per numeric column (numeric coding “x ≤ t from the data”)", the
    constraints "min_recall, statistical_parity" read "Min. recall, Statistical parity"."""
    from strongtree_core.vocabulary import setting_name
    from strongtree_studio.data.choices import ENCODINGS

    message = _CONSTRAINT_NAMES.sub(_constraint_name, message)
    return _MAX_THRESHOLDS.sub(lambda m: f"{m.group(1)} {setting_name('max_thresholds', inside=True)} "
                                         f"({setting_name('encoding', inside=True)} “{ENCODINGS['data']}”)", message)
