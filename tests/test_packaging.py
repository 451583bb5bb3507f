"""The package: its version, its console script, and dependencies that cover its imports."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from importlib import import_module, metadata
from pathlib import Path

import strongtree_core

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
#: Import names whose distribution is named differently.
DISTRIBUTION = {"sklearn": "scikit-learn", "pyscipopt": "PySCIPOpt"}
#: Imported only inside a function, behind a clear message when absent: optional extras.
OPTIONAL = {"gurobipy": "gurobi", "pystreed": "crosscheck", "dask": "dask", "distributed": "dask",
            "pyarrow": "outofcore"}


def _name(requirement: str) -> str:
    for stop in "<>=[ ;":
        requirement = requirement.split(stop)[0]
    return requirement.strip().lower()


def _third_party_imports() -> set[str]:
    names = set()
    for path in (ROOT / "strongtree_core").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n != "strongtree_core"}


def test_python_m_prints_the_version():
    out = subprocess.run([sys.executable, "-m", "strongtree_core", "--version"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"strongtree {strongtree_core.__version__}"


def test_the_version_is_one_string_read_by_the_build():
    assert PYPROJECT["project"]["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "strongtree_core.version.__version__"}
    major, minor, patch = strongtree_core.__version__.split(".")
    assert all(part.isdigit() for part in (major, minor, patch))


def test_the_console_script_runs_the_cli_main_and_exits_with_its_code(monkeypatch):
    """The console script is the light entry point of strongtree_core.command, which runs cli.main."""
    import pytest

    from strongtree_core import cli

    target = PYPROJECT["project"]["scripts"]["strongtree"]
    module, function = target.split(":")
    monkeypatch.setattr(cli, "main", lambda: 7)
    with pytest.raises(SystemExit) as ended:
        getattr(import_module(module), function)()
    assert ended.value.code == 7


def test_every_import_of_the_library_is_a_declared_dependency():
    declared = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    extras = PYPROJECT["project"]["optional-dependencies"]
    modules = sorted(_third_party_imports())
    assert {"numpy", "pandas", "scipy"} <= set(modules), modules  # the walk over the library's imports found them
    for module in modules:
        if module in OPTIONAL:
            assert module in {_name(r) for r in extras[OPTIONAL[module]]}, module
        else:
            assert DISTRIBUTION.get(module, module).lower() in declared, f"{module} is imported but not a dependency"


def test_the_default_install_has_no_gpl_or_proprietary_package():
    declared = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    assert not declared & {"gurobipy", "pystreed", "scikit-survival", "ecos"}
    assert PYPROJECT["project"]["license"] == "BSD-3-Clause"
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("BSD 3-Clause License")


def test_the_requirements_file_installs_every_dependency_of_the_package():
    """Pinned in requirements.txt, or required by a package pinned there (threadpoolctl by scikit-learn)."""
    pinned = {_name(line) for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
              if line.strip() and not line.startswith(("#", "-"))}
    brought = {_name(r) for p in pinned for r in (metadata.requires(p) or []) if "extra ==" not in r}
    assert {_name(r) for r in PYPROJECT["project"]["dependencies"]} <= pinned | brought


def _readme_commands() -> list[str]:
    """The command lines of the README's fenced ``bash`` blocks (comments and blank lines left out)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        lines += [line.strip() for line in block.splitlines() if line.strip() and not line.strip().startswith("#")]
    return lines


def test_ci_runs_the_readme_s_test_command_in_the_environment_the_readme_makes():
    """CI's route is the README's: the venv of command 1, then command 2 exactly as written."""
    commands = _readme_commands()
    tests = [c for c in commands if "scripts/test.sh" in c]
    assert tests == ["bash scripts/test.sh"], tests
    venv = next(c for c in commands if " -m venv " in c).split("&&")
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
          if line.strip() and not line.strip().startswith("#")]
    assert [part.strip() for part in venv[:2]] == ["python3.11 -m venv .venv", ". .venv/bin/activate"], venv
    assert ci[-3:] == ["python3.11 -m venv .venv", ". .venv/bin/activate", tests[0]], ci
