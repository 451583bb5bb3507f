"""What a solve proved, in words: one function, :func:`claim`, for every surface.

The dashboard's banner (Solve), the Tree, Fairness and Runs pages, the HTML report, the
command line's text and JSON, the exports and the warnings all write a solve's outcome
from :func:`claim` of its :class:`~strongtree_core.tree.SolveRecord`, so that no surface
says more than another, and none more than the proof:

* a certificate holds over the trees the search could build: of the record's depth,
  asking the thresholds the encoding kept (``record.scope``).  When some distinct cut of a
  numeric column was left out, the words say "optimal over the N of M thresholds kept",
  never "no tree of this depth does better";
* a promise about new rows (``record.promise``) is *estimated* (methods ``subsample``,
  ``bootstrap``, ``crossfit``, ``margin``: asymptotic, their coverage measured by
  simulation) or *proved* (``holdout``: an exact test on held-out rows), and says which;
* a constant tree that keeps a promise is called what it is, with the smallest gap a
  tree that splits could promise; it never reads "Proven optimal".

``benchmarks/claim_table.py`` prints from these functions the words each surface shows for a
record (the table of benchmarks/RESULTS.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Mapping

from strongtree_core.metrics.promise import PROMISE_KNOWN
from strongtree_core.tree.record import SolveRecord
from strongtree_core.tree.scope import Scope
from strongtree_core.words import bound_words, count_of, fmt, gap_words, label_text, one_line, status_word

ClaimState = Literal["certified", "kept_thresholds", "not_proven", "infeasible", "constant", "heuristic", "running",
                     "other"]
PromiseState = Literal["estimated", "proved", "constant"]

KEPT_LABEL = "Optimal over kept thresholds"
CONSTANT_LABEL = "Constant tree (promise)"
INFEASIBLE_KEPT_LABEL = "No tree fits (kept thresholds)"
PROMISE_LABELS = {"estimated": "promise estimated", "proved": "promise proved"}
#: The bound of a constant tree a promise left: its own solve's bound holds over constant trees only.
CONSTANT_BOUND = "none for a tree that splits (the constant tree's bound holds over constant trees only)"
#: Its gap: without a bound on the trees that split, none.
CONSTANT_GAP = "no gap (no bound on a tree that splits)"
#: What a gap of 0 proves, on a surface that does not know the outcome yet (the chart of a solve, while it runs).
GAP_ZERO = "no tree the search can build does better (the outcome says which trees those are)"
#: A bound while a solve runs (its scope is known once it ends).
BOUND_HELP_RUNNING = "No tree of this depth asking the questions of its encoding can do better than this (proven)."


@dataclass(frozen=True)
class Claim:
    """A solve's outcome in words.

    Attributes
    ----------
    state : str
        ``certified`` (over every threshold), ``kept_thresholds`` (certified over the thresholds
        kept), ``not_proven``, ``infeasible``, ``constant`` (a constant tree a promise left),
        ``heuristic``, ``running`` or ``other``.
    promise_state : str or None
        ``estimated``, ``proved`` or ``constant`` with a promise on new rows, else None.
    label : str
        A badge or a table cell: "Proven optimal", "Optimal over kept thresholds", ...
    sentence : str
        What was proved (or not), in one or two sentences, ending with a full stop.
    promise : str
        The promise on new rows in plain words ("" without one).
    bound : str
        Of a solve not proven optimal, what its bound says, the last sentence of ``sentence``
        ("No tree of depth 2 can do better than the bound 52.", or that there is none yet).
    icon, colour : str
        For badges (Material icon name, a Streamlit badge colour); never green beside a
        constant tree or a certificate over kept thresholds.
    """

    state: str
    label: str
    sentence: str
    icon: str
    colour: str
    promise_state: str | None = None
    promise: str = ""
    bound: str = ""

    @property
    def promise_label(self) -> str:
        """"promise estimated" / "promise proved" ("" without a promise, and for a constant tree,
        whose label says it already)."""
        return PROMISE_LABELS.get(self.promise_state or "", "")

    @property
    def short(self) -> str:
        """The label with the promise's: "Proven optimal · promise estimated"."""
        return self.label + (f" · {self.promise_label}" if self.promise_label else "")

    @property
    def words(self) -> str:
        """The sentence and the promise, as one paragraph."""
        return " ".join(part for part in (self.sentence, self.promise) if part)


def _depth(scope: Scope | None) -> str:
    return "of this depth" if scope is None or scope.depth is None else f"of depth {scope.depth}"


def _rows(record: SolveRecord) -> str:
    return f"on these {count_of(record.n_rows, 'training row')}" if record.n_rows else "on the training rows"


def _kept(scope: Scope) -> str:
    """ "asking only the 48 of the 171 thresholds kept" (the distinct cuts of the numeric columns)."""
    if scope.thresholds is None:  # thinned by the ladder, its thresholds not counted: no count to give
        return "asking only the questions kept"
    if scope.distinct_thresholds is None:
        return f"asking only the {count_of(scope.thresholds, 'threshold')} kept"
    return (f"asking only the {fmt(scope.thresholds, 'int')} of the {fmt(scope.distinct_thresholds, 'int')} "
            "thresholds kept")


