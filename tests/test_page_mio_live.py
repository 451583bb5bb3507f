"""The Solve page's live MIO: one click solves a small table with FlowOCT on HiGHS and
BendersOCT on SCIP alone, then with the exact search; each run's best tree and bound are
drawn from the solvers' callbacks, and the finished runs agree with the library."""

import re
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from strongtree_core.tree.claim import KEPT_LABEL
from strongtree_core.compare.formulations import compare_formulations
from strongtree_studio.learn import mio_live
from strongtree_studio.page import mio_live_panel
from strongtree_studio.jobs.comparison_job import N_BUCKETS, ComparisonResult
from strongtree_studio.learn.mio_live import (
    COLUMNS,
    LiveMio,
    live_spec,
    outcome_sentences,
    results_table,
    run_chart,
    run_points,
    shared_domain,
)
from strongtree_studio.views.status_words import SOLVE_STATUS, fmt

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True, scope="module")
def isolated_history(tmp_path_factory):
    patch = pytest.MonkeyPatch()
    patch.setenv("STRONGTREE_RUNS_DB", str(tmp_path_factory.mktemp("runs") / "runs.sqlite3"))
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()
    patch.undo()


def shown(cell) -> str:
    return re.sub(r"\\(.)", r"\1", str(cell))


def test_the_job_solves_the_mios_alone_on_their_backends_then_the_exact_search():
    spec = live_spec()
    assert spec.formulations == ("flow", "benders", "auto")
    assert dict(spec.solvers) == {"flow": "highs", "benders": "scip"}
    assert len(spec.y) == mio_live.LIVE.rows and spec.depth == 2 and spec.time_limit == 60.0
    assert list(spec.X.columns) == ["left_weight", "left_distance", "right_weight", "right_distance"]


def test_a_runs_points_are_closed_by_its_record_and_share_one_axis():
    history = [
        {"elapsed": 0.5, "objective": None, "bound": 200.0, "message": "benders"},
        {"elapsed": 0.4, "objective": 99.0, "bound": None, "message": "flow"},
        {"elapsed": 2.0, "objective": 120.0, "bound": 190.0, "message": "flow"},
        {"elapsed": 1.0, "objective": 0.0, "bound": 199.0, "message": "benders"},
    ]
    result = ComparisonResult(({"word": "flow", "status": "optimal", "objective": 143.0, "bound": 143.0,
                                "seconds": 26.0, "lp_bound": 200.0, "backend": "highs", "nodes": 300},), 200,
                              ("flow", "benders", "auto"))
    flow = run_points(history, result, "flow")
    assert [p["elapsed"] for p in flow] == [0.4, 2.0, 26.0] and flow[-1]["objective"] == 143.0
    benders = run_points(history, None, "benders", now=3.0)
    assert benders[-1] == {**history[3], "elapsed": 3.0, "held": True}
    low, high = shared_domain([flow, benders])
    assert low < 99.0 and high > 200.0  # the first tree of 0 rows is drawn along the bottom edge
    spec = run_chart(flow, [low, high], lp_bound=200.0)
    assert spec["layer"][-1]["mark"]["type"] == "rule" and spec["layer"][-1]["data"]["values"] == [{"lp": 200.0}]
    assert spec["encoding"]["y"]["title"] == "correct rows"
    table = results_table(result)
    assert list(table.columns) == list(COLUMNS)
    assert table.iloc[0].to_dict() == {"Run": "FlowOCT", "Solver": "HiGHS", "Status": SOLVE_STATUS["optimal"].label,
                                       "LP relaxation": "200", "Best tree": "143", "Bound": "143",
                                       "Time": "26.0 s", "Nodes": "300", "Benders cuts": fmt(None)}


