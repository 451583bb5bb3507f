"""A tree as Graphviz DOT text (no rendering dependency).

Each node shows its test (or prediction), how many training rows reach it
and their class mix, as text and as a bar in the class colours; leaves are
filled with a tint of the predicted class's colour.  The "yes" edge (the
test holds, binary value 1) is drawn on the left.  Every piece of user text
goes through :func:`html_text`, so any column name, level or class label is
safe in the HTML-like labels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from strongtree_core.tree.rules import one_line, reachable_nodes
from strongtree_core.words import class_counts, count_of, fmt

if TYPE_CHECKING:  # pragma: no cover
    from strongtree_core.tree.fitted import FittedTree

#: Okabe-Ito colours, distinguishable with the common colour-vision deficiencies.
PALETTE: tuple[str, ...] = (
    "#E69F00",
    "#56B4E9",
    "#009E73",
    "#F0E442",
    "#0072B2",
    "#D55E00",
    "#CC79A7",
    "#999999",
)
FONT = "Helvetica,Arial,sans-serif"
BAR_WIDTH = 96
LINE = "#666666"
STRONG = "#1a1a1a"


def class_colours(n_classes: int) -> list[str]:
    """One colour per class (the palette repeats beyond eight classes)."""
    return [PALETTE[k % len(PALETTE)] for k in range(n_classes)]


def tint(colour: str, strength: float) -> str:
    """``colour`` mixed with white; ``strength`` 1 keeps the colour, 0 gives white."""
    rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=float)
    mixed = np.round(255 - strength * (255 - rgb)).astype(int)
    return "#" + "".join(f"{v:02X}" for v in mixed)


def html_text(text) -> str:
    """``text`` for a Graphviz HTML-like label: markup characters as entities,
    control characters (newlines, tabs, ...) written out as visible escapes."""
    return "".join(_ENTITIES.get(ch, ch) for ch in one_line(text))


_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}


def tree_to_dot(
    tree: "FittedTree",
    *,
    highlight: Sequence[int] = (),
    group_mix: Mapping[int, Mapping] | None = None,
) -> str:
    """DOT text of ``tree``.

    Parameters
    ----------
    tree : FittedTree
    highlight : sequence of int
        Node numbers drawn with a heavy outline (e.g. ``tree.decision_path(row)``);
        edges between two of them are drawn heavy too.
    group_mix : mapping from node number to {group: count}, optional
        Rows per protected group, shown under the class mix of those nodes.

    A leaf that does not predict its rows' majority class is drawn dashed, with
    "not the majority (<class>)" and what relabelling it would break.
    """
    colours = class_colours(tree.n_classes)
    marked = {int(n) for n in highlight}
    group_mix = group_mix or {}
    changed = {c.node: c for c in getattr(tree, "changed_leaves", ())}
    lines = [
        "digraph tree {",
        f'  graph [ordering=out, nodesep=0.3, ranksep=0.45, fontname="{FONT}"];',
        f'  node [shape=box, style="rounded,filled", fillcolor="#FFFFFF", color="{LINE}", '
        f'fontname="{FONT}", fontsize=11, margin="0.1,0.05"];',
        f'  edge [fontname="{FONT}", fontsize=10, color="{LINE}", arrowsize=0.7];',
    ]
    features = tree.encoding.features
    for node, path in reachable_nodes(tree.structure):
        counts = tree.node_counts[node - 1]
        j = int(tree.structure.feature[node - 1])
        attrs = []
        if j >= 0:
            head = f"<B>{html_text(features[j].label)}</B>"
            sub = _rows(int(counts.sum()))
        else:
            k = int(tree.structure.prediction[node - 1])
            label = html_text(tree.classes[k])
            head = f"<B>{label}</B>"
            total = int(counts.sum())
            share = f", {100.0 * counts[k] / total:.0f}% {label}" if total else ""
            sub = _rows(total) + share
            attrs.append(f'fillcolor="{tint(colours[k], 0.45)}"')
        rows = [head, f'<FONT POINT-SIZE="9">{sub}</FONT>']
        if counts.sum() > 0:
            rows.append(_bar(counts, colours))
            rows.append(f'<FONT POINT-SIZE="9">{_mix(tree.classes, counts)}</FONT>')
        if node in group_mix:
            rows.append(f'<FONT POINT-SIZE="9">{_groups(group_mix[node])}</FONT>')
        if node in changed:
            note = changed[node]
            rows.append(f'<FONT POINT-SIZE="9"><B>not the majority ({html_text(note.majority)})</B></FONT>')
            rows.append(f'<FONT POINT-SIZE="8">{html_text(changed_short(note))}</FONT>')
            attrs.append('style="rounded,filled,dashed"')
        if node in marked:
            attrs.append(f'penwidth=2.5, color="{STRONG}"')
        table = "".join(f"<TR><TD>{r}</TD></TR>" for r in rows)
        label = f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">{table}</TABLE>>'
        lines.append(f"  n{node} [label={label}{''.join(', ' + a for a in attrs)}];")
    for node, path in reachable_nodes(tree.structure):
        if tree.structure.feature[node - 1] < 0:
            continue
        for child, text in ((2 * node + 1, "yes"), (2 * node, "no")):
            heavy = f', penwidth=2.5, color="{STRONG}"' if node in marked and child in marked else ""
            lines.append(f'  n{node} -> n{child} [label="{text}"{heavy}];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def changed_short(note) -> str:
    """The reason of a changed leaf, short enough for a box: what relabelling breaks, or the objective's word."""
    if note.breaks:
        return "keeps " + ", ".join(b.replace(" difference", "") for b in note.breaks)
    return note.reason.split(":")[0]


def _rows(n: int) -> str:
    return count_of(n, "row")


def _bar(counts: np.ndarray, colours: list[str]) -> str:
    """A thin bar split in proportion to the class counts."""
    total = counts.sum()
    widths = np.floor(BAR_WIDTH * counts / total).astype(int)
    widths[counts > 0] = np.maximum(widths[counts > 0], 1)
    widths[int(np.argmax(counts))] += BAR_WIDTH - widths.sum()
    cells = "".join(
        f'<TD WIDTH="{w}" HEIGHT="7" FIXEDSIZE="TRUE" BGCOLOR="{colours[k]}"></TD>'
        for k, w in enumerate(widths)
        if w > 0
    )
    return (
        f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0" FIXEDSIZE="TRUE" '
        f'WIDTH="{BAR_WIDTH}" HEIGHT="7"><TR>{cells}</TR></TABLE>'
    )


def _mix(classes: tuple, counts: np.ndarray) -> str:
    return html_text(class_counts(classes, counts))


def _groups(mix: Mapping) -> str:
    total = sum(mix.values())
    parts = []
    for group, n in mix.items():
        share = f" ({100.0 * n / total:.0f}%)" if total else ""
        parts.append(f"{html_text(group)}: {fmt(n)}{share}")
    return "groups: " + " · ".join(parts)
