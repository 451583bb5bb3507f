"""The Trade-offs page through the entrypoint (AppTest): it renders with the demo data, a
small sweep runs in a worker and its points reach the table, the figure, the history and
the Tree page; Stop keeps the finished points; bad grids are messages."""

import base64
import io
import json
import time
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from test_app import drawings, goto, isolated_history, new_app, poll  # noqa: F401 (the fixture isolates the history)
from streamlit.testing.v1 import AppTest

from strongtree_core.tree.claim import claim
from strongtree_core.tree import FittedTree
from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig, split_table
from strongtree_studio.data.demo_tables import DEMOS
from strongtree_studio.jobs.job_registry import JobRegistry
from strongtree_studio.data.loading import fingerprint
from strongtree_studio.views.markup import md
from strongtree_studio.data.roles import suggest_roles
from strongtree_studio.stores.run_history import RunStore
from strongtree_studio.page.services import job_registry, run_store
from strongtree_studio.stores.table import LoadedTable
from strongtree_studio.sweeps.frontier_view import CART_SYMBOL, CERTIFIED_SYMBOL, LABEL_DELTA, REFERENCE_SYMBOL
from strongtree_studio.sweeps.sweep_grid import (
    DEFAULT_BOUNDS_TEXT,
    MSG_BOUNDS_RANGE,
    MSG_BOUNDS_TEXT,
    MSG_EMPTY_GRID,
    MSG_LAMBDA_RANGE,
    MSG_NO_PROTECTED,
    MSG_ONE_GROUP,
    SweepChoice,
    SweepGrid,
    check_sweep,
)
from strongtree_studio.sweeps.sweep_job import sweep_context, sweep_spec
from strongtree_studio.sweeps.points import csv_bytes, points_table
from strongtree_studio.sweeps.history import finish_sweep

PAGE = "pages/6_tradeoffs.py"
HIRING = "Hiring (teaching data with planted bias)"


def tradeoffs_with_demo() -> AppTest:
    at = new_app()
    at.button(key="data.load_demo").click().run()  # the hiring table: gender protected, education legitimate
    return goto(at, PAGE)


def figure(at: AppTest) -> dict:
    charts = at.get("plotly_chart")
    assert charts, "no figure"
    return json.loads(charts[0].proto.spec)


def values(data) -> np.ndarray:
    """A plotly array from a figure's JSON (plain, or typed and base64-encoded)."""
    if isinstance(data, dict):
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"])
    return np.asarray(data, dtype=float)


def test_the_page_renders_with_the_demo_data():
    at = tradeoffs_with_demo()
    notions = at.multiselect(key="sweep.notions")
    assert notions.options == ["Statistical parity", "Conditional statistical parity", "Predictive equality",
                               "Equal opportunity", "Equalized odds"]  # a legitimate factor: all five
    assert notions.value == ["statistical_parity"]
    # Round bounds (0.0, 2.2, 4.4, 6.7 ... read as noise): steps of 2.5 pp.
    assert at.text_input(key="sweep.fairness_bounds").value == DEFAULT_BOUNDS_TEXT == "0, 2.5, 5, 7.5, 10, 12.5, 15, 17.5, 20"
    assert at.caption[0].value.startswith("9 points: 1 notion × 9 bounds × 1 depth × 1 λ value, and 1 tree without a "
                                          "fairness constraint for reference; at most 1 min 40 s")
    assert not at.button(key="tradeoffs.start").disabled
    assert at.button(key="tradeoffs.stop").disabled
    assert not at.error


