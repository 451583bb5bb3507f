"""The dashboard through its entrypoint (streamlit's AppTest): every page, uploads,
durable choices, a solve polled by re-running, Stop, the tree, the metrics and the runs."""

import time
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from studio.config import ERR_FAIRNESS_NEEDS_GROUP, SplitConfig, split_table
from studio.demo_data import make_hiring
from studio.loading import LoadError, read_table
from studio.services import job_registry
from studio.shown import roles_from_config, tree_from_json
from studio.state import GENERATIONS

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("pages/data.py", "pages/model.py", "pages/solve.py", "pages/tree.py", "pages/fairness.py", "pages/runs.py")


@pytest.fixture(autouse=True, scope="module")
def isolated_history(tmp_path_factory):
    """A fresh run history and job registry for this module."""
    patch = pytest.MonkeyPatch()
    patch.setenv("STRONGTREE_RUNS_DB", str(tmp_path_factory.mktemp("runs") / "runs.sqlite3"))
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()
    patch.undo()


def new_app() -> AppTest:
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()


def goto(at: AppTest, page: str) -> AppTest:
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def poll(at: AppTest, until, timeout: float = 90.0) -> AppTest:
    """Re-run the script until ``until(at)`` (fragments with run_every do not fire in AppTest)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        at.run()
        assert not at.exception, at.exception
        if until(at):
            return at
        time.sleep(0.3)
    raise AssertionError("the awaited state never came: " + str([e.value for e in at.error]))


def role(at: AppTest, name: str) -> str:
    """Key of a column-role widget (role widgets get fresh keys with each new table)."""
    return f"roles.{name}.{at.session_state[GENERATIONS]['roles']}"


def hiring_csv(n_rows: int = 300) -> bytes:
    return make_hiring(n_rows, seed=11).to_csv(index=False).encode()


def test_every_page_renders_before_a_table_is_chosen():
    at = new_app()
    assert [i.value for i in at.info] == ["Choose a built-in table or upload one to begin."]
    for page in PAGES[1:]:
        goto(at, page)
        assert not at.error, [e.value for e in at.error]
    goto(at, "pages/tree.py")
    assert "No tree yet" in at.info[0].value


def test_upload_sets_roles_and_previews_the_encoding():
    at = new_app()
    at.file_uploader(key="data.upload").set_value(("hiring.csv", hiring_csv(), "text/csv")).run()
    assert not at.exception and not at.error
    assert at.selectbox(key=role(at, "target")).value == "hired"  # the last column
    assert at.selectbox(key=role(at, "positive")).value == "yes"
    at.multiselect(key=role(at, "protected")).set_value(["gender"]).run()
    at.multiselect(key=role(at, "legitimate")).set_value(["education"]).run()
    summary = next(d.value for d in at.dataframe if "n_binary" in d.value.columns)
    assert "gender" not in set(summary["column"]) and "education" in set(summary["column"])
    assert (summary["n_binary"] >= 1).all()
    assert any("225** training rows" in m.value for m in at.markdown)  # 75 % of 300

    bad = b"not,a\ntable"
    with pytest.raises(LoadError) as expected:
        read_table("broken.csv", bad)
    at.file_uploader(key="data.upload").set_value(("broken.csv", bad, "text/csv")).run()
    assert [e.value for e in at.error] == [str(expected.value)]
    assert at.session_state["table"].name == "hiring.csv"  # the good table stays


def test_choices_survive_page_changes_and_problems_block_the_solve():
    at = new_app()
    at.button(key="data.load_demo").click().run()
    at.multiselect(key=role(at, "protected")).set_value([]).run()
    goto(at, "pages/model.py")
    at.slider(key="model.depth").set_value(3).run()
    at.multiselect(key="model.fairness").set_value(["statistical_parity"]).run()
    goto(at, "pages/data.py")
    goto(at, "pages/model.py")
    assert at.slider(key="model.depth").value == 3
    assert at.multiselect(key="model.fairness").value == ["statistical_parity"]
    goto(at, "pages/solve.py")
    assert [e.value for e in at.error] == [ERR_FAIRNESS_NEEDS_GROUP]
    assert at.button(key="solve.start").disabled

    goto(at, "pages/data.py")  # another table: the role widgets follow it
    at.selectbox(key="data.demo").set_value("Iris (scikit-learn)").run()
    at.button(key="data.load_demo").click().run()
    assert at.selectbox(key=role(at, "target")).value == "species"
    assert at.selectbox(key=role(at, "positive")).value is None
    assert at.multiselect(key=role(at, "protected")).value == []


def test_solve_stop_then_tree_fairness_and_runs():
    at = new_app()
    at.button(key="data.load_demo").click().run()  # the hiring table: gender protected, education legitimate
    goto(at, "pages/model.py")
    at.selectbox(key="model.formulation").set_value("flow").run()
    at.multiselect(key="model.fairness").set_value(["statistical_parity"]).run()
    at.slider(key="model.fairness_bound").set_value(0.02).run()  # tight: not proven before Stop
    at.number_input(key="model.time_limit").set_value(120.0).run()
    goto(at, "pages/solve.py")
    at.button(key="solve.start").click().run()
    poll(at, lambda a: len(a.get("graphviz_chart")) > 0)  # the first tree is drawn while solving
    assert "digraph" in at.get("graphviz_chart")[0].proto.spec
    assert at.get("plotly_chart"), "the convergence chart is shown"

    goto(at, "pages/data.py")  # leaving the page does not end the solve
    goto(at, "pages/solve.py")
    assert not at.button(key="solve.stop").disabled
    at.button(key="solve.stop").click().run()
    poll(at, lambda a: len(a.success) > 0, timeout=60)
    assert "stopped by the user" in at.success[0].value or "proven optimal" in at.success[0].value

    snapshot = job_registry().snapshot(at.session_state["job_id"])
    tree = tree_from_json(snapshot.main.result)
    entry = snapshot.outcome.entry
    roles = roles_from_config(entry.config)
    train = split_table(at.session_state["table"].frame, roles, SplitConfig(**entry.config["split"])).train

    goto(at, "pages/tree.py")
    at.number_input(key="tree.row").set_value(5).run()
    spec = at.get("graphviz_chart")[0].proto.spec
    path = tree.decision_path(train.iloc[[5]])
    assert spec.count('penwidth=2.5, color') == 2 * len(path) - 1  # the path's nodes and edges
    at.toggle(key="tree.mix").set_value(True).run()
    assert "female" in at.get("graphviz_chart")[0].proto.spec

    goto(at, "pages/fairness.py")
    card = next(m for m in at.metric if m.label == "Statistical parity · training rows")
    predicted = tree.predict(train) == "yes"
    rates = [predicted[(train["gender"] == g).to_numpy()].mean() for g in ("female", "male")]
    assert float(card.value) == pytest.approx(abs(rates[0] - rates[1]), abs=5e-4)
    assert float(card.value) <= 0.02 + 1e-9

    goto(at, "pages/runs.py")
    at.multiselect(key="runs.pick").set_value([snapshot.run_id]).run()
    at.button(key="runs.open").click().run()
    assert at.session_state["view_run"] == snapshot.run_id
    at.button(key="runs.delete").click().run()
    assert at.session_state["view_run"] is None
    assert [i.value for i in at.info] == ["No runs yet: each finished solve is stored here."]


def test_infeasible_constraints_are_a_message_on_the_solve_page():
    at = new_app()
    at.button(key="data.load_demo").click().run()
    goto(at, "pages/model.py")
    at.slider(key="model.depth").set_value(1).run()
    at.number_input(key="model.min_recall").set_value(1.0).run()
    at.number_input(key="model.min_specificity").set_value(1.0).run()
    goto(at, "pages/solve.py")
    at.button(key="solve.start").click().run()
    poll(at, lambda a: len(a.error) > 0)
    assert at.error[0].value.startswith("No tree of depth 1 satisfies all the constraints together")
    assert not at.exception and not at.success
    goto(at, "pages/tree.py")
    assert at.info[0].value.startswith("The last solve has no tree to show.")


def test_runs_page_compares_two_stored_runs():
    from strongtree_core import StrongTreeClassifier
    from studio.config import ModelConfig, Roles
    from studio.demo_data import make_hiring
    from studio.loading import fingerprint
    from studio.outcome import SolveContext, build_entry
    from studio.services import run_store

    frame = make_hiring(200, seed=4)
    roles = Roles("hired", "yes", ("gender",))
    tables = split_table(frame, roles, SplitConfig())
    ids = []
    for depth in (1, 2):
        model = ModelConfig(depth=depth)
        fitted = StrongTreeClassifier(**model.estimator_params(roles)).fit(
            tables.train.drop(columns="hired"), tables.train["hired"], sensitive_features="gender")
        context = SolveContext("hiring", fingerprint(frame), roles, SplitConfig(), model, tables)
        ids.append(run_store().save(build_entry(context, fitted.tree_.to_json(), None)))

    at = goto(new_app(), "pages/runs.py")
    at.multiselect(key="runs.pick").set_value(ids).run()
    assert not at.button(key="runs.compare").disabled and at.button(key="runs.open").disabled
    settings = at.table[0].value
    assert list(settings.columns) == [f"#{i}" for i in ids]
    assert list(settings.loc["depth"]) == ["1", "2"]  # only what differs is listed
    assert "dataset" not in settings.index
    assert len(at.get("graphviz_chart")) == 2
