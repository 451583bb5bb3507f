"""Fairness you can see: per-group rates as bar charts with the δ band, the
difference and the ratio of each comparison, and a pass or fail per group.

Every number comes from the run's stored evaluation (recomputed from the
tree's predictions by :mod:`strongtree_studio.data.evaluation`); these functions only arrange
it.  Rates are percentages, gaps percentage points (see :mod:`strongtree_studio.views.status_words`).

A fairness constraint bounds every pair of groups: the largest rate minus the
smallest is at most δ.  On a chart that is a band δ wide centred between the
lowest and the highest group: every bar ends inside it exactly when every pair
is within δ.  Each bar carries its 95 % interval (Wilson), and each group is in
one of three states: *within δ* (its whole interval inside the band, green),
*beyond δ* (its whole interval outside, red) or *undecided* (the interval
straddles an edge of the band, orange); stored runs without intervals are
judged on the point estimate.  Without a constraint the same band (δ of the
settings, marked "not enforced") shows how far the tree is from one.

A green check never stands alone beside a tree that does no better than the
majority class, nor beside a four-fifths ratio below 0.8: the badge then says why
it is not a pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import pandas as pd

from strongtree_core.metrics.fairness_gaps import NOTION_RATES  # noqa: F401  (the rates each notion compares)
from strongtree_core.metrics.promise import PROMISE_KNOWN
from strongtree_core.metrics.promise_cost import promise_outlook
from strongtree_core.estimator.promise_fit import DEFAULT_PROMISE_METHOD
from strongtree_core.metrics.verdict import gap_verdict
from strongtree_studio.views.status_words import count_of, fmt

RATE_NAMES = {
    "selection_rate": "predicted positive",
    "tpr": "true positive rate",
    "fpr": "false positive rate",
    "fnr": "false negative rate",
    "precision": "precision",
    "accuracy": "accuracy",
}
RATE_HELP = {
    "selection_rate": "share of the group the tree predicts in the positive class",
    "tpr": "among rows truly in the positive class, the share predicted positive",
    "fpr": "among rows truly outside the positive class, the share predicted positive",
}
#: The compared trees as the pages name them (the evaluation's model names on the left).
TREE_NAMES = {"StrongTree": "this tree", "StrongTree without fairness constraints": "without fairness constraints",
              "CART (same depth)": "CART, same depth", "Logistic regression": "logistic regression (not a tree)",
              "Majority class": "majority class"}
TREE_COLOURS = {"this tree": "#1e8a5a", "without fairness constraints": "#c0392b", "CART, same depth": "#6b7a8a",
                "logistic regression (not a tree)": "#0072B2", "majority class": "#b39d2a"}
#: A gap above this many percentage points gets a warning colour when no constraint bounds it.
LARGE_GAP = 0.10
#: The four-fifths rule: a group's rate below this share of the highest group's is flagged.
FOUR_FIFTHS = 0.8
PASS, FAIL, NEUTRAL, WARN = "#1e8a5a", "#c0392b", "#6b7a8a", "#d68910"


@dataclass(frozen=True)
class Verdict:
    """How a measured gap reads against δ: a badge text, icon and colour."""

    text: str
    icon: str
    colour: str


def verdict(gap: float | None, fairness_bound: float | None, constrained: bool, split: str, *,
            interval: tuple[float | None, float | None] | None = None, ratio: float | None = None,
            trivial: bool = False, constant: bool = False) -> Verdict | None:
    """The badge under a gap card: :func:`strongtree_core.metrics.verdict.gap_verdict`'s state in a colour.

    Training rows, constrained: the certificate's verdict (exact on these rows); a constant tree:
    within (its gap is 0 on any rows); other rows: the 95 % interval of the gap against δ (within,
    beyond, undecided), or the point estimate when there is no interval.  A pass becomes a warning
    when the tree is trivial or the ratio is below the four-fifths rule's 0.8.
    """
    if gap is None:
        return None
    if constrained and fairness_bound is not None:
        found = gap_verdict(gap, fairness_bound, training=split == "train", constrained=True, interval=interval,
                            constant=constant)
        suffix = (": constant tree" if constant else " on these rows" if split == "train" else "")
        icon, colour = STATE_BADGES[found.state]
        if constant:  # within, for certain; but no green check beside a tree that predicts one class
            icon, colour = ":material/warning:", "orange"
        found = Verdict(found.text + suffix, icon, colour)
    elif gap > LARGE_GAP:
        found = Verdict(f"large gap (over {fmt(LARGE_GAP, 'points')}), not constrained", ":material/warning:",
                        "orange")
    else:
        return Verdict("not constrained", ":material/remove:", "gray")
    if found.colour == "green" and (trivial or (ratio is not None and ratio < FOUR_FIFTHS)):
        why = "the tree does no better than the majority class" if trivial else (
            f"ratio {fmt(ratio, 'ratio')} is below {fmt(FOUR_FIFTHS, 'ratio')}")
        return Verdict(f"{found.text}, but {why}", ":material/warning:", "orange")
    return found


#: The badge of each verdict state: icon and colour.
STATE_BADGES = {"within": (":material/check:", "green"), "beyond": (":material/close:", "red"),
                "undecided": (":material/help:", "orange")}


#: Cohort of each rate in the interval table.
RATE_COHORTS = {"selection_rate": "all rows", "tpr": "rows of the positive class",
                "fpr": "rows outside the positive class"}


def rate_intervals(intervals: dict[str, Any] | None, rate: str) -> dict[str, tuple[float, float]]:
    """Group -> (low, high) of ``rate`` from a split's stored intervals (empty for older runs)."""
    out: dict[str, tuple[float, float]] = {}
    for part in (intervals or {}).values():
        for r in part.get("rates", []):
            if r.get("cohort") == RATE_COHORTS.get(rate) and r.get("low") is not None:
                out[str(r["group"])] = (float(r["low"]), float(r["high"]))
    return out


