"""Sphinx configuration of the documentation: the user guide (``guide/``), the API reference built
from the docstrings (``api/``, numpydoc) and the references (``references.rst``).

Build: ``python -m sphinx -W --keep-going -b html docs docs/_build`` (warnings are errors;
tests/test_docs.py runs it).  Only ``.rst`` files are sources: the Markdown notes beside them
(``time-limits.md``, ...) are read on their own and linked from the guide.

Sphinx with numpydoc rather than MkDocs with mkdocstrings: the docstrings are numpydoc, and
numpydoc both renders them and validates their sections (EX01: an object without an Examples
section is a warning, so ``-W`` fails the build); it is the toolchain of scikit-learn, SciPy and
fairlearn, whose references this one sits beside.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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
exclude_patterns = ["_build", "screenshots"]
html_title = "StrongTree Studio"
nitpicky = False
suppress_warnings: list[str] = []
# Methods and properties are documented under their class (whose Examples show it in use); the
# Examples check applies to the classes and functions a module exports.
numpydoc_validation_exclude = {r"\.[A-Z]\w*\.\w+$"}