def test_a_small_sweep_runs_in_the_background_and_its_points_are_shown_stored_and_opened():
    at = tradeoffs_with_demo()
    at.text_input(key="sweep.fairness_bounds").set_value("0, 5, 10").run()
    at.number_input(key="sweep.time_limit").set_value(5.0).run()
    assert at.caption[0].value.startswith("3 points")
    at.button(key="tradeoffs.start").click().run()
    job_id = at.session_state["sweep_job_id"]
    goto(at, "pages/1_data.py")  # leaving the page does not end the sweep
    goto(at, PAGE)
    poll(at, lambda a: not job_registry().snapshot(job_id).active, timeout=60)
    at.run()
    snapshot = job_registry().snapshot(job_id)
    # Three fair points, and the same tree without a fairness constraint for reference.
    assert snapshot.state == "finished" and len(snapshot.main.rows) == 4 == snapshot.main.total

    shown = at.table[0].value  # Markdown cells: "5.0 pp" reads "5\\.0 pp"
    shown = shown.map(lambda v: str(v).replace("\\", "")).rename(columns=lambda c: c.replace("\\", ""))
    assert list(shown["δ"]) == ["0.0 pp", "5.0 pp", "10.0 pp", "–"]
    assert list(shown["notion"]) == ["Statistical parity"] * 3 + ["none (reference)"]
    # each point's claim from its tree (the hiring table's numbers are cut at quantiles: kept thresholds)
    assert set(shown["status"]) <= {"Proven optimal", "Optimal over kept thresholds", "Not proven (time limit)"}
    assert list(shown["status"]) == [claim(FittedTree.from_json(row["tree"]).record).short
                                     for row in points_table(snapshot.main.rows).to_dict("records")]

    # every gap on screen is the tree's own, recomputed from its predictions on the training rows
    table = points_table(snapshot.main.rows)
    frame = at.session_state["table"].frame
    roles = at.session_state["roles"]
    train = split_table(frame, roles, SplitConfig()).train
    for row, gaps in zip(table.to_dict("records")[:3], shown["gap training / test"]):
        gap_text = gaps.split(" / ")[0]
        predicted = FittedTree.from_json(row["tree"]).predict(train) == "yes"
        rates = [predicted[(train["gender"] == g).to_numpy()].mean() for g in ("female", "male")]
        assert gap_text == f"{100 * abs(rates[0] - rates[1]):.1f} pp"
        assert abs(rates[0] - rates[1]) <= row["fairness_bound"] + 1e-9

    spec = figure(at)
    traces = spec["data"]
    assert [t["name"] for t in traces if t.get("mode") == "lines" and t["name"] == LABEL_DELTA]  # the δ lines
    delta = next(t for t in traces if t["name"] == LABEL_DELTA)
    assert [x for x in delta["x"] if x is not None] == [0.0, 0.0, 5.0, 5.0, 10.0, 10.0]
    for axis, part in (("x", "train"), ("x2", "test")):  # one filled circle per proof, at its accuracy and gap
        circles = [t for t in traces if t.get("mode") == "markers" and t["marker"]["symbol"] == CERTIFIED_SYMBOL
                   and t.get("xaxis", "x") == axis and t["x"] != [None]]
        drawn = sorted(zip(np.concatenate([values(t["x"]) for t in circles]),
                           np.concatenate([values(t["y"]) for t in circles])))
        proven = table[table["certified"] & table["fairness"].notna()]  # the fair points (references apart)
        assert drawn == pytest.approx(sorted(zip(100 * proven[f"{part}_gap"], 100 * proven[f"{part}_accuracy"])))
    # the filled circles and the count of proofs in their claims' words: over the quantile cuts, "optimal over kept
    # thresholds", never "proven optimal" (the legend, the caption and "4 proven optimal" said it of these)
    assert set(shown["status"]) == {"Optimal over kept thresholds"}
    legend = [t["name"] for t in traces if t.get("legendgroup") == "shape"]
    assert legend[0] == "optimal over kept thresholds" and "proven optimal" not in legend, legend
    said = " ".join(c.value for c in at.caption)
    assert "Filled circles are optimal over kept thresholds; open diamonds" in said and "proven optimal" not in said
    assert "4 optimal over kept thresholds · " in " ".join(str(p.proto.text) for p in at.get("progress"))
    # The references: the tree without a constraint as a cross and CART as an open square, at their measured gaps.
    reference = table[table["fairness"].isna()].iloc[0]
    free = FittedTree.from_json(reference["tree"]).predict(train) == "yes"
    free_gap = abs(np.diff([free[(train["gender"] == g).to_numpy()].mean() for g in ("female", "male")]))[0]
    crosses = [t for t in traces if t.get("mode") == "markers" and t["marker"]["symbol"] == REFERENCE_SYMBOL
               and t.get("xaxis", "x") == "x" and t["x"] != [None]]
    assert len(crosses) == 1 and values(crosses[0]["x"]) == pytest.approx([100 * free_gap])
    stored_config = run_store().get_sweep(snapshot.run_id, [at.session_state["session_owner"]]).config
    cart = stored_config["references"]
    assert [r["depth"] for r in cart] == [2] and cart[0]["model"] == "CART (same depth)"
    squares = [t for t in traces if t.get("mode") == "markers" and t["marker"]["symbol"] == CART_SYMBOL
               and t.get("xaxis", "x") == "x" and t["x"] != [None]]
    assert len(squares) == 1 and values(squares[0]["x"]) == pytest.approx([100 * cart[0]["train_statistical_parity"]])
    assert [spec["layout"][a]["title"]["text"] for a in ("xaxis", "xaxis2")] == [
        "Training rows: measured gap", "Test rows: measured gap"]

    stored = run_store().get_sweep(snapshot.run_id, [at.session_state["session_owner"]])
    assert stored.status == "finished" and [p["point"] for p in stored.points] == [0, 1, 2, 3]
    meta = {"dataset": stored.dataset, "config": stored.config}
    csv = pd.read_csv(io.BytesIO(csv_bytes(table, meta)))
    assert len(csv) == 4 and csv["train_accuracy_percent"].tolist() == pytest.approx(
        (100 * table["train_accuracy"]).tolist())
    # δ and gaps in percentage points as on the page, and what the points were learned on.
    assert csv["fairness_bound_pp"].tolist() == pytest.approx((100 * table["fairness_bound"]).tolist(), nan_ok=True)
    assert csv["train_gap_pp"].tolist() == pytest.approx((100 * table["train_gap"]).tolist(), nan_ok=True)
    assert "fairness_bound" not in csv.columns and "train_gap" not in csv.columns
    assert set(csv["table"]) == {HIRING} and set(csv["protected"]) == {"gender"} and set(csv["target"]) == {"hired"}

    at.selectbox(key="tradeoffs.point").set_value(2).run()
    at.button(key="tradeoffs.open").click().run()
    at.run()
    run_id = at.session_state["view_run"]
    assert run_id is not None
    entry = run_store().get(run_id)
    opened = FittedTree.from_json(entry.tree)  # the point's tree, with the run's split and table added
    assert replace(opened, context=None) == replace(FittedTree.from_json(table.loc[2, "tree"]), context=None)
    assert opened.context.split == entry.config["split"] and entry.config["model"]["fairness_bound"] == 0.1
    goto(at, "pages/4_tree.py")  # (AppTest does not follow a page change; the browser test does)
    assert FittedTree.from_json(entry.tree).to_json() == entry.tree and len(drawings(at)) == 1
    # The Tree page says which point of which sweep it shows.
    assert entry.config["sweep_point"]["point"] == 2 and entry.config["sweep_point"]["sweep"] == snapshot.run_id
    label = next(i.value for i in at.info if "reopened from the history" in i.value)
    assert label.startswith(md(f"The tree of point 2 of sweep {snapshot.run_id} (")), label
    # The Runs page lists the sweep, and opens it on the Trade-offs page.
    goto(at, "pages/7_runs.py")
    sweeps = next(t.value for t in at.table if "points" in t.value.columns)
    assert list(sweeps.index) == [md(f"Sweep {snapshot.run_id}")] and sweeps["points"].tolist() == ["4"]
    at.button(key="runs.open_sweep").click().run()
    assert at.session_state["sweep_shown"] == snapshot.run_id