def group_label(row: dict[str, Any]) -> str:
    return str(row["group"])


def rate_rows(groups: Sequence[dict[str, Any]], rate: str,
              intervals: dict[str, tuple[float, float]] | None = None) -> list[dict[str, Any]]:
    """One row per group with the rate defined: group, rate, rows (and low, high when intervals are given)."""
    out = []
    for row in groups:
        value = row.get(rate)
        if value is None or value != value:
            continue
        item = {"group": group_label(row), "rate": float(value), "rows": int(row.get("count", 0))}
        if intervals and item["group"] in intervals:
            item["low"], item["high"] = intervals[item["group"]]
        out.append(item)
    return out


def band(rows: Sequence[dict[str, Any]], fairness_bound: float) -> tuple[float, float] | None:
    """The δ band: δ wide, centred between the lowest and the highest rate."""
    if len(rows) < 2:
        return None
    rates = [r["rate"] for r in rows]
    mid = (max(rates) + min(rates)) / 2
    return max(0.0, mid - fairness_bound / 2), min(1.0, mid + fairness_bound / 2)


def judged(rows: Sequence[dict[str, Any]], fairness_bound: float, constrained: bool,
           certificate: bool = False) -> list[dict[str, Any]]:
    """Rows with ``status`` (within δ / beyond δ / undecided, or n/a) and the texts a chart and a table show.

    With an interval (``low``, ``high``) a group is within δ when its whole interval lies in
    the band, beyond δ when it lies wholly outside, undecided otherwise; without one, the
    point estimate decides.  With ``certificate`` (the training rows of a tree fitted under the
    constraint, or a constant tree on any rows) the rates themselves decide, as the card's
    verdict does (:func:`strongtree_core.metrics.verdict.gap_verdict`): the intervals are drawn, not judged.
    """
    edges = band(rows, fairness_bound)
    top = max((r["rate"] for r in rows), default=0.0)
    out = []
    for r in rows:
        low, high = (r["rate"], r["rate"]) if certificate else (r.get("low", r["rate"]), r.get("high", r["rate"]))
        if edges is None:
            status = "n/a"
        else:
            inside = edges[0] - 1e-9 <= low and high <= edges[1] + 1e-9
            outside = high < edges[0] - 1e-9 or low > edges[1] + 1e-9
            status = "within δ" if inside else "beyond δ" if outside else "undecided"
            if not constrained and status != "within δ":
                status += " (not enforced)"
        ratio = r["rate"] / top if top > 0 else None
        span = f" ({fmt(r['low'], 'percent')}-{fmt(r['high'], 'percent')})" if "low" in r else ""
        out.append({**r, "status": status, "label": f"{fmt(r['rate'], 'percent')}{span} · {count_of(r['rows'], 'row')}",
                    "difference": top - r["rate"], "ratio": ratio})
    return out


