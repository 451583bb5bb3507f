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
    bad = {m for m in _imports(path) if m.split(".")[0] in {"streamlit", "strongtree_studio", "studio", "pages", "app"}}
    assert not bad, f"{path} imports {bad}"


@pytest.mark.parametrize("path", _modules("formulation") + _modules("encoding") + _modules("tree"), ids=lambda p: str(p.relative_to(CORE)))
def test_formulations_encoding_and_trees_never_import_a_solver(path):
    solvers = {"highspy", "pyscipopt", "gurobipy", "strongtree_core.solvers"}
    bad = {m for m in _imports(path) if m in solvers or m.split(".")[0] in {"highspy", "pyscipopt", "gurobipy"}}
    assert not bad, f"{path} imports {bad}"


@pytest.mark.parametrize("path", _modules("solvers"), ids=lambda p: str(p.relative_to(CORE)))
def test_backends_never_see_tables_or_the_estimator(path):
    bad = {m for m in _imports(path) if m.split(".")[0] == "pandas" or m.startswith("strongtree_core.estimator.classifier")}
    assert not bad, f"{path} imports {bad}"


GROUND_FLOOR = ["structure.py", "progress.py", "vocabulary.py", "errors.py", "not_proven.py"]


@pytest.mark.parametrize("name", GROUND_FLOOR)
def test_the_ground_floor_imports_nothing_of_the_project(name):
    """Nothing but the ground floor itself (errors.py hands out not_proven.py's warning)."""
    own = {f"strongtree_core.{floor.removesuffix('.py')}" for floor in GROUND_FLOOR}
    bad = {m for m in _imports(CORE / name) if m.startswith("strongtree_core") and m not in own}
    assert not bad, f"{name} imports {bad}"


@pytest.mark.parametrize("path", _modules("tree"), ids=lambda p: str(p.relative_to(CORE)))
def test_fitted_trees_never_import_a_formulation_or_the_engine(path):
    bad = {m for m in _imports(path) if m.startswith(("strongtree_core.formulation", "strongtree_core.engine.routes",
                                                       "strongtree_core.accel", "strongtree_core.solvers"))}
    assert not bad, f"{path} imports {bad}"


@pytest.mark.parametrize("path", _modules("accel"), ids=lambda p: str(p.relative_to(CORE)))
def test_the_exact_search_never_imports_a_solver_or_a_table(path):
    bad = {m for m in _imports(path) if m.split(".")[0] in {"highspy", "pyscipopt", "gurobipy", "pandas"}
           or m.startswith(("strongtree_core.solvers", "strongtree_core.estimator.classifier", "strongtree_core.engine.routes"))}
    assert not bad, f"{path} imports {bad}"


def test_the_exact_search_s_linear_programs_import_nothing_of_the_project():
    """The Lagrangian dual's LPs reach HiGHS through ``highs_lp`` alone, a module a sweep's worker
    loads by itself: nothing of the project (a backend, the engine) comes with it."""
    assert not {m for m in _imports(CORE / "highs_lp.py") if m.startswith("strongtree_core")}


@pytest.mark.parametrize("path", _modules("heuristics"), ids=lambda p: str(p.relative_to(CORE)))
def test_heuristics_never_import_a_solver_a_table_or_the_exact_search(path):
    bad = {m for m in _imports(path) if m.split(".")[0] in {"highspy", "pyscipopt", "gurobipy", "pandas"}
           or m.startswith(("strongtree_core.solvers", "strongtree_core.estimator.classifier", "strongtree_core.engine.routes",
                            "strongtree_core.accel"))}
    assert not bad, f"{path} imports {bad}"


STUDIO = CORE.parent / "strongtree_studio"


def _studio_modules() -> dict[str, Path]:
    """Every module and page script of the dashboard package by its dotted name inside it
    (``"page.actions"``, ``"launch"``), packages' ``__init__`` and the wheel's main script left out."""
    found = {}
    for p in sorted(STUDIO.rglob("*.py")):
        rel = p.relative_to(STUDIO)
        if p.name == "__init__.py" or rel.parts[0] == "entry":
            continue
        found[".".join(rel.with_suffix("").parts)] = p
    return found


