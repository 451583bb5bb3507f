"""The report a review board reads: one self-contained HTML file, readable offline and
printable to PDF from the browser.

:func:`build_report` measures everything from the trees' predictions on the rows
given (training rows, and test rows when there are any) and writes one HTML page:

1. at a glance: the certificate, the cost of fairness and the gist of the tree;
2. the table and its protected groups (sizes, base rates, small groups flagged);
3. the settings;
4. the certificate in words (status, objective, bound, gap, time, method);
5. the tree drawn (Graphviz's ``dot`` when installed, else the built-in layout)
   and told in sentences, and its rules;
6. each group's compared rates with 95 % intervals on training and test rows;
7. the cost of fairness against the tree without the constraint, CART, a logistic
   regression and the majority class, in one number each;
8. the date and the package version.

The page holds its styles and drawings inline and names no other address, so a
browser opening it from disk fetches nothing; print styles keep sections and
table rows whole and start the large sections on a new page.
"""

from __future__ import annotations

import datetime as _dt
import html
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from strongtree_core import vocabulary
from strongtree_core.version import __version__
from strongtree_core.metrics import fairness_gap, positive_present
from strongtree_core.metrics.gap_intervals import SMALL_OUTCOME
from strongtree_core.metrics.group_summary import SMALL_ROWS, group_summary
from strongtree_core.report.cost import THIS_TREE, UNCONSTRAINED, CostOfFairness, cost_of_fairness
from strongtree_core.report.drawing import Engine, tree_drawing
from strongtree_core.report.group_rates import CONFIDENCE, group_rates, shown_notions
from strongtree_core.report.references import CART_NAME, references
from strongtree_core.report.settings import settings_rows
from strongtree_core.tree import FittedTree
from strongtree_core.tree.summary import tree_summary
from strongtree_core.tree.claim import bound_and_gap, claim
from strongtree_core.metrics.verdict import gap_verdict, small_words
from strongtree_core.words import (
    LABEL_LIMIT,
    Shortened,
    bound_words,
    class_counts,
    count_of,
    fmt,
    gap_words,
    objective_value,
    one_line,
    route_words,
    status_word,
)

PARTS = {"train": "training rows", "test": "test rows"}
MODEL_WORDS = {THIS_TREE: "This tree", UNCONSTRAINED: "The same tree without the fairness constraint",
               CART_NAME: "CART, same depth", "Logistic regression": "Logistic regression (not a tree)",
               "Majority class": "Majority class"}


@dataclass(frozen=True)
class ReportInput:
    """What a report is made from.

    Attributes
    ----------
    tree : FittedTree
    train, test : DataFrame
        The training rows the tree learned from and the rows held out (``test`` may
        be empty), each with the target, protected and legitimate columns.
    dataset : str
        The table's name as the reader knows it.
    pos_label : label or None
        The positive class (rates compared between groups are rates of predicting it).
    protected, legitimate : tuple of str
        Protected columns and legitimate factors (columns of the rows).
    fairness : tuple of str
        The notions the tree was constrained by ("" none).
    fairness_bound : float or None
        δ, as a share (0.05 is 5 pp).
    settings : mapping
        The estimator's parameters (shown through :func:`~strongtree_core.report.settings.settings_rows`).
    split : str
        How the rows were divided, in words.
    unconstrained : FittedTree or None
        The same tree solved without the fairness constraint (None: not at hand, or no constraint).
    notes : tuple of str
        Anything else the reader must know (shown under the table's section).
    note_words : callable
        The solver's note with its parameters named as the reader's tool names them (the dashboard's settings, the
        command line's options); as the library writes it by default.
    """

    tree: FittedTree
    train: pd.DataFrame
    test: pd.DataFrame | None
    dataset: str
    pos_label: Any = None
    protected: tuple[str, ...] = ()
    legitimate: tuple[str, ...] = ()
    fairness: tuple[str, ...] = ()
    fairness_bound: float | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    split: str = ""
    unconstrained: FittedTree | None = None
    notes: tuple[str, ...] = ()
    note_words: Callable[[str], str] = str

    @property
    def target(self) -> str:
        return self.tree.target

    def parts(self) -> dict[str, pd.DataFrame]:
        out = {"train": self.train}
        if self.test is not None and len(self.test):
            out["test"] = self.test
        return out


