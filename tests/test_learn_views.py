"""The Learn page's pure views: the Theorem 1 sentence with its difference, the node counts
explained, the stale check, the CSV and LaTeX of the comparison, the presets, and the
drawing of the root LP (splits, one row's flow, OCT's big-M rows) from a real root LP."""

import io

import numpy as np
import pandas as pd
import pytest

from strongtree_core.tree.claim import KEPT_LABEL
from strongtree_core.compare.formulations import compare_formulations
from strongtree_core.datasets import make_balance_scale
from strongtree_core.errors import NotProvenWarning
from strongtree_core.compare.root_lp import root_relaxations
from strongtree_studio.learn import root_lp_view as root_view
from strongtree_studio.jobs.comparison_job import N_BUCKETS, ComparisonResult
from strongtree_studio.data.demo_tables import DEMOS
from strongtree_studio.learn.presets import DEFAULT, PRESETS, preset_of
from strongtree_studio.learn.comparison_view import (
    EXPORT_COLUMNS,
    LearnChoice,
    comparison_latex,
    comparison_table,
    export_frame,
    is_stale,
    kept_note,
    local_search_sentence,
    nodes_sentence,
    objective_axis,
    optimum_of,
    optimum_words,
    lp_chart,
    theorem_check,
)


def _row(word, **numbers):
    return {"word": word, "status": "optimal", "certified": True, "backend": "highs", **numbers}


RESULT = ComparisonResult((
    _row("oct", lp_bound=200.0, objective=141.0, bound=141.0, nodes=900, constraints=2652, variables=902),
    {"word": "binoct", "status": "refused", "note": "BinOCT cannot take it. Use formulation='oct'."},
    _row("flow", lp_bound=177.5, objective=141.0, bound=141.0, nodes=0, constraints=2607, status="time_limit",
         certified=False),
    _row("benders", lp_bound=177.5, objective=141.0, bound=141.0, nodes=325, cuts=893, constraints=16,
         backend="scip"),
), 200, ("oct", "binoct", "flow", "benders"))


def test_theorem_1_is_said_with_the_difference_in_rows_and_in_percent_of_the_rows():
    said = theorem_check(RESULT)
    assert said == ("Theorem 1 on this table: FlowOCT's LP bound (177.5) is tighter than OCT's (200) by 22.5 "
                    "(11.2% of the 200 rows).")
    assert objective_axis(0.0) == "Objective: correct training rows (1a)"
    assert "λ = 0.1" in objective_axis(0.1) and "(7)" in objective_axis(0.1)
    spec = lp_chart(RESULT, 0.1)
    assert spec["layer"][0]["encoding"]["x"]["title"] == objective_axis(0.1)
    assert {d["label"] for d in spec["data"]["values"]} == {"LP 200, 59 above", "LP 177.5, 36.5 above"}


def test_node_counts_are_explained_with_the_numbers_shown():
    said = nodes_sentence(RESULT)
    assert "FlowOCT explored 0 nodes and BendersOCT 325, from the same LP bound (177.5)" in said
    assert "(893 here), so it explores more nodes" in said and "16 rows before its cuts" in said
    assert "still at the root node" in said  # FlowOCT ran out of time before branching
    assert nodes_sentence(ComparisonResult(RESULT.rows[:1], 200)) == ""


def test_results_are_stale_once_a_choice_or_the_loaded_table_changes():
    started = {"table": "T", "rows": 50, "depth": 2, "time_limit": 5.0, "regularization": 0.0, "name": "T"}
    same = LearnChoice(table="T", rows=50, depth=2, time_limit=5.0)
    assert not is_stale(started, same, "T")
    assert is_stale(started, LearnChoice(table="T", rows=50, depth=3, time_limit=5.0), "T")
    assert is_stale(started, same, "another upload")


def test_the_comparison_downloads_as_numbers_and_as_latex():
    frame = pd.read_csv(io.StringIO(export_frame(RESULT).to_csv(index=False)))
    assert list(frame.columns) == list(EXPORT_COLUMNS)
    assert frame["lp_bound"].tolist()[0] == 200.0 and pd.isna(frame["lp_bound"][1])
    assert frame.loc[3, "benders_cuts"] == 893 and frame.loc[3, "solver"] == "SCIP"
    latex = comparison_latex(RESULT, "Balance scale: 200 rows, λ = 0 & 5 s_per run")
    assert latex.startswith("\\begin{table}") and latex.count("\\\\") == 5  # a header and four runs
    assert "\\caption{Balance scale: 200 rows, $\\lambda$ = 0 \\& 5 s\\_per run}" in latex
    assert "FlowOCT & Not proven" in latex and "177.5" in latex and "Note" not in latex


def test_the_first_preset_is_the_default_and_every_preset_names_a_built_in_table():
    assert DEFAULT is PRESETS[0] and DEFAULT.choice == LearnChoice() and preset_of(LearnChoice()) is DEFAULT
    assert len({p.key for p in PRESETS}) == len(PRESETS) and all(p.choice.table in DEMOS for p in PRESETS)
    assert all(len(p.label) <= 16 for p in PRESETS)  # five buttons in a row at 1280 px


