"""The dashboard's badges of a solve (Solve page, sidebar, Tree and Fairness pages): the job's state until its
tree is final, then its claim's label, icon and colour; beside a promise, how it is known.  Each line that
picks a badge meets a job that makes it matter: a certificate over kept thresholds, a constant tree a promise
left, a proof that no tree fits, a comparison tree still solving, a queued, stopping or failed job."""

from __future__ import annotations

import pytest
from test_sweep_points_words import tree_of

from benchmarks.claim_table import STATES
from strongtree_core.engine.routes import INFEASIBLE
from strongtree_core.tree.claim import claim
from strongtree_studio.jobs.job_registry import JobSnapshot, PhaseSnapshot
from strongtree_studio.page import status
from strongtree_studio.views.markup import md


def snapshot(state: str, *, result: str | None = None, record=None, error: str | None = None, phase: str = "main",
             queue_position: int = 0, stop_requested: bool = False, message: str = "") -> JobSnapshot:
    main = PhaseSnapshot(history=(), tree=result, result=result, error=error, user_error=False, record=record)
    return JobSnapshot(id="j", state=state, phase=phase, main=main, baseline=None, message=message,
                       queue_position=queue_position, elapsed=1.0, stop_requested=stop_requested, run_id=None,
                       outcome=None)


@pytest.mark.parametrize("state", ["finished", "running"])  # running: the comparison tree is still being solved
def test_a_final_tree_is_badged_with_its_claim(state):
    assert status.job_state_words(snapshot(state, result=tree_of("over kept thresholds"))) == (
        "Optimal over kept thresholds", ":material/filter_alt:", "blue")
    assert status.job_state_words(snapshot(state, result=tree_of("constant fallback"))) == (
        "Constant tree (promise)", ":material/warning:", "orange")
    assert status.job_state_words(snapshot(state, result=tree_of("certified on all thresholds"))) == (
        "Proven optimal", ":material/verified:", "green")


def test_until_then_the_badge_says_what_the_job_is_doing():
    kept = tree_of("over kept thresholds")
    assert status.job_state_words(snapshot("cancelled", result=kept)) == ("Cancelled", ":material/cancel:", "gray")
    assert status.job_state_words(snapshot("queued", queue_position=3)) == (
        "Queued (3)", ":material/hourglass_top:", "gray")
    assert status.job_state_words(snapshot("queued"))[0] == "Queued"
    assert status.job_state_words(snapshot("running", stop_requested=True)) == (
        "Stopping", ":material/stop_circle:", "orange")
    assert status.job_state_words(snapshot("finished", stop_requested=True))[0] == "Finished"
    assert status.job_state_words(snapshot("running", phase="baseline"))[0] == "Comparison tree"
    assert status.job_state_words(snapshot("running"))[0] == "Solving"
    assert status.job_state_words(snapshot("failed", record=None, error="boom")) == (
        "Failed", ":material/error:", "red")


def test_a_proof_that_no_tree_fits_is_badged_as_one():
    proof = STATES["infeasible"]
    job = snapshot("finished", record=proof, error="No tree of depth 2 asking only the 48 ...")
    assert status.result_claim(job) == claim(proof)
    assert status.job_state_words(job) == ("No tree fits (kept thresholds)", ":material/block:", "red")
    assert status.result_claim(snapshot("finished")) is None


def test_beside_a_promise_its_badge_says_how_it_is_known(monkeypatch):
    shown = []
    monkeypatch.setattr(status.st, "badge", lambda label, icon, color: shown.append((label, icon, color)))
    for state in ("promise estimated", "promise proved", "constant fallback", "over kept thresholds"):
        status.claim_badges(claim(STATES[state]))
    assert shown == [
        ("Proven optimal", ":material/verified:", "green"), ("promise estimated", ":material/query_stats:", "blue"),
        ("Proven optimal", ":material/verified:", "green"), ("promise proved", ":material/verified_user:", "green"),
        ("Constant tree (promise)", ":material/warning:", "orange"),
        ("Optimal over kept thresholds", ":material/filter_alt:", "blue"),
    ]


def test_how_a_job_without_a_result_ended_is_said_as_markdown_text(monkeypatch):
    said = []
    for kind in ("info", "error"):
        monkeypatch.setattr(status.st, kind, lambda text, icon, kind=kind: said.append((kind, text, icon)))
    assert status.job_ending(snapshot("cancelled", message="Cancelled *before* it started."))
    refusal = INFEASIBLE.format(depth=2, names="min_recall", hint="Loosen <b>")
    proof = snapshot("finished", record=STATES["infeasible"], error=refusal)
    assert not status.job_ending(proof)
    assert not status.job_ending(snapshot("failed", error="The solver *crashed*"))
    assert not status.job_ending(snapshot("failed", message="The worker [stopped](x)"))
    assert not status.job_ending(snapshot("finished"))
    texts = ["Cancelled *before* it started.", INFEASIBLE.format(depth=2, names="Min. recall", hint="Loosen <b>"),
             "The solver *crashed*",
             "The worker [stopped](x)"]
    assert said == [("info", md(texts[0]), ":material/cancel:"), ("error", md(texts[1]), ":material/block:"),
                    ("error", md(texts[2]), ":material/error:"), ("error", md(texts[3]), ":material/error:")]
    assert all(md(text) != text for text in texts)  # each is text the markdown would have read