#: Control characters other than tab and line breaks (a NUL byte, an escape, ...).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def e(value: Any) -> str:
    """``value`` as HTML text: on one line, markup characters as entities, other control characters
    (a NUL byte, an escape) written as visible escapes (``\\x00``), never raw."""
    return html.escape(one_line(" ".join(str(value).splitlines())), quote=True)


def _names_section(short: Shortened) -> str:
    """The names the report shows cut, in full ("" when none was)."""
    if not short.full:
        return ""
    rows = [[cut, whole] for cut, whole in short.full.items()]
    return ('<section id="names"><h2>Names shown cut</h2><p class="note">These names are longer than '
            f"{fmt(LABEL_LIMIT, 'int')} characters: the report shows them cut; here they are in full.</p>"
            + _table(["shown as", "in full"], rows, "names-in-full", numeric_from=2) + "</section>")


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], table_id: str = "", numeric_from: int = 1,
           classes: Sequence[str] | None = None) -> str:
    ident = f' id="{e(table_id)}"' if table_id else ""
    head = "".join(f'<th scope="col"{" class=num" if i >= numeric_from else ""}>{e(h)}</th>'
                   for i, h in enumerate(headers))
    body = []
    for r, row in enumerate(rows):
        cells = []
        for i, cell in enumerate(row):
            tag = "th scope=\"row\"" if i == 0 else "td"
            cls = " class=num" if i >= numeric_from else ""
            cells.append(f"<{tag}{cls}>{e(cell)}</{tag.split()[0]}>")
        row_class = f' class="{classes[r]}"' if classes and classes[r] else ""
        body.append(f"<tr{row_class}>{''.join(cells)}</tr>")
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _accuracy(predicted: np.ndarray, frame: pd.DataFrame, target: str) -> float:
    return float(np.mean(np.asarray(predicted) == frame[target].to_numpy())) if len(frame) else float("nan")


def _gap(inp: ReportInput, frame: pd.DataFrame, predicted: np.ndarray, notion: str) -> float | None:
    if not inp.protected or inp.pos_label is None:
        return None
    if not positive_present(frame[inp.target].to_numpy(), predicted, inp.pos_label):
        return None  # no positive row, true or predicted: no rate to compare
    gap = fairness_gap(
        notion, frame[inp.target].to_numpy(), np.asarray(predicted), sensitive_features=frame[list(inp.protected)],
        legitimate_features=frame[list(inp.legitimate)] if inp.legitimate else None, pos_label=inp.pos_label,
    )
    return None if gap.difference is None or np.isnan(gap.difference) else float(gap.difference)


@dataclass(frozen=True)
class Compared:
    """One compared model's predictions per part, status and leaves."""

    name: str
    status: str
    predictions: Mapping[str, np.ndarray]
    leaves: int | None


def compared_models(inp: ReportInput) -> list[Compared]:
    """This tree, the tree without the constraint (when at hand), CART, logistic regression, majority class."""
    parts = inp.parts()
    out = [Compared(THIS_TREE, inp.tree.record.status, {s: inp.tree.predict(f) for s, f in parts.items()},
                    int(inp.tree.structure.leaves.size))]
    if inp.unconstrained is not None:
        out.append(Compared(UNCONSTRAINED, inp.unconstrained.record.status,
                            {s: inp.unconstrained.predict(f) for s, f in parts.items()},
                            int(inp.unconstrained.structure.leaves.size)))
    for ref in references(inp.tree, parts, inp.target, int(inp.settings.get("depth", inp.tree.structure.depth))):
        out.append(Compared(ref.name, "heuristic" if ref.name == CART_NAME else "reference", ref.predictions,
                            ref.leaves))
    return out


