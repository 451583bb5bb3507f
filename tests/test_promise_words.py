"""A promise on new rows says how it is known, in an analyst's words, and a promise solve is one
solve on screen: one clock, its internal fits as named stages, one end, a title from the tree returned.

Reproducers: the holdout said "No non-constant tree was fitted" after a tree that splits failed the
held-out test, and ``PromiseRound.training_gap`` held the held-out gap; a promise solve showed
"Elapsed 0.0 s", a chart restarting at 0 with a "proven optimal" line per internal fit, and a report
titled "a fair decision tree of depth 0 ... no tree of depth 0 does better" for settings of depth 3."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from strongtree_core import StrongTreeClassifier, TrivialTreeWarning
from strongtree_core.tree.claim import CONSTANT_LABEL, claim
from strongtree_core.metrics.promise import (
    HELD_OUT_SMALLEST,
    KEPT_PROVED,
    NO_SMALLEST,
    SMALLEST_DELTA,
    Differences,
    FairnessPromise,
    Fitted,
    holdout_smallest,
    run_holdout,
    run_margin,
)
from strongtree_core.metrics.promise_cost import LIKELY, PLANNED_FITS, POSSIBLE, UNLIKELY, promise_outlook
from strongtree_studio.views.fairness_view import promise_rounds, promise_words
from strongtree_studio.page.status import FINAL, closed_points, objective_spec, phase_of, solver_log, stage_bands, stages_words
from test_promise import _population


def _fitted(bound: float, constant: bool, held: tuple, fitted_gap: float | None = None) -> Fitted:
    diffs = Differences(*(np.array([v], dtype=float) for v in held))
    return Fitted(model=None, training_bound=bound, constant=constant, accuracy=0.8, diffs=diffs,
                  fitted_gap=fitted_gap)


def test_holdout_says_a_tree_that_splits_failed_and_keeps_the_two_gaps_apart():
    """The first tree splits, its gap is 1.0 pp on the rows it was fitted on and 20 pp on the held-out rows:
    it fails, the constant tree is returned, and the words say that tree failed (not that none was fitted)."""
    failing = _fitted(0.001, False, (60, 100, 40, 100), fitted_gap=0.01)  # held-out rates 60 % and 40 %
    constant = Fitted(model=None, training_bound=0.0, constant=True, accuracy=0.7,
                      diffs=Differences(*(np.zeros(1) for _ in range(4))))
    chosen, promise = run_holdout(lambda t: failing, lambda: constant, lambda: _fitted(0.05, False, (50, 100, 50, 100)),
                                  delta=0.05, confidence=0.9, n_rows=1_000, n_fit_rows=700)
    assert chosen is constant and promise.constant and promise.held_out_rows == 300
    first = promise.rounds[0]
    assert (first.training_gap, first.held_out_gap) == pytest.approx((0.01, 0.20))
    assert not first.certified and not first.constant
    smallest = holdout_smallest(failing.diffs, 0.1)
    assert promise.smallest_delta == pytest.approx(smallest) and 0.20 < smallest < 0.5
    assert NO_SMALLEST not in promise.message
    assert "the tree fitted at the training bound 0.10 pp failed the test on the 300 held-out rows" in promise.message
    assert promise.message.endswith(HELD_OUT_SMALLEST.format(value=100 * smallest))
    assert promise.known == "proved" and "passed the exact test on the held-out rows" in promise.message
    table = promise_rounds(promise.to_dict())
    assert table.index.name == "training bound" and list(table.index) == ["0.10 pp", "constant tree"]
    assert list(table.columns) == ["gap on the rows it was fitted on", "gap on the held-out rows", "kept the promise"]
    assert table.iloc[0].tolist() == ["1.0 pp", "20.0 pp", "no"]


def test_the_margin_says_why_in_plain_words_and_keeps_its_terms_in_details():
    wide = _fitted(0.05, False, (30, 60, 20, 60))  # too uncertain at any training bound
    constant = Fitted(model=None, training_bound=0.0, constant=True, accuracy=0.7,
                      diffs=Differences(*(np.zeros(1) for _ in range(4))))
    _, promise = run_margin(lambda t: wide, lambda: constant, delta=0.05, confidence=0.9, n_rows=120)
    assert promise.constant and promise.known == "estimated"
    assert "even the tree fitted at the tightest training bound, 0.10 pp, has gaps too uncertain" in promise.message
    for technical in ("risk", "R =", "sqrt", "> 0.100", "1 - c"):
        assert technical not in promise.message and technical not in claim_words(promise)
    assert promise.details.startswith("Risk R (summed normal tail probabilities beyond the bound) by round: "
                                      "training bound 5.00 pp: risk ")
    assert "> 1 - c = 0.100" in promise.details


def claim_words(promise: FairnessPromise) -> str:
    from strongtree_core.tree import SolveRecord

    return claim(SolveRecord("optimal", certified=True, promise=promise.to_dict())).words


def test_an_older_promise_reads_back_with_how_it_is_known():
    promise = FairnessPromise(confidence=0.9, method="holdout", guarantee="", delta=0.05, training_bound=0.01,
                              kept=True, constant=False, training_accuracy=0.8, accuracy_at_delta=0.82,
                              smallest_delta=None, rows_used=700)
    data = promise.to_dict()
    for newer in ("known", "predicts", "held_out_rows", "details"):
        del data[newer]
    for r in data["rounds"]:
        r.pop("held_out_gap", None)
    back = FairnessPromise.from_dict(data)
    assert back.known == "proved" and back.details == "" and back.held_out_rows is None
    assert FairnessPromise.from_dict({**data, "method": "subsample"}).known == "estimated"


@pytest.fixture(scope="module")
def promised():
    """A promise on 1,500 rows by the margin method (its tree splits), with every progress event."""
    X, y = _population(1500, 2)
    events = []
    clf = StrongTreeClassifier(depth=2, fairness="statistical_parity", fairness_bound=0.05, fairness_confidence=0.9,
                               fairness_confidence_method="margin", time_limit=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrivialTreeWarning)
        clf.fit(X, y, sensitive_features="group", progress=events.append)
    return clf, events


def test_a_promise_solve_is_one_solve_on_one_clock(promised):
    clf, events = promised
    promise = clf.fairness_promise_
    assert not promise.constant and promise.training_bound < 0.05  # a tightened bound, a tree that splits
    stages = [e.stage for e in events]
    assert all(stages) and stages[0] == "fit at δ = 5.0 pp"
    assert f"fit at the training bound {100 * promise.training_bound:.2f} pp" in stages
    times = [e.elapsed for e in events]
    assert times == sorted(times)  # one clock: no internal fit starts again at 0
    assert not any(e.message == "certified optimal" for e in events)  # no internal fit says "proven optimal"
    assert sum(e.message == "stage done" for e in events) == len(dict.fromkeys(stages))
    assert clf.record_.runtime >= times[-1] > 0  # the whole fit's time, not the last internal fit's
    points = [{"elapsed": e.elapsed, "objective": e.objective, "bound": e.bound, "gap": e.gap, "nodes": e.nodes,
               "message": e.message, "stage": e.stage} for e in events]
    closed = closed_points(points, clf.record_)
    finals = [p for p in closed if p["message"].startswith(FINAL)]
    assert len(finals) == 1 and finals[0] is closed[-1] and finals[0]["log_only"]
    assert finals[0]["message"] == FINAL + "Proven optimal · promise estimated"
    log = solver_log(closed, rows=1_000)
    assert log["step"].iloc[0] == "Proven optimal · promise estimated"
    assert not any(step == "proven optimal" for step in log["step"])
    # one line per internal fit, its end, in order, then the whole fit's end
    assert list(log["step"][::-1]) == [f"{stage}: done" for stage in dict.fromkeys(stages)] + [
        "Proven optimal · promise estimated"]
    spec = objective_spec(closed)
    bands = spec["layer"][0]["data"]["values"]
    assert [b["stage"] for b in bands] == list(dict.fromkeys(stages))
    assert [b["start"] for b in bands] == sorted(b["start"] for b in bands)
    assert spec["layer"][1]["layer"][0]["encoding"]["detail"] == {"field": "stage", "type": "nominal"}
    drawn = spec["layer"][1]["data"]["values"]
    assert drawn and all(r["stage"].startswith("fit at") for r in drawn)  # the end is logged, not drawn
    assert re.match(r"fit at δ = 5\.0 pp \(\d+\.\d-\d+\.\d s\) · fit at the training bound ", stages_words(closed))


def test_alike_refits_are_one_phase():
    assert phase_of("half-sample refit 3 of 10") == "10 half-sample refits"
    assert phase_of("fold 2 of 4 at the training bound 4.00 pp") == "4 folds at the training bound 4.00 pp"
    assert phase_of("fit at δ = 5.0 pp") == "fit at δ = 5.0 pp"
    points = [{"elapsed": t, "stage": s, "objective": 1.0, "bound": 1.0} for t, s in (
        (0.0, "fit at δ = 5.0 pp"), (0.4, "half-sample refit 1 of 2"), (0.9, "half-sample refit 2 of 2"),
        (1.2, "constant tree"), (1.3, ""))]
    assert [(b["stage"], b["start"], b["end"], b["drawn"]) for b in stage_bands(points)] == [
        ("fit at δ = 5.0 pp", 0.0, 0.4, True), ("2 half-sample refits", 0.4, 1.2, False),
        ("constant tree", 1.2, 1.2, True)]
    assert stages_words(points) == ("fit at δ = 5.0 pp (0.0-0.4 s) · 2 half-sample refits (0.4-1.2 s) · "
                                    "constant tree (1.2-1.2 s)")
    assert stage_bands(points[-1:]) == [] and stages_words([]) == ""


def test_the_promise_words_are_the_record_and_the_settings_are_those_asked(promised):
    clf, _ = promised
    said = claim(clf.record_)
    assert (said.promise_state, said.label) == ("estimated", "Proven optimal")
    assert said.sentence.endswith(f"with the fairness bound tightened to {100 * clf.fairness_promise_.training_bound:.1f}"
                                  " pp on them.")
    assert clf.record_.promise["known"] == "estimated"
    settings = clf.tree_.context.settings
    assert (settings["fairness_bound"], settings["fairness_confidence"], settings["depth"]) == (0.05, 0.9, 2)


def test_a_constant_tree_a_promise_left_is_titled_as_one():
    from strongtree_core.datasets import make_hiring
    from strongtree_core.report.build import ReportInput, build_report

    X, y = _population(300, 1)
    clf = StrongTreeClassifier(depth=3, fairness="equalized_odds", fairness_bound=0.01, fairness_confidence=0.95,
                               fairness_confidence_method="margin", time_limit=30)
    with pytest.warns(TrivialTreeWarning):
        clf.fit(X, y, sensitive_features="group")
    said = claim(clf.record_)
    assert (said.state, said.label, said.colour) == ("constant", CONSTANT_LABEL, "orange")
    assert clf.tree_.context.settings["depth"] == 3  # the settings asked for, not the constant fit's depth 0
    frame = X.assign(target=y)
    html = build_report(ReportInput(tree=clf.tree_, train=frame, test=None, dataset="population", pos_label=1,
                                    protected=("group",), fairness=("equalized_odds",), fairness_bound=0.01,
                                    settings=clf.tree_.context.settings), engine="builtin")
    title = "population: a constant tree (the fairness promise on new rows left no tree that splits at depth 3)"
    assert f"<title>{title}</title>" in html
    assert "depth 0" not in html and "Proven optimal" not in html
    # its depth-0 solve's bound is no bound on the trees of depth 3: none is given (it read "at most ... , gap 0.0%")
    assert ("<dt>Bound</dt><dd>none for a tree that splits (the constant tree&#x27;s bound holds over constant trees "
            "only)</dd><dt>Gap</dt><dd>no gap (no bound on a tree that splits)</dd>") in html
    assert make_hiring  # imported for the hiring table's promise below


def test_the_model_page_says_what_a_promise_costs_before_the_click():
    y = np.tile([True, False], 100)
    g = np.array(["a"] * 150 + ["b"] * 50)
    outlook = promise_outlook(y, g, ["statistical_parity"], fairness_bound=0.05, confidence=0.9, time_limit=65)
    assert (outlook.fits, outlook.group, outlook.rows, outlook.cohort) == (PLANNED_FITS["subsample"], "b", 50,
                                                                           "all rows")
    se = np.sqrt(0.25 / 150 + 0.25 / 50)
    assert outlook.margin == pytest.approx(1.6448536 * se) and outlook.constant == LIKELY
    assert outlook.seconds_per_fit == pytest.approx(5.0)
    assert promise_outlook(y, g, ["statistical_parity"], fairness_bound=0.20, confidence=0.9,
                           time_limit=60).constant == POSSIBLE
    assert promise_outlook(y, g, ["statistical_parity"], fairness_bound=0.30, confidence=0.9,
                           time_limit=60).constant == UNLIKELY
    # equal opportunity compares rows of the positive class only: fewer rows, a wider margin
    eopp = promise_outlook(y, g, ["equal_opportunity"], fairness_bound=0.05, confidence=0.9, time_limit=60)
    assert (eopp.cohort, eopp.group, eopp.rows) == ("rows of the positive class", "b", 25)
    assert eopp.margin == pytest.approx(1.6448536 * np.sqrt(0.25 / 75 + 0.25 / 25))
    # equalized odds: two differences at once, each at half the error rate (the union bound)
    eodds = promise_outlook(y, g, ["equalized_odds"], fairness_bound=0.05, confidence=0.9, time_limit=60)
    assert eodds.margin == pytest.approx(1.9599640 * np.sqrt(0.25 / 75 + 0.25 / 25))
    assert promise_outlook(y, np.array(["a"] * 200), ["statistical_parity"], fairness_bound=0.05, confidence=0.9,
                           time_limit=60).margin is None  # one group: nothing to compare
    held = promise_outlook(y, g, ["statistical_parity"], fairness_bound=0.05, confidence=0.9, time_limit=60,
                           method="holdout")
    assert held.fits == PLANNED_FITS["holdout"] and held.margin == pytest.approx(outlook.margin / np.sqrt(0.3))
    words = outlook.words(0.05, 0.9, "subsample")
    assert words.startswith("A promise refits the tree about 13 times within the time limit (about 5.0 s each)")
    assert "the smallest compared group, b among all rows (50 rows), leaves a gap measured on the training rows " \
           "uncertain by up to ±13.4 pp at 90 % confidence, against δ = 5.0 pp: a constant tree is likely" in words
    assert "subsample method estimates the promise" in words
    assert promise_words(0.9) == "90 % confidence on new rows (estimated)"
    assert promise_words(None) == "training rows only"


def test_a_held_out_promise_kept_says_it_is_proved():
    passing = _fitted(0.05, False, (2_000, 4_000, 2_040, 4_000), fitted_gap=0.004)  # 1 pp apart, 8,000 held out
    chosen, promise = run_holdout(lambda t: passing, lambda: None, lambda: _fitted(0.05, False, (50, 100, 50, 100)),
                                  delta=0.05, confidence=0.9, n_rows=20_000, n_fit_rows=12_000)
    assert chosen is passing and not promise.constant and promise.known == "proved"
    assert promise.message == KEPT_PROVED.format(method="holdout", delta=5.0, confidence=0.9, held=8_000, bound=5.0,
                                                 fitted=12_000, accuracy=80.0, today=80.0)
    assert [r.certified for r in promise.rounds] == [True] * 5 and promise.rounds[-1].held_out_gap == pytest.approx(0.01)
    assert promise.details.startswith("Exact test on the held-out rows by round: training bound 0.10 pp: gap 1.00 pp "
                                      "on the held-out rows, certified;")


def test_the_margin_says_estimated_when_only_a_constant_tree_is_left():
    wide = _fitted(0.05, False, (30, 60, 20, 60))
    constant = Fitted(model=None, training_bound=0.0, constant=True, accuracy=0.7,
                      diffs=Differences(*(np.zeros(1) for _ in range(4))))
    _, promise = run_margin(lambda t: wide, lambda: constant, delta=0.05, confidence=0.9, n_rows=120)
    assert ("no tree that splits, fitted at training bounds down to 0.10 pp, could be shown to keep the gap on new "
            "rows within 5.0 pp with confidence 90% (estimated)") in promise.message
    assert promise.message.endswith(SMALLEST_DELTA.format(value=100 * promise.smallest_delta))
    kept = _fitted(0.05, False, (300, 1000, 310, 1000))
    _, kept_promise = run_margin(lambda t: kept, lambda: constant, delta=0.05, confidence=0.9, n_rows=2_000)
    assert kept_promise.message.startswith("Fairness on new rows, estimated (margin method; not proved): the gap on "
                                           "new rows of the same population is estimated to stay within 5.0 pp")


def test_a_real_holdout_keeps_the_fitted_rows_gap_apart_from_the_held_out_gap():
    X, y = _population(1500, 2)
    clf = StrongTreeClassifier(depth=1, fairness="statistical_parity", fairness_bound=0.10, fairness_confidence=0.9,
                               fairness_confidence_method="holdout", time_limit=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrivialTreeWarning)
        clf.fit(X, y, sensitive_features="group")
    promise = clf.fairness_promise_
    tried = [r for r in promise.rounds if not r.constant]
    assert tried and all(r.held_out_gap is not None for r in tried)
    assert any(abs(r.training_gap - r.held_out_gap) > 1e-9 for r in tried)  # two sets of rows, two gaps
    assert all(r.training_gap <= r.training_bound + 1e-9 for r in tried)  # the certificate on the rows fitted on
    assert promise.held_out_rows == 1500 - promise.rows_used if not promise.constant else promise.held_out_rows > 0


def test_the_cli_says_the_verdict_of_each_parity_check(capsys):
    from strongtree_core.cli.fit import report

    X, y = _population(600, 3)
    clf = StrongTreeClassifier(depth=1, fairness="statistical_parity", fairness_bound=0.05, min_recall=0.2,
                               time_limit=30).fit(X, y, sensitive_features="group")
    report(clf, 0.8, None)
    lines = capsys.readouterr().out.splitlines()
    parity = next(line for line in lines if line.startswith("statistical parity difference: measured"))
    assert parity.endswith("): within δ = 5.0 pp (the certificate on these rows)")
    recall = next(line for line in lines if line.startswith("recall: measured"))
    assert re.fullmatch(r"recall: measured [\d.]+ \(bound 0\.2000\)", recall), recall  # a floor: no gap verdict


def test_a_plain_solve_ends_once_in_the_claims_words():
    from strongtree_core.tree import SolveRecord

    record = SolveRecord("optimal", objective=10, bound=10, gap=0.0, certified=True, runtime=1.5, n_rows=20)
    points = [{"elapsed": 0.5, "objective": 8, "bound": 12, "gap": 0.5, "nodes": 3, "message": "new incumbent"},
              {"elapsed": 1.0, "objective": 10, "bound": 10, "gap": 0.0, "nodes": 5, "message": "certified optimal"}]
    closed = closed_points(points, record)
    assert len(closed) == 2 and closed[-1]["message"] == FINAL + "Proven optimal"
    assert points[-1]["message"] == "certified optimal"  # the job's history is not changed
    moved = closed_points(points[:1], record)
    assert len(moved) == 2 and moved[-1]["elapsed"] == 1.5 and not moved[-1]["log_only"]
    assert closed_points(points, None) == points
    log = solver_log(closed)
    assert list(log["step"]) == ["Proven optimal", "better tree"]


def test_the_model_page_cost_words_read_the_training_rows():
    from types import SimpleNamespace

    from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig
    from strongtree_studio.data.demo_tables import make_hiring
    from strongtree_studio.views.fairness_view import promise_cost_words

    table = SimpleNamespace(frame=make_hiring(800, seed=1))
    roles = Roles("hired", "yes", ("gender",), ())
    model = ModelConfig(fairness=("statistical_parity",), fairness_bound=0.01, fairness_confidence=0.95)
    words = promise_cost_words(table, roles, model, SplitConfig(test_size=0.25, seed=0))
    assert words.startswith("What this promise costs: A promise refits the tree about 13 times within the time limit")
    rows = int(re.search(r"\(([\d,]+) rows\)", words).group(1).replace(",", ""))
    assert rows < 400  # a group of the 600 training rows, not of all 800
    assert "against δ = 1.0 pp: a constant tree is likely" in words
    assert promise_cost_words(table, roles, ModelConfig(fairness_confidence=0.9), SplitConfig()) == ""  # no notion
    assert promise_cost_words(None, roles, model, SplitConfig()) == ""
    assert promise_cost_words(table, Roles("hired", None, ("gender",), ()), model, SplitConfig()) == ""


def test_the_report_folds_the_promise_internals_away(promised):
    from strongtree_core.report.build import ReportInput, build_report
    from test_promise import _population as population

    clf, _ = promised
    X, y = population(1500, 2)
    html = build_report(ReportInput(tree=clf.tree_, train=X.assign(target=y), test=None, dataset="p", pos_label=1,
                                    protected=("group",), fairness=("statistical_parity",), fairness_bound=0.05,
                                    settings=clf.tree_.context.settings), engine="builtin")
    folded = html[html.index('<details id="promise-details">'):]
    folded = folded[:folded.index("</details>")]
    assert "Risk R (summed normal tail probabilities" in folded
    assert html.count("Risk R (summed normal tail probabilities") == 1  # nowhere in the open
    assert "promise estimated" in html and "an estimate whose coverage was measured by simulation" in html


def test_a_promise_keeps_the_targets_name_and_its_report_is_made():
    """The fits of a promise see the target as an array: the tree returned was named "target", not "hired", so the
    dashboard's report of any run with a promise failed (KeyError 'target': the button gave no file)."""
    from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig, split_table
    from strongtree_studio.data.demo_tables import make_hiring
    from strongtree_studio.views.report_view import report_html

    roles = Roles("hired", "yes", ("gender",), ("education",))
    tables = split_table(make_hiring(800, seed=1), roles, SplitConfig())
    model = ModelConfig(fairness=("statistical_parity",), fairness_bound=0.2, fairness_confidence=0.9)
    X = tables.train.drop(columns=["hired"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = StrongTreeClassifier(**model.estimator_params(roles)).fit(X, tables.train["hired"],
                                                                      sensitive_features="gender")
    assert clf.record_.promise and clf.tree_.target == "hired"
    page = report_html("Hiring", clf.tree_, None, roles, model, SplitConfig(), tables).decode()
    assert "The tree predicts hired from" in page
