"""Sphinx configuration of the API reference, built from the docstrings (numpydoc).

Build: ``python -m sphinx -W --keep-going -b html docs/api docs/api/_build`` (warnings are errors;
tests/test_docs.py runs it).
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
