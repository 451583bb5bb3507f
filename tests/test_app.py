"""The dashboard through its entrypoint (streamlit's AppTest): every page, uploads,
durable choices, a solve polled by re-running, Stop, the tree, the metrics and the runs."""

import os
import time
from contextlib import contextmanager
from pathlib import Path

import hostile
import pytest
import streamlit as st
from hostile import hazards
from streamlit.testing.v1 import AppTest, element_tree

from strongtree_core.tree.summary import tree_summary
from strongtree_studio.data.column_types import MSG_MIXED_COLUMN, encoding_table
from strongtree_studio.data.choices import ERR_BOTH_ROLES, ERR_FAIRNESS_NEEDS_GROUP, Roles, SplitConfig, split_table
from strongtree_studio.data.demo_tables import make_hiring
from strongtree_studio.views.explain import (
    MSG_LAST_TREE_KEPT,
    MSG_LEGACY_HISTORY,
    MSG_NO_RUNS,
    MSG_NO_TABLE,
    MSG_NOT_YOURS,
    OWNERSHIP_HELP,
)
from strongtree_studio.jobs.job_registry import MSG_CRASHED
from strongtree_studio.data.loading import (
    UPLOAD_HELP,
    UPLOAD_LARGER,
    UPLOAD_LARGER_SERVER,
    ERR_BINARY,
    ERR_EMPTY,
    ERR_EXCEL_DAMAGED,
    ERR_HEADER_ONLY,
    MIN_ROWS,
    NOTE_ENCODING,
    LoadError,
    read_table,
)
from strongtree_studio.views.markup import md
from strongtree_studio.jobs.solve_job import ERR_SAVE
from strongtree_studio.stores.run_history import ERR_NO_RUN, RunStore, RunStoreError
from strongtree_studio.page.services import job_registry
from strongtree_studio.page.shown import MSG_RUN_GONE, roles_from_config, tree_from_json
from strongtree_studio.page.session import GENERATIONS, ROLES
from strongtree_studio.stores.table import LoadedTable

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("pages/1_data.py", "pages/2_model.py", "pages/3_solve.py", "pages/4_tree.py", "pages/5_fairness.py", "pages/7_runs.py")


@pytest.fixture(autouse=True, scope="module")
def isolated_history(tmp_path_factory):
    """A fresh run history and job registry for this module."""
    patch = pytest.MonkeyPatch()
    patch.setenv("STRONGTREE_RUNS_DB", str(tmp_path_factory.mktemp("runs") / "runs.sqlite3"))
    patch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data")))  # in case a path escapes the variable
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
    return f"roles.{name}.{at.session_state[GENERATIONS.name][ROLES.name]}"


def hiring_csv(n_rows: int = 300) -> bytes:
    return make_hiring(n_rows, seed=11).to_csv(index=False).encode()


def drawings(at: AppTest) -> list[str]:
    """The trees drawn on the page: the DOT of each Graphviz chart (strongtree_studio.page.tree_chart)."""
    return [chart.proto.spec for chart in at.get("graphviz_chart")]


def outcome_text(at: AppTest) -> str:
    """The Solve page's banner of a finished solve (green when proven optimal, blue when optimal over the
    thresholds kept, else a warning)."""
    return next((a.value for a in [*at.success, *at.info, *at.warning] if "best tree" in a.value), "")


def stored(at: AppTest) -> bool:
    """The banner is shown and the job is over (its comparison tree solved, the run stored):
    the banner comes as soon as the tree is final, before the comparison tree."""
    return outcome_text(at) != "" and not job_registry().snapshot(at.session_state["job_id"]).active


def test_every_page_renders_before_a_table_is_chosen():
    at = new_app()
    assert [i.value for i in at.info] == [MSG_NO_TABLE]
    for page in PAGES[1:]:
        goto(at, page)
        assert not at.error, [e.value for e in at.error]
    goto(at, "pages/4_tree.py")
    assert "No tree yet" in at.info[0].value


@pytest.mark.parametrize("offered", [False, True], ids=["no server folder", "a server folder"])
def test_the_uploader_says_its_size_limit_and_where_a_larger_table_goes(offered, monkeypatch, tmp_path):
    # A file over the limit is refused in the browser, before the page sees it, with a message shown
    # only on hover: the help says the limit and what to do beforehand.
    if offered:
        monkeypatch.setenv("STRONGTREE_DATA_DIR", str(tmp_path))
    else:
        monkeypatch.delenv("STRONGTREE_DATA_DIR", raising=False)
    at = new_app()
    expected = UPLOAD_HELP.format(limit=50, larger=UPLOAD_LARGER_SERVER if offered else UPLOAD_LARGER)
    assert at.file_uploader(key="data.upload").proto.help == md(expected)
    assert "Files up to 50 MB" in expected