def comparison_rows(inp: ReportInput, models: Sequence[Compared], notion: str | None) -> list[dict[str, Any]]:
    """The run's comparison rows (``model``, ``status``, ``leaves``, ``<part>_accuracy``, ``<part>_<notion>``)."""
    rows = []
    for m in models:
        row: dict[str, Any] = {"model": m.name, "status": m.status, "leaves": m.leaves}
        for split, frame in inp.parts().items():
            row[f"{split}_accuracy"] = _accuracy(m.predictions[split], frame, inp.target)
            if notion is not None:
                row[f"{split}_{notion}"] = _gap(inp, frame, m.predictions[split], notion)
        rows.append(row)
    return rows


# -- sections ----------------------------------------------------------------------------------------------


def _certificate(inp: ReportInput, short: Shortened) -> tuple[str, list[tuple[str, str]]]:
    """The certificate in :func:`~strongtree_core.tree.claim.claim`'s words, and its facts (a name in them, such as the
    class a constant tree predicts or a column in the solver's note, cut as ``short`` cuts it)."""
    tree = inp.tree
    record = tree.record
    said = claim(record)
    objective = str(inp.settings.get("objective", "accuracy"))
    regularization = float(inp.settings.get("regularization", 0.0) or 0.0)
    bound, gap = bound_and_gap(record, objective, regularization, record.n_rows)
    facts = [
        ("Outcome", said.short),
        ("Best tree", objective_value(record.objective, objective, regularization, record.n_rows)
         if record.objective is not None else "–"),
        ("Bound", bound if record.bound is not None or said.state == "constant" else
         "none yet (nothing proven about the distance to the best tree)"),
        ("Gap", gap.removeprefix("gap ")),
        ("Time", fmt(record.runtime, "seconds")),
        ("Method", route_words(record.method, record.backend) if record.method else "–"),
        ("Training rows", f"{fmt(record.n_rows, 'int')} in {count_of(record.n_patterns, 'distinct pattern')}"),
    ]
    scope = record.scope
    if scope is not None and scope.thresholds is not None:
        kept = fmt(scope.thresholds, "int") + ("" if scope.distinct_thresholds is None else
                                               f" of the {fmt(scope.distinct_thresholds, 'int')} distinct cuts")
        facts.append(("Thresholds searched", kept))
    if record.formulation:
        facts.append(("Formulation", record.formulation))
    if record.message:
        facts.append(("Solver's note", short.text(inp.note_words(record.message))))
    found = (f" Best tree {objective_value(record.objective, objective, regularization, record.n_rows)}, bound "
             f"{bound_words(record.bound, record.status)}, {gap_words(record.status, record.gap)}, "
             f"found in {fmt(record.runtime, 'seconds')} by {route_words(record.method, record.backend)}."
             if record.objective is not None and said.promise_state != "constant" else "")
    return short.text(f"{said.label}: {said.words}{found}"), facts


def _promise_details(tree: FittedTree, short: Shortened) -> str:
    """How a promise on new rows was checked, in its method's own terms, folded away (the words above say what
    was promised; the risks and the optimism's rescaling are for the reader who opens them)."""
    details = (tree.record.promise or {}).get("details")
    if not details:
        return ""
    return (f'<details id="promise-details"><summary>How the promise was checked</summary>'
            f'<p class="note">{e(short.text(str(details)))}</p></details>')


def _setting(short: Shortened, value: Any) -> str:
    """A setting's value as the report shows it: a tree file's settings are text from anywhere, so a value past
    the label limit is cut like a name (and listed in full under "Names shown cut")."""
    text = str(value)
    return short.name(text) if len(text) > LABEL_LIMIT else text


