"""The tree drawn for the dashboard, as data: the DOT text Graphviz lays out in the
browser (:func:`screen_dot`, the library's :data:`strongtree_core.tree.dot.SCREEN`
look), the CSS of its panel at each size (:func:`chart_css`), the subtrees a user
may collapse, a legend, and the path of one row in words.

Streamlit's Graphviz chart lays the DOT out with its bundled WebAssembly build
(no system package, nothing fetched) and would print every label in one small
font; :func:`chart_css` gives each text back the size the layout was made for.
At :data:`SIZES` ``"fit"`` the whole tree is scaled into the panel; at
``"natural"`` (the presentation size) 1 pt of the layout is 4/3 px, so the
smallest text (9 pt) reads at 12 px, and the panel scrolls with visible
scrollbars; ``"large"`` is one and a half times that.  Collapsing subtrees
(:func:`collapsible_nodes`) keeps a deep tree legible at those sizes.  The page
side is :mod:`strongtree_studio.page.tree_chart`.

Every user string in the DOT is escaped for Graphviz's HTML-like labels by
:func:`strongtree_core.tree.dot.html_text`; in the legend, by
:func:`strongtree_studio.views.markup.html_text`.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from typing import Any, Collection, Mapping, Sequence

import numpy as np
import pandas as pd

from strongtree_core.tree import FittedTree
from strongtree_core.tree.dot import COLLAPSED_FILL, SCREEN, class_colours, tree_to_dot
from strongtree_core.tree.svg import (  # noqa: F401  (the drawing and its measures, used by the pages and tests)
    FONT,
    HEAD_SIZE,
    MAX_LINE,
    MUTED,
    STRONG,
    TEXT_SIZE,
    edge_words,
    text_width,
    tree_svg,
    wrap,
)
from strongtree_core.words import drawn_text
from strongtree_studio.views.markup import html_text
from strongtree_studio.views.status_words import count_of, fmt

#: Sizes of a Graphviz tree panel, by key: the words on the size control.
SIZES = {"fit": "Fit the panel", "natural": "Presentation", "large": "Large"}
#: How much larger than natural size each size draws (None: scaled into the panel).
SIZE_ZOOM = {"fit": None, "natural": 1.0, "large": 1.5}
#: Pixels per point of a Graphviz layout at natural size (its SVG is measured in points).
PX_PER_PT = 4 / 3
#: Smallest text of the screen's drawing at the presentation size (px).
SMALLEST_TEXT = min(SCREEN.font_sizes) * PX_PER_PT
#: Tallest a tree panel may be, as a share of the window's height (the page scrolls past it).
PANEL_HEIGHT = "72vh"
#: The CSS class prefix of tree panels (Streamlit gives a keyed container the class ``st-key-<key>``).
PANEL_KEY = "stree"
#: Smallest text a tree shows by default (px): "Fit the panel" opens as many levels of questions as
#: keep every text this large in :data:`PANEL_1280` (the rest is collapsed, and can be opened).
READABLE_TEXT = 10.0
#: The largest drawing (px) a "Fit the panel" tree panel holds on the Tree page at a projector's
#: 1280x720 (measured in Chromium: 802 px wide; 72 % of 720 px high).  A larger window has a
#: larger panel, so a tree readable here is readable there.
PANEL_1280 = (802.0, 518.0)
#: What the Tree page says above a tree it opened only partly (see :func:`readable_levels`).
AUTO_COLLAPSED = ("{open} of {deepest} levels of questions open, so that every text reads at 10 px or more on a "
                  "1280x720 screen: each grey box holds a subtree. Open it from **Collapsed subtrees**, or open "
                  "every level and choose **Presentation** to scroll.")
#: What each size's panel says above the drawing.
SIZE_NOTES = {
    "fit": "The whole tree, scaled into the panel. For larger text choose Presentation, or collapse subtrees.",
    "natural": "Presentation size (every text 12 px or larger). Where the tree is larger than the panel, "
               "the panel scrolls: use its scrollbars, or shift and the mouse wheel to move sideways.",
    "large": "One and a half times the presentation size. Where the tree is larger than the panel, the panel "
             "scrolls: use its scrollbars, or shift and the mouse wheel to move sideways.",
}
#: What "Fit the panel" says on a page with no control to collapse subtrees (Solve): where they are.
FIT_NOTE_NO_COLLAPSE = ("The whole tree, scaled into the panel. For larger text choose Presentation; the Tree page "
                        "collapses subtrees.")


def panel_key(size: str, name: str) -> str:
    """The key of the container that holds a tree drawn at ``size`` (its CSS class is ``st-key-<key>``)."""
    return f"{PANEL_KEY}-{size}-{name}"


def chart_css() -> str:
    """CSS for every Graphviz tree panel (inside a ``<style>``): each text at the size the layout
    was made for, the panel's frame, and each size's scaling and scrolling.

    A panel that scrolls shows a shadow on each side where more of the tree lies
    (backgrounds that scroll with the content cover the shadows at the ends), so a
    cut-off tree says so even where the system hides scrollbars until they are used.
    """
    panel = f'[class*="st-key-{PANEL_KEY}-"] [data-testid="stGraphVizChart"]'
    rules = [f'{panel} text[font-size="{size:.2f}"] {{ font-size: {size:g}px; }}' for size in SCREEN.font_sizes]
    rules += [
        f"{panel} {{ border: 1px solid #dde3ea; border-radius: 8px; padding: 8px; background-color: #ffffff; }}",
        f"{panel} svg {{ display: block; margin: 0 auto; }}",
        f"{panel} svg g.graph > polygon {{ fill: transparent; }}",  # the layout's white sheet would hide the shadows
        f'[class*="st-key-{PANEL_KEY}-fit-"] [data-testid="stGraphVizChart"] svg '
        f"{{ max-width: 100%; max-height: {PANEL_HEIGHT}; width: auto; height: auto; }}",
    ]
    cover, shade = "#ffffff", "rgba(27, 38, 49, 0.28)"
    shadows = ", ".join([
        f"linear-gradient(to right, {cover} 40%, rgba(255,255,255,0)) left / 48px 100% no-repeat local",
        f"linear-gradient(to left, {cover} 40%, rgba(255,255,255,0)) right / 48px 100% no-repeat local",
        f"linear-gradient(to bottom, {cover} 40%, rgba(255,255,255,0)) top / 100% 48px no-repeat local",
        f"linear-gradient(to top, {cover} 40%, rgba(255,255,255,0)) bottom / 100% 48px no-repeat local",
        f"radial-gradient(farthest-side at 0 50%, {shade}, rgba(0,0,0,0)) left / 18px 100% no-repeat scroll",
        f"radial-gradient(farthest-side at 100% 50%, {shade}, rgba(0,0,0,0)) right / 18px 100% no-repeat scroll",
        f"radial-gradient(farthest-side at 50% 0, {shade}, rgba(0,0,0,0)) top / 100% 18px no-repeat scroll",
        f"radial-gradient(farthest-side at 50% 100%, {shade}, rgba(0,0,0,0)) bottom / 100% 18px no-repeat scroll",
    ])
    for size, zoom in SIZE_ZOOM.items():
        if zoom is None:
            continue
        scoped = f'[class*="st-key-{PANEL_KEY}-{size}-"] [data-testid="stGraphVizChart"]'
        rules += [
            f"{scoped} {{ overflow: auto; max-height: {PANEL_HEIGHT}; background: {shadows}; "
            f"background-color: #ffffff; scrollbar-width: auto; scrollbar-color: #8a94a0 #eef1f4; }}",
            f"{scoped}::-webkit-scrollbar {{ width: 12px; height: 12px; }}",
            f"{scoped}::-webkit-scrollbar-thumb {{ background: #8a94a0; border-radius: 6px; }}",
            f"{scoped}::-webkit-scrollbar-track {{ background: #eef1f4; }}",
            f"{scoped} svg {{ max-width: none; max-height: none; zoom: {zoom:g}; margin: 0; }}",
        ]
    return "\n".join(rules)


def screen_dot(
    tree: FittedTree,
    *,
    highlight: Sequence[int] = (),
    group_mix: Mapping[int, Mapping] | None = None,
    collapsed: Collection[int] = (),
    compact: bool = False,
) -> str:
    """The DOT of ``tree`` as the screen draws it (see :func:`strongtree_core.tree.dot.tree_to_dot`)."""
    return tree_to_dot(tree, highlight=highlight, group_mix=group_mix, style=SCREEN, collapsed=collapsed,
                       compact=compact)


def collapsible_nodes(tree: FittedTree) -> list[int]:
    """Branching nodes below the root, depth first with the "yes" branch first (the drawing's order)."""
    out = []
    stack = [1]
    while stack:
        node = stack.pop()
        if tree.structure.feature[node - 1] < 0:
            continue
        if node > 1:
            out.append(node)
        stack += [2 * node, 2 * node + 1]
    return out


def nodes_at_level(tree: FittedTree, levels: int) -> list[int]:
    """The branching nodes to collapse so that ``levels`` levels of questions stay open."""
    return [n for n in collapsible_nodes(tree) if int(np.log2(n)) == levels]


def readable_levels(tree: FittedTree, *, group_mix: Mapping[int, Mapping] | None = None,
                    compact: bool = False, panel: tuple[float, float] = PANEL_1280) -> int:
    """The most levels of questions open (at least 1) whose drawing, fitted into ``panel`` (px; the
    Tree page's :data:`PANEL_1280` unless given), keeps every text at :data:`READABLE_TEXT` or more;
    every level when the whole tree does.

    The drawing's size is estimated from its DOT (:func:`drawing_size`); the boxes below the
    open levels are drawn collapsed (:func:`nodes_at_level`).
    """
    deepest = max((int(n).bit_length() for n in collapsible_nodes(tree)), default=0)
    for levels in range(deepest, 0, -1):
        collapsed = nodes_at_level(tree, levels) if levels < deepest else []
        dot = screen_dot(tree, group_mix=group_mix, collapsed=collapsed, compact=compact)
        if fitted_text(drawing_size(dot), panel) >= READABLE_TEXT:
            return levels
    return 1


#: Above a tree fitted into a panel of a page without the Tree page's level controls (Solve).
LEVELS_OPEN = ("{open} of {deepest} levels of questions open, so that every text reads at 10 px or more on a "
               "1280x720 screen: each grey box holds a subtree. The size Presentation opens every level, and the "
               "Tree page any subtree.")


def readable_fit(tree: FittedTree, *, compact: bool = False) -> tuple[list[int], str]:
    """The subtrees to collapse so that ``tree`` fitted into its panel reads (:func:`readable_levels`), and
    the words that say so (no subtree and "" when every level reads)."""
    deepest = max((int(n).bit_length() for n in collapsible_nodes(tree)), default=0)
    levels = readable_levels(tree, compact=compact)
    if levels >= deepest:
        return [], ""
    return nodes_at_level(tree, levels), LEVELS_OPEN.format(open=levels, deepest=deepest)


#: A "Fit the panel" panel in one of two columns side by side (Runs, Fairness) at 1280x720: the drawing
#: it holds (measured in Chromium: the column's chart 394 px wide less its frame and padding; 72 % of
#: 720 px high).  A depth-2 tree of the hiring table reads there at 8 px, a depth-4 one at 2 px.
PANEL_HALF_1280 = (376.0, 518.0)
#: Above two trees compared (:func:`paired_fit`): how they are laid out, and each one's levels open.
PAIR_WHOLE = "Both trees whole, each scaled into its panel. For larger text choose Presentation."
PAIR_STACKED = ("One tree above the other, each as wide as the page, so that every text reads at 10 px or more on a "
                "1280x720 screen (side by side, at about {side} px).")
PAIR_SIDE = "Side by side, so that every text reads at 10 px or more on a 1280x720 screen."
PAIR_LEVELS = "{name}: {open} of {deepest} levels of questions open"
PAIR_ALL = "{name}: every level open"
PAIR_GREY = "Each grey box holds a subtree."
#: What a page that compares two trees offers to see the collapsed levels (after :data:`PAIR_GREY`).
PAIR_MORE_RUNS = "The size Presentation opens every level; to open any subtree, open one run and go to the Tree page."
PAIR_MORE_FAIRNESS = ("The size Presentation opens every level; the Tree page opens any subtree of the tree with the "
                      "fairness constraint.")


def paired_fit(trees: Sequence[FittedTree], names: Sequence[str], more: str, *,
               compact: bool = True) -> tuple[bool, list[list[int]], str]:
    """How two trees compared read when fitted to their panels: whether they stand side by side
    (each in :data:`PANEL_HALF_1280`) or one above the other (each in :data:`PANEL_1280`, when that
    opens more levels of either), the subtrees to collapse in each (:func:`readable_levels`), and
    the words that say so, ending with ``more`` (what the page offers to see the rest) when a
    subtree is collapsed.  ``names`` name the trees in those words (plain text)."""

    def deepest(tree: FittedTree) -> int:
        return max((int(n).bit_length() for n in collapsible_nodes(tree)), default=0)

    half = [readable_levels(t, compact=compact, panel=PANEL_HALF_1280) for t in trees]
    full = [readable_levels(t, compact=compact) for t in trees]
    side_by_side = all(h >= f for h, f in zip(half, full))
    levels = half if side_by_side else full
    collapsed = [nodes_at_level(t, n) if n < deepest(t) else [] for t, n in zip(trees, levels)]
    if side_by_side and not any(collapsed):
        return True, collapsed, PAIR_WHOLE
    if side_by_side:
        said = PAIR_SIDE
    else:
        side = min(fitted_text(drawing_size(screen_dot(t, collapsed=c, compact=compact)), PANEL_HALF_1280)
                   for t, c in zip(trees, collapsed))
        said = PAIR_STACKED.format(side=fmt(side, "int"))
    if any(collapsed):
        said += " " + "; ".join(PAIR_ALL.format(name=name) if n >= deepest(t) else
                                PAIR_LEVELS.format(name=name, open=fmt(n, "int"), deepest=fmt(deepest(t), "int"))
                                for t, n, name in zip(trees, levels, names)) + f". {PAIR_GREY} {more}"
    return side_by_side, collapsed, said


def fitted_text(size: tuple[float, float], panel: tuple[float, float] = PANEL_1280) -> float:
    """The smallest text (px) of a drawing of natural ``size`` (px) scaled down into ``panel``."""
    scale = min(1.0, panel[0] / size[0], panel[1] / size[1])
    return SMALLEST_TEXT * scale


_BAR = re.compile(r'<TABLE [^>]*FIXEDSIZE="TRUE" WIDTH="(\d+)" HEIGHT="(\d+)">.*?</TABLE>')
_NODE = re.compile(r"^  n(\d+) \[label=<(.*)>(?:, [^\]]*)?\];$", re.M)
_EDGE = re.compile(r"^  n\d+ -> n(\d+) \[label=<([^>]*)>", re.M)
#: Graphviz's box margin around a label (pt: ``margin="0.1,0.05"`` in inches) and a table cell's padding.
_MARGIN_X, _MARGIN_Y, _PADDING = 7.2, 3.6, 1.0


def drawing_size(dot: str) -> tuple[float, float]:
    """The natural size (px, width and height) of :func:`screen_dot`'s drawing laid out top down,
    estimated from its text: each box as wide as its widest line (Source Sans' widths) plus
    Graphviz's margins; a subtree as wide as its box, its children side by side, or its two
    branch labels side by side, whichever is widest; the levels' tallest boxes stacked with the
    space between levels.  Against the browser's layout (the hiring table's trees of depth 3, 4
    and 5 with each number of levels open, ``benchmarks/RESULTS.md``) the estimated widths were
    0.98 to 1.14 times the drawn ones, the heights 0.98 to 1.02 times."""
    style = SCREEN
    boxes: dict[int, tuple[float, float]] = {}
    for node, label in _NODE.findall(dot):
        label = _BAR.sub(lambda m: f"\x00{m.group(1)},{m.group(2)}", label)
        width = height = 0.0
        for row in re.findall(r"<TR><TD>(.*?)</TD></TR>", label):
            if row.startswith("\x00"):
                bar_width, bar_height = (float(v) for v in row[1:].split(","))
                width, height = max(width, bar_width), height + bar_height + 2 * _PADDING
                continue
            point = re.search(r'POINT-SIZE="([\d.]+)"', row)
            size = float(point.group(1)) if point else style.head
            text = html.unescape(re.sub(r"<[^>]+>", "", row))
            width = max(width, text_width(text, size, bold="<B>" in row))
            height += 1.2 * size + 2 * _PADDING
        boxes[int(node)] = (width + 2 * (_PADDING + _MARGIN_X), height + 2 * _MARGIN_Y)
    if not boxes:
        return (0.0, 0.0)
    labels = {int(child): text_width(html.unescape(text), style.edge) + 4 for child, text in _EDGE.findall(dot)}
    gap = style.nodesep * 72

    def span(node: int) -> float:
        children = [c for c in (2 * node + 1, 2 * node) if c in boxes]
        if not children:
            return boxes[node][0]
        side_by_side = sum(span(c) for c in children) + gap * (len(children) - 1)
        answers = sum(labels.get(c, 0.0) for c in children) + gap * (len(children) - 1)
        return max(boxes[node][0], side_by_side, answers)

    tallest: dict[int, float] = {}
    for node, (_, height) in boxes.items():
        level = node.bit_length()
        tallest[level] = max(tallest.get(level, 0.0), height)
    between = style.ranksep * 72 + 1.6 * style.edge  # the space between levels holds the branch labels
    height = sum(tallest.values()) + (len(tallest) - 1) * between
    return span(1) * PX_PER_PT, height * PX_PER_PT


def node_words(tree: FittedTree, nodes: Sequence[int]) -> dict[int, str]:
    """A short name for each branching node of ``nodes``, for the list of collapsed subtrees: its
    question, and its rows where two of the nodes ask the same question.  Short, because the
    list's chips show at most about 170 px of text (Streamlit's multiselect, measured at 1280x720):
    a question of the usual length fits, a question with its rows and path did not."""
    features = tree.encoding.features
    question = {n: features[int(tree.structure.feature[n - 1])].label + "?" for n in nodes}
    asked = Counter(question.values())
    return {n: q if asked[q] == 1 else f"{q} {count_of(int(np.asarray(tree.node_counts[n - 1]).sum()), 'row')}"
            for n, q in question.items()}


def legend_html(tree: FittedTree, highlight: bool = False, groups: bool = False, collapsed: bool = False,
                answers: bool = False) -> str:
    """What the colours, the bar, the branch labels and the heavy outline mean (HTML, one line);
    ``answers``: the branches are labelled by their answers (the screen's Graphviz drawing)."""
    colours = class_colours(tree.n_classes)
    swatches = "".join(
        f'<span style="display:inline-flex;align-items:center;margin-right:14px;white-space:nowrap">'
        f'<span style="width:14px;height:14px;border-radius:3px;background:{colours[k]};margin-right:5px;'
        f'display:inline-block"></span>{html_text(drawn_text(c))}</span>'
        for k, c in enumerate(tree.classes)
    )
    notes = [
        "Boxes ask a question; each branch is labelled with its answer (the branch where the question holds "
        "is drawn on the left)." if answers else
        "Boxes ask a question; each branch is labelled with its answer (the yes branch is drawn first: left, or "
        "above when the tree runs left to right).",
        "Coloured boxes are leaves: the class predicted there. The bar shows the classes of the training rows "
        "reaching a box.",
    ]
    if highlight:
        notes.append("The heavy outline is the path of the chosen row.")
    if getattr(tree, "changed_leaves", ()):
        notes.append("A dashed leaf predicts against the majority of its training rows; the line under it says what "
                     "predicting the majority would break (the rules give the full reason, measured at fit time).")
    if groups:
        notes.append("“groups” gives the protected groups of the training rows reaching a box.")
    if collapsed:
        notes.append(f'A grey box with a heavy outline (<span style="background:{COLLAPSED_FILL};padding:0 4px;'
                     'border-radius:3px">collapsed</span>) stands for its whole subtree: its rows, and how many '
                     "questions and leaves it holds.")
    text = " ".join(notes)
    return (f'<div class="tree-legend" style="font-size: 14px; color: {MUTED}; margin: 6px 0 2px 0;">'
            f'<div style="margin-bottom:4px"><b style="color:{STRONG}">Classes:</b> {swatches}</div>'
            f"<div>{text}</div></div>")


def path_in_words(tree: FittedTree, row: pd.DataFrame) -> list[str]:
    """The path of one row, one plain sentence per question and one for the leaf.

    ``row`` is a one-row table with the tree's columns.  Values are shown as
    they are in the row; the sentences are plain text (escape them for Markdown).
    """
    features = tree.encoding.features
    path = tree.decision_path(row)
    sentences = []
    for node, child in zip(path, path[1:]):
        feature = features[int(tree.structure.feature[node - 1])]
        holds = child == 2 * node + 1
        value = row[feature.source].iloc[0] if feature.source in row.columns else None
        shown = "missing" if value is None or (isinstance(value, float) and np.isnan(value)) else _value(value)
        answer = "yes" if holds else "no"
        sentences.append(f"{feature.label}? This row has {feature.source} = {shown}, so {answer}.")
    leaf = path[-1]
    counts = np.asarray(tree.node_counts[leaf - 1])
    k = int(tree.structure.prediction[leaf - 1])
    label = tree.classes[k]
    total = int(counts.sum())
    mix = f"; {100.0 * counts[k] / total:.0f}% of the {count_of(total, 'training row')} there are {label}" if total else ""
    sentences.append(f"The leaf predicts {label}{mix}.")
    return sentences


def _value(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return fmt(value)
    return str(value)