def _trees(record: SolveRecord) -> str:
    """The trees a certificate or a bound holds over: "of depth 2", or "of depth 2 asking only the 12 of the 128
    thresholds kept" when some distinct cut was left out."""
    scope = record.scope
    kept = scope is not None and (scope.thinned or scope.unknown)
    return _depth(scope) + (f" {_kept(scope)}" if kept else "")


def _why_kept(scope: Scope) -> str:
    """Where the other thresholds went, and how to keep them (the setting's name on every surface)."""
    if scope.ladder_thinned:
        return (f" The time allowed a proof over {fmt(scope.questions, 'int')} of the encoding's "
                f"{fmt(scope.encoded_questions, 'int')} questions; a longer time limit may prove more.")
    return ""


def _training_bound(promise: Mapping | None) -> str:
    """With a promise, the training bound it tightened the constraint to (a constant tree's words say no more
    than the promise's, :func:`claim`)."""
    if promise is not None:
        return f", with the fairness bound tightened to {fmt(promise.get('training_bound'), 'points')} on them"
    return ""


def _certificate(record: SolveRecord) -> tuple[str, str, str, str, str, str]:
    """(state, label, sentence, icon, colour, bound sentence) of the certificate alone."""
    scope, promise = record.scope, record.promise
    status = record.status
    depth = _depth(scope)
    kept = scope is not None and (scope.thinned or scope.unknown)
    if status == "optimal" and record.certified:
        if kept:
            sentence = (f"No tree {depth} {_kept(scope)} does better {_rows(record)} under these constraints"
                        f"{_training_bound(promise)}; a tree asking another threshold may do better."
                        + _why_kept(scope))
            return "kept_thresholds", KEPT_LABEL, sentence, ":material/filter_alt:", "blue", ""
        every = (" (every threshold of the numeric columns was searched)"
                 if scope is not None and scope.thresholds else "")
        asking = " asking the questions of its encoding" if scope is None else ""  # made before the scope was kept
        sentence = (f"No tree {depth}{asking} does better {_rows(record)} under these constraints"
                    f"{_training_bound(promise)}{every}.")
        word = status_word("optimal")
        return "certified", word.label, sentence, word.icon, word.colour, ""
    if status == "infeasible":
        if kept:
            sentence = (f"No tree {depth} {_kept(scope)} satisfies all the constraints together {_rows(record)}; "
                        "a tree asking another threshold might." + _why_kept(scope))
            return "infeasible", INFEASIBLE_KEPT_LABEL, sentence, ":material/block:", "red", ""
        word = status_word("infeasible")
        return "infeasible", word.label, f"No tree {depth} satisfies all the constraints together {_rows(record)}.", \
            word.icon, word.colour, ""
    word = status_word(status)
    sentence = word.sentence[0].upper() + word.sentence[1:] + "."
    if status == "heuristic":
        return "heuristic", word.label, sentence, word.icon, word.colour, ""
    if status == "running":
        return "running", word.label, sentence, word.icon, word.colour, ""
    if status not in ("time_limit", "time_limit_no_tree", "interrupted", "error"):
        return "other", word.label, sentence, word.icon, word.colour, ""
    if record.bound is None:
        bound = "No bound yet: nothing is proven about how far it is from the best tree."
    else:
        bound = f"No tree {_trees(record)} can do better than the bound {fmt(record.bound)}."
    return "not_proven", word.label, f"{sentence} {bound}", word.icon, word.colour, bound


def _class_words(value: Any) -> str:
    """A class in a sentence: a text label quoted and visible as the rules write it (:func:`label_text`: an empty
    one reads "(empty)", a NUL byte "\\x00", its backslashes as typed), so a surface that cuts long names finds it
    whole; another value as Python writes it."""
    return f"'{label_text(value)}'" if isinstance(value, str) else one_line(repr(value))


def _promise(record: SolveRecord) -> tuple[str | None, str]:
    """(promise state, its words) of a record's promise on new rows."""
    promise = record.promise
    if not promise:
        return None, ""
    method = str(promise.get("method", ""))
    known = promise.get("known") or PROMISE_KNOWN.get(method, "estimated")
    delta = fmt(promise.get("delta"), "points")
    confidence = f"{round(100 * float(promise.get('confidence', 0)))} %"
    if promise.get("constant"):
        smallest = promise.get("smallest_delta")
        predicts = promise.get("predicts")
        what = f"predicts {_class_words(predicts)} for every row" if predicts is not None else \
            "predicts one class for every row"
        words = f"Only a constant tree keeps the promise on new rows: it {what}, so its gap is 0 on any rows. "
        if known == "proved":
            words += (f"No tree that splits passed the exact test on the held-out rows ({method} method) for a gap "
                      f"within {delta} at {confidence} confidence")
            words += (f"; the first one tested would have passed at {fmt(smallest, 'points')}, a bound read after the "
                      "test (not a proved promise)." if smallest is not None else ".")
        else:
            words += (f"No tree that splits could be shown to keep the gap on new rows within {delta} with "
                      f"{confidence} confidence (estimated, {method} method)")
            words += (f"; the smallest gap a tree that splits could promise here is estimated at "
                      f"{fmt(smallest, 'points')}." if smallest is not None else
                      "; no smaller gap can be named for a tree that splits.")
        return "constant", words
    if known == "proved":
        held = promise.get("held_out_rows")
        on = f" on {count_of(int(held), 'held-out row')}" if held else " on held-out rows"
        words = (f"Its gap on new rows of the same population is at most {delta} with probability at least "
                 f"{confidence}: proved by an exact test{on} ({method} method).")
        return "proved", words
    words = (f"Its gap on new rows of the same population is estimated to stay within {delta} with {confidence} "
             f"confidence ({method} method): an estimate whose coverage was measured by simulation, not a proof.")
    return "estimated", words