def _title(inp: ReportInput, short: Shortened) -> str:
    """The report's title, from the tree returned: a constant tree that a promise left is called one.  The
    table's name (and a depth read from a tree file) cut as ``short`` cuts a name."""
    tree = inp.tree
    said = claim(tree.record)
    dataset = short.name(inp.dataset)
    if said.promise_state == "constant":
        asked = inp.settings.get("depth")
        return (f"{dataset}: a constant tree (the fairness promise on new rows left no tree that splits"
                + (f" at depth {_setting(short, asked)})" if asked is not None else ")"))
    return f"{dataset}: a {'fair ' if inp.fairness else ''}decision tree of depth {tree.structure.depth}"


def _groups_section(inp: ReportInput, short: Shortened) -> str:
    if not inp.protected:
        return "<p>No protected column was chosen: there are no groups to compare.</p>"
    summary = group_summary(inp.train, inp.test, target=inp.target, protected=inp.protected, pos_label=inp.pos_label)
    positive = inp.pos_label
    has_test = bool(summary["test_rows"].sum())
    headers = [" & ".join(map(short.name, inp.protected)), "rows", "share of rows"]
    if positive is not None:
        headers.append(f"share {short.name(positive)}")
    headers.append("training rows")
    if has_test:
        headers.append("test rows")
    headers.append("flag")
    rows = []
    for r in summary.itertuples():
        row = [short.name(r.group), fmt(r.rows, "int"), fmt(r.share, "percent")]
        if positive is not None:
            row.append(fmt(r.base_rate, "percent"))
        row.append(fmt(r.train_rows, "int"))
        if has_test:
            row.append(fmt(r.test_rows, "int"))
        row.append(f"small: {r.why_small}" if r.small else "")
        rows.append(row)
    note = (f"A group is flagged small when its training or test rows number fewer than {fmt(SMALL_ROWS, 'int')}, "
            f"or hold fewer than {fmt(SMALL_OUTCOME, 'int')} rows of the positive class or of the others: its rates "
            "are too uncertain to compare.")
    return _table(headers, rows, "groups", classes=["small" if s else "" for s in summary["small"]]) + \
        f'<p class="note">{e(note)}</p>'


def _rates_section(inp: ReportInput, notions: Sequence[str], short: Shortened) -> str:
    if not inp.protected or inp.pos_label is None:
        return ("<p>Per-group rates need a protected column and a positive class; this tree has "
                + ("no protected column." if not inp.protected else "no positive class.") + "</p>")
    out = []
    constrained = set(inp.fairness)
    constant = bool(np.unique(inp.tree.structure.prediction[inp.tree.structure.leaves - 1]).size == 1)
    for split, frame in inp.parts().items():
        predicted = inp.tree.predict(frame)
        out.append(f"<h3>On the {e(PARTS[split])} ({fmt(len(frame), 'int')})</h3>")
        if not positive_present(frame[inp.target].to_numpy(), predicted, inp.pos_label):
            out.append(f"<p>No row here is of the positive class {e(inp.pos_label)} or predicted so: no rate to "
                       "compare.</p>")
            continue
        table = group_rates(frame, predicted, target=inp.target, protected=inp.protected, legitimate=inp.legitimate,
                            pos_label=inp.pos_label, notions=notions)
        for notion, part in table.groupby("notion", sort=False):
            first = part.iloc[0]
            name = vocabulary.FAIRNESS_NOTIONS.get(notion, notion)
            bound = ""
            if notion in constrained and inp.fairness_bound is not None:
                found = gap_verdict(first["gap"], inp.fairness_bound, training=split == "train", constrained=True,
                                    interval=(first["gap_low"], first["gap_high"]), constant=constant,
                                    confidence=CONFIDENCE)
                bound = "" if found is None else f"; {found.words}"
            out.append(
                f'<p class="gap" data-notion="{e(notion)}" data-part="{e(split)}"><b>{e(name)}</b>: gap '
                f"{e(fmt(first['gap'], 'points'))} ({e(fmt(CONFIDENCE, 'percent').replace('.0', ''))} interval "
                f"{e(fmt(first['gap_low'], 'points'))} to {e(fmt(first['gap_high'], 'points'))}, simultaneous over "
                f"{e(count_of(int(first['n_differences']), 'difference'))}){e(bound)}.</p>")
            rows = [[short.name(r.group), short.text(str(r.cohort)), short.text(str(r.rate)), fmt(r.value, "percent"),
                     f"{fmt(r.low, 'percent')} to {fmt(r.high, 'percent')}",
                     f"{fmt(r.positives, 'int')} of {fmt(r.denominator, 'int')}",
                     small_words(r.denominator) if r.small else ""]
                    for r in part.itertuples()]
            out.append(_table([" & ".join(map(short.name, inp.protected)), "among", "rate", "value", "95% interval",
                               "predicted positive", "flag"], rows, f"rates-{split}-{notion}", numeric_from=3,
                              classes=["small" if r.small else "" for r in part.itertuples()]))
    out.append('<p class="note">A group\'s interval is a Wilson score interval; a gap\'s interval holds for all of '
               "its differences at once (Bonferroni). On the training rows the certificate decides whether the gap "
               "is within δ; on other rows its interval does (undecided when the interval straddles δ); a constant "
               "tree's gap is 0 on any rows. A rate flagged small is measured on fewer than "
               f"{fmt(SMALL_ROWS, 'int')} rows.</p>")
    return "".join(out)