def one_group_table() -> LoadedTable:
    frame = DEMOS[HIRING].load()
    frame["gender"] = "female"
    return LoadedTable("one group", frame, fingerprint(frame))


@pytest.mark.parametrize("case, message", [
    ("no protected", MSG_NO_PROTECTED),
    ("one group", MSG_ONE_GROUP.format(columns="gender", group="female")),
    ("no notion", MSG_EMPTY_GRID),
    ("no bound", MSG_EMPTY_GRID),
    ("bound above 100 pp", MSG_BOUNDS_RANGE.format(values="150 pp")),
    ("negative bound", MSG_BOUNDS_RANGE.format(values="-1 pp")),
    ("words for bounds", MSG_BOUNDS_TEXT.format(text="five")),
    ("lambda of 1", MSG_LAMBDA_RANGE.format(values="1")),
], ids=lambda value: value if len(value) < 20 else "")
def test_bad_grids_are_messages_and_block_the_sweep(case, message):
    at = tradeoffs_with_demo()
    if case == "no protected":
        at.session_state["roles"] = Roles("hired", "yes")
    elif case == "one group":
        at.session_state["table"] = one_group_table()
    elif case == "no notion":
        at.multiselect(key="sweep.notions").set_value([])
    elif case == "no bound":
        at.text_input(key="sweep.fairness_bounds").set_value(" ")
    else:
        value = {"bound above 100 pp": "0, 150", "negative bound": "-1, 5", "words for bounds": "5, five",
                 "lambda of 1": None}[case]
        if value is None:
            at.text_input(key="sweep.lambdas").set_value("0, 1")
        else:
            at.text_input(key="sweep.fairness_bounds").set_value(value)
    at.run()
    assert not at.exception
    assert [e.value for e in at.error] == [md(message)]
    assert at.button(key="tradeoffs.start").disabled