@pytest.mark.timing
def test_a_column_of_numbers_with_a_few_words_is_named_with_what_to_do_on_the_page():
    # pandas reads '?' beside numbers as text; read as categories every age would be a question of its own
    ages = [str(18 + i) for i in range(60)]
    ages[3] = ages[40] = "?"
    rows = "".join(f"{age},{'ab'[i % 2]},{'yes' if i % 3 else 'no'}\n" for i, age in enumerate(ages))
    at = new_app()
    at.file_uploader(key="data.upload").set_value(("ages.csv", ("age,group,hired\n" + rows).encode(), "text/csv")).run()
    assert not at.exception
    expected = MSG_MIXED_COLUMN.format(column="'age'", examples="'?'", rows=2, levels=59)
    assert [e.value for e in at.error] == [md(expected)]
    # the fit on the training rows says it in the same words (the library's says pandas code)
    goto(at, "pages/3_solve.py")
    at.button(key="solve.start").click().run()
    poll(at, lambda a: a.error)
    training = MSG_MIXED_COLUMN.format(column="'age'", examples="'?'", rows="2", levels="44")  # 45 training rows
    assert [e.value for e in at.error] == [md(training)] and not at.exception


def test_upload_sets_roles_and_previews_the_encoding():
    at = new_app()
    at.file_uploader(key="data.upload").set_value(("hiring.csv", hiring_csv(), "text/csv")).run()
    assert not at.exception and not at.error
    assert at.selectbox(key=role(at, "target")).value == "hired"  # the last column
    assert at.selectbox(key=role(at, "pos_label")).value == "yes"
    at.multiselect(key=role(at, "protected")).set_value(["gender"]).run()
    at.multiselect(key=role(at, "legitimate")).set_value(["education"]).run()
    summary = next(d.value for d in at.dataframe if "yes/no questions" in d.value.columns)
    assert not {"n_binary", "kind", "n_missing"} & set(summary.columns)  # the library's names stay off the page
    assert "gender" not in set(summary["column"]) and "education" in set(summary["column"])
    assert (summary["yes/no questions"] >= 1).all()
    overview = next(d.value for d in at.dataframe if "read as" in d.value.columns and "type" in d.value.columns)
    assert set(overview["type"]) <= {"text", "whole numbers", "numbers", "true / false", "categories", "dates"}
    assert "thermometer" not in " ".join(c.value for c in at.caption)
    assert any("225** training rows" in m.value for m in at.markdown)  # 75 % of 300

    bad = b"not,a\ntable"
    with pytest.raises(LoadError) as expected:
        read_table("broken.csv", bad)
    at.file_uploader(key="data.upload").set_value(("broken.csv", bad, "text/csv")).run()
    assert [e.value for e in at.error] == [md(expected.value)]
    assert at.session_state["table"].name == "hiring.csv"  # the good table stays


@pytest.mark.timing
def test_thresholds_from_the_data_are_previewed_as_the_solve_chooses_them():
    """The Model page's third numeric coding: the Data page shows the cuts a solve then uses."""
    at = new_app()
    at.button(key="data.load_demo").click().run()  # the hiring table: age, experience and test scores
    goto(at, "pages/2_model.py")
    assert at.number_input(key="model.n_buckets").value == 5  # quantile buckets unless asked
    at.selectbox(key="model.encoding").set_value("data").run()
    assert "model.n_buckets" not in [n.key for n in at.number_input]  # the amount of the coding chosen
    at.number_input(key="model.max_thresholds").set_value(3).run()
    at.multiselect(key="model.fairness").set_value([]).run()
    goto(at, "pages/1_data.py")
    preview = next(d.value for d in at.dataframe if "yes/no questions" in d.value.columns)
    assert any("up to 3 cuts chosen from the training rows" in c.value for c in at.caption)
    numbers = preview[preview["read as"] == "numbers: thresholds"]
    assert len(numbers) >= 2 and (numbers["yes/no questions"] >= 3).all()  # CART's cuts may add to the 3

    goto(at, "pages/3_solve.py")
    assert any("up to 3 cuts per number from the data" in m.value for m in at.markdown)
    at.button(key="solve.start").click().run()
    poll(at, stored, timeout=90)
    snapshot = job_registry().snapshot(at.session_state["job_id"])
    plan = tree_from_json(snapshot.main.result).encoding
    assert plan.max_thresholds == 3 and plan.n_buckets is None
    assert encoding_table(plan.summary()).reset_index(drop=True).equals(preview.reset_index(drop=True))
    assert snapshot.outcome.entry.config["model"]["encoding"] == "data"


def test_choices_survive_page_changes_and_problems_block_the_solve():
    at = new_app()
    at.button(key="data.load_demo").click().run()
    at.multiselect(key=role(at, "protected")).set_value([]).run()
    goto(at, "pages/2_model.py")
    at.slider(key="model.depth").set_value(3).run()
    at.multiselect(key="model.fairness").set_value(["statistical_parity"]).run()
    goto(at, "pages/1_data.py")
    goto(at, "pages/2_model.py")
    assert at.slider(key="model.depth").value == 3
    assert at.multiselect(key="model.fairness").value == ["statistical_parity"]
    goto(at, "pages/3_solve.py")
    assert [e.value for e in at.error] == [md(ERR_FAIRNESS_NEEDS_GROUP)]
    assert at.button(key="solve.start").disabled

    goto(at, "pages/1_data.py")  # another table: the role widgets follow it
    at.selectbox(key="data.demo").set_value("Iris (scikit-learn)").run()
    at.button(key="data.load_demo").click().run()
    assert at.selectbox(key=role(at, "target")).value == "species"
    assert at.selectbox(key=role(at, "pos_label")).value is None
    assert at.multiselect(key=role(at, "protected")).value == []


