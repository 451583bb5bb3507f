"""A tree as Graphviz DOT text (no rendering dependency).

Each node shows its test (or prediction), how many training rows reach it
and their class mix, as text and as a bar in the class colours; leaves are
filled with a tint of the predicted class's colour.  The "yes" edge (the
test holds, binary value 1) is drawn on the left.  Every piece of user text
goes through :func:`html_text`, so any column name, level or class label is
safe in the HTML-like labels.

Two looks share the code (:class:`DotStyle`): :data:`EXPORT` for the files a
user downloads, and :data:`SCREEN` for the dashboard, where Graphviz lays the
tree out in the browser; the screen's look names each branch by its answer
("≤ 7.5", "> 7.5"), keeps every text at 9 pt or more (12 px at natural size)
and can draw a subtree collapsed into one box.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Collection, Literal, Mapping, Sequence

import numpy as np

from strongtree_core.tree.rules import reachable_nodes
from strongtree_core.words import (
    TOOLTIP_LIMIT,
    class_counts,
    count_of,
    cut_text,
    drawn_test,
    drawn_text,
    fmt,
    label_text,
    shown_name,
)

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


@dataclass(frozen=True)
class DotStyle:
    """How a DOT drawing looks: font sizes (points), the class bar's width, spacing and branch labels.

    Attributes
    ----------
    head, text, note, edge : float
        Font sizes (pt) of a box's heading, its details, a changed leaf's reason and the branch labels.
    bar_width : int
        Width of the class bar (pt).
    nodesep, ranksep : float
        Graphviz's space between boxes of one level and between levels (inches).
    answers : bool
        Branches labelled by their answer ("≤ 7.5" / "> 7.5") and questions ending in "?";
        else "yes" / "no" under the test.
    predict_word : bool
        Leaves read "predict <class>" instead of the class alone.
    rankdir : {"TB", "LR"}
        Root on top (TB) or on the left (LR).
    """

    head: float = 11.0
    text: float = 9.0
    note: float = 8.0
    edge: float = 10.0
    bar_width: int = 96
    nodesep: float = 0.3
    ranksep: float = 0.45
    answers: bool = False
    predict_word: bool = False
    rankdir: Literal["TB", "LR"] = "TB"

    @property
    def font_sizes(self) -> tuple[float, ...]:
        """Every font size the drawing uses (pt), smallest first."""
        return tuple(sorted({self.head, self.text, self.note, self.edge}))


#: The look of downloaded DOT, SVG and PNG files.
EXPORT = DotStyle()
#: The dashboard's look: nothing under 9 pt, so at natural size (1 pt = 4/3 px) every text is 12 px or more.
SCREEN = DotStyle(head=11.0, text=9.0, note=9.0, edge=9.0, bar_width=72, nodesep=0.22, ranksep=0.42,
                  answers=True, predict_word=True)
#: Fill of a box that stands for a collapsed subtree.
COLLAPSED_FILL = "#E9EDF2"


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
    control characters (newlines, tabs, ...) written out as visible escapes, an empty label
    as "(empty)" (:func:`~strongtree_core.words.label_text`)."""
    return "".join(_ENTITIES.get(ch, ch) for ch in label_text(text))


_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}


def tooltip_text(value) -> str:
    """The text of a label shown cut, for its tooltip: visible, and itself cut at
    :data:`~strongtree_core.words.TOOLTIP_LIMIT` characters."""
    return cut_text(label_text(value), TOOLTIP_LIMIT)