@pytest.mark.timing
def test_stop_keeps_the_finished_points(tmp_path):
    """The first point solves at once, the second (FlowOCT at depth 3, limit 120 s) runs until Stop:
    the sweep then ends within seconds and keeps both, the stopped one not proven."""
    demo = DEMOS[HIRING]
    frame = demo.load()
    roles = suggest_roles(frame, demo)
    model = ModelConfig(formulation="flow", depth=3)
    grid = SweepGrid(("statistical_parity",), (0.02,), (1, 3), (0.0,))
    context = sweep_context("hiring", fingerprint(frame), frame, roles, SplitConfig(), model, grid, 120.0, "s:1")
    registry = JobRegistry(on_finished=lambda job: finish_sweep(job, lambda: RunStore(tmp_path / "r.db")),
                           prewarm=False)
    try:
        job_id = registry.submit(sweep_spec(context), context)
        deadline = time.monotonic() + 60
        while len(registry.snapshot(job_id).main.rows) < 1:
            assert time.monotonic() < deadline, "the first point never finished"
            time.sleep(0.2)
        time.sleep(1.0)  # the second point is being solved
        stopped = time.monotonic()
        registry.stop(job_id)
        while registry.snapshot(job_id).active:
            assert time.monotonic() - stopped < 30, "Stop was not honoured"
            time.sleep(0.2)
        snapshot = registry.snapshot(job_id)
    finally:
        registry.shutdown()
    rows = sorted(snapshot.main.rows, key=lambda r: r["point"])
    assert rows[0]["depth"] == 1 and rows[0]["certified"]
    assert len(rows) == 2 and rows[1]["status"] == "interrupted" and not rows[1]["certified"]
    assert rows[1]["tree"] is not None
    stored = RunStore(tmp_path / "r.db").get_sweep(snapshot.run_id)
    assert stored.status == "stopped" and [p["point"] for p in stored.points] == [0, 1]


def test_the_grid_check_is_independent_of_the_page():
    demo = DEMOS[HIRING]
    frame = demo.load()
    roles = suggest_roles(frame, demo)
    grid, problems = check_sweep(frame, roles, SplitConfig(), ModelConfig(),
                                 SweepChoice(notions=("equalized_odds", "statistical_parity"), fairness_bounds="10, 0 ,5pp",
                                             depths=(3, 2), lambdas="0; 0.05"))
    assert problems == []
    assert grid.fairness_bounds == (0.0, 0.05, 0.1) and grid.depths == (2, 3) and grid.n_points == 24
    assert grid.n_references == 4 and grid.n_total == 28  # one tree without a constraint per depth and λ
    spec = sweep_spec(sweep_context("t", "f", frame, roles, SplitConfig(), ModelConfig(), grid, 7.0, "s"))
    assert spec.n_points == 28 and spec.params["time_limit"] == 7.0 and spec.params["fairness"] is None
    train, test = spec.cv[0]
    assert len(train) == 600 and len(test) == 200 and np.intersect1d(train, test).size == 0
    assert "hired" not in spec.X.columns and "gender" in spec.X.columns  # protected: measured, never split on


def test_a_click_on_the_frontier_names_its_point_and_nothing_else_does():
    from strongtree_studio.sweeps.points import picked_point

    marker = {"curve_number": 2, "point_index": 0, "customdata": ["Point 4 · hover text", 4]}
    line = {"curve_number": 0, "point_index": 1}  # the frontier line and the δ lines carry no point
    assert picked_point({"selection": {"points": [line, marker]}}) == 4
    assert picked_point({"selection": {"points": [line]}}) is None
    assert picked_point({"selection": {"points": []}}) is None
    assert picked_point(None) is None
    assert picked_point({"selection": {"points": [{"customdata": ["text", "not a number"]}]}}) is None