@pytest.fixture(scope="module")
def root():
    frame = make_balance_scale().sample(60, random_state=0).reset_index(drop=True)
    return root_relaxations(frame.drop(columns="tips"), frame["tips"], depth=2, time_limit=20)


def test_the_root_lp_is_drawn_from_its_values(root):
    back = root_view.root_of(root.to_dict())
    assert back == root and root_view.drawable(root)
    features = root_view.used_features(root)
    flow = root_view.relaxation(root, "flow")
    spec = root_view.splits_chart(root, "flow", features)
    cells = {(d["feature"], d["node"]): d["value"] for d in spec["data"]["values"]}
    assert len(cells) == 3 * len(features)
    assert all(cells[(root.features[j], f"node {n + 1}")] == flow.splits[n][j] for n in range(3) for j in features)
    drawing = root_view.flow_chart(root)
    arcs = drawing["layer"][0]["data"]["values"]
    assert [a["flow"] for a in arcs] == [v for _, v in flow.arcs] and len(arcs) == 1 + 6 + 4
    table = root_view.oct_table(root)
    assert list(table["Leaf"]) == ["4", "5", "6", "7"]
    said = " ".join(root_view.root_words(root, 60))
    source = dict(flow.arcs)["source → 1"]
    assert f"{round(source, 3):g} of it leaves the source (1e)" in said and "Theorem 1 at work" in said
    assert f"row {root.row + 1} of the sample" in said


def test_nothing_is_drawn_with_a_split_penalty():
    frame = make_balance_scale().sample(30, random_state=2).reset_index(drop=True)
    root = root_relaxations(frame.drop(columns="tips"), frame["tips"], depth=2, regularization=0.1, time_limit=20)
    assert not root_view.drawable(root) and not root_view.drawable(None)


def compared(X, y) -> ComparisonResult:
    """The Learn page's comparison of FlowOCT, the exact search and the local search, as its job stores it."""
    with pytest.warns(NotProvenWarning):  # the local search proves nothing, and says so
        runs = compare_formulations(X, y, depth=1, formulations=("flow", "auto", "local_search"), time_limit=20,
                                    n_buckets=N_BUCKETS)
    return ComparisonResult(tuple({**run.row(), "word": run.formulation} for run in runs), len(y),
                            ("flow", "auto", "local_search"))


@pytest.fixture(scope="module")
def kept_and_every():
    """Two comparisons at the page's 4 quantile cuts: 60 rows of two columns with 59 distinct values each
    (6 of their 118 cuts kept), and the same rows rounded to 4 values per column (every cut kept)."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=60).round(3), "b": rng.normal(size=60).round(3)})
    y = (X.a + 0.5 * X.b + rng.normal(scale=0.5, size=60) > 0).astype(int)
    coarse = X.apply(lambda c: pd.qcut(c, 4, labels=False)).astype(float)
    return compared(X, y), compared(coarse, y)


KEPT_WORDS = ("No tree of depth 1 asking only the 6 of the 118 thresholds kept does better on these 60 training rows "
              "under these constraints; a tree asking another threshold may do better.")


def test_the_learn_page_says_what_each_run_proved_in_the_claim_s_words(kept_and_every):
    kept, every = kept_and_every
    assert [r["claim"] for r in kept.rows] == [KEPT_LABEL, KEPT_LABEL, "Heuristic (no proof)"], kept.rows
    assert kept.rows[0]["claim_words"] == KEPT_WORDS
    assert comparison_table(kept)["Status"].tolist() == [KEPT_LABEL, KEPT_LABEL, "Heuristic (no proof)"]
    assert kept_note(kept) == (
        f"Optimal over kept thresholds: {KEPT_WORDS} Every run asks the same thresholds (4 quantile cuts per "
        "numeric column), so the comparison of the formulations is exact; the optimum is over those thresholds.")
    assert optimum_words(kept.rows) == "the optimum proven over the kept thresholds"
    local = next(r for r in kept.rows if r["word"] == "local_search")
    assert " the optimum proven over the kept thresholds" in local_search_sentence(kept)
    assert local["objective"] <= optimum_of(kept.rows)
    # Every cut kept: the same page says "Proven optimal" and says no more about thresholds.
    assert [r["claim"] for r in every.rows][:2] == ["Proven optimal", "Proven optimal"], every.rows
    assert every.rows[0]["claim_words"] == ("No tree of depth 1 does better on these 60 training rows under these "
                                            "constraints (every threshold of the numeric columns was searched).")
    assert comparison_table(every)["Status"].tolist()[:2] == ["Proven optimal", "Proven optimal"]
    assert kept_note(every) == "" and optimum_words(every.rows) == "the proven optimum"
    assert " the proven optimum" in local_search_sentence(every)
    # A run stored before the claim was kept with it reads its status, as before.
    old = ComparisonResult(({"word": "flow", "status": "optimal", "objective": 1.0, "certified": True},), 60)
    assert comparison_table(old)["Status"].tolist() == ["Proven optimal"] and kept_note(old) == ""