@pytest.mark.timing
def test_solve_stop_then_tree_fairness_and_runs():
    at = new_app()
    at.button(key="data.load_demo").click().run()  # the hiring table: gender protected, education legitimate
    goto(at, "pages/2_model.py")
    at.selectbox(key="model.formulation").set_value("flow").run()
    at.multiselect(key="model.fairness").set_value(["statistical_parity"]).run()
    at.slider(key="model.fairness_bound").set_value(2.0).run()  # percentage points  # tight: not proven before Stop
    at.number_input(key="model.time_limit").set_value(120.0).run()
    goto(at, "pages/3_solve.py")
    at.button(key="solve.start").click().run()
    poll(at, lambda a: len(drawings(a)) > 0)  # the first tree is drawn while solving
    assert drawings(at)[0].startswith("digraph")
    poll(at, lambda a: len(a.get("vega_lite_chart")) > 0)  # the convergence chart is shown

    goto(at, "pages/1_data.py")  # leaving the page does not end the solve
    goto(at, "pages/3_solve.py")
    assert not at.button(key="solve.stop").disabled
    at.button(key="solve.stop").click().run()
    poll(at, stored, timeout=60)
    assert outcome_text(at).startswith(("**Stopped (not proven)**", "**Proven optimal**",
                                        "**Optimal over kept thresholds**"))
    tree_words = [c.value for c in at.caption if c.value.startswith("The final tree.")]
    assert tree_words and "choose Presentation" in tree_words[0], tree_words  # no subtree to collapse on this page
    assert "or collapse subtrees" not in tree_words[0] and "the Tree page collapses subtrees" in tree_words[0]

    snapshot = job_registry().snapshot(at.session_state["job_id"])
    tree = tree_from_json(snapshot.main.result)
    entry = snapshot.outcome.entry
    roles = roles_from_config(entry.config)
    train = split_table(at.session_state["table"].frame, roles, SplitConfig(**entry.config["split"])).train

    goto(at, "pages/4_tree.py")
    at.number_input(key="tree.row").set_value(5).run()
    dot = drawings(at)[0]
    path = tree.decision_path(train.iloc[[5]])
    assert dot.count("penwidth=2.5") == 2 * len(path) - 1  # the path's nodes and edges
    assert "female" not in dot
    at.toggle(key="tree.mix").set_value(True).run()
    assert "female" in drawings(at)[0]
    words = next(m.value for m in at.markdown if m.value.startswith("- The tree predicts"))
    assert words == "\n".join(f"- {md(s)}" for s in tree_summary(tree))  # the tree in sentences

    goto(at, "pages/5_fairness.py")
    card = next(m for m in at.metric if m.label == "Statistical parity · training rows")
    predicted = tree.predict(train) == "yes"
    rates = [predicted[(train["gender"] == g).to_numpy()].mean() for g in ("female", "male")]
    assert card.value.endswith(" pp")  # percentage points, as everywhere
    assert float(card.value.removesuffix(" pp")) == pytest.approx(100 * abs(rates[0] - rates[1]), abs=0.05)
    assert float(card.value.removesuffix(" pp")) <= 2.0 + 1e-9

    goto(at, "pages/7_runs.py")
    at.multiselect(key="runs.pick").set_value([snapshot.run_id]).run()
    at.button(key="runs.open").click().run()
    assert at.session_state["view_run"] == snapshot.run_id
    at.button(key="runs.delete").click().run()
    assert at.session_state["view_run"] is None
    assert [i.value for i in at.info] == [MSG_NO_RUNS]


@pytest.mark.timing
def test_infeasible_constraints_are_a_message_on_the_solve_page():
    at = new_app()
    at.button(key="data.load_demo").click().run()
    goto(at, "pages/2_model.py")
    at.slider(key="model.depth").set_value(1).run()
    at.number_input(key="model.min_recall").set_value(1.0).run()
    at.number_input(key="model.min_specificity").set_value(1.0).run()
    goto(at, "pages/3_solve.py")
    at.button(key="solve.start").click().run()
    poll(at, lambda a: len(a.error) > 0)
    # the hiring table's numbers cut at 5 quantiles: the proof is over the thresholds kept, and says so in the
    # page's names for the settings
    error = at.error[0].value.replace("\\", "")
    assert error.startswith("No tree of depth 1 asking only the 12 of the 128 thresholds kept satisfies all the "
                            "constraints together on these 600 training rows; a tree asking another threshold might.")
    assert error.endswith("Keeping more thresholds may let a tree fit: 64 thresholds per numeric column (numeric "
                          "coding “x ≤ t from the data”) keeps every one.") and "max_thresholds" not in error
    assert not at.exception and not at.success
    cards = {m.label: m.value for m in at.metric}
    assert (cards["Best tree"], cards["Bound"], cards["Gap"]) == ("–", "–", "–"), cards  # no tree: nothing to bound
    goto(at, "pages/4_tree.py")
    assert at.info[0].value.startswith("The last solve has no tree to show.")