def _in_page_folder(name: str) -> bool:
    from strongtree_studio import STREAMLIT_FOLDER

    return name.split(".")[0] == STREAMLIT_FOLDER


def test_only_the_page_folder_and_the_launcher_import_streamlit():
    """The Streamlit boundary is a folder: a module placed outside ``page/`` that imports Streamlit fails here."""
    from strongtree_studio import STREAMLIT_LAUNCHER

    importing = {name for name, p in _studio_modules().items()
                 if any(m.split(".")[0] == "streamlit" for m in _imports(p))}
    outside = sorted(name for name in importing if not _in_page_folder(name) and name not in STREAMLIT_LAUNCHER)
    assert not outside, f"import Streamlit outside page/: {outside}"
    assert {name for name in importing if _in_page_folder(name)}, "no module of page/ imports Streamlit"


def _plain_studio_modules():
    from strongtree_studio import STREAMLIT_LAUNCHER

    return [p for name, p in _studio_modules().items() if not _in_page_folder(name) and name not in STREAMLIT_LAUNCHER]


@pytest.mark.parametrize("path", _plain_studio_modules(), ids=lambda p: str(p.relative_to(STUDIO)))
def test_plain_studio_modules_never_reach_streamlit(path):
    from strongtree_studio import STREAMLIT_FOLDER, STREAMLIT_LAUNCHER

    bound = {f"strongtree_studio.{name}" for name in STREAMLIT_LAUNCHER}
    bad = {m for m in _imports(path) if m.split(".")[0] in {"streamlit", "pages", "app"} or m in bound
           or m == f"strongtree_studio.{STREAMLIT_FOLDER}" or m.startswith(f"strongtree_studio.{STREAMLIT_FOLDER}.")}
    assert not bad, f"{path.relative_to(STUDIO)} is plain Python but imports {bad}"


def _package_imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """Modules of the dashboard package that ``path`` imports anywhere (in functions too)."""
    found = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(n.removeprefix("strongtree_studio.") for n in names if n.startswith("strongtree_studio."))
    return found & set(modules)


#: The dashboard's folders from the ground up: each may import its own and those below it, never one above.
STUDIO_FLOORS = ("data", "views", "stores", "jobs", "sweeps", "learn", "page")


def test_the_dashboards_folders_import_downward_only():
    modules = _studio_modules()
    assert {name.split(".")[0] for name in modules if "." in name} == set(STUDIO_FLOORS)
    upward = []
    for name, p in modules.items():
        if "." not in name:  # the package's own launcher
            continue
        floor = STUDIO_FLOORS.index(name.split(".")[0])
        for target in _package_imports(p, modules):
            if "." in target and STUDIO_FLOORS.index(target.split(".")[0]) > floor:
                upward.append(f"{name} -> {target}")
    assert not upward, f"imports that run up the dashboard's floors {STUDIO_FLOORS}: {upward}"


def test_no_studio_module_imports_one_that_imports_it_back():
    modules = _studio_modules()
    graph = {name: _package_imports(p, modules) for name, p in modules.items()}
    assert sum(map(len, graph.values())) > 100, "the dashboard's own imports were not found"

    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    cycles = sorted(name for name in graph if name in reach(name))
    assert not cycles, f"modules on an import cycle: {cycles}"


def test_the_engine_reads_why_a_solve_stopped_as_data_never_a_solver_s_words():
    """engine/routes.py speaks the solver layer's status vocabulary: it imports no backend module (whose
    message strings it could rewrite), only the layer's shared names."""
    backends = {"strongtree_core.solvers." + name for name in ("highs", "highs_run", "highs_benders", "scip",
                                                               "scip_lazy", "gurobi")}
    imported = _imports(CORE / "engine" / "routes.py")
    assert not imported & backends, imported & backends