def rate_chart(rows: Sequence[dict[str, Any]], rate: str, fairness_bound: float, constrained: bool,
               group_title: str, certificate: bool = False) -> dict[str, Any] | None:
    """Vega-Lite spec: one horizontal bar per group, the δ band behind them, pass/fail colours
    (``certificate``: judged by the rates, see :func:`judged`)."""
    data = judged(rows, fairness_bound, constrained, certificate)
    if not data:
        return None
    data = [{**d, "label_at": max(d["rate"], d.get("high", d["rate"]))} for d in data]
    edges = band(rows, fairness_bound)
    domain = ["within δ", "beyond δ", "undecided", "beyond δ (not enforced)", "undecided (not enforced)", "n/a"]
    colours = [PASS, FAIL, WARN, WARN, NEUTRAL, NEUTRAL]
    layers: list[dict[str, Any]] = []
    if edges is not None:
        name = f"δ band ({fmt(fairness_bound, 'points')}" + (")" if constrained else ", not enforced)")
        layers.append({
            "data": {"values": [{"lo": edges[0], "hi": edges[1], "band": name}]},
            "mark": {"type": "rect", "color": "#9bd3b6" if constrained else "#cfd8e3", "opacity": 0.45},
            "encoding": {"x": {"field": "lo", "type": "quantitative"}, "x2": {"field": "hi"},
                         "tooltip": [{"field": "band", "title": "band"}]},
        })
    y = {"field": "group", "type": "nominal", "sort": None, "title": None,
         "axis": {"labelFontSize": 13, "labelLimit": 180}}
    layers.append({
        "mark": {"type": "bar", "height": {"band": 0.62}, "cornerRadiusEnd": 3},
        "encoding": {
            "y": y,
            "color": {"field": "status", "type": "nominal", "title": None,
                      "scale": {"domain": domain, "range": colours},
                      "legend": {"orient": "bottom", "labelFontSize": 12, "values": sorted({d["status"] for d in data})}},
            "tooltip": [{"field": "group", "title": group_title}, {"field": "rate", "format": ".1%"},
                        {"field": "rows"}, {"field": "status"}],
        },
    })
    if any("low" in d for d in data):
        layers.append({
            "mark": {"type": "rule", "color": "#1b2631", "strokeWidth": 2},
            "encoding": {"y": y, "x": {"field": "low", "type": "quantitative"}, "x2": {"field": "high"},
                         "tooltip": [{"field": "group", "title": group_title},
                                     {"field": "low", "format": ".1%", "title": "95 % interval from"},
                                     {"field": "high", "format": ".1%", "title": "to"}]},
        })
        for end in ("low", "high"):
            layers.append({"mark": {"type": "tick", "color": "#1b2631", "thickness": 2, "size": 14},
                           "encoding": {"y": y, "x": {"field": end, "type": "quantitative"}}})
    layers.append({
        "mark": {"type": "text", "align": "left", "dx": 5, "fontSize": 12, "color": "#1b2631"},
        "encoding": {"y": y, "x": {"field": "label_at", "type": "quantitative"}, "text": {"field": "label"}},
    })
    return {
        "data": {"values": data},
        "height": {"step": 40},
        "encoding": {
            "x": {"field": "rate", "type": "quantitative", "title": RATE_NAMES.get(rate, rate),
                  "scale": {"domain": [0, 1.45]}, "axis": {"format": ".0%", "values": [0, 0.25, 0.5, 0.75, 1.0],
                                                          "labelFontSize": 12, "titleFontSize": 13}},
        },
        "layer": layers,
    }