def stored_runs(owner: str, depths=(1, 2)) -> list[int]:
    """Runs of the hiring table at these depths, saved in the history under ``owner``."""
    from strongtree_core import StrongTreeClassifier
    from strongtree_studio.data.choices import ModelConfig, Roles
    from strongtree_studio.data.loading import fingerprint
    from strongtree_studio.jobs.solve_job import SolveContext, build_entry
    from strongtree_studio.page.services import run_store

    frame = make_hiring(200, seed=4)
    roles = Roles("hired", "yes", ("gender",))
    tables = split_table(frame, roles, SplitConfig())
    ids = []
    for depth in depths:
        model = ModelConfig(depth=depth)
        fitted = StrongTreeClassifier(**model.estimator_params(roles)).fit(
            tables.train.drop(columns="hired"), tables.train["hired"], sensitive_features="gender")
        context = SolveContext("hiring", fingerprint(frame), roles, SplitConfig(), model, tables, owner=owner)
        ids.append(run_store().save(build_entry(context, fitted.tree_.to_json(), None)))
    return ids


def test_runs_page_compares_two_stored_runs():
    ids = stored_runs("workspace:compare team")
    at = goto(new_app(), "pages/7_runs.py")
    at.text_input(key="runs.workspace").input("  compare   team ").run()
    assert at.session_state["workspace"] == "compare team"
    at.multiselect(key="runs.pick").set_value(ids).run()
    assert not at.button(key="runs.compare").disabled and at.button(key="runs.open").disabled
    settings = at.table[1].value  # the history is the first table
    assert list(settings.columns) == [f"\\#{i}" for i in ids]  # table cells are Markdown: escaped
    assert list(settings.loc["Maximum depth"]) == ["1", "2"]  # only what differs is listed, by its one name
    assert "dataset" not in settings.index
    assert len(drawings(at)) == 2


def markdown_strings(node) -> list[str]:
    """Every string ``node`` and its children hand to Streamlit's Markdown renderer:
    Markdown, captions, alerts, headings, table cells, and metric, widget, tab and
    expander labels (widget options and the drawn tree are not Markdown)."""
    out = []
    label = getattr(node, "label", None)
    if isinstance(label, str) and label:
        out.append(label)
    if isinstance(node, element_tree.Block):
        for child in node.children.values():
            out += markdown_strings(child)
    elif isinstance(node, element_tree.Markdown) and node.proto.allow_html:
        pass  # HTML the app writes itself (the drawn tree): checked by html_strings
    elif isinstance(node, (element_tree.Markdown, element_tree.AlertBase, element_tree.HeadingBase)):
        out.append(node.value)
    elif isinstance(node, element_tree.Table):
        frame = node.value
        out += [str(v) for v in [*frame.columns, *frame.index, *frame.to_numpy().ravel(), frame.index.name] if v]
    return out


def html_strings(node) -> list[str]:
    """The HTML the app writes itself (``unsafe_allow_html``): the drawn trees and their legends."""
    if isinstance(node, element_tree.Block):
        return [s for child in node.children.values() for s in html_strings(child)]
    if isinstance(node, element_tree.Markdown) and node.proto.allow_html:
        return [node.value]
    return []


#: Tags and attributes the app's own HTML may use: no links, images, scripts or styles from outside.
HTML_TAGS = {"div", "span", "b", "svg", "g", "rect", "text", "path"}


