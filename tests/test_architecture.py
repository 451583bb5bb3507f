"""The shape of the house: data flows one way and each folder keeps to its step."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "strongtree_core"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def _modules(folder: str = ""):
    return sorted((CORE / folder).rglob("*.py"))


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(CORE)))
def test_the_engine_never_imports_the_app(path):
    bad = {m for m in _imports(path) if m.split(".")[0] in {"streamlit", "studio", "pages", "app"}}
    assert not bad, f"{path} imports {bad}"


@pytest.mark.parametrize("path", _modules("formulation") + _modules("encoding") + _modules("tree"), ids=lambda p: str(p.relative_to(CORE)))
def test_formulations_encoding_and_trees_never_import_a_solver(path):
    solvers = {"highspy", "pyscipopt", "gurobipy", "strongtree_core.solvers"}
    bad = {m for m in _imports(path) if m in solvers or m.split(".")[0] in {"highspy", "pyscipopt", "gurobipy"}}
    assert not bad, f"{path} imports {bad}"


@pytest.mark.parametrize("path", _modules("solvers"), ids=lambda p: str(p.relative_to(CORE)))
def test_backends_never_see_tables_or_the_estimator(path):
    bad = {m for m in _imports(path) if m.split(".")[0] == "pandas" or m.startswith("strongtree_core.estimator")}
    assert not bad, f"{path} imports {bad}"
