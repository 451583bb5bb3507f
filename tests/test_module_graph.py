"""scripts/module_graph.py, the figures of docs/architecture.md: circles and floors on small graphs
whose answers are known, the kinds of import it tells apart, and the house as it stands."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("module_graph", ROOT / "scripts" / "module_graph.py")
module_graph = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(module_graph)


def test_circles_and_floors_of_a_small_graph():
    graph = {"a": {"b"}, "b": {"a", "c"}, "c": set(), "d": {"a"}, "e": {"d", "c"}}
    assert module_graph.circles(graph) == [["a", "b"]]
    assert module_graph.floors(graph) == {"c": 1, "a": 2, "b": 2, "d": 3, "e": 4}  # a circle shares one floor
    assert module_graph.circles({"x": {"y"}, "y": set()}) == []


def test_imports_are_told_apart_by_when_they_run(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "import pkg.top\n"
        "if TYPE_CHECKING:\n    from pkg.types import T\n"
        "if sys.argv:\n    import pkg.cond\n"
        "def f():\n    from pkg import lazy\n"
    )
    known = {"pkg", "pkg.top", "pkg.types", "pkg.cond", "pkg.lazy", "pkg.m"}
    assert module_graph.imports("pkg.m", source, known) == [
        ("pkg.cond", "conditional"), ("pkg.lazy", "lazy"), ("pkg.top", "top"), ("pkg.types", "types")]


def test_the_house_is_measured_from_its_source():
    out = subprocess.run([sys.executable, "scripts/module_graph.py", "--rooms"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "strongtree_studio/: " in out.stdout and "## rooms:" in out.stdout
    assert "floor  1  strongtree_core.structure" in out.stdout  # the ground floor imports nothing of the project


def test_the_rooms_of_the_house_form_no_circle():
    """Every folder (room) imports downward: no room reaches back to one that imports it, counting imports
    inside functions (they run when called) and leaving out those under ``TYPE_CHECKING`` (never run)."""
    found = module_graph.modules()
    graph: dict[str, set[str]] = {}
    for name, path in found.items():
        for target, kind in module_graph.imports(name, path, set(found)):
            if kind != "types" and module_graph.room(target) != module_graph.room(name):
                graph.setdefault(module_graph.room(name), set()).add(module_graph.room(target))
    assert len(graph) >= 25 and sum(map(len, graph.values())) > 100, "the house's imports were not found"
    assert module_graph.circles(graph) == []


def test_no_file_imports_one_that_imports_it_back():
    """Within a room too, imports go one way: the estimator's fit and its table fit share ``training.py``
    rather than reaching into each other."""
    found = module_graph.modules()
    graph: dict[str, set[str]] = {}
    for name, path in found.items():
        for target, kind in module_graph.imports(name, path, set(found)):
            if kind != "types" and target != name:
                graph.setdefault(name, set()).add(target)
    assert "strongtree_core.estimator.training" in graph["strongtree_core.estimator.table_fit"]
    assert module_graph.circles(graph) == []
