"""The tree drawn for the dashboard: the SVG of :mod:`strongtree_core.tree.svg` (every
box sized from its text, 13-14 px at 100 %) in a panel that scrolls (pan) with a zoom
choice, a legend, and the path of one row in words.

The drawing is the library's, so the HTML report and the command line draw the
same tree; this module adds what only a page needs.  Every user string is
escaped for HTML by :func:`strongtree_studio.markup.html_text`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from strongtree_core.tree import FittedTree
from strongtree_core.tree.dot import class_colours
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
from strongtree_studio.markup import html_text
from strongtree_studio.words import count_of, fmt

#: Zoom choices of the tree panels (1.0 is natural size).
ZOOMS = {"75%": 0.75, "100%": 1.0, "150%": 1.5}


def tree_panel(svg: str, max_height: int | None = None) -> str:
    """HTML for ``st.markdown(..., unsafe_allow_html=True)``: the drawing in a panel that scrolls."""
    limit = f" max-height: {max_height}px;" if max_height else ""
    return (f'<div class="tree-panel" style="overflow: auto;{limit} border: 1px solid #dde3ea; border-radius: 8px; '
            f'padding: 8px; background: #ffffff;">{svg}</div>')


def legend_html(tree: FittedTree, highlight: bool = False, groups: bool = False) -> str:
    """What the colours, the bar, the branch labels and the heavy outline mean (HTML, one line)."""
    colours = class_colours(tree.n_classes)
    swatches = "".join(
        f'<span style="display:inline-flex;align-items:center;margin-right:14px;white-space:nowrap">'
        f'<span style="width:14px;height:14px;border-radius:3px;background:{colours[k]};margin-right:5px;'
        f'display:inline-block"></span>{html_text(c)}</span>'
        for k, c in enumerate(tree.classes)
    )
    notes = [
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