def test_a_sweep_with_a_promise_level_draws_stars_and_says_what_each_point_promised():
    """fairness_confidence is a grid key (a page control): each level is a point at every bound, whose tree keeps
    its bound on new rows by a tightened training bound; the table says the level and that bound, the figure
    draws the points as stars, and a point opened carries its level to the Model settings."""
    from strongtree_studio.sweeps.frontier_view import PROMISE_SYMBOL, PROMISE_UNCERTIFIED_SYMBOL
    from strongtree_studio.page.screens.tradeoffs import PROMISE_NOTE
    from strongtree_studio.sweeps.points import point_model

    at = tradeoffs_with_demo()
    assert at.multiselect(key="sweep.confidences").value == [None]
    at.multiselect(key="sweep.confidences").set_value([None, 0.9]).run()
    at.text_input(key="sweep.fairness_bounds").set_value("5").run()
    at.multiselect(key="sweep.depths").set_value([1]).run()  # depth 1: the promise's dozen fits take seconds
    at.number_input(key="sweep.time_limit").set_value(5.0).run()
    assert at.caption[0].value.startswith(
        "2 points: 1 notion × 1 bound × 1 depth × 1 λ value × 2 promise levels, and 1 tree without a fairness "
        "constraint for reference")
    at.button(key="tradeoffs.start").click().run()
    job_id = at.session_state["sweep_job_id"]
    poll(at, lambda a: not job_registry().snapshot(job_id).active, timeout=120)
    at.run()
    snapshot = job_registry().snapshot(job_id)
    assert snapshot.state == "finished" and len(snapshot.main.rows) == 3
    table = points_table(snapshot.main.rows)
    fair = table[table["fairness"].notna()]
    assert list(fair["fairness_confidence"].fillna(-1)) == [-1, 0.9]
    frame = at.session_state["table"].frame
    train = split_table(frame, at.session_state["roles"], SplitConfig()).train
    for row in fair.to_dict("records"):  # every bound re-measured on the tree's own predictions
        predicted = FittedTree.from_json(row["tree"]).predict(train) == "yes"
        gap = abs(np.diff([predicted[(train["gender"] == g).to_numpy()].mean() for g in ("female", "male")]))[0]
        assert gap <= row["training_bound"] + 1e-9 and row["training_bound"] <= row["fairness_bound"] + 1e-12
        model = point_model(at.session_state["sweep_started"]["config"], row)
        assert model.fairness_confidence == (0.9 if row["fairness_confidence"] == 0.9 else None)
    shown = at.table[0].value.map(lambda v: str(v).replace("\\", "")).rename(columns=lambda c: c.replace("\\", ""))
    promised = fair[fair["fairness_confidence"] == 0.9]
    assert list(shown["on new rows"]) == [
        "training rows only" if r["fairness_confidence"] != 0.9
        else "90 % confidence: only a constant tree keeps it" if r["promise_constant"]
        else f"90 % confidence, trained at {100 * r['training_bound']:.1f} pp" for r in fair.to_dict("records")] + ["–"]
    csv = pd.read_csv(io.BytesIO(csv_bytes(table)))  # the tightened bound in pp, as δ
    assert csv["training_bound_pp"].tolist()[:2] == pytest.approx(list(100 * fair["training_bound"]))
    for row in promised.to_dict("records"):  # a constant tree is said to be one, measured on its predictions
        said = FittedTree.from_json(row["tree"]).predict(train)
        assert row["promise_constant"] == (np.unique(said).size == 1)
    stars = [t for t in figure(at)["data"] if t.get("mode") == "markers" and t["x"] != [None]
             and t["marker"]["symbol"] in (PROMISE_SYMBOL, PROMISE_UNCERTIFIED_SYMBOL) and t.get("xaxis", "x") == "x"]
    assert sum(len(values(t["x"])) for t in stars) == len(promised)
    assert any(c.value.startswith("Accuracy against the measured gap") and PROMISE_NOTE in c.value
               for c in at.caption)
