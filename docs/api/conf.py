"""Sphinx configuration of the API reference, built from the docstrings (numpydoc).

Build: ``python -m sphinx -W --keep-going -b html docs/api docs/api/_build`` (warnings are errors;
tests/test_docs.py runs it).

Sphinx with numpydoc rather than MkDocs with mkdocstrings: the docstrings are numpydoc, and
numpydoc both renders them and validates their sections (EX01: an object without an Examples
section is a warning, so ``-W`` fails the build); it is the toolchain of scikit-learn, SciPy and
fairlearn, whose references this one sits beside.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import strongtree_core  # noqa: E402

project = "StrongTree"
author = "StrongTree Studio contributors"
release = version = strongtree_core.__version__
extensions = ["sphinx.ext.autodoc", "numpydoc", "sphinx.ext.intersphinx"]
autodoc_default_options = {"members": False}
autodoc_typehints = "none"  # the numpydoc sections give types in words
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = {"EX01"}  # every documented object has an Examples section
intersphinx_mapping: dict = {}
html_theme = "alabaster"
exclude_patterns = ["_build"]
nitpicky = False
suppress_warnings: list[str] = []
# Methods are documented under their class, whose Examples show them in use.
numpydoc_validation_exclude = {r"\.StrongTreeClassifier\.\w+$"}
