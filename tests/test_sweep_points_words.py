"""The Trade-offs page's words about each point: its status in its claim's words, the count of proofs by
label ("4 optimal over kept thresholds · "), the legend of the filled circles and what a point promised on
new rows.  The page tests (tests/test_page_tradeoffs.py) reach these through a sweep in the background; here
each line that decides a word meets the rows that make it matter: a certificate over kept thresholds, a
constant tree a promise left, a stored null (NaN) where a value or a tree would be."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from benchmarks.claim_table import STATES
from strongtree_studio.sweeps.frontier_view import LABEL_CERTIFIED, circle_words
from strongtree_studio.sweeps.points import certified_labels, certified_words, is_promise, point_status, promise_text

NAN = float("nan")


def tree_of(state: str) -> str:
    """A stored tree's JSON as far as its claim reads it: the record, and its promise and scope beside it."""
    record = STATES[state]
    data = {"record": {k: v for k, v in record.to_dict().items() if k not in ("promise", "scope")}}
    if record.promise:
        data["fairness_promise"] = record.promise
    if record.scope is not None:
        data["certificate_scope"] = record.scope.to_dict()
    return json.dumps(data)


def row(state: str | None, certified: bool, status: str = "optimal", tree=None, **more) -> dict:
    return {"status": status, "certified": certified, "tree": tree_of(state) if state else tree, **more}


ROWS = [
    row("over kept thresholds", True),
    row("over kept thresholds", True),
    row("certified on all thresholds", True),
    row(None, True, tree=None),  # certified, its tree not kept: said by its status
    row(None, True, tree=NAN),  # a stored null where the tree would be
    row(None, True, tree=""),
    row("constant fallback", True),
    row("not proven", False, status="time_limit"),
    row(None, False, status="interrupted", tree=None),
]


def test_the_proofs_are_counted_by_their_claims_label():
    assert certified_labels(ROWS) == {"optimal over kept thresholds": 2, "proven optimal": 4,
                                      "constant tree (promise)": 1}
    assert certified_words(ROWS) == "proven optimal or optimal over kept thresholds or constant tree (promise)"
    assert certified_words(ROWS[:2]) == "optimal over kept thresholds"  # never "proven optimal" over kept cuts
    assert certified_words(ROWS[-2:]) == "proven optimal"  # none certified yet: what a filled circle will be
    assert certified_labels(ROWS[-2:]) == {}


def test_a_points_status_is_its_claims_short_label():
    assert point_status(ROWS[0]) == "Optimal over kept thresholds"
    assert point_status(row("promise estimated", True)) == "Proven optimal · promise estimated"
    assert point_status(ROWS[6]) == "Constant tree (promise)"
    assert point_status(row(None, False, status="refused")) == "Refused"
    assert point_status(row(None, False, status="refused", tree=json.dumps({"rows": []}))) == "Refused"
    assert point_status(ROWS[7]) == "Not proven (time limit)"
    assert [point_status(r) for r in ROWS[3:6]] == ["Proven optimal"] * 3  # no tree, a stored null, an empty text


def test_a_point_promises_what_its_row_says():
    base = {"fairness": "statistical_parity"}
    assert promise_text({"fairness": NAN}) == "–"  # a reference model
    assert promise_text({**base, "fairness_confidence": NAN}) == "training rows only"
    assert promise_text({**base, "fairness_confidence": 0.9, "training_bound": 0.029}) == (
        "90 % confidence, trained at 2.9 pp")
    for trained in (None, NAN):
        assert promise_text({**base, "fairness_confidence": 0.9, "training_bound": trained}) == "90 % confidence"
    for constant in (True, np.bool_(True)):
        assert promise_text({**base, "fairness_confidence": 0.95, "promise_constant": constant,
                             "training_bound": 0.0}) == "95 % confidence: only a constant tree keeps it"
    for constant in (False, NAN, None):  # a stored null is not True
        assert promise_text({**base, "fairness_confidence": 0.8, "promise_constant": constant,
                             "training_bound": 0.01}) == "80 % confidence, trained at 1.0 pp"
    assert [is_promise({"fairness_confidence": v}) for v in (0.9, 1, NAN, None, "0.9")] == [
        True, True, False, False, False]


def test_the_filled_circles_are_named_by_the_points_without_a_promise():
    table = pd.DataFrame([ROWS[0], {**row("constant fallback", True), "fairness_confidence": 0.9},
                          {**ROWS[7], "fairness_confidence": NAN}])
    assert circle_words(table) == "optimal over kept thresholds"
    assert circle_words(table.drop(columns="certified")) == LABEL_CERTIFIED == "proven optimal"
    assert circle_words(table.iloc[:0]) == LABEL_CERTIFIED
