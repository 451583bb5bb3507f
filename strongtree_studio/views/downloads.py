"""Download files of a fitted tree, as bytes (tested directly: the browser's
download buttons cannot be read from an app test)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import Callable

from strongtree_core.tree import FittedTree
from strongtree_core.tree.export import claim_comment

IMAGES_UNAVAILABLE = (
    "SVG and PNG downloads need Graphviz's `dot` program, which is not installed on this server "
    "(Debian/Ubuntu: `apt install graphviz`). The DOT file opens in any Graphviz viewer."
)


@dataclass(frozen=True)
class Export:
    """One download: button label, file name, MIME type and the function making its text."""

    label: str
    file_name: str
    mime: str
    make: Callable[[FittedTree], str]


EXPORTS: dict[str, Export] = {
    "json": Export("JSON", "tree.json", "application/json", lambda t: t.to_json(indent=2)),
    "dot": Export("DOT", "tree.dot", "text/vnd.graphviz", lambda t: t.to_dot()),
    "python": Export("Python", "tree_predict.py", "text/x-python", lambda t: t.to_python()),
    "sql": Export("SQL", "tree_case.sql", "application/sql", lambda t: t.to_sql()),
    "rules": Export("Rules", "tree_rules.txt", "text/plain",
                    lambda t: "\n".join(claim_comment(t, "#")) + "\n" + t.to_text() + "\n"),
}

IMAGE_MIME = {"svg": "image/svg+xml", "png": "image/png"}


def export_bytes(tree: FittedTree, kind: str) -> bytes:
    """The file ``kind`` (a key of :data:`EXPORTS`) for ``tree``, UTF-8 encoded."""
    return EXPORTS[kind].make(tree).encode("utf-8")


def images_available() -> bool:
    """True when Graphviz's ``dot`` program can render SVG and PNG on this server."""
    return shutil.which("dot") is not None


def image_bytes(dot_text: str, fmt: str) -> bytes:
    """``dot_text`` rendered by Graphviz's ``dot`` as ``fmt`` ("svg" or "png")."""
    import graphviz

    return graphviz.Source(dot_text).pipe(format=fmt)
