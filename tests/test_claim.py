"""Say exactly what was proved: a certificate's scope kept with its record, and the one function
(:func:`strongtree_core.tree.claim.claim`) every surface writes its words from.

The reproducers are the measured cases: 58 rows x 3 numeric columns at depth 2 with the defaults
was "optimal, bound 48, no tree of this depth does better" while a tree over every midpoint gets 49
right; a constraint no tree over the kept thresholds meets was "no tree of depth 2 satisfies all the
constraints" while a tree over every threshold meets it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks.claim_table import STATES, surface_words, table
from strongtree_core import StrongTreeClassifier, StrongTreeError
from strongtree_core.tree.claim import (
    CONSTANT_BOUND,
    CONSTANT_LABEL,
    KEPT_LABEL,
    bound_and_gap,
    bound_help,
    claim,
    claim_json,
    cli_lines,
    gap_help,
)
from strongtree_core.cli.words import cli_words
from strongtree_core.errors import NOT_PROVEN, NotProvenWarning
from strongtree_core.estimator.classifier import INFEASIBLE_KEPT, THRESHOLDS_KEPT
from strongtree_core.tree import FittedTree, SolveRecord
from strongtree_core.tree.scope import Scope

ROOT = Path(__file__).resolve().parents[1]
#: The words of the reproducer, exactly.
KEPT_WORDS = ("No tree of depth 2 asking only the 48 of the 171 thresholds kept does better on these 58 training rows "
              "under these constraints; a tree asking another threshold may do better.")
ALL_WORDS = ("No tree of depth 2 does better on these 58 training rows under these constraints (every threshold of "
             "the numeric columns was searched).")


def fifty_eight_rows() -> tuple[pd.DataFrame, pd.Series]:
    """58 rows, 3 numeric columns (57 distinct cuts each): the default keeps 16 per column."""
    rng = np.random.default_rng(37)
    X = pd.DataFrame(rng.normal(size=(58, 3)), columns=list("abc"))
    y = (X.a + 0.5 * X.b + rng.normal(scale=0.7, size=58) > 0).astype(int)
    return X, y


@pytest.fixture(scope="module")
def kept_and_all():
    X, y = fifty_eight_rows()
    kept = StrongTreeClassifier(depth=2, time_limit=30).fit(X, y)
    every = StrongTreeClassifier(depth=2, time_limit=30, max_thresholds=57).fit(X, y)
    return X, y, kept, every


def test_a_certificate_over_kept_thresholds_never_says_no_tree_does_better(kept_and_all):
    X, y, kept, every = kept_and_all
    record = kept.record_
    assert record.status == "optimal" and record.certified and record.bound == 48
    # the independent truth: a tree over every cut beats the bound, so "no tree does better" was false
    assert every.record_.certified and every.record_.objective == 49 > record.bound
    distinct = [np.unique(X[c]).size - 1 for c in X.columns]
    kept_cuts = sum(len(c.cuts) for c in kept.encoding_.columns)
    assert record.scope == Scope(depth=2, thresholds=kept_cuts, distinct_thresholds=sum(distinct),
                                 widest_column=max(distinct), questions=kept_cuts, encoded_questions=kept_cuts)
    assert (kept_cuts, sum(distinct)) == (48, 171)  # max_thresholds=None keeps 16 per column, not every cut
    said = claim(record)
    assert (said.state, said.label, said.colour) == ("kept_thresholds", KEPT_LABEL, "blue")
    assert said.sentence == KEPT_WORDS and "does better under" not in said.label
    assert record.message == THRESHOLDS_KEPT.format(kept=48, distinct=171, widest=57)
    # over every cut the words are the plain certificate, and they say every threshold was searched
    assert every.record_.scope.thresholds == every.record_.scope.distinct_thresholds == 171
    assert (claim(every.record_).state, claim(every.record_).label) == ("certified", "Proven optimal")
    assert claim(every.record_).sentence == ALL_WORDS and claim(every.record_).colour == "green"
    assert every.record_.message == ""


def test_the_scope_travels_with_the_tree_and_older_files_still_load(kept_and_all):
    _, _, kept, _ = kept_and_all
    data = json.loads(kept.tree_.to_json())
    assert "scope" not in data["record"]  # beside the record, where earlier versions ignore it
    assert data["certificate_scope"] == kept.record_.scope.to_dict()
    back = FittedTree.from_json(kept.tree_.to_json())
    assert back.record == kept.record_ and claim(back.record).sentence == KEPT_WORDS
    assert SolveRecord.from_dict(kept.record_.to_dict()) == kept.record_
    # a tree file made before the scope was kept: it loads, and its words claim no count of thresholds
    del data["certificate_scope"]
    for column in data["encoding"]["columns"]:
        column.pop("n_gaps", None)
    old = FittedTree.from_dict(data)
    assert old.record.scope is None and old.encoding.threshold_counts() == (48, None, None)
    assert claim(old.record).sentence == ("No tree of this depth asking the questions of its encoding does better on "
                                          "these 58 training rows under these constraints.")
    with pytest.raises(ValueError, match="unknown entries"):
        Scope.from_dict({"depth": 2, "thresholds_kept": 3})


def test_every_surface_says_the_same_claim(kept_and_all):
    _, _, kept, _ = kept_and_all
    record = kept.record_
    said = claim(record)
    lines = cli_lines(record)
    assert lines == [f"outcome: {KEPT_LABEL} (status optimal)", f"proof: {KEPT_WORDS}"]
    assert claim_json(record) == {"claim": "kept_thresholds", "promise": None, "label": KEPT_LABEL,
                                  "words": KEPT_WORDS, "scope": record.scope.to_dict()}
    header = kept.tree_.to_python().splitlines()[1:4]
    assert " ".join(line.removeprefix("# ") for line in header).startswith(f"{KEPT_LABEL}. No tree of depth 2 asking")
    sql = kept.tree_.to_sql()
    assert sql.startswith(f"-- {KEPT_LABEL}. No tree of depth 2")
    assert surface_words(record)["runs"] == said.short == KEPT_LABEL


def test_the_cli_prints_the_claim_and_its_note_in_its_own_words(kept_and_all, capsys):
    from strongtree_core.cli.fit import report, result

    X, y, kept, _ = kept_and_all
    report(kept, 0.9, None)
    out = capsys.readouterr().out.splitlines()
    assert f"outcome: {KEPT_LABEL} (status optimal)" in out and f"proof: {KEPT_WORDS}" in out
    assert f"note: {cli_words(kept.record_.message)}" in out
    assert "--max-thresholds 57 keeps every one" in cli_words(kept.record_.message)
    from strongtree_studio.views.status_words import page_words

    assert page_words(kept.record_.message).endswith(
        "hold over those; 57 thresholds per numeric column (numeric coding “x ≤ t from the data”) keeps every one, "
        "for a longer search.")
    as_json = result(kept, 0.9, False, None)
    assert (as_json["claim"], as_json["label"], as_json["words"]) == ("kept_thresholds", KEPT_LABEL, KEPT_WORDS)
    assert as_json["scope"]["distinct_thresholds"] == 171


def test_constraints_no_tree_over_the_kept_thresholds_meets_are_said_over_those():
    """min recall 90 % and min precision 80 %: no tree over the 48 kept thresholds meets both, a tree over all
    171 does; the old words "no tree of depth 2 satisfies all the constraints" were false."""
    X, y = fifty_eight_rows()
    with pytest.raises(StrongTreeError) as refused:
        StrongTreeClassifier(depth=2, time_limit=30, min_recall=0.9, min_precision=0.8).fit(X, y)
    said = claim(SolveRecord("infeasible", n_rows=58, scope=Scope(depth=2, thresholds=48, distinct_thresholds=171,
                                                                  widest_column=57, questions=48, encoded_questions=48)))
    assert str(refused.value) == INFEASIBLE_KEPT.format(
        claim=said.sentence, names="min_recall, min_precision",
        hint="Try to lower the recall/precision/specificity floors, or allow a deeper tree.", widest=57)
    from strongtree_studio.views.status_words import page_words

    # the pages name the constraints as the Model page does (they read "min_recall, min_precision" on the Tree page)
    assert "The constraints: Min. recall, Min. precision. " in page_words(str(refused.value))
    assert said.sentence == ("No tree of depth 2 asking only the 48 of the 171 thresholds kept satisfies all the "
                             "constraints together on these 58 training rows; a tree asking another threshold might.")
    fits = StrongTreeClassifier(depth=2, time_limit=30, min_recall=0.9, min_precision=0.8, max_thresholds=57).fit(X, y)
    assert fits.record_.certified  # the other thresholds did let a tree fit
    with pytest.raises(StrongTreeError) as plain:  # over every threshold the plain words are true
        StrongTreeClassifier(depth=2, time_limit=30, min_recall=1.0, min_precision=1.0, max_thresholds=57).fit(X, y)
    assert str(plain.value).startswith("No tree of depth 2 satisfies all the constraints together (min_recall")
    # Both errors carry the proof's record, so that a surface names it as claim() does (the dashboard's badge read
    # "Failed"); a pickled error (a sweep's worker) keeps its words and record.
    import pickle

    assert claim(refused.value.record).label == "No tree fits (kept thresholds)" and refused.value.record.n_rows == 58
    assert claim(plain.value.record).label == "No tree fits"
    again = pickle.loads(pickle.dumps(refused.value))
    assert str(again) == str(refused.value) and again.record == refused.value.record


def test_a_bound_not_proven_optimal_says_what_it_ranges_over(kept_and_all):
    _, _, kept, _ = kept_and_all
    clf = StrongTreeClassifier()  # the warning reads the record alone
    clf.record_ = SolveRecord("time_limit", objective=47, bound=50, gap=0.06, n_rows=58, scope=kept.record_.scope)
    with pytest.warns(NotProvenWarning) as caught:
        clf._warn_if_not_proven()
    bound = "No tree of depth 2 asking only the 48 of the 171 thresholds kept can do better than the bound 50."
    assert str(caught[0].message) == NOT_PROVEN["time_limit"] + " " + bound
    assert claim(clf.record_).bound == bound and claim(clf.record_).state == "not_proven"
    clf.record_ = SolveRecord("time_limit", objective=47, bound=None, n_rows=58,
                              scope=Scope(depth=2, thresholds=171, distinct_thresholds=171))
    with pytest.warns(NotProvenWarning) as caught:
        clf._warn_if_not_proven()
    assert str(caught[0].message) == NOT_PROVEN["time_limit"]  # every threshold: nothing to add
    assert claim(clf.record_).bound == "No bound yet: nothing is proven about how far it is from the best tree."
    assert claim(clf.record_).colour == "orange"


def test_the_ladder_says_the_time_thinned_the_thresholds():
    from strongtree_core.estimator.classifier import thresholds_note

    scope = Scope(depth=3, thresholds=48, distinct_thresholds=4_212, questions=48, encoded_questions=160)
    assert scope.ladder_thinned and scope.thinned
    assert thresholds_note(scope) == ""  # the ladder's own words (record_.choice) say why, not the encoding's
    assert thresholds_note(Scope(thresholds=48, distinct_thresholds=171, widest_column=57, questions=48,
                                 encoded_questions=48)) == THRESHOLDS_KEPT.format(kept=48, distinct=171, widest=57)
    assert thresholds_note(Scope(thresholds=171, distinct_thresholds=171)) == ""
    said = claim(SolveRecord("optimal", objective=5, bound=5, certified=True, n_rows=200_000, scope=scope))
    assert said.sentence.endswith(" The time allowed a proof over 48 of the encoding's 160 questions; a longer time "
                                  "limit may prove more.")
    same = Scope(depth=3, thresholds=48, distinct_thresholds=4_212, questions=48, encoded_questions=48)
    assert not same.ladder_thinned and same.thinned
    assert "The time allowed" not in claim(SolveRecord("optimal", certified=True, scope=same)).sentence
    unknown = Scope(depth=2, thresholds=8)
    assert unknown.unknown and not unknown.thinned
    assert claim(SolveRecord("optimal", certified=True, n_rows=10, scope=unknown)).sentence.startswith(
        "No tree of depth 2 asking only the 8 thresholds kept does better")
    assert claim(SolveRecord("optimal", certified=True, n_rows=10, scope=Scope(depth=2))).sentence == (
        "No tree of depth 2 does better on these 10 training rows under these constraints.")  # no numeric column


def test_a_constant_tree_is_never_a_green_proven_optimal():
    record = STATES["constant fallback"]
    said = claim(record)
    assert (said.state, said.label, said.colour, said.promise_state) == ("constant", CONSTANT_LABEL, "orange",
                                                                         "constant")
    assert said.sentence == "" and said.promise_label == "" and said.short == CONSTANT_LABEL
    assert "Proven optimal" not in json.dumps(surface_words(record))
    assert said.promise.endswith("the smallest gap a tree that splits could promise here is estimated at 12.4 pp.")
    assert "it predicts 'no' for every row" in said.promise
    none = claim(SolveRecord("optimal", certified=True, promise={**record.promise, "smallest_delta": None}))
    assert none.promise.endswith("; no smaller gap can be named for a tree that splits.")
    held = claim(SolveRecord("optimal", certified=True, promise={**record.promise, "method": "holdout",
                                                                  "known": "proved", "smallest_delta": 0.165}))
    assert held.promise.endswith("the first one tested would have passed at 16.5 pp, a bound read after the test "
                                 "(not a proved promise).")


def test_a_promise_says_whether_it_is_estimated_or_proved():
    estimated, proved = claim(STATES["promise estimated"]), claim(STATES["promise proved"])
    assert (estimated.promise_state, estimated.promise_label, estimated.colour) == ("estimated", "promise estimated",
                                                                                   "green")
    assert estimated.promise.endswith("(subsample method): an estimate whose coverage was measured by simulation, "
                                      "not a proof.") and "proved" not in estimated.promise
    assert estimated.sentence.startswith("No tree of depth 2 does better on these 1,500 training rows under these "
                                         "constraints, with the fairness bound tightened to 2.3 pp on them")
    assert (proved.promise_state, proved.promise_label) == ("proved", "promise proved")
    assert proved.promise == ("Its gap on new rows of the same population is at most 5.0 pp with probability at "
                              "least 90 %: proved by an exact test on 450 held-out rows (holdout method).")
    assert estimated.short == "Proven optimal · promise estimated"
    # an older promise without "known": its method says it
    older = dict(STATES["promise proved"].promise)
    del older["known"]
    assert claim(SolveRecord("optimal", certified=True, promise=older)).promise_state == "proved"


def test_the_table_in_results_is_what_the_one_function_says_now():
    """benchmarks/RESULTS.md shows, for each state, the words of every surface; printed by
    ``python -m benchmarks.claim_table``: the table there must be exactly what it prints today."""
    text = (ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    printed = table()
    assert printed in text
    head = printed.splitlines()[0]
    assert text.count(head) == 1
    shown = text[text.index(head):].split("\n\n")[0]
    assert shown == printed
    assert len(printed.splitlines()) == 2 + len(STATES)
    for state in ("certified on all thresholds", "over kept thresholds", "not proven", "infeasible",
                  "promise estimated", "promise proved", "constant fallback"):
        assert re.search(rf"^\| {re.escape(state)} \|", printed, re.M)


def test_each_way_a_solve_ends_has_its_own_words():
    kept = Scope(depth=4, thresholds=128, distinct_thresholds=1_254, widest_column=517)
    every = Scope(depth=4, thresholds=1_254, distinct_thresholds=1_254)
    infeasible = claim(SolveRecord("infeasible", n_rows=10, scope=Scope(depth=2)))
    assert (infeasible.label, infeasible.colour) == ("No tree fits", "red")
    assert infeasible.sentence == "No tree of depth 2 satisfies all the constraints together on these 10 training rows."
    bound = claim(SolveRecord("interrupted", objective=600, bound=652, n_rows=768, scope=every))
    assert bound.state == "not_proven" and bound.label == "Stopped (not proven)"
    assert bound.bound == "No tree of depth 4 can do better than the bound 652."
    assert bound.sentence.endswith(" " + bound.bound)
    assert claim(SolveRecord("time_limit", objective=600, bound=652, n_rows=768, scope=kept)).bound == (
        "No tree of depth 4 asking only the 128 of the 1,254 thresholds kept can do better than the bound 652.")
    heuristic = claim(SolveRecord("heuristic", objective=5, scope=kept))
    assert (heuristic.state, heuristic.label, heuristic.bound) == ("heuristic", "Heuristic (no proof)", "")
    assert heuristic.sentence == "A heuristic's tree (greedy or local search): no optimality claim."
    running = claim(SolveRecord("running", objective=5))
    assert (running.state, running.colour) == ("running", "blue")
    assert claim(SolveRecord("optimal", certified=False, objective=5)).state == "other"  # a proof the solve refused
    assert claim(SolveRecord("optimal", certified=True)).sentence == (
        "No tree of this depth asking the questions of its encoding does better on the training rows under these "
        "constraints.")


def test_a_promise_record_missing_some_facts_claims_no_more():
    record = STATES["constant fallback"]
    no_label = claim(SolveRecord("optimal", certified=True, promise={**record.promise, "predicts": None}))
    assert "it predicts one class for every row, so its gap is 0 on any rows" in no_label.promise
    held = dict(STATES["promise proved"].promise, held_out_rows=None)
    assert claim(SolveRecord("optimal", certified=True, promise=held)).promise == (
        "Its gap on new rows of the same population is at most 5.0 pp with probability at least 90 %: proved by an "
        "exact test on held-out rows (holdout method).")


def test_a_scope_is_a_checked_value():
    for bad in ({"thresholds": -1}, {"depth": True}, {"questions": 2.5}, {"training_bound": float("nan")},
                {"training_bound": -0.1}):
        with pytest.raises(ValueError, match="Not a stored certificate scope"):
            Scope(**bad)
    with pytest.raises(ValueError, match="not an object"):
        Scope.from_dict([2])
    assert Scope(thresholds=3.0).thresholds == 3 and isinstance(Scope(thresholds=3.0).thresholds, int)
    assert "scope" not in SolveRecord("optimal", certified=True).to_dict()
    assert SolveRecord("optimal", certified=True, scope={"depth": 2}).scope == Scope(depth=2)


def test_the_encoding_counts_each_numeric_columns_distinct_cuts():
    from strongtree_core.encoding import EncodingPlan, TableEncoder

    frame = pd.DataFrame({"x": [0.5, 1.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5], "level": [1, 2, 3] * 3 + [1],
                          "kind": list("ababababab"), "flag": [0, 1] * 5})
    plan = TableEncoder(n_buckets=3).fit(frame)
    by_name = {c.name: c for c in plan.columns}
    assert (by_name["x"].n_gaps, len(by_name["x"].cuts)) == (8, 2)  # 9 distinct values, 2 quantile cuts
    assert (by_name["level"].n_gaps, len(by_name["level"].cuts)) == (2, 2)  # ordinal: every cut
    assert by_name["kind"].n_gaps is None and by_name["flag"].n_gaps is None
    assert plan.threshold_counts() == (4, 10, 8)
    back = EncodingPlan.from_dict(plan.to_dict())
    assert back == plan and [c.n_gaps for c in back.columns] == [c.n_gaps for c in plan.columns]
    weighted = TableEncoder(n_buckets=3).fit(frame, sample_weight=np.r_[np.zeros(3), np.ones(7)])
    assert {c.name: c for c in weighted.columns}["x"].n_gaps == 6  # rows of weight 0 are absent
    assert TableEncoder().fit(frame[["kind", "flag"]]).threshold_counts() is None
    data = TableEncoder(max_thresholds=2).fit(frame, target=np.array([0, 1] * 5))
    assert {c.name: c for c in data.columns}["x"].n_gaps == 8


def test_the_scope_carries_the_training_bound_of_a_parity_constraint_only():
    X, y = fifty_eight_rows()
    group = np.where(X.c > 0, "g", "h")
    fair = StrongTreeClassifier(depth=1, time_limit=30, fairness="statistical_parity", fairness_bound=0.3).fit(
        X.assign(group=group), y, sensitive_features="group")
    assert fair.record_.scope.training_bound == 0.3 and fair.record_.scope.depth == 1
    floor = StrongTreeClassifier(depth=1, time_limit=30, min_recall=0.5).fit(X, y)
    assert floor.record_.scope.training_bound is None


def test_a_stored_tree_says_its_claim_without_being_read_whole(kept_and_all, tmp_path):
    from strongtree_core.tree.claim import tree_claim
    from strongtree_studio.stores.run_history import RunEntry, RunStore, run_claim

    _, _, kept, _ = kept_and_all
    text = kept.tree_.to_json()
    assert tree_claim(text) == claim(kept.record_)
    assert tree_claim(json.dumps({"rows": []})) is None
    odd = json.loads(text)
    odd["record"]["status"] = "optimal"
    odd["record"]["unknown_field"] = 1
    assert tree_claim(json.dumps(odd)).label == "Proven optimal"  # unreadable: said by its status alone
    store = RunStore(tmp_path / "runs.sqlite3")
    store.save(RunEntry(dataset="t", fingerprint="f", status="optimal", config={}, summary={}, evaluation=None,
                        tree=text, baseline=None))
    store.save(RunEntry(dataset="t", fingerprint="f", status="time_limit", config={}, summary={}, evaluation=None,
                        tree=None, baseline=None))
    shown = store.table()
    assert [c.short for c in shown["claim"]] == ["Not proven (time limit)", KEPT_LABEL]
    assert run_claim("optimal", json.dumps(kept.record_.to_dict())).label == KEPT_LABEL
    assert run_claim("interrupted", "not json").label == "Stopped (not proven)"


def test_the_rules_file_and_the_report_say_the_claim(kept_and_all):
    from strongtree_core.report.build import ReportInput, build_report
    from strongtree_studio.views.downloads import export_bytes

    X, y, kept, _ = kept_and_all
    rules = export_bytes(kept.tree_, "rules").decode()
    assert rules.startswith(f"# {KEPT_LABEL}. No tree of depth 2 asking only the 48 of the 171 thresholds kept")
    html = build_report(ReportInput(tree=kept.tree_, train=X.assign(target=y), test=None, dataset="58 rows",
                                    settings={"depth": 2}), engine="builtin")
    assert "<dt>Thresholds searched</dt><dd>48 of the 171 distinct cuts</dd>" in html
    assert f'<span class="badge blue">{KEPT_LABEL}</span>' in html
    assert re.search(rf"<tr><th scope=\"row\">This tree</th><td>{KEPT_LABEL}</td>", html)
    assert "<title>58 rows: a decision tree of depth 2</title>" in html


def test_the_settings_have_one_name_from_the_page_to_the_report():
    from strongtree_core.report.settings import settings_rows
    from strongtree_core.vocabulary import SETTING_NAMES, setting_name
    from strongtree_studio.views.stale import _MODEL_NAMES

    rows = dict(settings_rows({"max_features_used": 3, "max_branching": None, "min_leaf": 5, "regularization": 0.1,
                               "fairness": "statistical_parity", "fairness_bound": 0.05, "fairness_confidence": 0.9}))
    assert rows["Max. features used"] == "3" and rows["Max. splits"] == "no limit"
    assert rows["Min. rows per leaf"] == "5" and rows["Largest allowed gap δ"] == "5.0 pp"
    assert rows["Promise on new rows"] == "90 % confidence" and rows["Simplicity weight λ"] == "0.1"
    assert "Most distinct questions" not in rows
    assert dict(settings_rows({"max_features": 2}))["Max. features used"] == "2"  # a run stored before 0.2
    assert "Promise on new rows" not in dict(settings_rows({"fairness_confidence": 0.9}))  # nothing promised
    assert _MODEL_NAMES["max_features_used"] == "max. features used" == setting_name("max_features_used", inside=True)
    assert setting_name("unknown_thing") == "unknown thing" and SETTING_NAMES["depth"] == "Maximum depth"


def test_a_bound_and_a_gap_say_over_which_trees_they_hold():
    """The Solve page's Bound and Gap cards said "No tree of this depth can do better than this (proven)" and "0 means
    proven optimal" beside "Optimal over kept thresholds"; a constant tree a promise left showed its depth-0 solve's
    bound (1,143, gap 0.0%) as the bound of a depth-2 search on Solve, Tree and the report."""
    kept = STATES["over kept thresholds"]
    assert bound_help(kept) == ("No tree of depth 2 asking only the 48 of the 171 thresholds kept can do better than "
                                "this on the training rows under these constraints (proven).")
    assert gap_help(kept) == ("(bound − best tree) / best tree: 0 means no tree of depth 2 asking only the 48 of the "
                              "171 thresholds kept does better.")
    assert bound_help(STATES["certified on all thresholds"]).startswith("No tree of depth 2 can do better than this")
    assert bound_and_gap(kept) == ("48", "gap 0.0%")
    constant = STATES["constant fallback"]
    assert bound_and_gap(constant) == (CONSTANT_BOUND, "no gap (no bound on a tree that splits)")
    assert bound_help(constant) == ("Only a constant tree keeps the promise; its bound: none for a tree that splits "
                                    "(the constant tree's bound holds over constant trees only).")
    assert "1,143" not in bound_help(constant) + gap_help(constant)
    assert bound_help(None) == ("No tree of this depth asking the questions of its encoding can do better than this "
                                "(proven).")


def test_a_search_that_proves_no_tree_fits_reports_no_bound_below_every_tree():
    """Floors no tree of depth 1 meets: the search's last bound fell below every tree's value (-321 correct rows),
    and the Solve page showed "Bound -491" and a chart down to -400; the error says that no tree fits."""
    from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig, split_table
    from strongtree_studio.data.demo_tables import make_hiring

    roles = Roles("hired", "yes", ("gender",), ("education",))
    tables = split_table(make_hiring(800, seed=1), roles, SplitConfig())
    model = ModelConfig(depth=1, min_recall=0.95, min_precision=0.95, min_specificity=0.95)
    events = []
    with pytest.raises(StrongTreeError, match="^No tree of depth 1 asking only the 12 of the 130 thresholds kept"):
        StrongTreeClassifier(**model.estimator_params(roles)).fit(
            tables.train.drop(columns=["hired", "gender"]), tables.train["hired"], progress=events.append)
    bounds = [e.bound for e in events if e.bound is not None]
    assert bounds and min(bounds) >= 0, bounds


def test_each_clause_of_the_words_is_decided_by_its_own_fact():
    """Broken one at a time (a dropped condition, a flipped comparison), each of these lines changed the words a
    user reads while every test above still passed."""
    # the status decides the certificate: a record marked certified that ended by its time limit is not proven
    said = claim(SolveRecord("time_limit", objective=5, bound=5, certified=True, n_rows=10, scope=Scope(depth=2)))
    assert (said.state, said.label) == ("not_proven", "Not proven (time limit)")
    assert claim(SolveRecord("infeasible", certified=True, n_rows=10, scope=Scope(depth=2))).label == "No tree fits"
    # a scope that counts its thresholds but not its depth says "of this depth", never "of depth None"
    assert claim(SolveRecord("optimal", certified=True, scope=Scope(thresholds=171, distinct_thresholds=171))).sentence \
        == ("No tree of this depth does better on the training rows under these constraints (every threshold of the "
            "numeric columns was searched).")
    # a bound over thresholds whose distinct cuts were not counted says it holds over the kept ones only
    unknown = SolveRecord("time_limit", objective=5, bound=7, n_rows=10, scope=Scope(depth=2, thresholds=8))
    assert claim(unknown).bound == "No tree of depth 2 asking only the 8 thresholds kept can do better than the bound 7."
    unscoped = SolveRecord("time_limit", objective=5, bound=7, n_rows=10)  # a record made before scopes were kept
    assert claim(unscoped).bound == "No tree of this depth can do better than the bound 7."
    assert gap_help(unscoped) == "(bound − best tree) / best tree: 0 means no tree of this depth does better."
    # every way a solve ends unproven carries what its bound says; a proof that no tree fits is said as one
    for status, bound, said in (("error", 7, "No tree of depth 2 can do better than the bound 7."),
                                ("time_limit_no_tree", None, "No bound yet: nothing is proven about how far it is "
                                                             "from the best tree.")):
        ended = claim(SolveRecord(status, bound=bound, n_rows=10, scope=Scope(depth=2)))
        assert (ended.state, ended.bound) == ("not_proven", said) and ended.sentence.endswith(" " + said)
    assert claim(SolveRecord("infeasible", n_rows=10, scope=Scope(depth=2))).state == "infeasible"
    ladder = Scope(depth=3, thresholds=48, distinct_thresholds=4_212, questions=48, encoded_questions=160)
    kept_proof = claim(SolveRecord("infeasible", n_rows=10, scope=STATES["infeasible"].scope))
    assert (kept_proof.label, kept_proof.icon, kept_proof.colour) == ("No tree fits (kept thresholds)",
                                                                      ":material/block:", "red")
    assert claim(SolveRecord("infeasible", n_rows=10, scope=ladder)).sentence.endswith(
        "a tree asking another threshold might. The time allowed a proof over 48 of the encoding's 160 questions; a "
        "longer time limit may prove more.")


def test_a_promise_over_kept_thresholds_and_its_constant_tree_say_exactly_what_was_kept():
    """The training bound a promise tightened is said over kept thresholds too; the class a constant tree predicts
    is written as the rules write it (a text quoted and visible, a number as itself); how a stored promise is
    known is the record's own word, never a stronger one read from its method."""
    promise = STATES["promise estimated"].promise
    kept = claim(SolveRecord("optimal", certified=True, n_rows=58, scope=STATES["over kept thresholds"].scope,
                             promise=promise))
    assert kept.sentence.startswith("No tree of depth 2 asking only the 48 of the 171 thresholds kept does better on "
                                    "these 58 training rows under these constraints, with the fairness bound "
                                    "tightened to 2.3 pp on them; a tree asking another threshold may do better.")
    constant = STATES["constant fallback"].promise
    for predicts, words in ((1, "it predicts 1 for every row"), ("1", "it predicts '1' for every row"),
                            ("a\nb", "it predicts 'a\\nb' for every row"), ("", "it predicts '(empty)' for every row")):
        said = claim(SolveRecord("optimal", certified=True, promise={**constant, "predicts": predicts}))
        assert words in said.promise, (predicts, said.promise)
    held_estimated = {**STATES["promise proved"].promise, "known": "estimated"}
    said = claim(SolveRecord("optimal", certified=True, promise=held_estimated))
    assert said.promise_state == "estimated" and "proved" not in said.promise