def _cost_section(inp: ReportInput, rows: list[dict[str, Any]], notion: str | None, cost: CostOfFairness | None) -> str:
    parts = list(inp.parts())
    headers = ["model", "status", "leaves"]
    for split in parts:
        headers.append(f"{PARTS[split].split()[0]} accuracy")
        if notion is not None:
            headers.append(f"{PARTS[split].split()[0]} gap")
    body = []
    # the two StrongTrees in their claim's words (a constant tree a promise left is not "Proven optimal")
    claimed = {THIS_TREE: claim(inp.tree.record).short}
    if inp.unconstrained is not None:
        claimed[UNCONSTRAINED] = claim(inp.unconstrained.record).short
    for r in rows:
        line = [MODEL_WORDS.get(r["model"], r["model"]), claimed.get(r["model"]) or status_word(r["status"]).label,
                fmt(r["leaves"], "int")]
        for split in parts:
            line.append(fmt(r[f"{split}_accuracy"], "percent"))
            if notion is not None:
                line.append(fmt(r.get(f"{split}_{notion}"), "points"))
        body.append(line)
    sentences = "".join(f"<p>{e(s)}</p>" for s in (cost.sentences() if cost else []))
    gap_note = (f" Gaps are those of {vocabulary.FAIRNESS_NOTIONS.get(notion, notion).lower()}, in percentage points."
                if notion else "")
    missing = ("" if inp.unconstrained is not None or not inp.fairness else
               "<p class=\"note\">The tree without the constraint was not at hand, so the cost of fairness is not "
               "measured.</p>")
    return (sentences + missing + _table(headers, body, "cost", numeric_from=2)
            + f'<p class="note">CART is scikit-learn\'s greedy tree of the same depth on the same binary questions; '
              "the logistic regression uses the same columns (numbers standardised, one column per value of the "
              "others); the majority class predicts the most frequent training class for every row. Every model "
              f"learned from the training rows only.{e(gap_note)}</p>")