def group_table(groups: Sequence[dict[str, Any]], group_title: str) -> pd.DataFrame:
    """Every group's rates (%), with the gap to the highest group (pp) and the ratio to it for
    the share predicted positive (the four-fifths rule)."""
    rows = []
    top = max((g.get("selection_rate") or 0.0 for g in groups), default=0.0)
    for g in groups:
        selected = g.get("selection_rate")
        row = {group_title: group_label(g), "rows": fmt(g.get("count"), "int")}
        for key in ("selection_rate", "tpr", "fpr", "fnr", "precision", "accuracy"):
            row[RATE_NAMES[key]] = fmt(g.get(key), "percent")
        row["gap to highest (predicted positive)"] = fmt(None if selected is None else top - selected, "points")
        ratio = selected / top if selected is not None and top > 0 else None
        row["ratio to highest"] = fmt(ratio, "ratio") + ("" if ratio is None or ratio >= FOUR_FIFTHS else " (below 0.8)")
        rows.append(row)
    return pd.DataFrame(rows).set_index(group_title)


def comparison_table(comparison: Sequence[dict[str, Any]], notions: Sequence[str], names: dict[str, str],
                     claimed: dict[str, str] | None = None) -> pd.DataFrame:
    """The trees compared: status in words (``claimed``: model name -> its claim's label, for the trees
    whose record is at hand), leaves, accuracy (%) and gaps (pp) per split."""
    from strongtree_studio.views.status_words import status_word

    rows = []
    claimed = claimed or {}
    for c in comparison:
        row = {"model": TREE_NAMES.get(c["model"], c["model"]),
               "status": claimed.get(c["model"]) or status_word(c.get("status", "")).label,
               "leaves": fmt(c.get("leaves"), "int")}
        for split, split_name in (("train", "training"), ("test", "test")):
            if f"{split}_accuracy" not in c:
                continue
            row[f"{split_name} accuracy"] = fmt(c.get(f"{split}_accuracy"), "percent")
            for n in notions:
                if f"{split}_{n}" in c:
                    row[f"{split_name} gap: {names.get(n, n)}"] = fmt(c.get(f"{split}_{n}"), "points")
        rows.append(row)
    return pd.DataFrame(rows).set_index("model")


def cost_chart(comparison: Sequence[dict[str, Any]], notion: str, fairness_bound: float | None, split: str) -> dict[str, Any] | None:
    """Vega-Lite spec: accuracy against the measured gap, one point per tree, with δ as a rule."""
    data = [{"tree": TREE_NAMES.get(c["model"], c["model"]), "gap": c.get(f"{split}_{notion}"),
             "accuracy": c.get(f"{split}_accuracy")}
            for c in comparison if c.get(f"{split}_{notion}") is not None and c.get(f"{split}_accuracy") is not None]
    if not data:
        return None
    layers: list[dict[str, Any]] = [{
        "mark": {"type": "point", "filled": True, "size": 160},
        "encoding": {
            "x": {"field": "gap", "type": "quantitative", "title": "measured gap (pp)",
                  "axis": {"labelExpr": "format(datum.value * 100, '.0f') + ' pp'", "labelFontSize": 12}},
            "y": {"field": "accuracy", "type": "quantitative", "title": "accuracy", "scale": {"zero": False},
                  "axis": {"format": ".0%", "labelFontSize": 12}},
            "color": {"field": "tree", "type": "nominal", "title": None,
                      "scale": {"domain": list(TREE_COLOURS), "range": list(TREE_COLOURS.values())},
                      "legend": {"orient": "bottom", "labelFontSize": 12, "labelLimit": 0, "columns": 2}},
            "tooltip": [{"field": "tree"}, {"field": "gap", "format": ".1%", "title": "gap"},
                        {"field": "accuracy", "format": ".1%"}],
        },
    }]
    if fairness_bound is not None:
        layers.append({"data": {"values": [{"fairness_bound": fairness_bound}]}, "mark": {"type": "rule", "strokeDash": [5, 4],
                                                                      "color": PASS},
                       "encoding": {"x": {"field": "fairness_bound", "type": "quantitative"}}})
    return {"data": {"values": data}, "layer": layers}