def html_hazards(text: str) -> list[str]:
    """Tags outside :data:`HTML_TAGS`, attributes that can fetch or run something, and
    user text that would end the HTML block (a blank line)."""
    import html.parser

    found: list[str] = []

    class Checker(html.parser.HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag not in HTML_TAGS:
                found.append(f"<{tag}>")
            for name, value in attrs:
                if name in ("href", "src", "srcset", "xlink:href", "action") or name.startswith("on") or (
                        value and "url(" in value):
                    found.append(f"{tag} {name}={value}")

    Checker().feed(text)
    if "\n\n" in text:
        found.append("blank line")
    return found


def scan(at: AppTest, *escaped: str) -> list[str]:
    """Check the page on screen: no Markdown string links, embeds or fetches, no hostile
    string appears unescaped, and each of ``escaped`` appears escaped (so the scan sees them)."""
    assert not at.exception, at.exception
    texts = markdown_strings(at._tree)
    assert texts
    found = {text: hazards(text) for text in texts if hazards(text)}
    assert not found, found
    own_html = html_strings(at._tree)
    found = {text: html_hazards(text) for text in own_html if html_hazards(text)}
    assert not found, found
    for text in own_html + drawings(at):  # the drawn trees' DOT too: Graphviz reads HTML-like labels
        for raw in hostile.STRINGS:
            assert "<" not in raw or raw not in text, (raw, text)  # markup in a name is text, not a tag
    for text in texts:
        for raw in hostile.STRINGS:
            assert raw not in text, (raw, text)
    for value in escaped:
        assert any(md(value) in text for text in texts), value
    return texts


def test_the_hazard_check_finds_raw_markup():
    for raw in hostile.STRINGS:
        assert bool(hazards(raw)) == (raw != hostile.TARGET), raw  # the target name is formatting only
        assert hazards(md(raw)) == [], raw


@pytest.mark.timing
def test_hostile_names_never_become_markup_on_any_page():
    table = hostile.hostile_table()
    at = new_app()
    broken = hostile.FILE_NAME.replace(".csv", ".xlsx")
    at.file_uploader(key="data.upload").set_value((broken, b"not a spreadsheet", "application/octet-stream")).run()
    assert [e.value for e in at.error] == [md(ERR_EXCEL_DAMAGED.format(name=broken))]
    scan(at, broken)
    at.file_uploader(key="data.upload").set_value(
        (hostile.FILE_NAME, table.to_csv(index=False).encode(), "text/csv")).run()
    assert not at.error
    assert at.selectbox(key=role(at, "target")).value == hostile.TARGET
    at.multiselect(key=role(at, "protected")).set_value([hostile.GROUP]).run()
    at.multiselect(key=role(at, "legitimate")).set_value([hostile.GROUP]).run()  # a problem naming the column
    assert [e.value for e in at.error] == [md(ERR_BOTH_ROLES.format(columns=repr(hostile.GROUP)))]
    scan(at, hostile.FILE_NAME, hostile.GROUP)
    at.multiselect(key=role(at, "legitimate")).set_value([]).run()
    assert not at.error
    scan(at, hostile.FILE_NAME)

    goto(at, "pages/2_model.py")
    at.multiselect(key="model.fairness").set_value(["statistical_parity"]).run()
    at.slider(key="model.fairness_bound").set_value(20.0).run()
    scan(at)
    goto(at, "pages/3_solve.py")
    scan(at, hostile.FILE_NAME, hostile.TARGET)
    at.button(key="solve.start").click().run()
    poll(at, lambda a: len(a.success) > 0 and stored(a))
    scan(at, hostile.TARGET)
    first = at.session_state["job_id"]

    goto(at, "pages/4_tree.py")
    at.toggle(key="tree.mix").set_value(True).run()
    assert drawings(at)
    scan(at, hostile.FILE_NAME)
    goto(at, "pages/5_fairness.py")
    scan(at, hostile.FILE_NAME, *hostile.GROUP_VALUES)

    goto(at, "pages/2_model.py")  # a second run, to compare
    at.slider(key="model.depth").set_value(1).run()
    goto(at, "pages/3_solve.py")
    at.button(key="solve.start").click().run()
    poll(at, lambda a: len(a.success) > 0 and a.session_state["job_id"] != first and stored(a))
    goto(at, "pages/7_runs.py")
    ids = [job_registry().snapshot(job).run_id for job in (first, at.session_state["job_id"])]
    at.multiselect(key="runs.pick").set_value(ids).run()
    at.toggle(key="runs.only_diff").set_value(False).run()
    scan(at, hostile.FILE_NAME, hostile.TARGET, hostile.GROUP)
    at.multiselect(key="runs.pick").set_value(ids[:1]).run()
    at.button(key="runs.open").click().run()
    scan(at, hostile.FILE_NAME)
    for page in PAGES:
        scan(goto(at, page))


@contextmanager
def history_at(path: Path):
    """The app's run history at ``path`` (a fresh run store and job registry)."""
    patch = pytest.MonkeyPatch()
    patch.setenv("STRONGTREE_RUNS_DB", str(path))
    st.cache_resource.clear()
    try:
        yield
    finally:
        patch.undo()
        st.cache_resource.clear()


def quick_solve(at: AppTest) -> AppTest:
    """Solve the built-in hiring table at depth 1 (exact in well under a second)."""
    at.button(key="data.load_demo").click().run()
    goto(at, "pages/2_model.py")
    at.slider(key="model.depth").set_value(1).run()
    goto(at, "pages/3_solve.py")
    at.button(key="solve.start").click().run()
    poll(at, stored)
    return at.run()  # the page as drawn once the job is over (the run in poll may predate its outcome)


def _can_create(folder: Path) -> bool:
    try:
        (folder / "strongtree-probe").open("x").close()
    except OSError:
        return False
    (folder / "strongtree-probe").unlink()
    return True


@pytest.mark.parametrize("case", ["garbage file", "folder cannot be made", "path is a folder", "read-only folder"])
@pytest.mark.timing
def test_a_run_that_cannot_be_stored_is_a_warning_on_the_solve_page(tmp_path, case):
    if case == "garbage file":
        path = tmp_path / "runs.sqlite3"
        path.write_bytes(b"not a database " * 100)
    elif case == "folder cannot be made":
        (tmp_path / "blocker").write_text("a file where the folder should be")
        path = tmp_path / "blocker" / "runs" / "runs.sqlite3"
    elif case == "path is a folder":
        path = tmp_path / "runs.sqlite3"
        path.mkdir()
    elif os.geteuid() != 0:
        folder = tmp_path / "locked"
        folder.mkdir()
        folder.chmod(0o500)
        path = folder / "runs.sqlite3"
    else:  # the superuser (CI) writes into any folder it owns; no one can make a file in /sys
        if not Path("/sys").is_dir() or os.access("/sys", os.W_OK) and _can_create(Path("/sys")):
            pytest.skip("no folder here that the superuser cannot write into")
        path = Path("/sys") / "runs.sqlite3"
    with pytest.raises(RunStoreError) as err:
        RunStore(path)
    with history_at(path):
        at = quick_solve(new_app())
        assert [w.value for w in at.warning] == [md(ERR_SAVE.format(reason=err.value))]
        assert outcome_text(at).startswith(("**Proven optimal**", "**Optimal over kept thresholds**"))  # the tree is still there
        goto(at, "pages/4_tree.py")
        assert drawings(at) and "unsaved run" in at.caption[0].value
        goto(at, "pages/7_runs.py")
        assert [e.value for e in at.error] == [md(err.value)]


@pytest.mark.timing
def test_deleting_the_run_on_screen_takes_it_off_the_tree_and_fairness_pages():
    at = quick_solve(new_app())
    run_id = job_registry().snapshot(at.session_state["job_id"]).run_id
    goto(at, "pages/4_tree.py")
    assert drawings(at)
    goto(at, "pages/7_runs.py")
    at.multiselect(key="runs.pick").set_value([run_id]).run()
    at.button(key="runs.delete").click().run()
    for page in ("pages/4_tree.py", "pages/5_fairness.py"):
        goto(at, page)
        assert [i.value for i in at.info] == [MSG_RUN_GONE.format(run_id=run_id)]
        assert not drawings(at) and not at.metric


@pytest.mark.timing
def test_runs_belong_to_their_session_or_workspace_unless_shared():
    mine = quick_solve(new_app())
    run_id = job_registry().snapshot(mine.session_state["job_id"]).run_id
    goto(mine, "pages/7_runs.py")
    assert OWNERSHIP_HELP in [m.value for m in mine.markdown]
    assert mine.multiselect(key="runs.pick").options == [option(mine, run_id)]

    other = goto(new_app(), "pages/7_runs.py")  # another browser session
    assert [i.value for i in other.info] == [MSG_NO_RUNS]
    other.session_state["view_run"] = run_id  # naming the run does not open it
    goto(other, "pages/4_tree.py")
    assert [i.value for i in other.info] == [md(ERR_NO_RUN.format(run_id=run_id))]
    other.session_state["view_run"] = None

    mine.multiselect(key="runs.pick").set_value([run_id]).run()
    mine.button(key="runs.share").click().run()
    goto(other, "pages/7_runs.py")
    assert other.multiselect(key="runs.pick").options == [option(other, run_id)]
    other.multiselect(key="runs.pick").set_value([run_id]).run()
    assert other.button(key="runs.delete").disabled and other.button(key="runs.share").disabled
    assert MSG_NOT_YOURS in [c.value for c in other.caption]
    other.button(key="runs.open").click().run()
    goto(other, "pages/4_tree.py")
    assert drawings(other)  # a shared run opens everywhere

    goto(mine, "pages/7_runs.py")
    mine.multiselect(key="runs.pick").set_value([run_id]).run()
    assert mine.button(key="runs.share").label == "Stop sharing"
    mine.button(key="runs.share").click().run()
    goto(other, "pages/4_tree.py")
    assert [i.value for i in other.info] == [md(ERR_NO_RUN.format(run_id=run_id))]

    mine.text_input(key="runs.workspace").input("audit 2025").run()  # keep it in a named workspace
    mine.multiselect(key="runs.pick").set_value([run_id]).run()
    mine.button(key="runs.move").click().run()
    colleague = goto(new_app(), "pages/7_runs.py")
    assert [i.value for i in colleague.info] == [MSG_NO_RUNS]
    colleague.text_input(key="runs.workspace").input("audit 2025").run()
    assert colleague.multiselect(key="runs.pick").options == [option(colleague, run_id)]
    colleague.multiselect(key="runs.pick").set_value([run_id]).run()
    colleague.button(key="runs.delete").click().run()
    assert [i.value for i in colleague.info] == [MSG_NO_RUNS]


def option(at: AppTest, run_id: int) -> str:
    """How run ``run_id`` is listed in the Runs page's selection."""
    return next(o for o in at.multiselect(key="runs.pick").options if o.startswith(f"#{run_id} "))


def test_the_sidebar_escapes_the_table_and_its_roles():
    def sidebar_only():
        from strongtree_studio.page.sidebar import render_sidebar

        render_sidebar()

    at = AppTest.from_function(sidebar_only, default_timeout=60)
    table = hostile.hostile_table()
    at.session_state["table"] = LoadedTable(hostile.FILE_NAME, table, "fp")
    at.session_state["roles"] = Roles(hostile.TARGET, hostile.CLASSES[1], (hostile.GROUP,))
    at.session_state["job_id"] = None
    at.run()
    scan(at, hostile.FILE_NAME, hostile.TARGET, hostile.GROUP)


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("cut.xlsx", b"PK\x03\x04" + b"\x00" * 40, ERR_EXCEL_DAMAGED.format(name="cut.xlsx")),
        ("noise.csv", bytes(range(256)) * 8, ERR_BINARY.format(name="noise.csv")),
        ("empty.csv", b"", ERR_EMPTY.format(name="empty.csv", min_rows=MIN_ROWS)),
        ("header.csv", b"gender,age,hired\n", ERR_HEADER_ONLY.format(name="header.csv", min_rows=MIN_ROWS)),
    ],
)
def test_broken_uploads_are_messages_on_the_data_page(name, data, message):
    at = new_app()
    at.file_uploader(key="data.upload").set_value((name, data, "application/octet-stream")).run()
    assert not at.exception
    assert [e.value for e in at.error] == [md(message)]
    assert at.session_state["table"] is None


