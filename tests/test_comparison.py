"""One call compares every formulation on a table (what a teaching page shows)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from strongtree_core import StrongTreeClassifier, StrongTreeError
from strongtree_core.compare.formulations import COMPARED, compare_formulations
from strongtree_core.formulation.binoct import BINOCT_REFUSED


def _table(seed: int = 4, n: int = 40):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, 4))
    y = (X[:, 0] & X[:, 1]) | (rng.random(n) < 0.2)
    return X, y.astype(int)


def test_every_formulation_side_by_side_with_the_same_optimum():
    X, y = _table()
    runs = compare_formulations(X, y, depth=2, time_limit=60)
    assert [r.formulation for r in runs] == list(COMPARED)
    by = {r.formulation: r for r in runs}
    optimum = by["auto"].record.objective
    assert by["auto"].record.certified
    for word in ("oct", "binoct", "flow", "benders"):
        record = by[word].record
        assert record.certified and record.objective == pytest.approx(optimum)
        assert record.lp_bound >= optimum - 1e-6 and record.n_variables > 0
        assert "exact search" not in record.choice  # each formulation alone
        assert by[word].gap_to_optimum == pytest.approx(0.0)
    # Theorem 1 on this table.
    assert by["flow"].record.lp_bound <= min(by["oct"].record.lp_bound, by["binoct"].record.lp_bound) + 1e-6
    assert by["benders"].record.n_cuts is not None and by["flow"].record.n_cuts is None
    local = by["local_search"]
    assert local.record.status == "heuristic" and not local.record.certified
    assert local.gap_to_optimum == pytest.approx((optimum - local.record.objective) / optimum)
    row = local.row()
    assert row["status"] == "heuristic" and row["lp_bound"] is None and row["gap_to_optimum"] >= 0


def test_a_refusal_is_kept_in_words_and_the_rest_still_runs():
    X, y = _table(5)
    events = []
    runs = compare_formulations(X, y, depth=1, formulations=("binoct", "oct", "local_search"), regularization=0.1,
                                time_limit=30, progress=lambda word, ev: events.append(word))
    binoct, oct_, local = runs
    assert binoct.record is None and binoct.error == BINOCT_REFUSED.format(
        names="the branching penalty lambda = 0.1 (imbalanced trees)")
    assert binoct.row() == {"formulation": "BinOCT (Verwer and Zhang)", "status": "refused", "note": binoct.error}
    assert oct_.record.certified and local.gap_to_optimum is not None
    assert {"oct", "local_search"} <= set(events)


def test_stop_skips_the_runs_not_started():
    X, y = _table()
    stop = threading.Event()
    stop.set()
    assert compare_formulations(X, y, depth=2, stop=stop) == []


def test_model_size_is_the_built_models():
    """Variables, constraints and non-zeros in a row are those of the model the formulation builds."""
    from strongtree_core.encoding.patterns import collapse_patterns
    from strongtree_core.formulation import TreeSpec, build_model

    X, y = _table(6, 24)
    runs = compare_formulations(X, y, depth=2, formulations=("oct", "binoct", "flow", "benders"), time_limit=30)
    data = collapse_patterns(X, y, 2)
    for run in runs:
        arrays = build_model(data, TreeSpec(depth=2), run.formulation).arrays
        row = run.row()
        assert (row["variables"], row["constraints"], row["nonzeros"]) == (arrays.n_cols, arrays.n_rows, arrays.A.nnz)
        assert run.record.n_nonzeros > 0


def test_a_run_stopped_before_its_first_tree_reads_interrupted_not_refused(monkeypatch):
    stop = threading.Event()

    def stopped_fit(self, *args, **kwargs):
        stop.set()  # the user pressed Stop while this run had no tree yet
        raise StrongTreeError("No tree was found before the solve was stopped.")

    monkeypatch.setattr(StrongTreeClassifier, "fit", stopped_fit)
    X, y = _table()
    runs = compare_formulations(X, y, depth=2, stop=stop)
    assert [(r.formulation, r.stopped) for r in runs] == [("oct", True)]  # the rest never start
    assert runs[0].row() == {"formulation": "OCT (Bertsimas and Dunn)", "status": "interrupted",
                             "note": "No tree was found before the solve was stopped."}
