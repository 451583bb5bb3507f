"""User text reaches a widget only through strongtree_studio.views.markup.

Two checks.  The scan (tests/markup_scan.py) reads every page script and
Streamlit-bound module and refuses a widget whose label, help, captions,
placeholder, options or ``format_func`` could carry user text that did not go
through ``md()`` (Markdown surfaces) or ``plain_text()`` (plain-text surfaces).  The
render check opens every page through the entrypoint with a table whose column
names, category levels, class labels and file name hold quotes, ``--``, ``;``, line
breaks, backslashes, NUL, Markdown images and links and HTML, and reads every
widget's label, help, placeholder, captions and options as the browser would get
them: nothing that Markdown would make an image, a link or HTML, every hostile
value shown (escaped where Markdown is read, as typed where it is not).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import hostile
import pytest
import streamlit as st
from hostile import hazards
from markup_scan import findings
from streamlit.testing.v1 import AppTest

from strongtree_studio.page.navigation import screen
from strongtree_studio.data.choices import Roles
from strongtree_studio.data.loading import fingerprint
from strongtree_studio.views.markup import REPLACEMENT, md, plain_text
from strongtree_studio.page.services import job_registry
from strongtree_studio.stores.table import LoadedTable

ROOT = Path(__file__).resolve().parents[1]
STUDIO = ROOT / "strongtree_studio"
SCRIPTS = sorted((STUDIO / "page").rglob("*.py")) + [STUDIO / "launch.py", STUDIO / "__main__.py"]

# -- the scan ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_widget_takes_user_text_through_the_escaping_path(path):
    found = findings(path.read_text(encoding="utf-8"))
    assert not found, f"{path.relative_to(ROOT)}:\n" + "\n".join(map(str, found))


@pytest.mark.parametrize(
    "source",
    [
        "st.text_input(value, placeholder='x')",  # the Types & labels bug: a category value as a label
        "st.text_input('Label', placeholder=value)",
        "grid[0].text_input(f'{value}', key='k')",
        "st.selectbox('Column', columns)",
        "st.multiselect('Columns', others, format_func=str)",
        "st.selectbox('Table', names, format_func=labels.get)",
        "st.radio('Level', levels, format_func=plain_text)",  # radio options are Markdown: md() is needed
        "st.segmented_control('Group', groups)",
        "st.button(name)",
        "st.checkbox('x', help=reason)",
        "st.metric(f'{column} · rate', 1)",
        "st.expander(title)",
        "st.tabs([name, 'Other'])",
        "st.page_link('p.py', label=run_name)",
        "st.radio('x', ['a'], captions=[value])",
        "field(st.number_input, label, MODEL, 'depth')",
        "field(st.selectbox, 'Positive class', ROLES, 'positive', options=classes)",
        "field(st.selectbox, 'x', ROLES, 'positive', options=classes, format_func=lambda v: str(v))",
        "st.selectbox('x', values, format_func=lambda v: f'{v} rows')",
        "st.number_input(' '.join(parts), 1)",
    ],
)
def test_the_scan_refuses_each_way_of_writing_it(source):
    """Refused by the scan of the page scripts: the suite fails."""
    assert findings(source), source


@pytest.mark.parametrize(
    "source",
    [
        "st.text_input(md(value), placeholder=plain_text(value))",
        "st.selectbox('Column', columns, format_func=plain_text)",
        "st.selectbox('x', values, format_func=lambda v: 'none' if v is None else plain_text(v))",
        "st.radio('Read as', kinds, format_func=KINDS.get)",
        "st.radio('Depth', (1, 2, 3))",
        "st.metric(md(f'{name} · rate'), 1, help=HELP)",
        "st.number_input(f\"Row (0–{fmt(n - 1, 'int')})\", 0)",
        "st.button('Go', help=DEMO.summary)",
        "st.segmented_control('Size', list(ZOOMS))",
        "st.selectbox('Rows from', ['train'], format_func={'train': 'training set'}.get)",
        "field(st.multiselect, 'Protected', ROLES, 'protected', options=others, format_func=plain_text)",
        "st.expander('How it was solved', icon=':material/info:')",
    ],
)
def test_the_scan_accepts_the_escaping_path(source):
    assert findings(source) == [], source


# -- the render check ----------------------------------------------------------------------------------

#: Nothing listens there: the render check reads what would be fetched, the browser test listens.
VALUES = hostile.widget_values("http://127.0.0.1:9")
NAME, LEVEL, GROUP, TARGET = VALUES["name"] + ".csv", VALUES["level"], VALUES["group"], VALUES["target"]
LEVELS, GROUPS, CLASSES = VALUES["levels"], VALUES["groups"], VALUES["classes"]
#: Every hostile string.
STRINGS = (NAME, LEVEL, GROUP, TARGET, *LEVELS, *GROUPS, *CLASSES)
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def widget_strings(node, markdown: list, plain: list, kind: str = "") -> None:
    """Collect the label, help, captions, placeholder and option texts of every widget and container
    (Markdown or plain text, as Streamlit shows them: select box and multiselect options and
    placeholders are plain text)."""
    children = getattr(node, "children", None)
    if children:
        for child in children.values():
            widget_strings(child, markdown, plain)
    proto = getattr(node, "proto", None)
    if proto is None or not hasattr(proto, "ListFields"):
        return
    _proto_strings(proto, markdown, plain, type(proto).__name__)


def _proto_strings(proto, markdown: list, plain: list, kind: str) -> None:
    plain_options = kind in ("Selectbox", "MultiSelect")
    for field, value in proto.ListFields():
        name = field.name
        if field.message_type is not None:
            items = value if field.is_repeated else [value]
            for item in items:
                if field.message_type.name not in ("Markdown", "Text", "Alert", "Heading", "Code"):
                    _proto_strings(item, markdown, plain, field.message_type.name)
            continue
        if field.type != field.TYPE_STRING:
            continue
        texts = list(value) if field.is_repeated else [value]
        if name in ("label", "help", "captions", "content"):
            markdown.extend(texts)
        elif name == "placeholder" and kind == "TextArea":  # several lines of the app's own example
            plain.extend(t.replace("\n", " ") for t in texts)
        elif name == "placeholder" or (name == "options" and plain_options):
            plain.extend(texts)
        elif name == "options":
            markdown.extend(texts)


def check_widgets(at: AppTest) -> tuple[list[str], list[str]]:
    assert not at.exception, at.exception
    markdown, plain = [], []
    widget_strings(at._tree, markdown, plain)
    assert markdown
    for text in markdown:
        assert hazards(text) == [], text
        assert not CONTROL.search(text), repr(text)
        for raw in STRINGS:
            assert raw not in text or not hazards(raw), (raw, text)
    for text in plain:
        assert not CONTROL.search(text), repr(text)
    return markdown, plain


@pytest.fixture
def history(tmp_path, monkeypatch):
    monkeypatch.setenv("STRONGTREE_RUNS_DB", str(tmp_path / "runs.sqlite3"))
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


def poll(at: AppTest, until, timeout: float = 120.0) -> AppTest:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        at.run()
        assert not at.exception, at.exception
        if until(at):
            return at
        time.sleep(0.3)
    raise AssertionError("the awaited state never came")


def goto(at: AppTest, name: str) -> AppTest:
    at.switch_page(screen(name)).run()
    assert not at.exception, at.exception
    return at


@pytest.mark.timing
def test_hostile_names_levels_and_labels_reach_every_widget_escaped(history):
    frame = hostile.widget_frame(VALUES)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.session_state["table"] = LoadedTable(NAME, frame, fingerprint(frame), raw=frame)
    at.session_state["roles"] = Roles(TARGET, CLASSES[0], (GROUP,))
    at.run()
    markdown, plain = check_widgets(at)
    for level in LEVELS:  # Types & labels: one box per level, labelled with the level escaped
        assert md(level) in markdown, level
        assert plain_text(level) in plain, level  # and its placeholder, as typed
    assert "nul" + REPLACEMENT + "byte" in plain
    for column in (LEVEL, GROUP, TARGET):  # the role and column pickers list the names as typed
        assert plain_text(column) in plain, column
    for label in CLASSES:  # the positive class picker
        assert plain_text(label) in plain, label
    at.multiselect(key=next(k for k in at.session_state if str(k).startswith("roles.protected"))).set_value(
        [GROUP]).run()

    goto(at, "model")
    at.multiselect(key="model.fairness").set_value(["statistical_parity"]).run()
    at.slider(key="model.depth").set_value(1).run()
    check_widgets(at)
    goto(at, "solve")
    at.button(key="solve.start").click().run()
    poll(at, lambda a: len(a.success) + len([w for w in a.warning if "best tree" in w.value]) > 0
         and not job_registry().snapshot(a.session_state["job_id"]).active)  # the run stored, the comparison done
    check_widgets(at)
    for page in ("tree", "fairness", "runs", "tradeoffs"):
        check_widgets(goto(at, page))
    markdown, plain = check_widgets(goto(at, "runs"))
    at.multiselect(key="runs.pick").set_value([at.multiselect(key="runs.pick").options[0]]).run()
    markdown, plain = check_widgets(at)
    assert any(plain_text(NAME) in option for option in plain)  # the run list names the file as typed
    markdown, plain = check_widgets(goto(at, "learn"))
    assert "The loaded table: " + plain_text(NAME) in plain


#: A file name in a folder the server offers: Markdown, HTML, quotes, a line break and an escape (no "/": it
#: is one name), listed on the Data page's "On this server" tab.
SERVER_FILE = 'file "q" \'s -- ; ![f](f.png)\n<img src=x onerror=alert(1)> [l](l)\x1b.csv'


def test_a_file_name_on_the_server_reaches_the_data_page_escaped(history, tmp_path, monkeypatch):
    folder = tmp_path / "offered"
    folder.mkdir()
    hostile.widget_frame(VALUES).to_csv(folder / SERVER_FILE, index=False)
    monkeypatch.setenv("STRONGTREE_DATA_DIR", str(folder))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    markdown, plain = check_widgets(at)  # the tabs, the list's label and help; its options on one line
    listed = "offered/" + SERVER_FILE
    assert at.selectbox(key="data.server_table").options == [plain_text(listed)]  # as typed, on one line
    assert any("On this server" in text for text in markdown)
    at.button(key="data.load_server").click().run()
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["table"].name == listed
    check_widgets(at)
    assert md(listed) in [h.value for h in at.subheader]  # the table's name as its heading, escaped
