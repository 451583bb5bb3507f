"""The Learn page through the entrypoint (AppTest): it renders with its explanation, a
depth-2 comparison on a tiny table runs in a worker and shows one row per formulation
whose numbers are the library's own, Theorem 1 holds in the numbers shown, a refusal
reads as words in its row, and Stop keeps the runs that finished."""

import re
import time
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from strongtree_core.tree.claim import KEPT_LABEL
from strongtree_core.compare.formulations import compare_formulations
from strongtree_studio.jobs.comparison_job import MAX_ROWS, N_BUCKETS
from strongtree_studio.data.demo_tables import DEMOS
from strongtree_studio.learn.presets import BY_KEY, PRESETS
from strongtree_studio.learn.comparison_view import (
    COLUMNS,
    EXPLANATION,
    HEURISTIC_NOTE,
    STALE,
    LearnChoice,
    NOT_RUN,
    NOT_RUN_NOTE,
    REFUSAL_WORDS,
    RUN_NAMES,
    cap_note,
    sample_table,
)
from strongtree_studio.views.status_words import SOLVE_STATUS, fmt

ROOT = Path(__file__).resolve().parents[1]
IRIS = "Iris (scikit-learn)"
BALANCE = "Balance scale (generated, as in the paper)"
TINY = 30


@pytest.fixture(autouse=True, scope="module")
def isolated_history(tmp_path_factory):
    """A fresh run history and job registry for this module."""
    patch = pytest.MonkeyPatch()
    patch.setenv("STRONGTREE_RUNS_DB", str(tmp_path_factory.mktemp("runs") / "runs.sqlite3"))
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()
    patch.undo()


def learn_page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.switch_page("pages/8_learn.py").run()
    assert not at.exception, at.exception
    return at


def shown(cell: str) -> str:
    """A table cell as the reader sees it (``md`` escapes punctuation with backslashes)."""
    return re.sub(r"\\(.)", r"\1", str(cell))


def number(cell: str) -> float:
    return float(shown(cell).replace(",", ""))


def result_table(at: AppTest):
    tables = [t.value for t in at.table if "LP bound" in [shown(c) for c in t.value.columns]]
    if not tables:
        return None
    frame = tables[0].map(shown)
    frame.columns = [shown(c) for c in frame.columns]
    return frame.set_index("Formulation")


def compare(at: AppTest, timeout: float = 60.0):
    at.button(key="learn.start").click().run()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        at.run()
        assert not at.exception, at.exception
        table = result_table(at)
        if table is not None:
            return table
        time.sleep(0.3)
    raise AssertionError("the comparison never finished: " + str([e.value for e in at.error]))


def iris_sample():
    demo = DEMOS[IRIS]
    frame = demo.load()
    return sample_table(IRIS, frame, demo.target, [c for c in frame.columns if c != demo.target], TINY)


def test_the_page_opens_on_its_first_preset_and_a_preset_sets_every_choice():
    at = learn_page()
    assert at.selectbox(key="learn.table").value == BALANCE and PRESETS[0].choice == LearnChoice()
    assert at.radio(key="learn.depth").options == ["1", "2", "3"]
    captions = " ".join(shown(c.value) for c in at.caption)
    assert cap_note() in captions and f"at most {MAX_ROWS} rows" in cap_note() and str(N_BUCKETS) in cap_note()
    assert "a sample of 200 of its 625 rows" in captions and f"Preset: {PRESETS[0].title}." in captions
    assert [shown(b.label) for b in at.button if b.key.startswith("learn.preset.")] == [p.label for p in PRESETS]
    penalty = BY_KEY["penalty"]
    at.button(key="learn.preset.penalty").click().run()
    assert not at.exception, at.exception
    assert at.selectbox(key="learn.table.1").value == penalty.choice.table
    assert at.number_input(key="learn.rows.1").value == penalty.choice.rows
    assert at.selectbox(key="learn.regularization.1").value == penalty.choice.regularization
    assert f"Preset: {penalty.title}." in " ".join(shown(c.value) for c in at.caption)
    text = " ".join(m.value for m in at.markdown)
    assert EXPLANATION.strip() in text
    for cited in ("formulation 1", "(1e)", "(1f, 1g)", "(1c, 1d)", "(1h)", "(1a)", "problem 4", "(3)", "(4)",
                  "(4b)", "Algorithm 1", "Algorithm 2", "Theorem 1", "formulation 24"):
        assert cited in EXPLANATION, cited
    assert at.button(key="learn.stop").disabled and not at.button(key="learn.start").disabled


