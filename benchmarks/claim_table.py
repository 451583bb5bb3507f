"""The words each surface shows for each state of a solve, every cell from
:func:`surface_words`, from :func:`strongtree_core.tree.claim.claim` (the one function every surface writes its words from).

    python -m benchmarks.claim_table

prints the markdown table of benchmarks/RESULTS.md ("Say exactly what was proved");
tests/test_claim.py checks that the table there is what this prints now.

The records are written out here, with the numbers of the cases they stand for (58 rows x 3
numeric columns at depth 2; diabetes at depth 4; a promise on 1,500 rows): the words depend on
the record only, not on how it was made.
"""

from __future__ import annotations

import json

from strongtree_core.cli.messages import EXIT_SOLVE
from strongtree_core.metrics.promise import FairnessPromise
from strongtree_core.tree.claim import banner_words, claim, claim_json, cli_lines
from strongtree_core.tree.record import SolveRecord
from strongtree_core.tree.scope import Scope

ALL = Scope(depth=2, thresholds=171, distinct_thresholds=171, widest_column=57, questions=171, encoded_questions=171)
KEPT = Scope(depth=2, thresholds=48, distinct_thresholds=171, widest_column=57, questions=48, encoded_questions=48)
LADDER = Scope(depth=3, thresholds=48, distinct_thresholds=4_212, widest_column=1_385, questions=48,
               encoded_questions=160)


#: The surfaces that show a solve's outcome (the columns of the table in benchmarks/RESULTS.md).
SURFACES: dict[str, str] = {
    "banner": "Solve page banner", "tree": "Tree page", "runs": "Runs table", "report": "HTML report",
    "cli": "command line", "json": "command line --json",
}



def surface_words(record: SolveRecord) -> dict[str, str]:
    """What each surface of :data:`SURFACES` shows of ``record``'s outcome (the cells of the table in
    benchmarks/RESULTS.md); of an infeasible solve, the error each surface shows instead of a tree (its
    first sentence is the claim's, the estimator's :data:`~strongtree_core.estimator.classifier.INFEASIBLE_KEPT`)."""
    said = claim(record)
    if said.state == "infeasible":  # no tree: the error is shown where the tree would be, nothing is stored
        error = f"{said.sentence} The constraints: … (then what to loosen)"
        return {"banner": f"error box: {error}", "tree": "no tree: nothing is stored", "runs": "no run is stored",
                "report": "no report: there is no tree", "cli": f"error: {error} (exit code {EXIT_SOLVE})",
                "json": json.dumps({"error": f"error: {error}", "exit_code": EXIT_SOLVE}, ensure_ascii=False)}
    return {
        "banner": banner_words(record),
        "tree": f"badge {said.label}" + (f" + {said.promise_label}" if said.promise_label else "")
                + f"; {said.words}",
        "runs": said.short,
        "report": f"{said.label}: {said.words}",
        "cli": " / ".join(cli_lines(record)),
        "json": json.dumps({k: v for k, v in claim_json(record).items() if k != "scope"}, ensure_ascii=False),
    }


def _promise(method: str, *, constant: bool = False, smallest: float | None = None, held: int | None = None,
             predicts=None) -> dict:
    return FairnessPromise(
        confidence=0.9, method=method, guarantee="", delta=0.05, training_bound=0.0 if constant else 0.0231,
        kept=True, constant=constant, training_accuracy=0.762 if constant else 0.841, accuracy_at_delta=0.85,
        smallest_delta=smallest, rows_used=1_050 if method == "holdout" else 1_500, predicts=predicts,
        held_out_rows=held,
    ).to_dict()


def _fair(scope: Scope, bound: float) -> Scope:
    return Scope(**{**scope.to_dict(), "training_bound": bound})


#: One record per state, in the order of the table.
STATES: dict[str, SolveRecord] = {
    "certified on all thresholds": SolveRecord(
        "optimal", objective=49, bound=49, gap=0.0, certified=True, n_rows=58, scope=ALL),
    "over kept thresholds": SolveRecord(
        "optimal", objective=48, bound=48, gap=0.0, certified=True, n_rows=58, scope=KEPT),
    "over kept thresholds (the ladder, in time)": SolveRecord(
        "optimal", objective=171_840, bound=171_840, gap=0.0, certified=True, n_rows=200_000, scope=LADDER),
    "not proven": SolveRecord(
        "time_limit", objective=631, bound=652, gap=0.0333, n_rows=768,
        scope=Scope(depth=4, thresholds=128, distinct_thresholds=1_254, widest_column=517, questions=128,
                    encoded_questions=128)),
    "not proven, no bound yet": SolveRecord("time_limit", objective=631, bound=None, n_rows=768, scope=ALL),
    "infeasible": SolveRecord("infeasible", n_rows=58, scope=KEPT),
    "promise estimated": SolveRecord(
        "optimal", objective=1_262, bound=1_262, gap=0.0, certified=True, n_rows=1_500,
        scope=_fair(ALL, 0.0231), promise=_promise("subsample")),
    "promise proved": SolveRecord(
        "optimal", objective=883, bound=883, gap=0.0, certified=True, n_rows=1_050,
        scope=_fair(ALL, 0.0231), promise=_promise("holdout", held=450)),
    "constant fallback": SolveRecord(
        "optimal", objective=1_143, bound=1_143, gap=0.0, certified=True, n_rows=1_500,
        scope=_fair(Scope(depth=0), 0.0), promise=_promise("subsample", constant=True, smallest=0.124,
                                                           predicts="no")),
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("  \n", " ¶ ").replace("\n", " ¶ ")


def table() -> str:
    """The markdown table: one row per state, one column per surface."""
    head = "| state | " + " | ".join(SURFACES.values()) + " |"
    rule = "|---" * (len(SURFACES) + 1) + "|"
    rows = []
    for state, record in STATES.items():
        words = surface_words(record)
        rows.append(f"| {state} | " + " | ".join(_cell(words[surface]) for surface in SURFACES) + " |")
    return "\n".join([head, rule, *rows])


if __name__ == "__main__":
    print(table())
