"""Rules the suite keeps about itself, read from the test files' syntax.

A test that sleeps to wait for something (``time.sleep`` in its body, or in a helper of its module
that it calls) depends on the machine's speed: it is marked ``timing``, so that
``python -m pytest -m "not timing"`` leaves it out on a machine busy with other work.  (Fixtures that
wait for a server to start, with deadlines of a minute, are not counted.)
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _is_sleep(call: ast.Call) -> bool:
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr == "sleep" and isinstance(func.value, ast.Name)
            and func.value.id == "time") or (isinstance(func, ast.Name) and func.id == "sleep")


def _marks(node: ast.AST) -> set[str]:
    """``pytest.mark.NAME`` decorators of a function (with or without arguments)."""
    found = set()
    for decorator in getattr(node, "decorator_list", []):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute) \
                and target.value.attr == "mark":
            found.add(target.attr)
    return found


def _module_marks(tree: ast.Module) -> set[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            return {n.attr for n in ast.walk(node.value) if isinstance(n, ast.Attribute)
                    and isinstance(n.value, ast.Attribute) and n.value.attr == "mark"}
    return set()


def sleeping_tests(path: Path) -> list[str]:
    """Tests of ``path`` that reach ``time.sleep`` (themselves or through the module's own helpers,
    functions and classes) and are not marked ``timing``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    helpers: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and "fixture" not in _marks(node) \
                and not any("fixture" in ast.unparse(d) for d in getattr(node, "decorator_list", [])):
            helpers[node.name] = node
    memo: dict[str, bool] = {}

    def reaches(node: ast.AST, seen: frozenset[str]) -> bool:
        for inner in ast.walk(node):
            if isinstance(inner, ast.Call):
                if _is_sleep(inner):
                    return True
                name = inner.func.id if isinstance(inner.func, ast.Name) else None
                if name in helpers and name not in seen:
                    if name not in memo:
                        memo[name] = reaches(helpers[name], seen | {name})
                    if memo[name]:
                        return True
        return False

    module_timing = "timing" in _module_marks(tree)
    return [f"{path.name}::{node.name}" for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
            and not module_timing and "timing" not in _marks(node) and reaches(node, frozenset({node.name}))]


def test_every_test_that_sleeps_to_wait_is_marked_timing():
    found = [name for path in sorted(TESTS.glob("test_*.py")) for name in sleeping_tests(path)]
    assert not found, "sleep to wait but are not marked timing:\n" + "\n".join(found)


def test_the_rule_sees_a_sleep_through_a_helper_and_a_class(tmp_path):
    sample = tmp_path / "test_sample.py"
    sample.write_text(
        "import time\nimport pytest\n\n"
        "def wait():\n    time.sleep(0.1)\n\n"
        "class Poller:\n    def poll(self):\n        wait()\n\n"
        "def test_direct():\n    time.sleep(1)\n\n"
        "def test_helper():\n    wait()\n\n"
        "def test_class():\n    Poller().poll()\n\n"
        "@pytest.mark.timing\ndef test_marked():\n    wait()\n\n"
        "def test_none():\n    assert 'time.sleep(1)'\n"
    )
    assert sleeping_tests(sample) == ["test_sample.py::test_direct", "test_sample.py::test_helper",
                                      "test_sample.py::test_class"]