@pytest.mark.timing
def test_a_depth_2_comparison_shows_one_row_per_formulation_with_the_librarys_numbers():
    at = learn_page()
    at.selectbox(key="learn.table").set_value(IRIS).run()
    at.selectbox(key="learn.time_limit").set_value(10.0).run()
    at.number_input(key="learn.rows").set_value(TINY).run()
    at.radio(key="learn.depth").set_value(2).run()
    table = compare(at)
    assert list(table.columns) == list(COLUMNS[1:])
    assert list(table.index) == list(RUN_NAMES.values())
    proven = KEPT_LABEL  # the claim's: 4 quantile cuts per measurement keep some of iris's thresholds
    assert all(table.loc[name, "Status"] == proven for name in ("OCT", "BinOCT", "FlowOCT", "BendersOCT",
                                                                 "Exact search")), table["Status"]
    captions = " ".join(shown(c.value) for c in at.caption)
    assert f"{KEPT_LABEL}: No tree of depth 2 asking only the " in captions and (
        "Every run asks the same thresholds (4 quantile cuts per numeric column)") in captions
    assert "how far a tree's value is below the optimum proven over the kept thresholds" in captions
    local = table.loc["Local search"]
    assert local["Status"] == SOLVE_STATUS["heuristic"].label and local["Note"] == HEURISTIC_NOTE
    assert local["LP bound"] == fmt(None) and local["Status"] != proven
    # Every proven run shows the same optimum; every LP bound bounds it from above.
    optimum = number(table.loc["Exact search", "Best tree"])
    lp = {name: number(table.loc[name, "LP bound"]) for name in ("OCT", "BinOCT", "FlowOCT", "BendersOCT")}
    assert all(number(table.loc[name, "Best tree"]) == optimum for name in lp)
    assert all(value >= optimum for value in lp.values())
    # Theorem 1 in the numbers shown; BendersOCT's relaxation (every cut-set inequality) is FlowOCT's.
    assert lp["FlowOCT"] <= min(lp["OCT"], lp["BinOCT"]) and lp["BendersOCT"] == lp["FlowOCT"]
    assert table.loc["FlowOCT", "Benders cuts"] == fmt(None) and number(table.loc["BendersOCT", "Benders cuts"]) > 0
    # The numbers are the library's: the same comparison run here, formatted by the one formatter.
    sample = iris_sample()
    runs = {RUN_NAMES[r.formulation]: r.row() for r in compare_formulations(
        sample.X, sample.y, depth=2, time_limit=10, n_buckets=N_BUCKETS)}
    for name in lp:
        row = runs[name]
        assert (table.loc[name, "Variables"], table.loc[name, "Constraints"], table.loc[name, "Non-zeros"]) == (
            fmt(row["variables"], "int"), fmt(row["constraints"], "int"), fmt(row["nonzeros"], "int"))
        assert table.loc[name, "LP bound"] == fmt(row["lp_bound"])
    assert number(table.loc["Exact search", "Best tree"]) == runs["Exact search"]["objective"]
    theorem = next(m.value for m in at.markdown if m.value.startswith("Theorem 1 on this table"))
    assert f"FlowOCT's LP bound ({fmt(lp['FlowOCT'])})" in theorem
    assert at.get("vega_lite_chart") or at.get("arrow_vega_lite_chart")


@pytest.mark.timing
def test_a_refusal_reads_as_words_in_its_row_and_the_penalty_separates_the_bounds():
    at = learn_page()
    at.selectbox(key="learn.table").set_value(IRIS).run()
    at.number_input(key="learn.rows").set_value(TINY).run()
    at.selectbox(key="learn.regularization").set_value(0.1).run()
    table = compare(at)
    binoct = table.loc["BinOCT"]
    assert binoct["Status"] == SOLVE_STATUS["refused"].label and binoct["Note"] == NOT_RUN_NOTE
    # In the page's words: what BinOCT cannot take and which control changes it, not the library's advice.
    assert [shown(w.value) for w in at.warning] == [NOT_RUN.format(name="BinOCT", reason=REFUSAL_WORDS["binoct"])]
    assert "formulation=" not in REFUSAL_WORDS["binoct"] and "λ to 0 above" in REFUSAL_WORDS["binoct"]
    assert binoct["LP bound"] == fmt(None) and binoct["Variables"] == fmt(None)
    flow, oct_ = number(table.loc["FlowOCT", "LP bound"]), number(table.loc["OCT", "LP bound"])
    assert flow < oct_  # with a split penalty FlowOCT's relaxation is strictly tighter on this table
    assert not at.error and not at.exception
    assert not any(m.value.startswith("#### Earlier settings") for m in at.markdown)
    # The settings move on: the results stay, labelled as the earlier settings' own.
    at.radio(key="learn.depth").set_value(1).run()
    assert result_table(at) is not None
    assert any(m.value.startswith("#### Earlier settings") for m in at.markdown)
    ran = f"{IRIS}: {TINY} rows, depth 2, λ = 0.1, 5.0 s per run"
    assert STALE.format(settings=ran) in [shown(w.value) for w in at.warning]


@pytest.mark.timing
def test_stop_keeps_the_finished_runs_and_says_the_rest_did_not_start():
    at = learn_page()
    at.selectbox(key="learn.table").set_value("Breast cancer (Wisconsin, scikit-learn)").run()
    at.number_input(key="learn.rows").set_value(MAX_ROWS).run()
    at.radio(key="learn.depth").set_value(3).run()
    at.selectbox(key="learn.time_limit").set_value(30.0).run()
    at.button(key="learn.start").click().run()
    deadline, reported = time.monotonic() + 60, False  # the root LPs first: 40 s with both cores taken
    while not reported and time.monotonic() < deadline:  # OCT reports its first numbers
        time.sleep(0.3)
        at.run()
        progress = [t.value for t in at.table if "Step" in [shown(c) for c in t.value.columns]]
        reported = bool(progress) and shown(progress[0].iloc[0]["Best tree"]) != fmt(None)
    assert reported, "OCT reported no tree in 60 s: the Stop below would find no run under way"
    assert not at.button(key="learn.stop").disabled
    started = time.monotonic()
    at.button(key="learn.stop").click().run()
    deadline = time.monotonic() + 30
    while result_table(at) is None and time.monotonic() < deadline:
        time.sleep(0.3)
        at.run()
    assert time.monotonic() - started < 20  # well before OCT's 30 s
    table = result_table(at)
    assert list(table.index) == ["OCT"]
    assert table.loc["OCT", "Status"] == SOLVE_STATUS["interrupted"].label
    assert any("did not start" in i.value for i in at.info)
