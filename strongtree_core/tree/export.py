"""A tree as code over raw columns: a standalone Python function and a SQL CASE.

Both read raw values exactly as the encoding does: a binary feature's test
is true only for a present value that passes it, so a missing value (None,
NaN, SQL NULL) or an unseen category takes the "no" branch of every test but
``missing``.  The Python export embeds the encoding's own value readers.
"""

from __future__ import annotations

import inspect
import math
from typing import TYPE_CHECKING, Callable

from strongtree_core.encoding.features import (
    BinaryFeature,
    flag_value,
    is_missing,
    level_key,
    to_number,
)
from strongtree_core.tree.rules import one_line
from strongtree_core.words import label_text

if TYPE_CHECKING:  # pragma: no cover
    from strongtree_core.tree.fitted import FittedTree

_READERS = (is_missing, level_key, flag_value, to_number)


def claim_comment(tree: "FittedTree", mark: str) -> list[str]:
    """What the tree's solve proved (:func:`strongtree_core.tree.claim.claim`), as comment lines opened by ``mark``."""
    import textwrap

    from strongtree_core.tree.claim import claim

    said = claim(tree.record)
    text = one_line(f"{said.short}. {said.words}")
    return [f"{mark} {line}" for line in textwrap.wrap(text, 100, break_long_words=False, break_on_hyphens=False)]


def tree_to_python(tree: "FittedTree") -> str:
    """Source of a module defining ``predict(row: dict)``, needing only the standard library.

    ``row`` maps raw column names to values; the function returns the
    predicted class label.  The first comment lines say what its solve proved.
    """
    lines = [
        f"# Classification tree predicting {one_line(repr(tree.target))} from raw column values.",
        *claim_comment(tree, "#"),
        "",
        "import numbers",
        "",
    ]
    for reader in _READERS:
        lines += ["", inspect.getsource(reader).rstrip(), ""]
    lines += [
        "",
        "def predict(row: dict):",
        '    """Predicted class for one row, a dict from raw column name to value."""',
    ]
    lines += _nested(
        tree,
        "    ",
        leaf=lambda label, node: f"return {label!r}  # node {node}{_changed_note(tree, node)}",
        test=lambda f: f"if {_python_test(f)}:  # {one_line(f.label)}",
        otherwise=lambda f: f"else:  # {one_line(f.negated_label)}",
        start="    ",
    )
    return "\n".join(lines) + "\n"


def tree_to_sql(tree: "FittedTree") -> str:
    """A SQL ``CASE`` expression over the raw columns whose value is the predicted label.

    Use it as ``SELECT <expression> AS prediction FROM table``; column names
    are double-quoted, text levels single-quoted; numeric columns must be
    stored as numbers.  Its first lines are SQL comments saying what its solve proved.
    """
    lines = claim_comment(tree, "--") + _nested(
        tree,
        "  ",
        leaf=lambda label, node: _sql_literal(label) + (f"  -- {_changed_note(tree, node)[2:]}"
                                                       if _changed_note(tree, node) else ""),
        test=lambda f: f"CASE WHEN {_sql_test(f)} THEN  -- {one_line(f.label)}",
        otherwise=lambda f: f"ELSE  -- {one_line(f.negated_label)}",
        end="END",
    )
    return "\n".join(lines)


def _changed_note(tree: "FittedTree", node: int) -> str:
    """``"; not the majority (x): reason"`` for a leaf that predicts against its rows' majority, else ""."""
    for note in getattr(tree, "changed_leaves", ()):
        if note.node == node:
            return f"; not the majority ({label_text(note.majority)}): {one_line(note.reason)}"
    return ""


def _nested(
    tree: "FittedTree",
    step: str,
    *,
    leaf: Callable[[object, int], str],
    test: Callable[[BinaryFeature], str],
    otherwise: Callable[[BinaryFeature], str],
    end: str | None = None,
    start: str = "",
) -> list[str]:
    """Lines of a nested if / else over the reachable nodes, "yes" branch first."""
    features = tree.encoding.features
    lines: list[str] = []

    def emit(node: int, indent: str) -> None:
        j = int(tree.structure.feature[node - 1])
        if j < 0:
            lines.append(indent + leaf(tree.classes[int(tree.structure.prediction[node - 1])], node))
            return
        lines.append(indent + test(features[j]))
        emit(2 * node + 1, indent + step)
        lines.append(indent + otherwise(features[j]))
        emit(2 * node, indent + step)
        if end is not None:
            lines.append(indent + end)

    emit(1, start)
    return lines


def _python_test(f: BinaryFeature) -> str:
    value = f"row[{f.source!r}]"
    present = f"not is_missing({value})"
    if f.kind == "missing":
        return f"is_missing({value})"
    if f.kind == "is_one":
        return f"{present} and flag_value({value})"
    if f.kind == "equals":
        return f"{present} and level_key({value}) == {level_key(f.level)!r}"
    bounds = []
    if f.lower is not None:
        bounds.append(f"to_number({value}) > {f.lower!r}")
    if f.threshold is not None:
        bounds.append(f"to_number({value}) <= {f.threshold!r}")
    return " and ".join([present] + bounds)


def _sql_test(f: BinaryFeature) -> str:
    column = '"' + str(f.source).replace('"', '""') + '"'
    if f.kind == "missing":
        return f"{column} IS NULL"
    if f.kind == "is_one":
        return f"{column} = 1"
    if f.kind == "equals":
        return f"{column} = {_sql_literal(f.level)}"
    bounds = []
    if f.lower is not None:
        bounds.append(f"{column} > {f.lower!r}")
    if f.threshold is not None:
        bounds.append(f"{column} <= {f.threshold!r}")
    return "(" + " AND ".join(bounds) + ")" if len(bounds) > 1 else bounds[0]


def _sql_literal(value) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else "NULL"
    text = str(value)
    quoted = "'" + text.replace("'", "''") + "'"
    if "\x00" in text:  # no SQL string literal holds a NUL character: concatenated with CHAR(0) (SQLite, MySQL)
        quoted = "(" + " || CHAR(0) || ".join("'" + part.replace("'", "''") + "'" for part in text.split("\x00")) + ")"
    return quoted