STYLE = """
:root { --ink: #1b2631; --muted: #4a5563; --line: #dde3ea; --soft: #f4f6f8; --green: #1e8a5a; --orange: #b9770e;
        --red: #c0392b; }
* { box-sizing: border-box; }
html { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
body { font-family: "Source Sans 3", "Source Sans Pro", "Segoe UI", Helvetica, Arial, sans-serif; color: var(--ink);
       margin: 0 auto; padding: 28px 32px 48px; max-width: 1120px; font-size: 16px; line-height: 1.45;
       overflow-wrap: anywhere; }
header { border-bottom: 3px solid var(--ink); padding-bottom: 10px; margin-bottom: 18px; }
header .brand { font-size: 14px; letter-spacing: 0.08em; text-transform: uppercase; color: var(--muted); }
h1 { font-size: 30px; margin: 4px 0 6px; }
h2 { font-size: 22px; margin: 30px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 17px; margin: 20px 0 8px; }
p { margin: 6px 0 10px; }
.meta { color: var(--muted); font-size: 14px; }
.glance { background: var(--soft); border: 1px solid var(--line); border-radius: 8px; padding: 12px 18px; }
.glance li { margin: 4px 0; }
.badge { display: inline-block; border-radius: 12px; padding: 1px 10px; font-size: 14px; font-weight: 600;
         border: 1px solid currentColor; }
.badge.green { color: var(--green); } .badge.orange { color: var(--orange); } .badge.red { color: var(--red); }
.badge.gray, .badge.blue, .badge.violet { color: var(--muted); }
table { border-collapse: collapse; margin: 8px 0 12px; font-size: 14px; width: auto; max-width: 100%; }
th, td { border: 1px solid var(--line); padding: 4px 9px; text-align: left; vertical-align: top; }
thead th { background: var(--soft); font-weight: 600; }
tbody th { font-weight: 400; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.small td, tr.small th { background: #fdf2e4; }
dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 4px 16px; margin: 8px 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
.note { color: var(--muted); font-size: 14px; }
.drawing { border: 1px solid var(--line); border-radius: 8px; padding: 10px; background: #fff; }
.drawing svg { display: block; margin: 0 auto; max-width: 100%; height: auto; }
ol.rules { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 13px; padding-left: 28px; }
ol.rules li { margin: 3px 0; }
footer { margin-top: 36px; border-top: 1px solid var(--line); padding-top: 8px; color: var(--muted);
         font-size: 13px; }
@page { size: A4; margin: 14mm 12mm; }
@media print {
  body { padding: 0; max-width: none; font-size: 11pt; }
  h2 { break-after: avoid; }
  h3 { break-after: avoid; }
  section.new-page { break-before: page; }
  table, dl.facts, .glance, figure { break-inside: avoid; }
  tr { break-inside: avoid; }
  thead { display: table-header-group; }
  .drawing { border: none; padding: 0; }
  a { color: inherit; text-decoration: none; }
}
"""


