"""The tree drawn for the report: Graphviz's ``dot`` when it is installed, else the
library's own layout (:mod:`strongtree_core.tree.svg`), as SVG to put inline.

Either drawing is self-contained (no link, image or font to fetch).  ``dot``'s SVG
loses its XML prolog and document type (which name an outside address) so it can
sit inside HTML.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Literal

from strongtree_core.tree import FittedTree
from strongtree_core.tree.svg import tree_svg

#: Longest ``dot`` may take (s) before the built-in layout is used instead.
DOT_TIMEOUT = 20.0
#: The fonts of the built-in drawing in a report (the dashboard's first, then common ones).
REPORT_FONT = '"Source Sans 3", "Source Sans Pro", "Segoe UI", Helvetica, Arial, sans-serif'
GRAPHVIZ = "Graphviz (dot)"
BUILT_IN = "the built-in layout"

Engine = Literal["auto", "graphviz", "builtin"]

_PROLOG = re.compile(r"^.*?(?=<svg\b)", re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)


@dataclass(frozen=True)
class Drawing:
    """An SVG drawing and what drew it (:data:`GRAPHVIZ` or :data:`BUILT_IN`)."""

    svg: str
    engine: str


def dot_svg(dot: str, program: str) -> str | None:
    """``dot``'s SVG of ``dot`` without its prolog, or None when it fails or takes too long."""
    try:
        done = subprocess.run([program, "-Tsvg"], input=dot.encode("utf-8"), capture_output=True,
                              timeout=DOT_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    text = done.stdout.decode("utf-8", errors="replace")
    text = _COMMENT.sub("", _PROLOG.sub("", text, count=1)).strip()
    return text if text.startswith("<svg") else None


def tree_drawing(tree: FittedTree, engine: Engine = "auto") -> Drawing:
    """The tree as inline SVG: ``dot`` for "auto" when installed (and for "graphviz"), else the built-in layout."""
    program = shutil.which("dot")
    if engine in ("auto", "graphviz") and program:
        svg = dot_svg(tree.to_dot(), program)
        if svg is not None:
            return Drawing(svg, GRAPHVIZ)
    return Drawing(tree_svg(tree, fit_text=True, font=REPORT_FONT, orientation="down"), BUILT_IN)
