"""Solve jobs in worker processes: results, Stop, the queue, crashes and user errors."""

import time

import numpy as np
import pytest

from strongtree_core.estimator.training import NEEDS_SENSITIVE
from strongtree_core.tree import FittedTree
from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig, split_table
from strongtree_studio.data.demo_tables import make_hiring
from strongtree_studio.jobs.job_registry import MSG_CANCELLED, MSG_CRASHED, Job, JobRegistry
from strongtree_studio.jobs.solve_job import ERR_SAVE, MSG_LAST_TREE, SolveContext, finish_job, solve_spec
from strongtree_studio.stores.run_history import ERR_DB, RunStore, RunStoreError
from strongtree_studio.page.status import queue_message
from strongtree_studio.jobs.worker import SolveSpec

ROLES = Roles("hired", "yes", ("gender",), ("education",))
#: A solve that runs for seconds after its first tree (about 9 s to its proof on an idle
#: machine, the first tree within 1 s): FlowOCT at depth 3 with statistical parity on 600 rows.
LONG = ModelConfig(depth=3, formulation="flow", time_limit=120.0, fairness=("statistical_parity",), fairness_bound=0.02,
                   n_buckets=10)


def context(model: ModelConfig, n_rows: int = 800) -> SolveContext:
    tables = split_table(make_hiring(n_rows, seed=7), ROLES, SplitConfig())
    return SolveContext("hiring", "fp", ROLES, SplitConfig(), model, tables)


def wait(registry: JobRegistry, job_id: str, until, timeout: float = 60.0):
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        snapshot = registry.snapshot(job_id)
        if until(snapshot):
            return snapshot
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} never reached the awaited state; last: {registry.snapshot(job_id)}")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return RunStore(tmp_path_factory.mktemp("runs") / "runs.sqlite3")


@pytest.fixture(scope="module")
def registry(store):
    reg = JobRegistry(max_running=1, on_finished=lambda job: finish_job(job, lambda: store))
    yield reg
    reg.shutdown()


@pytest.mark.timing
def test_quick_solve_returns_a_tree_measured_and_stored(registry, store):
    ctx = context(ModelConfig(depth=2, time_limit=30.0), n_rows=300)
    job_id = registry.submit(solve_spec(ctx), ctx)
    done = wait(registry, job_id, lambda s: not s.active)
    assert done.state == "finished", done.message
    assert done.main.history and done.baseline is None
    tree = FittedTree.from_json(done.main.result)
    assert tree.record.status == "optimal"
    # The stored accuracy is the share of correct predictions, recomputed here.
    entry = store.get(done.run_id)
    for split, rows in (("train", ctx.tables.train), ("test", ctx.tables.test)):
        expected = np.mean(tree.predict(rows) == rows["hired"].to_numpy())
        assert entry.evaluation["splits"][split]["quality"]["accuracy"] == pytest.approx(expected)
    assert entry.summary["test_accuracy"] == pytest.approx(entry.evaluation["splits"]["test"]["quality"]["accuracy"])
    stored = FittedTree.from_json(done.outcome.entry.tree)  # the solve's tree, with the run's split and table
    assert stored == ctx.with_context(FittedTree.from_json(done.main.result))
    assert stored.context.split == {"test_size": 0.25, "seed": 0, "stratify": True}


@pytest.mark.timing
def test_stop_keeps_the_best_tree_and_the_queue_waits(registry):
    long_ctx = context(LONG)
    first = registry.submit(solve_spec(long_ctx), long_ctx)
    wait(registry, first, lambda s: s.main.tree is not None)  # an incumbent is shown while solving
    second = registry.submit(solve_spec(long_ctx), long_ctx)
    third = registry.submit(solve_spec(long_ctx), long_ctx)
    queued = registry.snapshot(second)
    assert queued.state == "queued" and queued.queue_position == 1 and queued.running == 1
    assert queue_message(queued, registry.max_running) == (
        "Waiting for a free solver: 1 solve running now (the server runs at most 1 at a time) "
        "and no other solve waiting ahead of this one."
    )
    assert queue_message(registry.snapshot(third), registry.max_running) == (
        "Waiting for a free solver: 1 solve running now (the server runs at most 1 at a time) "
        "and 1 other solve waiting ahead of this one."
    )
    registry.stop(third)
    registry.stop(second)
    cancelled = registry.snapshot(second)
    assert cancelled.state == "cancelled" and cancelled.message == MSG_CANCELLED

    asked = time.monotonic()
    registry.stop(first)
    assert registry.snapshot(first).stop_requested
    stopped = wait(registry, first, lambda s: s.phase == "baseline" or not s.active, timeout=20)
    assert time.monotonic() - asked < 15
    tree = FittedTree.from_json(wait(registry, first, lambda s: s.main.result is not None).main.result)
    assert tree.record.status == "interrupted"
    assert stopped.main.history[-1]["elapsed"] < LONG.time_limit
    done = wait(registry, first, lambda s: not s.active)
    assert done.state == "finished"


@pytest.mark.timing
def test_a_crashed_worker_is_a_readable_failure(registry):
    ctx = context(LONG)
    job_id = registry.submit(solve_spec(ctx), ctx)
    wait(registry, job_id, lambda s: s.state == "running")
    registry.job(job_id).worker.process.kill()
    failed = wait(registry, job_id, lambda s: not s.active, timeout=20)
    assert failed.state == "failed"
    assert failed.message == MSG_CRASHED.format(code=-9)


