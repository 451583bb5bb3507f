"""From the user's choices to a solve job, and from a finished job to a stored run."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable

import numpy as np

from strongtree_core.tree import FitContext, FittedTree
from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig, SplitTables
from strongtree_studio.data.evaluation import evaluate, headline
from strongtree_studio.views.explain import FAIRNESS_NOTIONS
from strongtree_studio.jobs.job_registry import Job, drawn_point
from strongtree_studio.stores.run_history import RunEntry, RunStore, RunStoreError
from strongtree_studio.jobs.worker import SolveSpec

#: Time limit of the comparison tree without fairness constraints (seconds).
BASELINE_TIME_LIMIT = 20.0

ERR_SAVE = "This run could not be stored in the history, so the Runs page will not list it. {reason}"
ERR_MEASURE = "The tree was found but could not be measured on these rows: {reason}"
#: Record message of the last tree a solve reported before its process ended without a result.
MSG_LAST_TREE = "The solve ended without a final result ({reason}); this is the last tree it reported, not proven optimal."
#: Record message of the last tree a solve reported before its server stopped (killed, crashed, restarted).
MSG_SERVER_STOPPED = ("The server stopped during the solve (it was killed or restarted); this is the last tree the "
                      "solve reported, not proven optimal.")


@dataclass(frozen=True)
class SolveContext:
    """What a finished solve needs to be measured and stored."""

    dataset: str
    fingerprint: str
    roles: Roles
    split: SplitConfig
    model: ModelConfig
    tables: SplitTables
    owner: str = ""  # the session or workspace the run belongs to (see strongtree_studio.stores.run_history)
    codes: dict = field(default_factory=dict)  # column -> {"kind", "labels"}: how coded columns were read

    def with_context(self, tree: FittedTree) -> FittedTree:
        """``tree`` with the run's table name, split and column readings added to its fit context, so that its
        file alone lets ``strongtree report`` re-make the same rows (see :mod:`strongtree_core.tree.context`)."""
        context = tree.context or FitContext(self.roles.protected, self.roles.legitimate, self.roles.pos_label)
        return replace(tree, context=replace(context, split=asdict(self.split), dataset=self.dataset,
                                             codes=dict(self.codes)))

    def config(self) -> dict[str, Any]:
        """The choices as JSON-ready data (stored with the run)."""
        return {"roles": asdict(self.roles), "split": asdict(self.split), "model": asdict(self.model)}


def solve_spec(context: SolveContext) -> SolveSpec:
    """The worker's request: training rows, estimator settings and (with fairness) the comparison solve."""
    roles, model = context.roles, context.model
    train = context.tables.train
    X = train[roles.model_columns(train)]
    baseline = None
    if model.fairness:
        # The comparison takes the fastest exact route (often the dynamic program).
        baseline = replace(model.without_fairness(), formulation="auto").estimator_params(roles)
        baseline["time_limit"] = min(model.time_limit, BASELINE_TIME_LIMIT)
    return SolveSpec(
        X=X,
        y=train[roles.target],
        params=model.estimator_params(roles),
        sensitive=tuple(roles.protected),
        legitimate=tuple(roles.legitimate),
        baseline_params=baseline,
    )


@dataclass(frozen=True)
class Outcome:
    """A finished job's stored run (kept on the job as ``job.outcome``); ``error``
    says why it could not be measured or saved."""

    entry: RunEntry | None
    error: str = ""


def last_reported(tree_json: str, reason: str, stopped: bool) -> str:
    """The last incumbent of a solve that ended without a result, as a finished tree:
    status ``interrupted`` after a Stop, else ``error``; the record says why."""
    tree = FittedTree.from_json(tree_json)
    record = replace(tree.record, status="interrupted" if stopped else "error",
                     message=MSG_LAST_TREE.format(reason=reason.rstrip(".")), certified=False)
    return replace(tree, record=record).to_json()


def journal_entry(context: SolveContext, main, previous: RunEntry | None = None) -> RunEntry:
    """What a running solve has reported so far, as the run a killed server leaves behind: its last tree
    marked interrupted (:data:`MSG_SERVER_STOPPED`) with the last bound reported, measured on the rows;
    before any tree, the settings alone.  ``main`` is the job's main phase; ``previous`` the last entry
    written (its measures are reused while the tree is the same).  Of a fit made of several fits (a promise),
    the bound is the one the fit that reported the tree reached (another fit bounds other rows or another
    training bound); the time is the whole fit's."""
    latest = next((p for p in reversed(main.history)
                   if drawn_point(p) and (main.tree is None or p.get("stage", "") == main.tree_stage)), {})
    numbers = {k: latest.get(k) for k in ("objective", "bound", "gap")}
    elapsed = main.history[-1].get("elapsed") if main.history else None
    summary = {"depth": context.model.depth,
               "fairness": ", ".join(FAIRNESS_NOTIONS[n].name for n in context.model.fairness) or "none",
               "fairness_bound": context.model.fairness_bound if context.model.fairness else None}
    if main.result is not None:  # the tree is final (the comparison tree without fairness is being solved)
        return build_entry(context, main.result, None)
    if main.tree is None:
        return RunEntry(context.dataset, context.fingerprint, "interrupted", context.config(),
                        {**summary, **{k: v for k, v in numbers.items() if v is not None}}, owner=context.owner)
    tree = FittedTree.from_json(main.tree)
    record = replace(tree.record, status="interrupted", certified=False, message=MSG_SERVER_STOPPED,
                     bound=numbers["bound"] if numbers["bound"] is not None else tree.record.bound,
                     gap=numbers["gap"] if numbers["gap"] is not None else tree.record.gap,
                     runtime=float(elapsed if elapsed is not None else tree.record.runtime or 0.0))
    tree_json = context.with_context(replace(tree, record=record)).to_json()
    if previous is None or previous.tree is None or not _same_tree(previous.tree, tree_json):
        previous = build_entry(context, tree_json, None)  # a new tree: measured on the rows
    return replace(previous, tree=tree_json, summary={**previous.summary, "bound": record.bound, "gap": record.gap})


