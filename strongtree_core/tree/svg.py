"""A tree drawn as SVG by its own layout (no layout engine, no rendering dependency).

Graphviz's Streamlit chart fits a tree to its column and forces its own small
font on every label, so a depth-3 tree read at 5-7 px.  Here the layout is
computed in Python (a binary tree needs no layout engine): every box is sized
from its text, text is 13-14 px at 100 %, and the drawing keeps its natural
size.  The text widths come from the dashboard's font (Source Sans), measured
once in the browser and kept in :data:`_REGULAR` and :data:`_BOLD`; where that
font may be missing (a report opened anywhere), ``fit_text`` gives every line
its measured length (``textLength``), so another font is squeezed or spread to
fit its box instead of spilling out of it.

Every user string (column names, levels, class and group labels) is escaped
for HTML and SVG by :func:`strongtree_core.tree.dot.html_text`; the drawing has
no links and no images, so it fetches nothing.  The dashboard's panel, legend
and zoom are in :mod:`strongtree_studio.views.tree_view`; the HTML report draws the
same tree with it when Graphviz's ``dot`` is not installed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from strongtree_core.tree.dot import (
    changed_short,
    class_colours,
    drawn_test,
    drawn_text,
    edge_words,
    html_text,
    tint,
    tooltip_text,
)
from strongtree_core.words import class_counts, count_of, label_text

if TYPE_CHECKING:  # pragma: no cover
    from strongtree_core.tree.fitted import FittedTree

#: Font sizes (px at 100 %): a node's heading and its details.
HEAD_SIZE = 14.0
TEXT_SIZE = 13.0
#: Widest text line in a box before it wraps (px).
MAX_LINE = 230.0
PAD_X, PAD_Y, LINE_GAP = 10.0, 7.0, 4.0
BAR_HEIGHT = 8.0
#: Space between sibling boxes and between levels (px); RANK_GAP between boxes stacked left to right.
SIBLING_GAP, LEVEL_GAP, RANK_GAP = 18.0, 46.0, 12.0
#: Widest top-down drawing (px) before "auto" lays a tree out left to right.
MAX_DOWN_WIDTH = 900.0
MIN_BOX = 96.0
LINE_COLOUR, STRONG, MUTED = "#8a94a0", "#1b2631", "#4a5563"
FONT = '"Source Sans", "Source Sans Pro", sans-serif'

# Advance widths of ASCII 32..126 in Source Sans (em), regular and bold, measured in Chromium.
_REGULAR = (
    0.2, 0.289, 0.426, 0.497, 0.497, 0.824, 0.609, 0.249, 0.303, 0.303, 0.418, 0.497, 0.249, 0.311, 0.249, 0.35,
    0.497, 0.497, 0.497, 0.497, 0.497, 0.497, 0.497, 0.497, 0.497, 0.497, 0.249, 0.249, 0.497, 0.497, 0.497, 0.425,
    0.847, 0.543, 0.588, 0.571, 0.615, 0.527, 0.494, 0.617, 0.652, 0.263, 0.479, 0.579, 0.486, 0.727, 0.647, 0.664,
    0.566, 0.664, 0.569, 0.534, 0.536, 0.645, 0.515, 0.786, 0.513, 0.476, 0.539, 0.303, 0.35, 0.303, 0.497, 0.5,
    0.542, 0.504, 0.553, 0.456, 0.555, 0.496, 0.292, 0.504, 0.544, 0.246, 0.247, 0.495, 0.255, 0.829, 0.547, 0.542,
    0.555, 0.555, 0.347, 0.419, 0.338, 0.544, 0.467, 0.719, 0.446, 0.467, 0.425, 0.303, 0.241, 0.303, 0.497,
)
_BOLD = (
    0.2, 0.34, 0.537, 0.528, 0.528, 0.857, 0.667, 0.3, 0.344, 0.344, 0.457, 0.528, 0.3, 0.332, 0.3, 0.339,
    0.528, 0.528, 0.528, 0.528, 0.528, 0.528, 0.528, 0.528, 0.528, 0.528, 0.3, 0.3, 0.528, 0.528, 0.528, 0.463,
    0.902, 0.573, 0.605, 0.582, 0.635, 0.548, 0.524, 0.638, 0.674, 0.301, 0.509, 0.614, 0.518, 0.762, 0.665, 0.684,
    0.596, 0.684, 0.613, 0.556, 0.556, 0.665, 0.556, 0.813, 0.567, 0.525, 0.541, 0.344, 0.339, 0.344, 0.528, 0.5,
    0.555, 0.527, 0.573, 0.468, 0.573, 0.518, 0.341, 0.534, 0.571, 0.276, 0.278, 0.548, 0.286, 0.857, 0.572, 0.555,
    0.573, 0.573, 0.398, 0.443, 0.383, 0.568, 0.523, 0.776, 0.514, 0.521, 0.46, 0.344, 0.268, 0.344, 0.528,
)


def _ems(text: str, bold: bool) -> list[float]:
    """Advance width of each character of ``text`` in em (other scripts: a full em per wide character)."""
    table = _BOLD if bold else _REGULAR
    return [table[code - 32] if 32 <= (code := ord(ch)) < 127 else (1.0 if code >= 0x2E80 else 0.62)
            for ch in text]


def text_width(text: str, size: float, bold: bool = False) -> float:
    """Width of ``text`` in px at ``size`` px (other scripts: a full em per wide character)."""
    return sum(_ems(text, bold)) * size


def wrap(text: str, size: float, bold: bool = False, limit: float = MAX_LINE) -> list[str]:
    """``text`` in lines no wider than ``limit``: items separated by " · " stay whole where they
    fit (the separator ends the line it breaks), then words, then characters.

    Each character's width is looked up once, so the time grows with the length of the text
    (a 20,000-character word is cut in one pass, not measured again for every cut)."""
    ems = _ems(text, bold)
    room = limit / size
    if sum(ems) <= room:
        return [text]
    space = (_BOLD if bold else _REGULAR)[0]
    words: list[tuple[str, float]] = []  # (text, width in em)
    items = text.split(" · ")
    at = 0
    for i, item in enumerate(items):  # an item too wide for a line is cut into its words, a word into characters
        piece = item + (" ·" if i < len(items) - 1 else "")
        piece_ems = ems[at : at + len(piece)]
        at += len(item) + 3
        width = sum(piece_ems)
        if width <= room:
            words.append((piece, width))
            continue
        start = 0
        for word in piece.split(" "):
            word_ems = piece_ems[start : start + len(word)]
            start += len(word) + 1
            begin, used = 0, 0.0
            for k, w in enumerate(word_ems):
                if used + w > room and k > begin:
                    words.append((word[begin:k], used))
                    begin, used = k, 0.0
                used += w
            words.append((word[begin:], used))
    lines: list[str] = []
    line, line_width = "", 0.0
    for word, width in words:
        if line and line_width + space + width > room:
            lines.append(line)
            line, line_width = word, width
        elif line:
            line, line_width = f"{line} {word}", line_width + space + width
        else:
            line, line_width = word, width
    if line:
        lines.append(line)
    return lines


@dataclass(frozen=True)
class Line:
    text: str
    size: float
    bold: bool = False
    colour: str = STRONG


@dataclass
class Box:
    """One node: its text lines, class counts (for the bar) and its place."""

    node: int
    lines: list[Line]
    counts: np.ndarray
    leaf: bool
    fill: str
    full: str = ""  # the whole text of a label the box shows cut (its tooltip), else ""
    width: float = 0.0
    height: float = 0.0
    x: float = 0.0  # centre
    y: float = 0.0  # top
    changed: bool = False  # a leaf predicting against its rows' majority (drawn dashed)


def _counts_line(classes: Sequence, counts: np.ndarray) -> str:
    return class_counts(classes, counts)


def _groups_line(mix: Mapping[str, float]) -> str:
    total = sum(mix.values())
    return " · ".join(f"{drawn_text(g)}: {100.0 * n / total:.0f}%" if total else f"{drawn_text(g)}: 0"
                      for g, n in mix.items())


def _boxes(tree: FittedTree, group_mix: Mapping[int, Mapping[str, float]] | None, compact: bool) -> dict[int, Box]:
    colours = class_colours(tree.n_classes)
    features = tree.encoding.features
    classes = [drawn_text(c) for c in tree.classes]
    boxes: dict[int, Box] = {}
    changed = {c.node: c for c in getattr(tree, "changed_leaves", ())}
    stack = [1]
    while stack:
        node = stack.pop()
        counts = np.asarray(tree.node_counts[node - 1])
        total = int(counts.sum())
        j = int(tree.structure.feature[node - 1])
        lines: list[Line] = []
        full = label_text(features[j].label if j >= 0 else tree.classes[int(tree.structure.prediction[node - 1])])
        if j >= 0:
            stack += [2 * node, 2 * node + 1]
            shown = drawn_test(features[j].label, features[j].source)
            lines += [Line(t, HEAD_SIZE, True) for t in wrap(shown + "?", HEAD_SIZE, True)]
            lines.append(Line(count_of(total, "row"), TEXT_SIZE, colour=MUTED))
            fill = "#ffffff"
        else:
            k = int(tree.structure.prediction[node - 1])
            shown = classes[k]
            lines += [Line(t, HEAD_SIZE, True) for t in wrap(f"predict {classes[k]}", HEAD_SIZE, True)]
            share = f" · {100.0 * counts[k] / total:.0f}% {classes[k]}" if total else ""
            lines += [Line(t, TEXT_SIZE, colour=MUTED) for t in wrap(f"{count_of(total, 'row')}{share}", TEXT_SIZE)]
            fill = tint(colours[k], 0.35)
            note = changed.get(node)
            if note is not None:
                lines += [Line(t, TEXT_SIZE, colour=STRONG)
                          for t in wrap(f"not the majority ({drawn_text(note.majority)})", TEXT_SIZE, True)]
                lines += [Line(t, TEXT_SIZE, colour=MUTED) for t in wrap(changed_short(note), TEXT_SIZE)]
        if total and not compact:
            lines += [Line(t, TEXT_SIZE, colour=MUTED) for t in wrap(_counts_line(classes, counts), TEXT_SIZE)]
        if group_mix and node in group_mix:
            lines += [Line(t, TEXT_SIZE, colour=MUTED) for t in wrap("groups: " + _groups_line(group_mix[node]), TEXT_SIZE)]
        box = Box(node, lines, counts, j < 0, fill, full="" if shown == full else tooltip_text(full),
                  changed=node in changed)
        box.width = max(MIN_BOX, max(text_width(l.text, l.size, l.bold) for l in lines) + 2 * PAD_X)
        bar = BAR_HEIGHT + LINE_GAP if total else 0.0
        box.height = 2 * PAD_Y + sum(l.size * 1.25 for l in lines) + bar
        boxes[node] = box
    return boxes


def _depths(boxes: dict[int, Box]) -> dict[int, int]:
    return {n: int(np.log2(n)) for n in boxes}


def _place_down(boxes: dict[int, Box], edge_label_width: dict[int, float]) -> tuple[float, float]:
    """Top-down tidy layout: each subtree gets the width of its widest level; returns the drawing's size."""

    def span(node: int) -> float:
        box = boxes[node]
        if box.leaf:
            return box.width
        left, right = span(2 * node + 1), span(2 * node)
        return max(box.width, left + right + SIBLING_GAP, 2 * edge_label_width.get(node, 0.0) + SIBLING_GAP)

    depth_of = _depths(boxes)
    level_height: dict[int, float] = {}
    for n, box in boxes.items():
        level_height[depth_of[n]] = max(level_height.get(depth_of[n], 0.0), box.height)
    tops = {0: 0.0}
    for level in range(1, max(level_height) + 1):
        tops[level] = tops[level - 1] + level_height[level - 1] + LEVEL_GAP

    def put(node: int, left: float) -> None:
        box = boxes[node]
        width = span(node)
        box.y = tops[depth_of[node]]
        if box.leaf:
            box.x = left + width / 2
            return
        yes, no = 2 * node + 1, 2 * node
        used = span(yes) + SIBLING_GAP + span(no)
        start = left + (width - used) / 2
        put(yes, start)
        put(no, start + span(yes) + SIBLING_GAP)
        box.x = (boxes[yes].x + boxes[no].x) / 2

    put(1, 0.0)
    width = max(b.x + b.width / 2 for b in boxes.values())
    height = max(b.y + b.height for b in boxes.values())
    return width, height