@pytest.mark.timing
def test_a_user_error_comes_back_as_its_message(registry):
    ctx = context(ModelConfig())
    spec = SolveSpec(X=ctx.tables.train.drop(columns="hired"), y=ctx.tables.train["hired"],
                     params={"depth": 2, "fairness": "statistical_parity", "pos_label": "yes"})
    job_id = registry.submit(spec, None)
    failed = wait(registry, job_id, lambda s: not s.active)
    assert failed.state == "failed" and failed.main.user_error
    assert failed.message == NEEDS_SENSITIVE.format(fairness="statistical_parity")


@pytest.mark.timing
def test_a_killed_worker_leaves_its_last_tree_in_the_history(registry, store):
    ctx = context(LONG)
    job_id = registry.submit(solve_spec(ctx), ctx)
    wait(registry, job_id, lambda s: s.main.tree is not None)
    registry.job(job_id).worker.process.kill()
    failed = wait(registry, job_id, lambda s: not s.active, timeout=20)
    assert failed.state == "failed" and failed.message == MSG_CRASHED.format(code=-9)
    assert failed.main.result is None and failed.run_id is not None
    stored = store.get(failed.run_id)
    kept, last = FittedTree.from_json(stored.tree), FittedTree.from_json(failed.main.tree)
    assert stored.status == kept.record.status == "error" and not kept.record.certified
    assert kept.record.message == MSG_LAST_TREE.format(reason=MSG_CRASHED.format(code=-9).rstrip("."))
    assert kept.record.objective == last.record.objective
    rows = ctx.tables.train
    assert (kept.predict(rows) == last.predict(rows)).all()
    assert stored.summary["train_accuracy"] == pytest.approx(np.mean(kept.predict(rows) == rows["hired"].to_numpy()))


def test_a_history_that_cannot_be_opened_is_the_outcome_error(tmp_path):
    from strongtree_core import StrongTreeClassifier

    ctx = context(ModelConfig(depth=1), n_rows=200)
    fitted = StrongTreeClassifier(depth=1, pos_label="yes").fit(
        ctx.tables.train.drop(columns="hired"), ctx.tables.train["hired"])
    job = Job(solve_spec(ctx), ctx, 10.0)
    job.phases["main"].result = fitted.tree_.to_json()
    garbage = tmp_path / "runs.sqlite3"
    garbage.write_bytes(b"this is not a database" * 100)

    finish_job(job, lambda: RunStore(garbage))
    reason = ERR_DB.format(reason="file is not a database")
    assert job.outcome.error == ERR_SAVE.format(reason=reason)
    assert job.outcome.error == (
        "This run could not be stored in the history, so the Runs page will not list it. "
        "The run history cannot be used: file is not a database. The server's operator can set STRONGTREE_RUNS_DB "
        "to a writable file (its log names the file)."
    )
    assert str(tmp_path) not in job.outcome.error  # a visitor is told no path of the server
    assert job.outcome.entry is not None and job.outcome.entry.id is None and job.run_id is None
    with pytest.raises(RunStoreError):
        RunStore(garbage)


@pytest.mark.timing
def test_the_spare_worker_waits_for_a_free_slot():
    """One slot: the idle worker (the engine imported) is there for the first solve, no new one
    imports beside the running solve (it would take a core from it), and one is ready again
    once the slot frees."""
    reg = JobRegistry(max_running=1)
    try:
        assert reg._idle is not None
        ctx = context(LONG)
        job = reg.submit(solve_spec(ctx), ctx)
        wait(reg, job, lambda s: s.main.tree is not None)
        assert reg._idle is None
        for _ in range(2):  # the solve, then its comparison tree
            reg.stop(job)
            wait(reg, job, lambda s: s.phase == "baseline" or not s.active, timeout=30)
        wait(reg, job, lambda s: not s.active, timeout=30)
        assert reg._idle is not None and reg._idle.process.is_alive()
    finally:
        reg.shutdown()


@pytest.mark.timing
@pytest.mark.parametrize("kept, label", [(4, "No tree fits (kept thresholds)"), (10_000, "No tree fits")])
def test_a_proof_that_no_tree_fits_is_the_solves_result_not_a_failure(registry, kept, label):
    """Floors no tree of depth 1 meets: the worker's error carries the proof's record, the job has finished (its
    result is the proof), and the badge of the Solve page and the sidebar says the claim's label (it read
    "Failed", red, beside the proof)."""
    from strongtree_studio.page.status import job_state_words

    ctx = context(ModelConfig(depth=1, time_limit=30.0, min_recall=0.95, min_precision=0.95, min_specificity=0.95,
                              encoding="data", max_thresholds=kept), n_rows=300)
    job_id = registry.submit(solve_spec(ctx), ctx)
    done = wait(registry, job_id, lambda s: not s.active)
    assert done.main.error.startswith("No tree of depth 1 ")
    assert done.main.record is not None and done.main.record.status == "infeasible"
    assert done.main.record.n_rows == len(ctx.tables.train)
    assert done.state == "finished" and done.message == ""
    assert job_state_words(done) == (label, ":material/block:", "red")
