"""The HTML report with hostile names in every place user text reaches: the title, the table's
facts, the notes, the groups table's headers and cells, the rules, the tree in words, the drawing's
labels (Graphviz and the built-in layout), the rates tables (groups and legitimate levels) and the
positive class.  Each name holds markup (<script>, <img>, <marquee>), quotes, ampersands,
backslashes, a line break, a NUL byte, or is very long; the tree splits on the hostile columns and
levels, so the names reach the rules and the cells.  Every place is checked three ways: the page
parses to no tag the report does not write itself, the place's text reads the name as text (on one
line), and the raw HTML holds the name's escaped form."""

from __future__ import annotations

import html
import re
import shutil
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from strongtree_core import StrongTreeClassifier
from strongtree_core.report.build import ReportInput, build_report
from strongtree_core.report.drawing import BUILT_IN, GRAPHVIZ
from strongtree_core.tree.summary import tree_summary
from strongtree_core.words import LABEL_LIMIT

FEATURE = 'score <script>alert("f")</script> & \'q\' \\ "x"\nsecond line\x00'
LEVELLED = "<marquee>kind</marquee> & \"k\" 'k' \\"
LEVELS = ('v1 <img src=x onerror=alert(1)> & "a"', "v2 'quoted' \\ back & amp;", "v3\nbroken\x00nul", "v4 plain")
GROUP = '<u>group</u> "g" & \\'
GROUPS = ('g1 <script>alert(2)</script>', "g2 & \"q\" 's' \\\nnl\x00", "g3 <u>" + "L" * 300 + "</u>")
LEGIT = "<iframe>legit</iframe> 'l'"
LEGITS = ("l1 <u>x</u> &", 'l2 "y" \\')
TARGET = '<marquee>target</marquee> & "t"'
CLASSES = ("yes <script>alert(3)</script> & 'y'", 'no & "n" \\')
DATASET = 'data <script>alert(4)</script> & "d" \\.csv'
NOTE = "note <script>alert(5)</script> & 'n' \\\nline two\x00"
HOSTILE_TAGS = ("script", "img", "marquee", "u", "iframe")