def _same_tree(a: str, b: str) -> bool:
    """Whether two stored trees split and predict alike (their records may differ)."""
    x, y = FittedTree.from_json(a).structure, FittedTree.from_json(b).structure
    return (x.depth == y.depth and np.array_equal(x.feature, y.feature)
            and np.array_equal(x.prediction, y.prediction))


def build_entry(context: SolveContext, tree_json: str, baseline_json: str | None) -> RunEntry:
    """Measure the trees on the job's rows and package them as a run."""
    tree = context.with_context(FittedTree.from_json(tree_json))
    tree_json = tree.to_json()
    baseline = FittedTree.from_json(baseline_json) if baseline_json else None
    evaluation = evaluate(tree, context.tables, context.roles, context.model, baseline)
    record = tree.record.to_dict()
    summary = {
        "depth": context.model.depth,
        "fairness": ", ".join(FAIRNESS_NOTIONS[n].name for n in context.model.fairness) or "none",
        "fairness_bound": context.model.fairness_bound if context.model.fairness else None,
        **headline(evaluation, record),
    }
    return RunEntry(
        dataset=context.dataset,
        fingerprint=context.fingerprint,
        status=tree.record.status,
        config=context.config(),
        summary=summary,
        evaluation=evaluation,
        tree=tree_json,
        baseline=baseline_json,
        owner=context.owner,
    )


def finish_job(job: Job, open_store: Callable[[], RunStore]) -> None:
    """``on_finished`` hook of the job registry: measure, store, and attach the outcome to the job.

    A solve that ended without a result but reported a tree (its process was
    killed, hung or failed) is stored with that tree (see :func:`last_reported`).
    ``open_store`` opens the history; when it cannot, the outcome says why.
    """
    context: SolveContext | None = job.context
    main = job.phases["main"]
    if context is None or (main.result is None and main.tree is None):
        return
    tree_json = main.result
    if tree_json is None:
        reason = job.failure or main.error or "no reason was given"
        tree_json = last_reported(main.tree, reason, stopped=job.stop_requested is not None)
    baseline = job.phases.get("baseline")
    try:
        entry = build_entry(context, tree_json, baseline.result if baseline else None)
    except ValueError as err:  # metrics refuse these rows (e.g. a split without the positive class)
        job.outcome = Outcome(None, ERR_MEASURE.format(reason=err))
        drop_journal(job, open_store)
        return
    try:
        store = open_store()
        if job.run_id is not None:  # journaled while it ran: the same run gets its result
            store.update(job.run_id, entry, final=True)
            entry = replace(entry, id=job.run_id)
        else:
            entry = replace(entry, id=store.save(entry))
    except RunStoreError as err:
        job.outcome = Outcome(entry, ERR_SAVE.format(reason=err))
        return
    job.run_id = entry.id
    job.outcome = Outcome(entry)


def journal_job(job: Job, open_store: Callable[[], RunStore], server: str) -> None:
    """``on_progress`` hook of the job registry: write what the solve has reported so far into its run
    (made when the solve starts, status running, not listed), so that a server killed mid-solve leaves
    the run behind with its last tree and bound (:meth:`RunStore.recover` marks it interrupted).
    A history that cannot be written is left alone: the solve goes on and its end says so."""
    context: SolveContext | None = job.context
    if context is None or not isinstance(context, SolveContext):
        return
    try:
        entry = journal_entry(context, job.phases["main"], job.journaled)
        store = open_store()
        if job.run_id is None:
            job.run_id = store.begin(entry, job.id, server)
        else:
            store.update(job.run_id, entry)
        job.journaled = entry
    except (RunStoreError, ValueError):
        return


def drop_journal(job: Job, open_store: Callable[[], RunStore]) -> None:
    """``on_dropped`` hook: a solve that ended without any tree leaves no run (its page says why)."""
    if job.run_id is None:
        return
    try:
        open_store().drop_running(job.run_id)
    except RunStoreError:
        pass
    job.run_id = None