def build_report(inp: ReportInput, *, engine: Engine = "auto", created: _dt.datetime | None = None) -> str:
    """The report as one self-contained HTML page (see the module)."""
    created = created or _dt.datetime.now().astimezone()
    tree = inp.tree
    parts = inp.parts()
    notions = shown_notions(inp.fairness, inp.legitimate) if inp.protected and inp.pos_label is not None else []
    notion = notions[0] if notions else None
    notion_name = vocabulary.FAIRNESS_NOTIONS.get(notion) if notion else None
    models = compared_models(inp)
    rows = comparison_rows(inp, models, notion)
    cost = cost_of_fairness(rows, notion, notion_name, bool(inp.fairness))
    short = Shortened.of_tree(tree, [inp.dataset, *inp.protected, *inp.legitimate])
    certificate, facts = _certificate(inp, short)
    summary = tree_summary(tree)
    drawing = tree_drawing(tree, engine)
    said = claim(tree.record)
    both = pd.concat(list(parts.values()), ignore_index=True)
    classes = list(tree.classes)
    counts = [int((both[inp.target] == c).sum()) for c in classes]

    summary = tuple(short.text(s) for s in summary)
    glance = [certificate]
    if cost is not None and cost.headline():
        glance.append(short.text(cost.headline()))
    glance.append(summary[-1] if len(summary) > 1 else summary[0])
    split_words = inp.split or (f"{fmt(len(inp.train), 'int')} training rows"
                                + (f" and {fmt(len(inp.test), 'int')} test rows" if "test" in parts else ""))
    table_facts = [
        ("Rows", f"{fmt(len(both), 'int')} ({split_words})"),
        ("Target", f"{short.name(inp.target)}: {class_counts(list(map(short.name, classes)), counts)}"),
        ("Positive class", "none (several classes)" if inp.pos_label is None else short.name(inp.pos_label)),
        ("Protected", ", ".join(map(short.name, inp.protected)) or "none"),
        ("Legitimate factors", ", ".join(map(short.name, inp.legitimate)) or "none"),
        ("Columns the tree may ask about", ", ".join(map(short.name, tree.feature_names))),
    ]
    # A tree file's settings are text from anywhere: a value past the label limit is cut like a name.
    settings = [(name, _setting(short, value)) for name, value in settings_rows(inp.settings)]
    rules = [short.text(r) for r in tree.to_text().splitlines()]
    title = _title(inp, short)

    def facts_list(items: Sequence[tuple[str, str]], ident: str) -> str:
        return f'<dl class="facts" id="{ident}">' + "".join(
            f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in items) + "</dl>"

    sections = [
        f'<section id="glance"><h2>At a glance</h2><div class="glance"><ul>'
        + "".join(f"<li>{e(s)}</li>" for s in glance) + "</ul></div></section>",
        '<section id="table"><h2>The table and its groups</h2>' + facts_list(table_facts, "table-facts")
        + "".join(f'<p class="note">{e(short.text(n))}</p>' for n in inp.notes) + "<h3>Protected groups</h3>"
        + _groups_section(inp, short) + "</section>",
        '<section id="settings"><h2>Settings</h2>' + facts_list(settings, "settings-facts") + "</section>",
        f'<section id="certificate"><h2>The certificate</h2><p><span class="badge {e(said.colour)}">'
        f"{e(said.label)}</span>"
        + (f' <span class="badge {"green" if said.promise_state == "proved" else "blue"}">{e(said.promise_label)}</span>'
           if said.promise_label else "")
        + f"</p><p>{e(certificate)}</p>" + facts_list(facts, "certificate-facts") + _promise_details(tree, short)
        + "</section>",
        '<section id="tree" class="new-page"><h2>The tree</h2>'
        f'<figure><div class="drawing">{drawing.svg}</div><figcaption class="note">Drawn by {e(drawing.engine)}. '
        "Each box asks a question; the left branch is the answer yes. Coloured boxes are leaves: the class "
        "predicted there, with the training rows that reach them.</figcaption></figure>"
        "<h3>In words</h3><ul id=\"summary\">" + "".join(f"<li>{e(s)}</li>" for s in summary) + "</ul>"
        "<h3>Rules</h3><ol class=\"rules\" id=\"rules\">" + "".join(f"<li>{e(r)}</li>" for r in rules) + "</ol>"
        "</section>",
        '<section id="fairness" class="new-page"><h2>Each group\'s rates</h2>'
        + (f"<p>Rates compared between groups are rates of predicting {e(short.name(inp.pos_label))}, measured from this "
           "tree's predictions.</p>" if inp.pos_label is not None else "")
        + _rates_section(inp, notions, short) + "</section>",
        '<section id="cost" class="new-page"><h2>The cost of fairness</h2>' + _cost_section(inp, rows, notion, cost)
        + "</section>",
    ]
    sections.append(_names_section(short))  # after every other: it lists the names they cut
    stamp = created.strftime("%Y-%m-%d %H:%M %Z").strip()
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<meta name=\"generator\" content=\"strongtree {e(__version__)}\">"
        f"<title>{e(title)}</title><style>{STYLE}</style></head><body>"
        f'<header><div class="brand">StrongTree report</div><h1>{e(title)}</h1>'
        f'<p class="meta" id="stamp">Made {e(stamp)} with strongtree {e(__version__)} · '
        f"{e(said.short)}</p></header>"
        + "".join(sections)
        + f'<footer>Made {e(stamp)} by strongtree {e(__version__)} (StrongTree Studio). Every number in this report '
          "was measured from the trees' predictions on the rows named above.</footer></body></html>\n"
    )