def test_a_latin1_upload_reads_its_letters_and_says_which_encoding():
    text = "genre,âge,embauché\n" + "féminin,31,oui\nmasculin,45,non\n" * 8
    at = new_app()
    at.file_uploader(key="data.upload").set_value(("l.csv", text.encode("latin-1"), "text/csv")).run()
    assert not at.exception and not at.error
    frame = at.session_state["table"].frame
    assert list(frame.columns) == ["genre", "âge", "embauché"] and frame["genre"][0] == "féminin"
    note = NOTE_ENCODING.format(name="l.csv", encoding="Windows-1252 (Western European)")
    assert [i.value for i in at.info] == [md(note)]
    utf16 = new_app()
    utf16.file_uploader(key="data.upload").set_value(("u.csv", text.encode("utf-16"), "text/csv")).run()
    assert utf16.session_state["table"].frame.equals(frame) and not utf16.info


@pytest.mark.timing
def test_a_lost_worker_leaves_its_last_tree_on_the_solve_and_tree_pages():
    at = new_app()
    at.button(key="data.load_demo").click().run()
    goto(at, "pages/2_model.py")  # FlowOCT at depth 3: seconds between its first tree and its proof
    at.slider(key="model.depth").set_value(3).run()
    at.selectbox(key="model.formulation").set_value("flow").run()
    at.multiselect(key="model.fairness").set_value(["statistical_parity"]).run()
    at.slider(key="model.fairness_bound").set_value(2.0).run()  # percentage points
    at.number_input(key="model.n_buckets").set_value(10).run()
    at.number_input(key="model.time_limit").set_value(120.0).run()
    goto(at, "pages/3_solve.py")
    at.button(key="solve.start").click().run()
    job_id = at.session_state["job_id"]
    poll(at, lambda a: job_registry().snapshot(job_id).main.tree is not None)
    job_registry().job(job_id).worker.process.kill()
    poll(at, lambda a: len(a.warning) > 0, timeout=30)
    snapshot = job_registry().snapshot(job_id)
    assert [e.value for e in at.error] == [md(MSG_CRASHED.format(code=-9))]
    assert [w.value for w in at.warning] == [MSG_LAST_TREE_KEPT.format(stored=f" as run {snapshot.run_id}")]
    assert not at.success
    goto(at, "pages/4_tree.py")
    assert drawings(at) and any("Ended early (not proven)" in m.value for m in at.markdown)  # the status badge


