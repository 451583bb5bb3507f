"""A tree on a page: laid out by Graphviz in the browser, at the size and with the subtrees
collapsed that the user chose.

Streamlit's Graphviz chart (its bundled WebAssembly build: no system package,
nothing fetched) draws :func:`strongtree_studio.views.tree_view.screen_dot` in a keyed
container, whose class selects the panel's size in the page's CSS
(:func:`strongtree_studio.views.tree_view.chart_css`, added by
:mod:`strongtree_studio.page.style`).  Zooming is the size control, panning is the
panel's scrollbars, and collapsing re-draws the DOT with the chosen subtrees as
one box each; the choices are ordinary widgets, so they work the same in every
browser and in AppTest.
"""

from __future__ import annotations

from typing import Collection, Mapping, Sequence

import streamlit as st

from strongtree_core.tree import FittedTree
from strongtree_studio.views.markup import plain_text
from strongtree_studio.views.status_words import fmt
from strongtree_studio.page.session import set_widget_value, widget_value
from strongtree_studio.views.tree_view import (
    AUTO_COLLAPSED,
    SIZE_NOTES,
    SIZES,
    collapsible_nodes,
    node_words,
    nodes_at_level,
    panel_key,
    screen_dot,
)


def tree_chart(
    tree: FittedTree,
    name: str,
    *,
    size: str = "fit",
    highlight: Sequence[int] = (),
    group_mix: Mapping[int, Mapping] | None = None,
    collapsed: Collection[int] = (),
    compact: bool = False,
    note: bool = True,
) -> str:
    """Draw ``tree`` in a panel named ``name`` (unique on the page) at ``size`` (a key of
    :data:`~strongtree_studio.views.tree_view.SIZES`); returns the DOT drawn.  ``note`` adds the line
    that says how the panel shows the tree at that size."""
    dot = screen_dot(tree, highlight=highlight, group_mix=group_mix, collapsed=collapsed, compact=compact)
    if note:
        st.caption(SIZE_NOTES[size])
    with st.container(key=panel_key(size, name)):
        st.graphviz_chart(dot, width="content")
    return dot


def size_control(container, key: str, label_visibility: str = "visible") -> str:
    """The size choice (a key of :data:`~strongtree_studio.views.tree_view.SIZES`), fit to the panel unless chosen."""
    size = container.segmented_control("Size", list(SIZES), format_func=SIZES.get, default="fit", key=key,
                                       label_visibility=label_visibility,
                                       help="Fit the panel shows the whole tree; Presentation draws every text at "
                                            "12 px or more and the panel scrolls; Large is one and a half times that.")
    return size or "fit"


def collapse_controls(tree: FittedTree, key: str, left=None, right=None, readable: int | None = None) -> list[int]:
    """How many levels stay open (in ``left``) and which subtrees are collapsed (in ``right``);
    returns the collapsed nodes.  Without containers, a row of two columns is made.

    Choosing a number of levels collapses every subtree below it; the list then
    shows them, and taking one out of it opens that subtree alone.  ``readable``
    (see :func:`~strongtree_studio.views.tree_view.readable_levels`) is the number of levels
    open until the user chooses (:func:`legibility_note` then says so);
    None opens every level.
    """
    nodes = collapsible_nodes(tree)
    if not nodes:
        return []
    deepest = max(int(n).bit_length() for n in nodes)  # levels of questions (the root is level 1)
    levels_key, chosen_key, auto_key = f"{key}.levels", f"{key}.collapsed", f"{key}.auto"
    if widget_value(levels_key) is None:  # the controls are new on this visit: the page chooses again
        set_widget_value(auto_key, True)
    if widget_value(auto_key, True) or widget_value(levels_key) not in range(1, deepest + 1):
        levels = deepest if readable is None else max(1, min(int(readable), deepest))
        set_widget_value(levels_key, levels)
        set_widget_value(chosen_key, nodes_at_level(tree, levels) if levels < deepest else [])

    def open_levels() -> None:
        set_widget_value(auto_key, False)
        levels = widget_value(levels_key)
        set_widget_value(chosen_key, nodes_at_level(tree, int(levels)) if levels and levels < deepest else [])

    def chosen() -> None:
        set_widget_value(auto_key, False)

    if left is None or right is None:
        left, right = st.columns([1.2, 3], vertical_alignment="bottom")
    left.select_slider("Levels of questions open", list(range(1, deepest + 1)), key=levels_key,
                       format_func=lambda n: fmt(n, "int"), on_change=open_levels,
                       help="Fewer levels collapse every subtree below them into one box.")
    names = node_words(tree, nodes)
    valid = [n for n in widget_value(chosen_key, []) if n in nodes]
    if valid != widget_value(chosen_key, []):
        set_widget_value(chosen_key, valid)
    return right.multiselect(
        "Collapsed subtrees", nodes, key=chosen_key, format_func=lambda n: plain_text(names[n]),
        on_change=chosen, placeholder="None: every box is shown", help="Each subtree chosen here is drawn as one "
        "grey box; take it out of the list to open it again.",
    )


def legibility_note(tree: FittedTree, key: str) -> str | None:
    """What the page says while it keeps levels closed so that the tree reads (None when every
    level is open, or once the user chose what to open)."""
    levels = widget_value(f"{key}.levels")
    nodes = collapsible_nodes(tree)
    if not nodes or not widget_value(f"{key}.auto", False) or levels is None:
        return None
    deepest = max(int(n).bit_length() for n in nodes)
    if int(levels) >= deepest:
        return None
    return AUTO_COLLAPSED.format(open=fmt(int(levels), "int"), deepest=fmt(deepest, "int"))


def open_all_levels(tree: FittedTree, key: str) -> None:
    """Open every level (the "Open all levels" button's callback)."""
    nodes = collapsible_nodes(tree)
    set_widget_value(f"{key}.auto", False)
    set_widget_value(f"{key}.levels", max((int(n).bit_length() for n in nodes), default=1))
    set_widget_value(f"{key}.collapsed", [])