def _place_right(boxes: dict[int, Box], edge_label_width: dict[int, float]) -> tuple[float, float]:
    """Left-to-right layout: one column per level (as wide as its widest box), the "yes"
    branch above the "no" branch, each box level with the top of its subtree.
    Box ``x`` is the centre and ``y`` the top, as in the top-down layout."""
    depth_of = _depths(boxes)
    widths: dict[int, float] = {}
    labels: dict[int, float] = {}
    for n, box in boxes.items():
        widths[depth_of[n]] = max(widths.get(depth_of[n], 0.0), box.width)
        if n in edge_label_width:
            labels[depth_of[n]] = max(labels.get(depth_of[n], 0.0), edge_label_width[n])
    lefts = {0: 0.0}
    for level in range(1, max(widths) + 1):
        gap = max(LEVEL_GAP, labels.get(level - 1, 0.0) + 14.0)
        lefts[level] = lefts[level - 1] + widths[level - 1] + gap

    def span(node: int) -> float:
        box = boxes[node]
        if box.leaf:
            return box.height
        return max(box.height, span(2 * node + 1) + RANK_GAP + span(2 * node))

    def put(node: int, top: float) -> None:
        box = boxes[node]
        box.x = lefts[depth_of[node]] + box.width / 2
        if box.leaf:
            box.y = top
            return
        yes, no = 2 * node + 1, 2 * node
        start = top
        put(yes, start)
        put(no, start + span(yes) + RANK_GAP)
        box.y = top  # at the top of its subtree: the root is in view when the panel opens

    put(1, 0.0)
    width = max(b.x + b.width / 2 for b in boxes.values())
    height = max(b.y + b.height for b in boxes.values())
    return width, height