def new_rows_words(test: dict[str, Any], notions: Sequence[str], fairness_bound: float | None, names: dict,
                   constant: bool = False) -> str:
    """The measured gaps on the test rows with their 95 % intervals and verdicts, one sentence per notion."""
    parts = []
    for notion in notions:
        gap = test.get("gaps", {}).get(notion, {}).get("difference")
        span = test.get("intervals", {}).get(notion, {})
        name = names[notion].name if notion in names else notion
        if gap is None:
            continue
        text = f"{name} on the test rows: {fmt(gap, 'points')}"
        if span.get("low") is not None:
            text += f", 95 % interval {fmt(span['low'], 'points')} to {fmt(span['high'], 'points')}"
        if fairness_bound is not None:
            found = gap_verdict(gap, fairness_bound, training=False, constrained=True,
                                interval=(span.get("low"), span.get("high")), constant=constant)
            text += f", {found.text}" + (" (a constant tree: gap 0 on any rows)" if constant else "")
        parts.append(text + ".")
    words = " ".join(parts)
    return ("The bound is enforced on the training rows. " + words) if words else "The bound is enforced on the training rows."


def promise_rounds(promise: dict[str, Any]) -> pd.DataFrame:
    """The fits a promise made, one row each: training bound, the gaps it measured, and the verdict."""
    rows = []
    measured = {"crossfit": "gap on rows out of fold", "holdout": "gap on the rows it was fitted on"}.get(
        promise.get("method"), "gap on the training rows")
    for r in promise.get("rounds", ()):
        # two decimals: the tightest training bound is δ/50 (0.02 pp at δ = 1 pp)
        row = {"training bound": "constant tree" if r.get("constant") else f"{100 * r.get('training_bound', 0):.2f} pp",
               measured: fmt(r.get("training_gap"), "points")}
        if promise.get("method") == "holdout":
            row["gap on the held-out rows"] = fmt(r.get("held_out_gap"), "points")
        row["kept the promise"] = "yes" if r.get("certified") else "no"
        rows.append(row)
    return pd.DataFrame(rows).set_index("training bound") if rows else pd.DataFrame()


#: Choices of the Model page's "Promise on new rows" (None: the training rows only).
PROMISE_LEVELS = (None, 0.8, 0.9, 0.95)


#: The method the dashboard's promises use (the library's default), and how it is known.
PROMISE_METHOD = DEFAULT_PROMISE_METHOD
PROMISE_HELP = (
    "The training rows only: δ holds on the rows the tree was fitted on (the solver's certificate). A confidence "
    f"c: the gap on new rows of the same population is estimated to stay within δ with confidence c ({PROMISE_METHOD} "
    "method: the training bound is tightened by a margin for sampling error and for the fit's optimism, estimated "
    "from refits on halves of the rows; an estimate whose coverage is measured by simulation, not a proof). When the "
    "rows are too few for any tree that splits, only a constant tree keeps it, and the page says so "
    "(docs/fairness-on-new-rows.md)."
)


def promise_words(level: float | None) -> str:
    """A choice of "Promise on new rows": the dashboard's promises are estimates, and say so."""
    if level is None:
        return "training rows only"
    return f"{round(100 * level)} % confidence on new rows ({PROMISE_KNOWN[PROMISE_METHOD]})"


def promise_cost_words(table, roles, model, split) -> str:
    """What the promise chosen on the Model page will cost with this table's training rows and these roles,
    before the solve (:func:`strongtree_core.metrics.promise_cost.promise_outlook`); "" when there is nothing to measure."""
    from strongtree_studio.data.choices import split_table

    if table is None or roles is None or not roles.protected or roles.pos_label is None or not model.fairness:
        return ""
    frame = table.frame
    if roles.target not in frame.columns or any(c not in frame.columns for c in (*roles.protected, *roles.legitimate)):
        return ""
    try:
        labelled = split_table(frame, roles, split).train
    except ValueError:  # the Data page says what is wrong with the roles
        return ""
    groups = labelled[list(roles.protected)].astype(str).agg(" & ".join, axis=1)
    legit = labelled[list(roles.legitimate)].astype(str).agg(" & ".join, axis=1) if roles.legitimate else None
    notions = [n for n in model.fairness if n != "conditional_statistical_parity" or legit is not None]
    if not notions:
        return ""
    y_positive = labelled[roles.target].astype(str) == str(roles.pos_label)
    outlook = promise_outlook(y_positive.to_numpy(), groups.to_numpy(), notions, fairness_bound=model.fairness_bound,
                              confidence=model.fairness_confidence, time_limit=model.time_limit,
                              method=PROMISE_METHOD, legit=None if legit is None else legit.to_numpy())
    return "What this promise costs: " + outlook.words(model.fairness_bound, model.fairness_confidence, PROMISE_METHOD)