def dot_string(text: str) -> str:
    """``text`` as a quoted DOT string (a tooltip): on one line, backslashes and quotes escaped."""
    return '"' + label_text(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def tree_to_dot(
    tree: "FittedTree",
    *,
    highlight: Sequence[int] = (),
    group_mix: Mapping[int, Mapping] | None = None,
    style: DotStyle = EXPORT,
    collapsed: Collection[int] = (),
    compact: bool = False,
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
    style : DotStyle
        :data:`EXPORT` (default) or :data:`SCREEN`.
    collapsed : collection of int
        Branching nodes whose subtree is drawn as one grey box (its question, rows,
        class mix and how many questions and leaves it holds); nodes below them are left out.
    compact : bool
        Leave out the line of counts per class (the bar still shows the mix).

    A leaf that does not predict its rows' majority class is drawn dashed, with
    "not the majority (<class>)" and what relabelling it would break.
    """
    colours = class_colours(tree.n_classes)
    marked = {int(n) for n in highlight}
    group_mix = group_mix or {}
    changed = {c.node: c for c in getattr(tree, "changed_leaves", ())}
    folded = {int(n) for n in collapsed if tree.structure.feature[int(n) - 1] >= 0} if collapsed else set()
    shown = [(node, path) for node, path in reachable_nodes(tree.structure)
             if not any(parent in folded for parent, _ in path)]
    lines = [
        "digraph tree {",
        f"  graph [ordering=out, {'rankdir=LR, ' if style.rankdir == 'LR' else ''}nodesep={style.nodesep:g}, "
        f'ranksep={style.ranksep:g}, fontname="{FONT}"];',
        f'  node [shape=box, style="rounded,filled", fillcolor="#FFFFFF", color="{LINE}", '
        f'fontname="{FONT}", fontsize={style.head:g}, margin="0.1,0.05"];',
        f'  edge [fontname="{FONT}", fontsize={style.edge:g}, color="{LINE}", arrowsize=0.7];',
    ]
    features = tree.encoding.features
    small = f'<FONT POINT-SIZE="{style.text:g}">'
    note_font = f'<FONT POINT-SIZE="{style.note:g}">'
    for node, path in shown:
        counts = tree.node_counts[node - 1]
        j = int(tree.structure.feature[node - 1])
        attrs = []
        if j >= 0:
            full = features[j].label
            cut = drawn_test(full, features[j].source)
            question = cut + ("?" if style.answers else "")
            head = f"<B>{html_text(question)}</B>"
            sub = _rows(int(counts.sum()))
        else:
            k = int(tree.structure.prediction[node - 1])
            full = tree.classes[k]
            cut = drawn_text(full)
            label = html_text(cut)
            head = f"<B>{'predict ' if style.predict_word else ''}{label}</B>"
            total = int(counts.sum())
            share = f", {100.0 * counts[k] / total:.0f}% {label}" if total else ""
            sub = _rows(total) + share
            attrs.append(f'fillcolor="{tint(colours[k], 0.45)}"')
        rows = [head, f"{small}{sub}</FONT>"]
        if counts.sum() > 0:
            rows.append(_bar(counts, colours, style.bar_width))
            if not compact:
                rows.append(f"{small}{_mix(tree.classes, counts)}</FONT>")
        if node in group_mix:
            rows.append(f"{small}{_groups(group_mix[node])}</FONT>")
        if node in folded:
            questions, leaves = _below(tree, node)
            # Two short lines: a collapsed box no wider than an open one, so the level fits the panel.
            rows.append(f"{small}<I>collapsed: {count_of(questions, 'question')}</I></FONT>")
            rows.append(f"{small}<I>and {count_of(leaves, 'leaf', 'leaves')} below</I></FONT>")
            attrs.append(f'fillcolor="{COLLAPSED_FILL}", style="rounded,filled,bold"')
        if node in changed:
            note = changed[node]
            rows.append(f"{small}<B>not the majority ({html_text(drawn_text(note.majority))})</B></FONT>")
            rows.append(f"{note_font}{html_text(changed_short(note))}</FONT>")
            attrs.append('style="rounded,filled,dashed"')
        if node in marked:
            attrs.append(f'penwidth=2.5, color="{STRONG}"')
        if cut != label_text(full):  # the drawing shows it cut: the whole text is the box's tooltip
            attrs.append(f"tooltip={dot_string(tooltip_text(full))}")
        table = "".join(f"<TR><TD>{r}</TD></TR>" for r in rows)
        label = f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">{table}</TABLE>>'
        lines.append(f"  n{node} [label={label}{''.join(', ' + a for a in attrs)}];")
    for node, path in shown:
        j = int(tree.structure.feature[node - 1])
        if j < 0 or node in folded:
            continue
        words = edge_words(features[j].label, features[j].negated_label, features[j].source) if style.answers \
            else ("yes", "no")
        for child, text in ((2 * node + 1, words[0]), (2 * node, words[1])):
            heavy = f', penwidth=2.5, color="{STRONG}"' if node in marked and child in marked else ""
            label = f"<{html_text(text)}>" if style.answers else f'"{text}"'  # a test's words are user text
            lines.append(f"  n{node} -> n{child} [label={label}{heavy}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def edge_words(label: str, negated: str, source: Any) -> tuple[str, str]:
    """Short texts for the two branches of a test: "≤ 70.5" / "> 70.5", "= yes" / "≠ yes";
    the whole test when it does not start with its column's name.  Each is cut for a drawing
    (:func:`drawn_text`)."""
    prefix = f"{shown_name(source)} "
    if label.startswith(prefix) and negated.startswith(prefix) and label != prefix.strip():
        return drawn_text(label[len(prefix):]), drawn_text(negated[len(prefix):])
    return drawn_text(label), drawn_text(negated)


def _below(tree: "FittedTree", node: int) -> tuple[int, int]:
    """Questions and leaves in the subtree under ``node`` (``node`` itself not counted)."""
    questions = leaves = 0
    stack = [2 * node, 2 * node + 1]
    while stack:
        n = stack.pop()
        if tree.structure.feature[n - 1] >= 0:
            questions += 1
            stack += [2 * n, 2 * n + 1]
        else:
            leaves += 1
    return questions, leaves


def changed_short(note) -> str:
    """The reason of a changed leaf, short enough for a box: what relabelling breaks, or the objective's word."""
    if note.breaks:
        return "keeps " + ", ".join(b.replace(" difference", "") for b in note.breaks)
    return note.reason.split(":")[0]


def _rows(n: int) -> str:
    return count_of(n, "row")


def _bar(counts: np.ndarray, colours: list[str], width: int = BAR_WIDTH) -> str:
    """A thin bar split in proportion to the class counts."""
    total = counts.sum()
    widths = np.floor(width * counts / total).astype(int)
    widths[counts > 0] = np.maximum(widths[counts > 0], 1)
    widths[int(np.argmax(counts))] += width - widths.sum()
    cells = "".join(
        f'<TD WIDTH="{w}" HEIGHT="7" FIXEDSIZE="TRUE" BGCOLOR="{colours[k]}"></TD>'
        for k, w in enumerate(widths)
        if w > 0
    )
    return (
        f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0" FIXEDSIZE="TRUE" '
        f'WIDTH="{width}" HEIGHT="7"><TR>{cells}</TR></TABLE>'
    )


def _mix(classes: tuple, counts: np.ndarray) -> str:
    return html_text(class_counts([drawn_text(c) for c in classes], counts))


def _groups(mix: Mapping) -> str:
    total = sum(mix.values())
    parts = []
    for group, n in mix.items():
        share = f" ({100.0 * n / total:.0f}%)" if total else ""
        parts.append(f"{html_text(drawn_text(group))}: {fmt(n)}{share}")
    return "groups: " + " · ".join(parts)