def test_the_runs_page_points_to_a_history_left_in_the_old_place(tmp_path, monkeypatch):
    from strongtree_studio.stores import run_history as runs

    old = tmp_path / "runs" / "runs.sqlite3"
    monkeypatch.setattr(runs, "LEGACY_DB", old)
    at = goto(new_app(), "pages/7_runs.py")
    assert not any(c.value.startswith("Runs of earlier versions") for c in at.caption)
    RunStore(old)
    at.run()
    assert MSG_LEGACY_HISTORY in [c.value for c in at.caption]
    assert str(tmp_path) not in str(at)  # no path of the server on the page


@pytest.mark.timing
def test_the_live_demo_loads_its_table_and_preset_and_solves():
    from strongtree_studio.data.demo_tables import DEMO

    at = new_app()
    at.button(key="data.start_demo").click().run()
    assert not at.exception
    assert at.session_state["table"].name == DEMO.table and len(at.session_state["table"].frame) == 10_000
    assert at.session_state["model"] == DEMO.model and at.session_state["split"] == DEMO.split
    job_id = at.session_state["job_id"]
    assert job_id is not None and job_registry().snapshot(job_id).active
    job_registry().stop(job_id)
    poll(at, lambda a: not job_registry().snapshot(job_id).active, timeout=60)


