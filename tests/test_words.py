"""The one formatter: counts with separators and their noun, class names never glued to counts,
on every surface that shows them (the drawn tree, the DOT export, the rules, the bar labels)."""

import re

import numpy as np
import pandas as pd
import pytest

from strongtree_core import StrongTreeClassifier
from strongtree_core.words import GAP_MET_AT_LIMIT, class_counts, count_of, fmt, gap_words
from strongtree_studio.views.fairness_view import judged
from strongtree_studio.views.tree_view import tree_svg

#: A coded class (a number) written right before a count: "1 225" reads as 1,225.
GLUED = re.compile(r"(?<![\d,.:])\b\d+ \d+\b")


def test_counts_read_with_separators_and_their_noun():
    assert fmt(1225, "int") == "1,225" and fmt(2525.0) == "2,525"
    assert count_of(1, "row") == "1 row" and count_of(0, "row") == "0 rows" and count_of(2525, "row") == "2,525 rows"
    assert count_of(1, "training row") == "1 training row"
    assert class_counts(["1", "2"], [225, 1525]) == "1: 225 · 2: 1,525"
    assert class_counts([1, 2], np.array([3, 4])) == "1: 3 · 2: 4"
    assert class_counts(["a\nb"], [1]) == "a\\nb: 1"  # one line


@pytest.fixture(scope="module")
def coded():
    """A coded target (1 / 2) with more than a thousand rows of a class."""
    rng = np.random.default_rng(0)
    n = 3000
    x = rng.integers(0, 100, n)
    y = np.where(x < 40, 1, 2)
    frame = pd.DataFrame({"x": x, "target": y})
    model = StrongTreeClassifier(depth=2, time_limit=30).fit(frame[["x"]], frame["target"])
    return model.tree_


def _texts(svg: str) -> list[str]:
    return re.findall(r">([^<>]+)</text>", svg)


def test_a_coded_target_never_reads_as_one_number(coded):
    texts = _texts(tree_svg(coded))
    assert texts
    assert [t for t in texts if GLUED.search(t)] == []
    assert any(re.search(r"\b1: [\d,]+ · 2: [\d,]+", t) for t in texts)
    assert any("," in t for t in texts)  # the root's counts pass a thousand
    dot = coded.to_dot()
    assert GLUED.search(re.sub(r'"[^"]*"', "", dot)) is None


def test_one_row_is_a_row_everywhere():
    frame = pd.DataFrame({"x": ["a", "b"] * 50 + ["z"], "target": [2] * 100 + [1]})
    tree = StrongTreeClassifier(depth=1, time_limit=30).fit(frame[["x"]], frame["target"]).tree_
    assert sorted(tree.node_counts[n - 1].sum() for n in tree.structure.leaves) == [1, 100]
    one = re.compile(r"(?<![\d,])1 rows")
    texts = _texts(tree_svg(tree))
    assert "(1 row," in tree.to_text() and "<FONT POINT-SIZE=\"9\">1 row," in tree.to_dot()
    assert any(t.startswith("1 row ·") for t in texts)
    assert not one.search(tree.to_text()) and not one.search(tree.to_dot()) and not one.search(" ".join(texts))
    labels = [r["label"] for r in judged([{"group": "a", "rate": 0.5, "rows": 1}], 0.1, True)]
    assert labels == ["50.0% · 1 row"]


def test_a_zero_gap_beside_not_proven_says_what_it_means():
    """"Not proven (time limit) · bound 426 · gap 0.0%" read as a contradiction: a zero gap of a solve the
    time limit ended says the bound met the tree as the time ran out; a proven one and a real gap read plainly."""
    assert gap_words("time_limit", 0.0) == GAP_MET_AT_LIMIT
    assert gap_words("interrupted", 0) == GAP_MET_AT_LIMIT
    # a Stop is no time running out (a stopped solve read "the bound met the best tree's value as the time ran out")
    assert GAP_MET_AT_LIMIT == ("gap 0.0% (the bound meets the best tree's value, but the solver ended before it "
                                "declared the proof finished)")
    assert gap_words("optimal", 0.0) == "gap 0.0%"
    assert gap_words("time_limit", 0.0123) == "gap 1.2%"
    assert gap_words("time_limit", 0.0004) == "gap <0.1%"
    assert gap_words("time_limit", None) == "gap –"