@pytest.mark.timing
def test_one_click_solves_draws_each_run_and_agrees_with_the_exact_search(monkeypatch):
    # Depth 1 on 30 rows: the same three runs and the same wiring, in a few seconds.
    monkeypatch.setattr(mio_live, "LIVE", LiveMio(rows=30, depth=1, time_limit=10.0))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.switch_page("pages/3_solve.py").run()
    assert not at.exception, at.exception
    assert any(e.label == mio_live_panel.TITLE for e in at.expander)  # shown with no table loaded, too
    assert not at.button(key="solve.mio.start").disabled and at.button(key="solve.mio.stop").disabled
    at.button(key="solve.mio.start").click().run()
    deadline = time.monotonic() + 90
    table = None
    while time.monotonic() < deadline:
        at.run()
        assert not at.exception, at.exception
        tables = [t.value for t in at.table if "LP relaxation" in [shown(c) for c in t.value.columns]]
        if tables:
            table = tables[0].map(shown)
            break
        time.sleep(0.5)
    assert table is not None, [e.value for e in at.error]
    table.columns = [shown(c) for c in table.columns]
    rows = table.set_index("Run")
    assert list(rows.index) == ["FlowOCT", "BendersOCT", "Exact search"]
    assert (rows["Status"] == SOLVE_STATUS["optimal"].label).all()
    assert rows.loc["FlowOCT", "Solver"] == "HiGHS" and rows.loc["BendersOCT", "Solver"] == "SCIP"
    assert rows.loc["FlowOCT", "Best tree"] == rows.loc["BendersOCT", "Best tree"] == rows.loc["Exact search",
                                                                                                "Best tree"]
    assert rows.loc["FlowOCT", "LP relaxation"] == rows.loc["BendersOCT", "LP relaxation"]  # problem (6) = (1)
    charts = at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")
    assert len(charts) >= 3
    said = " ".join(m.value for m in at.markdown)
    assert "FlowOCT on HiGHS" in said and "BendersOCT on SCIP" in said and "proven optimal" in said
    assert not at.button(key="solve.mio.start").disabled


@pytest.fixture(scope="module")
def kept_and_every():
    """The three runs of the live MIO, as its job stores them, on 60 rows of two numeric columns at 4 quantile cuts
    (6 of their 118 cuts kept), and on the same rows with 4 values per column (every cut kept); depth 1."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=60).round(3), "b": rng.normal(size=60).round(3)})
    y = (X.a + 0.5 * X.b + rng.normal(scale=0.5, size=60) > 0).astype(int)
    coarse = X.apply(lambda c: pd.qcut(c, 4, labels=False)).astype(float)
    out = []
    for table in (X, coarse):
        runs = compare_formulations(table, y, depth=1, formulations=("flow", "benders", "auto"), time_limit=20,
                                    n_buckets=N_BUCKETS, solvers={"flow": "highs", "benders": "scip"})
        out.append(ComparisonResult(tuple({**r.row(), "word": r.formulation} for r in runs), 60,
                                    ("flow", "benders", "auto")))
    return out


def test_each_run_s_status_and_sentence_are_the_claim_s(kept_and_every):
    kept, every = kept_and_every
    history = [{"elapsed": 0.1, "objective": 30.0, "bound": 60.0, "message": word} for word in ("flow", "benders")]
    kept_words = ("No tree of depth 1 asking only the 6 of the 118 thresholds kept does better on these 60 training "
                  "rows under these constraints; a tree asking another threshold may do better.")
    every_words = ("No tree of depth 1 does better on these 60 training rows under these constraints (every threshold "
                   "of the numeric columns was searched).")
    for result, label, words in ((kept, KEPT_LABEL, kept_words), (every, "Proven optimal", every_words)):
        assert results_table(result)["Status"].tolist() == [label] * 3, result.rows
        rows = {r["word"]: r for r in result.rows}
        said = outcome_sentences(result, history)
        assert len(said) == 3, said
        for sentence, word in zip(said, ("flow", "benders")):
            row = rows[word]
            assert (f"and met the best tree ({fmt(row['objective'])}) after {fmt(row['seconds'], 'seconds')}: "
                    f"{label.lower()}, after {fmt(row['nodes'], 'int')} branch-and-bound nodes.") in sentence, sentence
        exact = rows["auto"]
        assert said[2] == (f"**Exact search**: {fmt(exact['objective'])} in {fmt(exact['seconds'], 'seconds')}. "
                           f"{words} It needs no LP: dynamic programming over the subtrees, with bounds (no MIO model).")
    # A result kept from before the claim travelled with each run reads its status's words, as before.
    old = ComparisonResult(({"word": "auto", "status": "optimal", "objective": 143.0, "seconds": 0.5},), 200)
    assert outcome_sentences(old, []) == [("**Exact search**: 143 in 0.5 s. No tree of this depth does better under "
                                           "these constraints. It needs no LP: dynamic programming over the subtrees, "
                                           "with bounds (no MIO model).")]
    assert results_table(old)["Status"].tolist() == ["Proven optimal"]
