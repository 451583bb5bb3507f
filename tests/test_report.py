"""The HTML report, read back from its HTML: every number recomputed from the trees'
predictions, the tree drawn by dot or by the built-in layout, nothing that names another
address, user text escaped, and the dashboard's inputs."""

import datetime as dt
import re
import shutil
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from strongtree_core import StrongTreeClassifier, __version__
from strongtree_core.report.build import ReportInput, build_report
from strongtree_core.report.drawing import BUILT_IN, GRAPHVIZ, tree_drawing
from strongtree_core.tree.summary import tree_summary
from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig, split_table
from strongtree_studio.data.demo_tables import make_hiring
from strongtree_core.tree.claim import claim
from strongtree_studio.views.report_view import report_file_name, report_input, split_words

ROLES = Roles("hired", "yes", ("gender",), ("education",))
WHEN = dt.datetime(2026, 3, 4, 9, 30, tzinfo=dt.timezone.utc)


class Page(HTMLParser):
    """Tables (by id) as rows of cell texts, lists (by id) as item texts, and every tag's attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.lists: dict[str, list[str]] = {}
        self.paragraphs: list[tuple[dict, str]] = []
        self.attributes: list[tuple[str, dict]] = []
        self._table = self._list = None
        self._cell: list[str] | None = None
        self._item: list[str] | None = None
        self._para: tuple[dict, list[str]] | None = None
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.attributes.append((tag, attrs))
        if tag == "table":
            self._table = attrs.get("id", "")
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []
        elif tag in ("ul", "ol") and attrs.get("id"):
            self._list = attrs["id"]
            self.lists[self._list] = []
        elif tag == "li" and self._list is not None:
            self._item = []
        elif tag == "p":
            self._para = (attrs, [])

    def handle_endtag(self, tag):
        if tag == "table":
            self._table = None
        elif tag in ("td", "th") and self._cell is not None:
            self.tables[self._table][-1].append("".join(self._cell))
            self._cell = None
        elif tag in ("ul", "ol"):
            self._list = None
        elif tag == "li" and self._item is not None:
            self.lists[self._list].append("".join(self._item))
            self._item = None
        elif tag == "p" and self._para is not None:
            self.paragraphs.append((self._para[0], "".join(self._para[1])))
            self._para = None

    def handle_data(self, data):
        self.text.append(data)
        for bucket in (self._cell, self._item, self._para[1] if self._para else None):
            if bucket is not None:
                bucket.append(data)


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    return page


def pct(value: float) -> str:
    return f"{100 * value:.1f}%"


@pytest.fixture(scope="module")
def run():
    tables = split_table(make_hiring(800, seed=1), ROLES, SplitConfig(test_size=0.25, seed=0))
    X = tables.train.drop(columns=["hired"])
    model = ModelConfig(depth=2, fairness=("statistical_parity",), fairness_bound=0.02, time_limit=30)
    fair = StrongTreeClassifier(**model.estimator_params(ROLES)).fit(X, tables.train["hired"],
                                                                      sensitive_features=["gender"]).tree_
    free = StrongTreeClassifier(**model.without_fairness().estimator_params(ROLES)).fit(
        X.drop(columns=["gender"]), tables.train["hired"]).tree_
    inp = report_input("hiring.csv", fair, free, ROLES, model, SplitConfig(test_size=0.25, seed=0), tables)
    html = build_report(inp, engine="builtin", created=WHEN)
    return inp, html, parse(html)


def test_the_numbers_are_the_predictions(run):
    inp, html, page = run
    parts = {"train": inp.train, "test": inp.test}
    # The cost table: every model's accuracy and gap per part.
    cost = {row[0]: row for row in page.tables["cost"][1:]}
    header = page.tables["cost"][0]
    assert header == ["model", "status", "leaves", "training accuracy", "training gap", "test accuracy", "test gap"]
    for name, tree in (("This tree", inp.tree), ("The same tree without the fairness constraint", inp.unconstrained)):
        for split, frame in parts.items():
            predicted = tree.predict(frame)
            accuracy = np.mean(predicted == frame["hired"].to_numpy())
            rates = [np.mean(predicted[(frame["gender"] == g).to_numpy()] == "yes") for g in ("female", "male")]
            column = 3 if split == "train" else 5
            assert cost[name][column] == pct(accuracy)
            assert cost[name][column + 1] == f"{100 * abs(rates[0] - rates[1]):.1f} pp"
    majority = inp.train["hired"].value_counts().idxmax()
    assert cost["Majority class"][5] == pct(np.mean(inp.test["hired"] == majority))
    assert cost["Majority class"][6] == "0.0 pp"
    # Each group's rate on each part, with its counts.
    for split, frame in parts.items():
        rows = page.tables[f"rates-{split}-statistical_parity"]
        assert rows[0] == ["gender", "among", "rate", "value", "95% interval", "predicted positive", "flag"]
        predicted = inp.tree.predict(frame) == "yes"
        for row in rows[1:]:
            mine = (frame["gender"] == row[0]).to_numpy()
            assert row[3] == pct(predicted[mine].mean())
            assert row[5] == f"{predicted[mine].sum():,} of {mine.sum():,}"
            low, high = (float(v.rstrip("%")) for v in row[4].split(" to "))
            assert low <= float(row[3].rstrip("%")) <= high
    # The groups before any tree.
    groups = {row[0]: row for row in page.tables["groups"][1:]}
    both = pd.concat([inp.train, inp.test])
    for group in ("female", "male"):
        mine = both[both["gender"] == group]
        assert groups[group][1] == f"{len(mine):,}" and groups[group][3] == pct((mine["hired"] == "yes").mean())


def test_the_tree_its_words_rules_certificate_date_and_version(run):
    inp, html, page = run
    assert page.lists["rules"] == inp.tree.to_text().splitlines()
    assert page.lists["summary"] == list(tree_summary(inp.tree))
    record = inp.tree.record
    assert record.status == "optimal"
    said = claim(record)
    certificate = next(text for attrs, text in page.paragraphs if text.startswith(f"{said.label}: No tree of depth 2"))
    assert certificate.startswith(f"{said.label}: {said.words}")  # the claim's words, then the numbers
    assert f"gap {100 * record.gap:.1f}%" in certificate and f"bound {record.bound:,.0f}" in certificate
    # the solver's note names the setting as the dashboard does (it read "max_thresholds=67 keeps every one")
    assert record.message.startswith("The encoding kept ") and "max_thresholds=" not in html
    assert re.search(r"<dt>Solver&#x27;s note</dt><dd>The encoding kept \d+ of the [\d,]+ distinct thresholds of the "
                     r"numeric columns: the certificate and the bound hold over those; \d+ thresholds per numeric "
                     r"column \(numeric coding “x ≤ t from the data”\) keeps every one", html)
    assert "2026-03-04 09:30 UTC" in html and f"strongtree {__version__}" in html
    assert 'class="strongtree"' in html and "Drawn by the built-in layout" in html
    assert "Fairness notions" in "".join(page.text) and "Statistical parity" in "".join(page.text)
    glance = page.lists.get("") or []
    assert "On the test rows, fairness costs" in html
    assert "<h2>The cost of fairness</h2>" in html and "<h2>Each group's rates</h2>" in html
    assert split_words(SplitConfig(test_size=0.25, seed=0), split_table(make_hiring(800, seed=1), ROLES,
                                                                       SplitConfig())) in html
    assert glance == []


ADDRESS = re.compile(r"(?i)(https?:|ftp:|file:|data:|//[a-z0-9.-]+\.[a-z]{2,}|@import|url\()")


def outside_addresses(html: str) -> list[str]:
    """Addresses a browser could fetch: in any attribute (the SVG namespace names aside, never fetched) or in the
    styles; an address written as text in a cell is only text."""
    page = parse(html)
    found = []
    for tag, attrs in page.attributes:
        for name, value in attrs.items():
            if name in ("xmlns", "xmlns:xlink") and str(value).startswith("http://www.w3.org/"):
                continue
            found += [f"{tag} {name}: {m}" for m in ADDRESS.findall(str(value or ""))]
    for style in re.findall(r"<style>(.*?)</style>", html, re.S):
        found += ADDRESS.findall(style)
    return found


@pytest.mark.filterwarnings("ignore::strongtree_core.TrivialTreeWarning")  # noise labels: no tree beats the majority
@pytest.mark.parametrize("engine", ["builtin", "graphviz"])
def test_the_page_names_no_other_address_and_escapes_user_text(engine):
    if engine == "graphviz" and shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed")
    evil = '<img src="http://evil.example/x.png">'
    frame = pd.DataFrame({
        evil: np.tile(["a", "b"], 60), "x": np.arange(120) % 7,
        "group": np.repeat(["g <b>1</b>", "g&2"], 60), "y": (np.arange(120) % 3 == 0).astype(int)})
    train, test = frame.iloc[:90], frame.iloc[90:]
    tree = StrongTreeClassifier(depth=2, time_limit=20).fit(train.drop(columns=["y", "group"]), train["y"]).tree_
    inp = ReportInput(tree, train, test, "evil <script>alert(1)</script>.csv", pos_label=1, protected=("group",),
                      settings={"depth": 2})
    html = build_report(inp, engine=engine, created=WHEN)
    assert outside_addresses(html) == []
    assert "<script" not in html and "<img" not in html and "&lt;img" in html
    assert outside_addresses('<img src="http://x.example/a.png">') and outside_addresses("<style>@import x</style>")
    tags = {tag for tag, _ in parse(html).attributes}
    assert not tags & {"script", "img", "link", "iframe", "object", "embed", "image", "use", "a"}
    assert (GRAPHVIZ if engine == "graphviz" else BUILT_IN) in html


def test_dot_draws_when_installed_and_the_layout_otherwise(run, monkeypatch):
    inp = run[0]
    if shutil.which("dot"):
        drawing = tree_drawing(inp.tree)
        assert drawing.engine == GRAPHVIZ and drawing.svg.startswith("<svg") and "<!DOCTYPE" not in drawing.svg
        assert drawing.svg.count('class="node"') == int((inp.tree.structure.feature != -2).sum())
    monkeypatch.setattr("strongtree_core.report.drawing.shutil.which", lambda name: None)
    drawing = tree_drawing(inp.tree)
    assert drawing.engine == BUILT_IN and 'textLength="' in drawing.svg


def test_a_tree_without_fairness_or_test_rows_still_reports(run):
    inp = run[0]
    plain = ReportInput(inp.unconstrained, inp.train, None, "hiring.csv", pos_label="yes",
                        settings={"depth": 2, "fairness": None})
    page = parse(build_report(plain, engine="builtin", created=WHEN))
    assert page.tables["cost"][0] == ["model", "status", "leaves", "training accuracy"]  # no groups: no gap
    assert [row[0] for row in page.tables["cost"][1:]] == ["This tree", "CART, same depth",
                                                           "Logistic regression (not a tree)", "Majority class"]
    assert "groups" not in page.tables  # no protected column: no groups
    assert any("No protected column was chosen" in t for t in page.text)


def test_the_file_name():
    assert report_file_name("compas.csv", 3) == "report-compas-run-3.html"
    assert report_file_name("Hiring (teaching data with planted bias)", None) == (
        "report-hiring-teaching-data-with-planted-bias.html")
    assert report_file_name("<>.csv", 1) == "report-table-run-1.html"
