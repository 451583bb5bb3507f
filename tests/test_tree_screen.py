"""The tree as the dashboard draws it: the screen's DOT (strongtree_core.tree.dot.SCREEN),
collapsed subtrees, and the CSS that gives each text its size in the Graphviz panel
(strongtree_studio.views.tree_view).  The browser checks of the same panels are in test_browser.py."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import replace

import pytest
from test_tree import HOSTILE, dot_nodes, mixed_tree

from strongtree_core.structure import TreeStructure
from strongtree_core.tree.dot import SCREEN
from strongtree_studio.views.tree_view import (
    PX_PER_PT,
    SMALLEST_TEXT,
    chart_css,
    collapsible_nodes,
    node_words,
    nodes_at_level,
    panel_key,
    screen_dot,
)


def font_sizes(dot: str) -> list[float]:
    """Every font size the DOT asks for (pt): node and edge defaults and each FONT tag."""
    return [float(v) for v in re.findall(r'(?:fontsize=|POINT-SIZE=")([0-9.]+)', dot)]


def test_every_text_of_the_screens_drawing_is_12_px_or_more_at_presentation_size():
    tree, df = mixed_tree()
    dot = screen_dot(tree, highlight=tree.decision_path(df.iloc[[0]]), group_mix={1: {"women": 3, "men": 1}})
    sizes = font_sizes(dot)
    assert sizes and min(sizes) == min(SCREEN.font_sizes) == 9.0
    assert SMALLEST_TEXT == pytest.approx(9.0 * PX_PER_PT) and SMALLEST_TEXT >= 12.0 - 1e-9
    css = chart_css()
    for size in SCREEN.font_sizes:  # each size of the layout comes back in the browser's panel
        assert f'text[font-size="{size:.2f}"] {{ font-size: {size:g}px; }}' in css
    assert "max-width: 100%" in css and "overflow: auto" in css  # fit scales down; the other sizes scroll


def test_branches_are_labelled_by_their_answers_and_leaves_say_predict():
    tree, _ = mixed_tree()
    dot = screen_dot(tree)
    edges = re.findall(r"^  n(\d+) -> n(\d+) \[label=<([^>]*)>", dot, flags=re.M)
    assert len(edges) == len(dot_nodes(dot)) - 1
    words = {(int(a), int(b)): text for a, b, text in edges}
    assert words[(4, 9)] == "≤ 2" and words[(4, 8)] == "&gt; 2"  # priors_count ≤ 2, shortened to its answer
    assert words[(3, 7)] == "= Caucasian" and words[(3, 6)] == "≠ Caucasian"
    assert "<B>priors_count ≤ 2?</B>" in dot and "<B>predict yes</B>" in dot
    assert HOSTILE not in dot  # user text stays escaped in the answers too


def test_a_collapsed_subtree_is_one_box_that_counts_what_it_holds():
    tree, _ = mixed_tree()
    full = dot_nodes(screen_dot(tree))
    dot = screen_dot(tree, collapsed=[3])
    assert dot_nodes(dot) == full - {6, 7, 12, 13, 14, 15}  # everything under node 3 is left out
    box = re.search(r"^  n3 \[.*$", dot, flags=re.M).group(0)
    assert "<I>collapsed: 2 questions</I>" in box and "<I>and 4 leaves below</I>" in box and "bold" in box
    assert not re.search(r"^  n3 -> ", dot, flags=re.M)
    assert dot_nodes(screen_dot(tree, collapsed=[5])) == full  # a leaf cannot be collapsed: nothing changes


def test_levels_of_questions_open_choose_the_subtrees_to_collapse():
    tree, _ = mixed_tree()
    assert collapsible_nodes(tree) == [3, 7, 6, 2, 4]  # below the root, depth first, the yes branch first
    assert nodes_at_level(tree, 1) == [3, 2]  # one level open: the root's question alone
    assert sorted(nodes_at_level(tree, 2)) == [4, 6, 7]
    assert nodes_at_level(tree, 3) == []
    shown = dot_nodes(screen_dot(tree, collapsed=nodes_at_level(tree, 1)))
    assert shown == {1, 2, 3}
    names = node_words(tree, collapsible_nodes(tree))
    assert names[4] == "priors_count ≤ 2?" and names[3] == "race = Caucasian?"  # the question, short for a chip
    same = TreeStructure(3, tree.structure.feature.copy(), tree.structure.prediction.copy())
    same.feature[6] = same.feature[2]  # node 7 asks node 3's question: the rows tell them apart
    clone = replace(tree, structure=same)
    named = node_words(clone, [3, 7])
    assert named[3] != named[7] and named[3].startswith("race = Caucasian? ") and named[3].endswith("rows")
    assert panel_key("natural", "tree") == "stree-natural-tree"


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz 'dot' is not installed")
def test_the_screens_drawing_with_collapsed_subtrees_renders():
    tree, df = mixed_tree()
    dot = screen_dot(tree, highlight=tree.decision_path(df.iloc[[0]]), collapsed=[2], compact=True)
    done = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True, timeout=60)
    assert done.returncode == 0 and done.stderr == b"", done.stderr.decode()
    svg = done.stdout.decode()
    assert "collapsed: 1 question" in svg and "and 3 leaves below" in svg


def test_the_tree_page_opens_as_many_levels_as_read_at_10_px_in_a_1280_panel():
    from strongtree_core import StrongTreeClassifier
    from strongtree_core.datasets import make_hiring
    from strongtree_studio.views.tree_view import PANEL_1280, READABLE_TEXT, drawing_size, fitted_text, readable_levels

    assert fitted_text((401.0, 259.0)) == pytest.approx(SMALLEST_TEXT)  # fits: drawn at its natural size
    assert fitted_text((1604.0, 259.0)) == pytest.approx(SMALLEST_TEXT * PANEL_1280[0] / 1604.0)  # too wide
    assert fitted_text((401.0, 1036.0)) == pytest.approx(SMALLEST_TEXT * PANEL_1280[1] / 1036.0)  # too high
    df = make_hiring(800, seed=0)
    X, y = df.drop(columns="hired"), df["hired"]
    deep = StrongTreeClassifier(depth=4, pos_label="yes").fit(X, y).tree_
    sizes = [drawing_size(screen_dot(deep, collapsed=nodes_at_level(deep, n) if n < 4 else [])) for n in (1, 2, 3, 4)]
    assert [w for w, _ in sizes] == sorted(w for w, _ in sizes) and sizes[-1][0] > 3 * sizes[0][0]  # wider as it opens
    levels = readable_levels(deep)
    assert levels == 2  # measured in the browser: 2 levels at 12 px, 3 at 5-6 px (benchmarks/RESULTS.md)
    assert fitted_text(drawing_size(screen_dot(deep, collapsed=nodes_at_level(deep, levels)))) >= READABLE_TEXT
    assert fitted_text(drawing_size(screen_dot(deep, collapsed=nodes_at_level(deep, levels + 1)))) < READABLE_TEXT
    shallow = StrongTreeClassifier(depth=2, pos_label="yes").fit(X, y).tree_
    assert readable_levels(shallow) == 2  # a tree that reads whole opens whole
    wide = {n: {f"a group named at length {i}": 10 for i in range(4)} for n in range(1, 32)}
    assert readable_levels(deep, group_mix=wide) == 1  # wider boxes: fewer levels open


def test_the_solve_page_s_fitted_tree_opens_the_levels_that_read_and_says_so():
    from strongtree_core import StrongTreeClassifier
    from strongtree_core.datasets import make_hiring
    from strongtree_studio.views.tree_view import READABLE_TEXT, drawing_size, fitted_text, readable_fit

    df = make_hiring(800, seed=0)
    X, y = df.drop(columns="hired"), df["hired"]
    deep = StrongTreeClassifier(depth=4, pos_label="yes").fit(X, y).tree_
    collapsed, words = readable_fit(deep, compact=True)
    assert collapsed == nodes_at_level(deep, 2) and collapsed
    assert fitted_text(drawing_size(screen_dot(deep, collapsed=collapsed, compact=True))) >= READABLE_TEXT
    assert words == ("2 of 4 levels of questions open, so that every text reads at 10 px or more on a 1280x720 "
                     "screen: each grey box holds a subtree. The size Presentation opens every level, and the Tree "
                     "page any subtree.")
    shallow = StrongTreeClassifier(depth=2, pos_label="yes").fit(X, y).tree_
    assert readable_fit(shallow, compact=True) == ([], "")  # a tree that reads whole opens whole, and says nothing


def test_two_trees_compared_open_the_levels_that_read_one_above_the_other_when_side_by_side_would_not():
    from strongtree_core import StrongTreeClassifier
    from strongtree_core.datasets import make_hiring
    from strongtree_studio.views.tree_view import (
        PAIR_MORE_RUNS,
        PAIR_WHOLE,
        PANEL_1280,
        PANEL_HALF_1280,
        READABLE_TEXT,
        drawing_size,
        fitted_text,
        paired_fit,
        readable_levels,
    )

    df = make_hiring(800, seed=0)
    X, y = df.drop(columns="hired"), df["hired"]
    deep = StrongTreeClassifier(depth=4, pos_label="yes").fit(X, y).tree_
    stump = StrongTreeClassifier(depth=1, pos_label="yes").fit(X, y).tree_
    # Whole, a depth-4 tree in half the page reads at 2 px (the Runs page drew it so); in a column, one level reads.
    assert fitted_text(drawing_size(screen_dot(deep, compact=True)), PANEL_HALF_1280) < 3
    assert readable_levels(deep, compact=True, panel=PANEL_HALF_1280) == 1
    side_by_side, collapsed, words = paired_fit([deep, deep], ["#2", "#1"], PAIR_MORE_RUNS)
    assert not side_by_side and collapsed == [nodes_at_level(deep, 2)] * 2  # at the page's width, two levels
    for closed in collapsed:
        assert fitted_text(drawing_size(screen_dot(deep, collapsed=closed, compact=True)), PANEL_1280) >= READABLE_TEXT
    assert words == ("One tree above the other, each as wide as the page, so that every text reads at 10 px or more "
                     "on a 1280x720 screen (side by side, at about 6 px). #2: 2 of 4 levels of questions open; #1: 2 "
                     "of 4 levels of questions open. Each grey box holds a subtree. The size Presentation opens every "
                     "level; to open any subtree, open one run and go to the Tree page.")
    assert "collapse" not in words.lower()  # the Runs page has no control to collapse with
    side_by_side, collapsed, words = paired_fit([stump, stump], ["#2", "#1"], PAIR_MORE_RUNS)
    assert side_by_side and collapsed == [[], []] and words == PAIR_WHOLE  # small trees stay side by side, whole
    assert fitted_text(drawing_size(screen_dot(stump, compact=True)), PANEL_HALF_1280) >= READABLE_TEXT
