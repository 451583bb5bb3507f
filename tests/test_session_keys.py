"""Session state is declared once (strongtree_studio.page.session) and reached only through it.

The scan refuses ``st.session_state`` (subscript, ``.get``, ``.pop``, ``.setdefault``,
attribute or ``in``) in every module and page script of the dashboard except
``session.py``; the run checks that every entry a session holds after visiting each
page is a declared :class:`Key` or a widget's own key (``<page or section>.<name>``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from strongtree_studio.page.navigation import screen
from strongtree_studio.page import session
from strongtree_studio.page.session import DURABLE, KEYS, Key

ROOT = Path(__file__).resolve().parents[1]
STUDIO = ROOT / "strongtree_studio"
ACCESSOR = STUDIO / "page" / "session.py"
#: A widget's own key: its page or the durable value it is bound to, a dot, its name.
WIDGET_KEY = re.compile(r"^(app|data|model|split|roles|solve|tree|fairness|tradeoffs|sweep|runs|learn)\.")
#: Keys Streamlit makes for itself (a form's submit button).
STREAMLIT_OWN = re.compile(r"^FormSubmitter:")


def _scripts() -> list[Path]:
    return sorted(p for p in STUDIO.rglob("*.py") if p != ACCESSOR) + [ROOT / "app.py"]


def session_state_uses(source: str) -> list[int]:
    """Lines where ``source`` touches ``session_state`` (any attribute of that name, or the name itself)."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "session_state":
            found.append(node.lineno)
        elif isinstance(node, ast.Name) and node.id == "session_state":
            found.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and any(a.name == "session_state" for a in node.names):
            found.append(node.lineno)
    return sorted(found)


@pytest.mark.parametrize("path", _scripts(), ids=lambda p: str(p.relative_to(ROOT)))
def test_only_the_accessor_touches_session_state(path):
    lines = session_state_uses(path.read_text(encoding="utf-8"))
    assert not lines, (f"{path.relative_to(ROOT)} reaches st.session_state on lines {lines}: declare the entry in "
                       "strongtree_studio/page/session.py and use KEY.get() / KEY.set(), or widget_value() for a widget")


@pytest.mark.parametrize(
    "source",
    [
        'import streamlit as st\nx = st.session_state["table"]\n',
        'import streamlit as st\nx = st.session_state.get("table")\n',
        'import streamlit as st\nst.session_state.setdefault("learn", 1)\n',
        'import streamlit as st\nif "x" in st.session_state: pass\n',
        'from streamlit import session_state\nsession_state["x"] = 1\n',
        'import streamlit as st\nstate = st.session_state\nstate["x"] = 1\n',
    ],
)
def test_the_scan_catches_each_way_of_writing_it(source):
    assert session_state_uses(source)


def _widget_value_literals(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in {"widget_value", "set_widget_value"} and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            out.append((node.lineno, node.args[0].value))
    return out


@pytest.mark.parametrize("path", _scripts(), ids=lambda p: str(p.relative_to(ROOT)))
def test_widget_values_are_widget_keys_not_entries(path):
    """``widget_value("table")`` would bypass the declared entry and its type."""
    bad = [(line, key) for line, key in _widget_value_literals(path) if key in KEYS or not WIDGET_KEY.match(key)]
    assert not bad, f"{path.relative_to(ROOT)}: {bad}"


MUTATORS = {"append", "extend", "insert", "remove", "pop", "clear", "update", "setdefault", "popitem", "add",
            "discard", "sort", "reverse"}


def _is_entry_read(node: ast.AST) -> bool:
    """``KEY.get()`` for a declared entry (a name in capitals)."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and not node.args and isinstance(node.func.value, ast.Name) and node.func.value.id.isupper())


def in_place_changes(source: str) -> list[int]:
    """Lines that change an entry's value in place (``KEY.get()[k] = v``, ``KEY.get().append(v)``, ...)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AugAssign, ast.AnnAssign)) else node.targets if isinstance(node, ast.Delete) else []
        for target in targets:
            if isinstance(target, (ast.Subscript, ast.Attribute)) and _is_entry_read(target.value):
                found.append(node.lineno)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS
                and _is_entry_read(node.func.value)):
            found.append(node.lineno)
    return found


@pytest.mark.parametrize("path", _scripts(), ids=lambda p: str(p.relative_to(ROOT)))
def test_entries_are_replaced_never_changed_in_place(path):
    """A reload keeps an entry when its value is a new object (strongtree_studio.page.restore.save_state)."""
    lines = in_place_changes(path.read_text(encoding="utf-8"))
    assert not lines, f"{path.relative_to(ROOT)} changes an entry in place on lines {lines}: KEY.set(a new value)"


@pytest.mark.parametrize("source", ["EDITS.get()['a'] = 1\n", "EDITS_UNDO.get().append(1)\n",
                                    "EDITS.get().update(a=1)\n", "del EDITS.get()['a']\n",
                                    "MODEL.get().depth = 3\n"])
def test_the_in_place_scan_catches_each_way_of_writing_it(source):
    assert in_place_changes(source) == [1]


def test_every_entry_is_declared_once_with_a_default_of_its_type():
    names = [k.name for k in vars(session).values() if isinstance(k, Key)]
    assert len(names) == len(set(names)) == len(KEYS)
    for key in KEYS.values():
        assert key.accepts(key.default()), key.name
        assert key.doc, key.name
    assert {k.name for k in DURABLE} >= {"table", "roles", "edits", "split", "model", "view_run", "workspace", "sweep",
                                          "learn", "job_id"}


def test_set_refuses_a_value_of_another_type():
    def script():
        from strongtree_studio.page.session import MODEL

        try:
            MODEL.set("depth 3")
        except TypeError as err:
            import streamlit as st

            st.text(str(err))

    at = AppTest.from_function(script).run()
    assert at.text[0].value == "Session entry 'model' takes (<class 'strongtree_studio.data.choices.ModelConfig'>,), not str."


@pytest.fixture
def history(tmp_path, monkeypatch):
    monkeypatch.setenv("STRONGTREE_RUNS_DB", str(tmp_path / "runs.sqlite3"))
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


def test_a_session_holds_only_declared_entries_and_widget_keys(history):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.button(key="data.load_demo").click().run()
    seen = set(at.session_state)
    for name in ("model", "solve", "tree", "fairness", "tradeoffs", "runs", "learn"):
        at.switch_page(screen(name)).run()
        assert not at.exception, at.exception
        seen |= set(at.session_state)
    undeclared = sorted(k for k in seen if k not in KEYS and not WIDGET_KEY.match(k) and not STREAMLIT_OWN.match(k))
    assert not undeclared, undeclared
    assert {"table", "roles", "model", "sweep", "learn"} <= seen