def first_line(text: str) -> str:
    """The part of a hostile name before its first line break or control character, at most as much of
    it as a name cut before layout keeps (the report shows a name over LABEL_LIMIT characters cut, whole
    under "Names shown cut")."""
    return re.split(r"[\x00-\x1f]", text)[0][: LABEL_LIMIT // 2]


class Page(HTMLParser):
    """Every start tag, and the text of each element that has an id (and of its descendants)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.by_id: dict[str, list[str]] = {}
        self.cells: list[str] = []
        self._open: list[tuple[str, str | None]] = []
        self._cell: list[str] | None = None
        self.texts: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        self._open.append((tag, attrs.get("id")))
        if attrs.get("id"):
            self.by_id.setdefault(attrs["id"], [])
        if tag in ("td", "th", "li", "dd", "dt", "p", "text", "title", "h1", "h3"):
            self._cell = []

    def handle_startendtag(self, tag, attrs):  # <rect .../>: nothing inside, nothing to close
        self.tags.append(tag)

    def handle_endtag(self, tag):
        if tag in ("td", "th", "li", "dd", "dt", "p", "text", "title", "h1", "h3") and self._cell is not None:
            self.cells.append("".join(self._cell))
            self._cell = None
        while self._open:
            open_tag, _ = self._open.pop()
            if open_tag == tag:
                break

    def handle_data(self, data):
        self.texts.append(data)
        if self._cell is not None:
            self._cell.append(data)
        for _, ident in self._open:
            if ident:
                self.by_id[ident].append(data)


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    return page


def frame(n: int = 400, seed: int = 5) -> pd.DataFrame:
    """The class follows the hostile numeric column and the hostile levels, so a depth-2 tree asks about both."""
    rng = np.random.default_rng(seed)
    score = rng.integers(0, 10, n)
    level = rng.integers(0, len(LEVELS), n)
    positive = ((score >= 5) & (level <= 1)) | ((score >= 8) & (level == 3))
    positive ^= rng.random(n) < 0.03
    return pd.DataFrame({
        FEATURE: score,
        LEVELLED: np.array(LEVELS, dtype=object)[level],
        GROUP: rng.choice(np.array(GROUPS, dtype=object), n),
        LEGIT: rng.choice(np.array(LEGITS, dtype=object), n),
        TARGET: np.where(positive, CLASSES[0], CLASSES[1]),
    })


@pytest.fixture(scope="module")
def fitted():
    data = frame()
    train, test = data.iloc[:300].reset_index(drop=True), data.iloc[300:].reset_index(drop=True)
    X = train[[FEATURE, LEVELLED]]
    fair = StrongTreeClassifier(depth=2, fairness="statistical_parity", fairness_bound=0.5, pos_label=CLASSES[0],
                                time_limit=30).fit(X, train[TARGET], sensitive_features=train[GROUP]).tree_
    free = StrongTreeClassifier(depth=2, time_limit=30).fit(X, train[TARGET]).tree_
    return train, test, fair, free


def report(fitted, engine: str, fairness=("statistical_parity", "conditional_statistical_parity")) -> str:
    train, test, fair, free = fitted
    inp = ReportInput(fair, train, test, DATASET, pos_label=CLASSES[0], protected=(GROUP,), legitimate=(LEGIT,),
                      fairness=fairness, fairness_bound=0.5, settings={"depth": 2, "fairness_bound": 0.5},
                      unconstrained=free, notes=(NOTE,))
    return build_report(inp, engine=engine)


ENGINES = ["builtin"] + (["graphviz"] if shutil.which("dot") else [])


def test_the_tree_asks_about_the_hostile_column_and_levels(fitted):
    _, _, fair, _ = fitted
    rules = fair.to_text()
    assert first_line(FEATURE) in rules
    assert any(first_line(level) in rules for level in LEVELS)
    assert fair.structure.leaves.size >= 3 and set(fair.predict(fitted[0])) == set(CLASSES)


@pytest.mark.parametrize("engine", ENGINES)
def test_no_hostile_name_becomes_a_tag_or_a_control_character(fitted, engine):
    text = report(fitted, engine)
    page = parse(text)
    assert not set(page.tags) & set(HOSTILE_TAGS), sorted(set(page.tags) & set(HOSTILE_TAGS))
    for tag in HOSTILE_TAGS:
        assert not re.search(rf"<{tag}\b", text, re.I), tag
    assert "\x00" not in text and "onerror=" not in text.replace("onerror=alert", "")  # only as escaped text
    assert not any("\n" in cell for cell in page.cells)  # every name on one line


PLACES = {  # element id -> the names whose first line its text must read as text
    "table-facts": [TARGET, *CLASSES, GROUP, LEGIT, FEATURE, LEVELLED],
    "groups": [GROUP, CLASSES[0], *GROUPS],
    "rules": [FEATURE, CLASSES[0], CLASSES[1]],
    "summary": [FEATURE, CLASSES[0]],
    "rates-train-statistical_parity": [GROUP, *GROUPS],
    "rates-test-statistical_parity": [GROUP, *GROUPS],
    "rates-train-conditional_statistical_parity": [GROUP, *GROUPS, *LEGITS],
    "rates-test-conditional_statistical_parity": [GROUP, *GROUPS, *LEGITS],
}


@pytest.mark.parametrize("engine", ENGINES)
def test_every_place_reads_the_names_as_text(fitted, engine):
    text = report(fitted, engine)
    page = parse(text)
    for place, names in PLACES.items():
        shown = " ".join(page.by_id[place])
        for name in names:
            assert first_line(name) in shown, (place, name)
    # a level of the column the tree asks about, in the rules and the summary
    rules = " ".join(page.by_id["rules"])
    assert any(first_line(level) in rules for level in LEVELS)
    # the title, the heading, the notes, the positive class in the rates' sentence
    assert first_line(DATASET) in page.cells[0]  # <title>
    assert any(first_line(DATASET) in c for c in page.cells if c.startswith(first_line(DATASET)))
    assert any(c.startswith(first_line(NOTE)) and "line two" in c for c in page.cells)  # the note's break a space
    assert any(f"rates of predicting {CLASSES[0]}" in c for c in page.cells)
    # the drawing's labels: the feature and a class, as SVG text
    drawing = " ".join(page.by_id.get("tree", []))
    assert first_line(FEATURE) in drawing and first_line(CLASSES[0]) in drawing
    assert f"Drawn by {GRAPHVIZ if engine == 'graphviz' else BUILT_IN}" in text  # dot took the labels, no fallback


@pytest.mark.parametrize("engine", ENGINES)
def test_the_raw_page_holds_every_name_escaped_with_its_quotes(fitted, engine):
    text = report(fitted, engine)
    for name in (DATASET, NOTE, TARGET, *CLASSES, GROUP, *GROUPS, LEGIT, *LEGITS, FEATURE, LEVELLED):
        assert html.escape(first_line(name), quote=True) in text, name
    # the very long group, whole, in the names shown cut (and nowhere else whole)
    names = " ".join(parse(text).by_id["names-in-full"])
    assert GROUPS[2] in names and html.escape(GROUPS[2], quote=True) in text


def test_a_line_break_and_a_nul_are_shown_not_kept(fitted):
    text = report(fitted, "builtin")
    page = parse(text)
    note = next(c for c in page.cells if c.startswith(first_line(NOTE)))
    assert note == "note <script>alert(5)</script> & 'n' \\ line two\\x00"
    group = [c for c in page.cells if c.startswith("g2 & ")]
    # a label's line break is shown as an escape, as every control character of a label is (a note's is a space)
    assert group and all(c == 'g2 & "q" \'s\' \\\\nnl\\x00' for c in group)


def test_the_tree_in_words_is_the_summary_of_the_tree(fitted):
    _, _, fair, _ = fitted
    page = parse(report(fitted, "builtin"))
    shown = "".join(page.by_id["summary"])
    for sentence in tree_summary(fair):
        assert " ".join(sentence.splitlines()) in shown
    assert first_line(TARGET) in shown and first_line(FEATURE) in shown


def test_the_certificate_and_a_part_without_the_positive_class_read_hostile_names_as_text(fitted):
    """Two places the report above never filled with a hostile name: the certificate's sentence, which names the
    class a constant tree predicts (its promise left no tree that splits), and the sentence of a part with no row
    of the positive class.  Dropping either escape let a tag through while every test above passed."""
    from dataclasses import replace

    from benchmarks.claim_table import STATES

    train, test, fair, free = fitted
    record = replace(fair.record, promise={**STATES["constant fallback"].promise, "predicts": CLASSES[0]})
    constant = replace(fair, record=record)
    negative = (test[TARGET] != CLASSES[0]).to_numpy() & (fair.predict(test) != CLASSES[0])
    no_positive = test[negative].reset_index(drop=True)  # no row of the positive class, none predicted so
    assert len(no_positive) > 20
    inp = ReportInput(constant, train, no_positive, DATASET, pos_label=CLASSES[0], protected=(GROUP,),
                      legitimate=(LEGIT,), fairness=("statistical_parity",), fairness_bound=0.5,
                      settings={"depth": 2}, unconstrained=free)
    text = build_report(inp, engine="builtin")
    page = parse(text)
    assert not set(page.tags) & set(HOSTILE_TAGS) and "<script" not in text
    said = " ".join(page.by_id["certificate"])
    assert f"it predicts '{first_line(CLASSES[0])}' for every row" in said
    assert any(c.startswith(f"No row here is of the positive class {CLASSES[0]} or predicted so") for c in page.cells)