def test_the_runs_table_reads_a_stored_runs_promise_and_scope_beside_its_record():
    """The Runs table reads the record, the promise and the scope from three stored texts: without the promise a
    constant tree read "Proven optimal", without the scope a certificate over kept thresholds did; a run whose
    record cannot be read, with a status this version does not know, is said as ended early, never as proven."""
    from strongtree_studio.stores.run_history import run_claim

    def alone(state: str) -> str:
        return json.dumps({k: v for k, v in STATES[state].to_dict().items() if k not in ("promise", "scope")})

    constant = STATES["constant fallback"]
    assert run_claim("optimal", alone("constant fallback"), json.dumps(constant.promise)).short == CONSTANT_LABEL
    assert run_claim("optimal", alone("over kept thresholds"), None,
                     json.dumps(STATES["over kept thresholds"].scope.to_dict())).short == KEPT_LABEL
    assert run_claim("optimal", alone("over kept thresholds")).short == "Proven optimal"  # nothing beside it
    assert run_claim("no_such_status", "not json").label == "Ended early (not proven)"


def test_a_constant_tree_a_held_out_test_left_says_the_whole_test():
    """Every clause of a constant tree's proved promise, exactly (each was dropped by a mutant that passed); a promise
    of a method this version does not know, with no word of how it is known, is an estimate, never proved."""
    constant = {**STATES["constant fallback"].promise, "method": "holdout", "known": "proved"}
    start = ("Only a constant tree keeps the promise on new rows: it predicts 'no' for every row, so its gap is 0 on any "
             "rows. No tree that splits passed the exact test on the held-out rows (holdout method) for a gap within "
             "5.0 pp at 90 % confidence")
    said = claim(SolveRecord("optimal", certified=True, promise={**constant, "smallest_delta": 0.165}))
    assert said.promise == start + ("; the first one tested would have passed at 16.5 pp, a bound read after the test "
                                    "(not a proved promise).")
    assert claim(SolveRecord("optimal", certified=True, promise={**constant, "smallest_delta": None})).promise == (
        start + ".")
    unknown = {k: v for k, v in STATES["promise proved"].promise.items() if k != "known"}
    said = claim(SolveRecord("optimal", certified=True, promise={**unknown, "method": "a_later_method"}))
    assert said.promise_state == "estimated" and said.promise_label == "promise estimated"