def tree_svg(
    tree: FittedTree,
    *,
    highlight: Sequence[int] = (),
    group_mix: Mapping[int, Mapping[str, float]] | None = None,
    zoom: float = 1.0,
    compact: bool = False,
    orientation: str = "auto",
    fit_text: bool = False,
    font: str = FONT,
) -> str:
    """The tree as one line of SVG at ``zoom`` times its natural size.

    ``highlight`` lists nodes drawn with a heavy outline (a row's path);
    ``group_mix`` adds each node's protected groups; ``compact`` leaves out the
    class counts line (the bar still shows the mix).  ``orientation`` is
    "down" (root on top), "right" (root on the left, levels as columns) or
    "auto": down when that drawing is at most :data:`MAX_DOWN_WIDTH` wide, else
    right, which fits a depth-3 tree into a projector's width at full size.
    ``fit_text`` sets every line's length to its measured width (for a page
    that may not have the font, see the module); ``font`` is the CSS font list.
    """
    colours = class_colours(tree.n_classes)
    features = tree.encoding.features
    boxes = _boxes(tree, group_mix, compact)
    answers: dict[int, tuple[str, str]] = {}
    label_width: dict[int, float] = {}
    for node, box in boxes.items():
        j = int(tree.structure.feature[node - 1])
        if j >= 0:
            f = features[j]
            answers[node] = edge_words(f.label, f.negated_label, f.source)
            label_width[node] = max(text_width(t, TEXT_SIZE) for t in answers[node]) + 12
    width, height = _place_down(boxes, label_width)
    right = orientation == "right" or (orientation == "auto" and width > MAX_DOWN_WIDTH)
    if right:
        width, height = _place_right(boxes, label_width)
    margin = 4.0
    marked = {int(n) for n in highlight}
    parts: list[str] = []
    for node, box in boxes.items():  # edges first, under the boxes
        if box.leaf:
            continue
        for child, answer in ((2 * node + 1, answers[node][0]), (2 * node, answers[node][1])):
            c = boxes[child]
            heavy = node in marked and child in marked
            stroke = f'stroke="{STRONG}" stroke-width="3"' if heavy else f'stroke="{LINE_COLOUR}" stroke-width="1.3"'
            if right:
                x1, y1, x2, y2 = box.x + box.width / 2, box.y + box.height / 2, c.x - c.width / 2, c.y + c.height / 2
                mid = (x1 + x2) / 2
                curve = f"M{x1:.1f},{y1:.1f} C{mid:.1f},{y1:.1f} {mid:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"
            else:
                x1, y1, x2, y2 = box.x, box.y + box.height, c.x, c.y
                mid = (y1 + y2) / 2
                curve = f"M{x1:.1f},{y1:.1f} C{x1:.1f},{mid:.1f} {x2:.1f},{mid:.1f} {x2:.1f},{y2:.1f}"
            parts.append(f'<path d="{curve}" fill="none" {stroke}/>')
            lx, ly = (x1 + x2) / 2, (y1 + y2) / 2
            w = text_width(answer, TEXT_SIZE) + 10
            parts.append(f'<rect x="{lx - w / 2:.1f}" y="{ly - 10:.1f}" width="{w:.1f}" height="19" rx="9" '
                         f'fill="#ffffff" stroke="{LINE_COLOUR}" stroke-width="0.8"/>')
            parts.append(f'<text class="edge" x="{lx:.1f}" y="{ly + 4.5:.1f}" text-anchor="middle" '
                         f'font-size="{TEXT_SIZE:g}" fill="{MUTED}"{_fit(answer, TEXT_SIZE, False, fit_text)}>'
                         f'{html_text(answer)}</text>')
    for node, box in boxes.items():
        left = box.x - box.width / 2
        heavy = node in marked
        stroke = f'stroke="{STRONG}" stroke-width="3"' if heavy else f'stroke="{LINE_COLOUR}" stroke-width="1"'
        if box.changed:
            stroke += ' stroke-dasharray="5 3"'
        tooltip = f"<title>{html_text(box.full)}</title>" if box.full else ""  # a label shown cut: its whole text
        parts.append(f'<g class="node" data-node="{node}">{tooltip}<rect x="{left:.1f}" y="{box.y:.1f}" '
                     f'width="{box.width:.1f}" height="{box.height:.1f}" rx="7" fill="{box.fill}" {stroke}/>')
        y = box.y + PAD_Y
        total = box.counts.sum()
        for i, line in enumerate(box.lines):
            y += line.size * 1.25
            weight = ' font-weight="700"' if line.bold else ""
            parts.append(f'<text x="{box.x:.1f}" y="{y - line.size * 0.3:.1f}" text-anchor="middle" '
                         f'font-size="{line.size:g}"{weight} fill="{line.colour}"'
                         f'{_fit(line.text, line.size, line.bold, fit_text)}>{html_text(line.text)}</text>')
            last_head = line.bold and (i + 1 == len(box.lines) or not box.lines[i + 1].bold)
            if total and last_head:  # the class bar under the heading
                y += LINE_GAP
                x = left + PAD_X
                inner = box.width - 2 * PAD_X
                for k, n in enumerate(box.counts):
                    if n:
                        w = inner * n / total
                        parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{BAR_HEIGHT:g}" '
                                     f'fill="{colours[k]}"/>')
                        x += w
                y += BAR_HEIGHT
        parts.append("</g>")
    w, h = width + 2 * margin, height + 2 * margin
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="strongtree" role="img" aria-label="decision tree" '
        f'width="{w * zoom:.0f}" height="{h * zoom:.0f}" viewBox="{-margin:.1f} {-margin:.1f} {w:.1f} {h:.1f}" '
        f"style=\"font-family: {html_text(font)}; display: block; margin: 0 auto;\">{''.join(parts)}</svg>"
    )




def _fit(text: str, size: float, bold: bool, fit: bool) -> str:
    """The ``textLength`` attribute that holds a line to its measured width ("" unless ``fit``)."""
    if not fit:
        return ""
    return f' textLength="{text_width(text, size, bold):.1f}" lengthAdjust="spacingAndGlyphs"'
