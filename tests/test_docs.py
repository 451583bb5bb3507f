"""The documentation: the user guide and the API reference built by Sphinx with numpydoc, warnings as
errors (every documented export needs an Examples section: numpydoc's EX01 check); every public name
and method of the library in the reference; a few of the examples run."""

from __future__ import annotations

import doctest
import importlib
import inspect
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The modules whose exports the reference documents (docs/api/*.rst), with every export an example.
#: Their classes and functions, and the public methods and properties of those classes, are the
#: public API: each has an entry in the reference.
DOCUMENTED = ["strongtree_core", "strongtree_core.metrics", "strongtree_core.sweep", "strongtree_core.tree",
              "strongtree_core.encoding", "strongtree_core.formulation", "strongtree_core.solvers",
              "strongtree_core.heuristics", "strongtree_core.accel", "strongtree_core.cli", "strongtree_core.datasets"]
#: Modules whose examples are cheap enough to run on every test run (a few tiny fits at most).
RUN_EXAMPLES = [
    "strongtree_core.metrics.quality", "strongtree_core.metrics.disparities", "strongtree_core.metrics.fairness_gaps",
    "strongtree_core.metrics.group_table", "strongtree_core.metrics.intervals", "strongtree_core.renames",
    "strongtree_core.errors", "strongtree_core.engine.limits", "strongtree_core.tree.fitted", "strongtree_core.cli.words",
    "strongtree_core.estimator.classifier", "strongtree_core.cli.files", "strongtree_core.encoding.binarize",
    "strongtree_core.formulation.spec", "strongtree_core.solvers.registry", "strongtree_core.datasets",
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The documentation built once: (the finished process, its seconds, the HTML folder)."""
    pytest.importorskip("sphinx", reason="the docs tools are not installed (pip install -r requirements-dev.txt)")
    pytest.importorskip("numpydoc", reason="the docs tools are not installed (pip install -r requirements-dev.txt)")
    folder = tmp_path_factory.mktemp("docs")
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                          str(ROOT / "docs"), str(folder / "html")], capture_output=True, text=True,
                         cwd=folder, timeout=180)
    return out, time.perf_counter() - started, folder / "html"


@pytest.mark.timing
def test_the_guide_and_reference_build_with_no_warning(built):
    out, seconds, html = built
    assert out.returncode == 0, out.stderr
    assert not out.stderr.strip(), out.stderr
    for page in ("api/metrics.html", "guide/analyst.html", "guide/teacher.html", "references.html"):
        assert (html / page).exists(), page
    assert seconds < 60


def public_api() -> dict[str, set[str]]:
    """Every class and function the documented modules export, and every public method and property
    that the project's own classes define on them (inherited ones included, scikit-learn's left out):
    the names under which the reference may list each (a class exported by two modules, under either)."""
    paths: dict[int, set[str]] = {}
    objects = {}
    for module in DOCUMENTED:
        mod = importlib.import_module(module)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):  # where it is exported, or defined
                paths.setdefault(id(obj), set()).update({f"{module}.{name}", f"{obj.__module__}.{obj.__qualname__}"})
                objects[id(obj)] = obj
    api: dict[str, set[str]] = {}
    for key, obj in objects.items():
        names = paths[key]
        api[min(names, key=len)] = names
        if not inspect.isclass(obj):
            continue
        fields = getattr(obj, "__dataclass_fields__", {})
        for klass in obj.__mro__:
            if not klass.__module__.startswith("strongtree_core"):
                continue
            for member, value in vars(klass).items():
                if member.startswith("_") or member in fields:
                    continue
                if isinstance(value, (property, classmethod, staticmethod)) or inspect.isfunction(value):
                    api[f"{min(names, key=len)}.{member}"] = {f"{path}.{member}" for path in names}
    return api


def reference_names(html: Path) -> set[str]:
    """The Python objects the built reference documents (its object inventory)."""
    from sphinx.util.inventory import InventoryFile

    with open(html / "objects.inv", "rb") as f:
        inventory = InventoryFile.load(f, "", lambda base, uri: uri)
    entries = getattr(inventory, "data", inventory)  # an object from Sphinx 8.2 on, a dict before
    return {name for kind, names in entries.items() if kind.startswith("py:") for name in names}


def test_every_public_name_and_method_is_in_the_reference(built):
    out, _, html = built
    assert out.returncode == 0, out.stderr
    documented = reference_names(html)
    api = public_api()
    assert "strongtree_core.StrongTreeClassifier.fairness_report" in api  # the walk sees methods,
    assert "strongtree_core.FittedTree.to_sql" in api  # the project's classes' methods,
    assert "strongtree_core.datasets.make_balance_scale" in api  # and functions
    assert "strongtree_core.StrongTreeClassifier.get_params" not in api  # scikit-learn's own are its to document
    missing = sorted(name for name, accepted in api.items() if not accepted & documented)
    assert not missing, f"not in the reference (docs/api/*.rst): {missing}"


@pytest.mark.parametrize("module", DOCUMENTED)
def test_every_export_has_an_example(module):
    mod = importlib.import_module(module)
    missing = [n for n in mod.__all__ if hasattr(mod, n) and (inspect.isclass(getattr(mod, n)) or inspect.isfunction(getattr(mod, n)))
               and "Examples\n" not in (getattr(mod, n).__doc__ or "")]
    assert not missing, f"{module}: no Examples section in {missing}"


@pytest.mark.parametrize("module", RUN_EXAMPLES)
def test_the_examples_run_as_written(module, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{module} has no examples"
    assert result.failed == 0