def claim(record: SolveRecord) -> Claim:
    """The words of a solve's outcome (see the module): its certificate over its scope, and its promise.

    Examples
    --------
    >>> from strongtree_core.tree import SolveRecord
    >>> from strongtree_core.tree.scope import Scope
    >>> kept = SolveRecord("optimal", objective=48, bound=48, certified=True, n_rows=58,
    ...                    scope=Scope(depth=2, thresholds=48, distinct_thresholds=171, widest_column=57))
    >>> claim(kept).label
    'Optimal over kept thresholds'
    >>> claim(kept).sentence[:76]
    'No tree of depth 2 asking only the 48 of the 171 thresholds kept does better'
    """
    state, label, sentence, icon, colour, bound = _certificate(record)
    promise_state, promise = _promise(record)
    if promise_state == "constant":
        state, label, icon, colour = "constant", CONSTANT_LABEL, ":material/warning:", "orange"
        sentence = ""  # the constant tree's optimality among constant trees is no claim worth making
    return Claim(state=state, label=label, sentence=sentence, icon=icon, colour=colour,
                 promise_state=promise_state, promise=promise, bound=bound)


def tree_claim(tree_json: str) -> Claim | None:
    """The claim of a stored tree's JSON (its record, with the promise and the scope kept beside it) without
    reading the tree itself; None for JSON that holds no record (other jobs' results).  A record this version
    cannot read is said by its status alone."""
    import json

    from strongtree_core.tree.record import STATUSES

    data = json.loads(tree_json)
    record = data.get("record") if isinstance(data, dict) else None
    if not isinstance(record, dict) or "status" not in record:
        return None
    beside = {key: data[name] for key, name in (("promise", "fairness_promise"), ("scope", "certificate_scope"))
              if data.get(name)}
    try:
        return claim(SolveRecord.from_dict({**record, **beside}))
    except (TypeError, ValueError):
        return claim(SolveRecord(record["status"] if record["status"] in STATUSES else "error"))


def bound_and_gap(record: SolveRecord, objective: str | None = None, regularization: float = 0.0,
                  n_rows: int | None = None) -> tuple[str, str]:
    """A record's bound and gap as a surface writes them ("at most 426 correct rows (71.0%)", "gap 0.0%"); of a
    constant tree a promise left, none (:data:`CONSTANT_BOUND`): its solve's bound, over constant trees only, is
    no bound on the trees of the record's depth."""
    if claim(record).state == "constant":
        return CONSTANT_BOUND, CONSTANT_GAP
    return bound_words(record.bound, record.status, objective, regularization, n_rows), \
        gap_words(record.status, record.gap)


def bound_help(record: SolveRecord | None) -> str:
    """What a bound beside a record proves, over the trees its certificate covers (while the solve runs, ``None``:
    the trees asking its encoding's questions)."""
    if record is None:
        return BOUND_HELP_RUNNING
    if claim(record).state == "constant":
        return f"Only a constant tree keeps the promise; its bound: {CONSTANT_BOUND}."
    if record.bound is None:
        return f"No bound: {bound_words(None, record.status)}."
    return (f"No tree {_trees(record)} can do better than this on the training rows under these constraints"
            f"{_training_bound(record.promise)} (proven).")


def gap_help(record: SolveRecord | None) -> str:
    """What a gap of 0 means beside a record: no tree its certificate covers does better."""
    if record is not None and claim(record).state == "constant":
        return f"Only a constant tree keeps the promise: {CONSTANT_GAP}."
    trees = "of this depth asking the questions of its encoding" if record is None else _trees(record)
    return f"(bound − best tree) / best tree: 0 means no tree {trees} does better."


def claim_json(record: SolveRecord) -> dict[str, Any]:
    """The claim for machine readers: state, promise state, label, words and the scope's counts."""
    said = claim(record)
    return {"claim": said.state, "promise": said.promise_state, "label": said.short, "words": said.words,
            "scope": None if record.scope is None else record.scope.to_dict()}


def banner_words(record: SolveRecord) -> str:
    """The Solve page's banner (markdown): the label in bold, then the words."""
    said = claim(record)
    return f"**{said.short}**  \n{said.words}"


def cli_lines(record: SolveRecord) -> list[str]:
    """The command line's lines about the outcome: the label with the status key, then the words."""
    said = claim(record)
    return [f"outcome: {said.short} (status {record.status})", f"proof: {said.words}"]