def test_a_stored_text_that_holds_no_record_has_no_claim_and_a_missing_level_is_no_certainty():
    from strongtree_core.tree.claim import tree_claim

    for text in ("[1, 2]", '"optimal"', json.dumps({"record": {}}), json.dumps({"record": ["optimal"]})):
        assert tree_claim(text) is None, text
    without_level = {k: v for k, v in STATES["promise estimated"].promise.items() if k != "confidence"}
    words = claim(SolveRecord("optimal", certified=True, promise=without_level)).promise
    assert "with 0 % confidence" in words and "100 %" not in words


def test_the_bound_and_gap_cards_say_what_holds_exactly():
    """The Solve, Tree and report cards' help, word for word: a record without a bound claims none (it read "No tree
    of depth 2 can do better than this (proven)" with the line that says so removed), the tightened bound of a
    promise, a constant tree's gap; a stored record of an unknown status is said as ended early, never optimal."""
    from strongtree_core.tree.claim import tree_claim

    assert bound_and_gap(STATES["over kept thresholds"], "accuracy", n_rows=58) == (
        "at most 48 correct rows (82.8%)", "gap 0.0%")
    assert bound_help(SolveRecord("time_limit", objective=3, scope=Scope(depth=2))) == "No bound: none yet."
    assert bound_help(SolveRecord("heuristic", objective=3)) == "No bound: none (a heuristic proves no bound)."
    assert bound_help(STATES["promise estimated"]) == (
        "No tree of depth 2 can do better than this on the training rows under these constraints, with the fairness "
        "bound tightened to 2.3 pp on them (proven).")
    assert gap_help(STATES["constant fallback"]) == (
        "Only a constant tree keeps the promise: no gap (no bound on a tree that splits).")
    assert gap_help(None) == ("(bound − best tree) / best tree: 0 means no tree of this depth asking the questions "
                              "of its encoding does better.")
    assert gap_help(STATES["promise proved"]).endswith("0 means no tree of depth 2 does better.")
    assert claim_json(SolveRecord("optimal", certified=True))["scope"] is None
    unknown = tree_claim(json.dumps({"record": {"status": "no_such_status", "unknown_field": 1}}))
    assert (unknown.label, unknown.state) == ("Ended early (not proven)", "not_proven")


def test_a_proof_thinned_by_the_ladder_without_a_count_of_thresholds_gives_no_count():
    # A stored or hand-made record whose questions the ladder thinned, its thresholds not counted: it read
    # "asking only the 0 thresholds kept".
    record = SolveRecord("optimal", objective=48, bound=48, certified=True, n_rows=58,
                         scope=Scope(depth=2, questions=10, encoded_questions=20))
    said = claim(record)
    assert said.label == "Optimal over kept thresholds"
    assert said.sentence.startswith("No tree of depth 2 asking only the questions kept does better on these 58 "
                                    "training rows")
    assert "The time allowed a proof over 10 of the encoding's 20 questions" in said.sentence
    assert "0 threshold" not in said.sentence