@pytest.mark.timing
def test_on_a_fresh_machine_the_live_demo_says_what_it_waits_for_then_starts(monkeypatch):
    """While the compiled exact search is being prepared, the demo does not spend its minute on the
    slow path: the Solve page says what it waits for and how far that is, and starts it once ready."""
    from strongtree_core.accel.compiled import LibraryStatus
    from strongtree_core.accel.prepare import Preparation
    from strongtree_studio.jobs import preparing

    building = [True]
    parts = (LibraryStatus("kernels", "ready"), LibraryStatus("ordered", "ready"),
             LibraryStatus("treedp", "building", 12, 33, 41.0))
    monkeypatch.setattr(preparing, "waiting", lambda: building[0])
    monkeypatch.setattr(preparing, "status", lambda: Preparation(parts))
    at = new_app()
    at.button(key="data.start_demo").click().run()
    assert not at.exception
    assert at.session_state["job_id"] is None  # nothing submitted yet
    shown = [i.value for i in at.info]
    assert ("The live demo starts when the exact search is ready. " + Preparation(parts).words()) in shown, shown
    building[0] = False
    at.run()
    job_id = at.session_state["job_id"]
    assert job_id is not None and job_registry().snapshot(job_id).active
    assert not any("The live demo starts when" in i.value for i in at.info)
    job_registry().stop(job_id)
    poll(at, lambda a: not job_registry().snapshot(job_id).active, timeout=60)


@pytest.mark.timing
def test_a_stale_result_is_labelled_with_what_changed():
    from strongtree_studio.views.stale import stale_message

    at = quick_solve(new_app())  # depth 1
    goto(at, "pages/4_tree.py")
    assert not at.warning
    then = at.session_state["job_settings"]
    goto(at, "pages/2_model.py")
    at.slider(key="model.depth").set_value(2).run()
    for page in ("pages/3_solve.py", "pages/4_tree.py", "pages/5_fairness.py"):
        goto(at, page)
        labels = [w.value for w in at.warning if w.value.startswith("From earlier settings")]
        assert len(labels) == 1 and "depth 1 → 2" in labels[0], labels
    assert at.session_state["job_settings"] == then  # the solve's own settings are kept
    assert labels[0] == stale_message(then, {**then, "config": {**then["config"], "model": {
        **then["config"]["model"], "depth": 2}}})


def test_the_data_page_suggests_columns_to_ignore_and_names_codes():
    import numpy as np
    import pandas as pd

    from strongtree_studio.data.column_types import REASON_ID, REASON_TEXT

    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"case_id": np.arange(300), "notes": [f"free words here {i} and more" for i in range(300)],
                          "race": rng.integers(1, 4, 300), "y": rng.integers(0, 2, 300)})
    at = new_app()
    at.file_uploader(key="data.upload").set_value(("coded.csv", frame.to_csv(index=False).encode(), "text/csv")).run()
    box = next(m.value for m in at.markdown if "Columns the tree should probably not see" in m.value)
    assert f"**case\\_id**: {REASON_ID}" in box and f"**notes**: {REASON_TEXT}" in box
    at.button(key="data.ignore_suggested").click().run()
    assert at.session_state["roles"].ignored == ("case_id", "notes")
    assert not any("should probably not see" in m.value for m in at.markdown)
    assert at.selectbox(key=role(at, "pos_label")).value == 1  # the class that reads as positive

    at.selectbox(key="data.edit_column").set_value("y").run()
    at.text_input(key="data.label.y.0").input("kept")  # a form's widgets are sent with its button
    at.text_input(key="data.label.y.1").input("reoffended")
    at.button(key="FormSubmitter:data.edit_form.y-Apply to the table").click().run()
    assert not at.exception
    assert set(at.session_state["table"].frame["y"]) == {"kept", "reoffended"}
    assert at.session_state["roles"].pos_label == "reoffended"  # the positive class follows its name
    assert at.session_state["table"].loaded["y"].tolist() == frame["y"].tolist()  # the loaded table is kept
    at.button(key="data.reset_edits").click().run()
    assert at.session_state["table"].frame["y"].tolist() == frame["y"].tolist()
    assert at.session_state["roles"].pos_label == 1


def test_the_model_page_names_each_setting_as_the_report_does_and_prices_a_promise():
    """One name per setting (strongtree_core.vocabulary.SETTING_NAMES): the Model page's labels are the
    report's names; and before the click, a promise says what it costs."""
    from strongtree_core.vocabulary import SETTING_NAMES

    at = new_app()
    at.button(key="data.load_demo").click().run()
    goto(at, "pages/2_model.py")
    for name in ("max_branching", "max_features_used", "min_leaf", "regularization"):
        assert at.number_input(key=f"model.{name}").label == SETTING_NAMES[name]
    assert at.number_input(key="model.time_limit").label == f"{SETTING_NAMES['time_limit']} (seconds)"
    assert at.slider(key="model.depth").label == SETTING_NAMES["depth"]
    assert at.selectbox(key="model.solver").label == SETTING_NAMES["solver"]
    assert at.selectbox(key="model.fairness_confidence").label == SETTING_NAMES["fairness_confidence"]
    assert not any("What this promise costs" in c.value for c in at.caption)
    at.multiselect(key="model.fairness").set_value(["statistical_parity"]).run()
    at.selectbox(key="model.fairness_confidence").set_value(0.9).run()
    costs = [c.value for c in at.caption if "What this promise costs" in c.value]
    assert len(costs) == 1 and "A promise refits the tree about 13 times" in costs[0]
    assert at.selectbox(key="model.fairness_confidence").format_func(0.9) == "90 % confidence on new rows (estimated)"
