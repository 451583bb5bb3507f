"""Fairness you can see: per-group rates as bar charts with the δ band, the
difference and the ratio of each comparison, and a pass or fail per group.

Every number comes from the run's stored evaluation (recomputed from the
tree's predictions by :mod:`strongtree_studio.evaluation`); these functions only arrange
it.  Rates are percentages, gaps percentage points (see :mod:`strongtree_studio.words`).

A fairness constraint bounds every pair of groups: the largest rate minus the
smallest is at most δ.  On a chart that is a band δ wide centred between the
lowest and the highest group: every bar ends inside it exactly when every pair
is within δ, so a group whose bar ends outside the band is one that breaks
the bound (drawn red); inside, it passes (green).  Without a constraint the
same band (δ of the settings, marked "not enforced") shows how far the tree is
from one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import pandas as pd

from strongtree_core.metrics.fairness_gaps import NOTION_RATES  # noqa: F401  (the rates each notion compares)
from strongtree_studio.words import count_of, fmt

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
              "CART (same depth)": "CART, same depth"}
TREE_COLOURS = {"this tree": "#1e8a5a", "without fairness constraints": "#c0392b", "CART, same depth": "#6b7a8a"}
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


def verdict(gap: float | None, delta: float | None, constrained: bool, split: str) -> Verdict | None:
    """The badge under a gap card: within / above δ (constrained), or a warning for a large unconstrained gap."""
    if gap is None:
        return None
    if constrained and delta is not None:
        if gap <= delta + 1e-9:
            return Verdict(f"within δ = {fmt(delta, 'points')}", ":material/check:", "green")
        if split == "train":
            return Verdict(f"above δ = {fmt(delta, 'points')}", ":material/close:", "red")
        return Verdict(f"above δ = {fmt(delta, 'points')} on new rows", ":material/warning:", "orange")
    if gap > LARGE_GAP:
        return Verdict(f"large gap (over {fmt(LARGE_GAP, 'points')}), not constrained", ":material/warning:", "orange")
    return Verdict("not constrained", ":material/remove:", "gray")


def group_label(row: dict[str, Any]) -> str:
    return str(row["group"])


def rate_rows(groups: Sequence[dict[str, Any]], rate: str) -> list[dict[str, Any]]:
    """One row per group with the rate defined: group, rate, rows."""
    out = []
    for row in groups:
        value = row.get(rate)
        if value is None or value != value:
            continue
        out.append({"group": group_label(row), "rate": float(value), "rows": int(row.get("count", 0))})
    return out


def band(rows: Sequence[dict[str, Any]], delta: float) -> tuple[float, float] | None:
    """The δ band: δ wide, centred between the lowest and the highest rate."""
    if len(rows) < 2:
        return None
    rates = [r["rate"] for r in rows]
    mid = (max(rates) + min(rates)) / 2
    return max(0.0, mid - delta / 2), min(1.0, mid + delta / 2)


def judged(rows: Sequence[dict[str, Any]], delta: float, constrained: bool) -> list[dict[str, Any]]:
    """Rows with ``status`` (pass / fail / large, or n/a) and the texts a chart and a table show."""
    edges = band(rows, delta)
    top = max((r["rate"] for r in rows), default=0.0)
    out = []
    for r in rows:
        inside = edges is not None and edges[0] - 1e-9 <= r["rate"] <= edges[1] + 1e-9
        if edges is None:
            status = "n/a"
        elif constrained:
            status = "within δ" if inside else "outside δ"
        else:
            status = "within δ" if inside else "outside δ (not enforced)"
        ratio = r["rate"] / top if top > 0 else None
        out.append({**r, "status": status, "label": f"{fmt(r['rate'], 'percent')} · {count_of(r['rows'], 'row')}",
                    "difference": top - r["rate"], "ratio": ratio})
    return out


def rate_chart(rows: Sequence[dict[str, Any]], rate: str, delta: float, constrained: bool,
               group_title: str) -> dict[str, Any] | None:
    """Vega-Lite spec: one horizontal bar per group, the δ band behind them, pass/fail colours."""
    data = judged(rows, delta, constrained)
    if not data:
        return None
    edges = band(rows, delta)
    domain = ["within δ", "outside δ", "outside δ (not enforced)", "n/a"]
    colours = [PASS, FAIL, WARN, NEUTRAL]
    layers: list[dict[str, Any]] = []
    if edges is not None:
        name = f"δ band ({fmt(delta, 'points')}" + (")" if constrained else ", not enforced)")
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
    layers.append({
        "mark": {"type": "text", "align": "left", "dx": 5, "fontSize": 13, "color": "#1b2631"},
        "encoding": {"y": y, "text": {"field": "label"}},
    })
    return {
        "data": {"values": data},
        "height": {"step": 40},
        "encoding": {
            "x": {"field": "rate", "type": "quantitative", "title": RATE_NAMES.get(rate, rate),
                  "scale": {"domain": [0, 1.3]}, "axis": {"format": ".0%", "values": [0, 0.25, 0.5, 0.75, 1.0],
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


def comparison_table(comparison: Sequence[dict[str, Any]], notions: Sequence[str], names: dict[str, str]) -> pd.DataFrame:
    """The trees compared: status in words, leaves, accuracy (%) and gaps (pp) per split."""
    from strongtree_studio.words import status_word

    rows = []
    for c in comparison:
        row = {"tree": TREE_NAMES.get(c["model"], c["model"]), "status": status_word(c.get("status", "")).label, "leaves": fmt(c.get("leaves"), "int")}
        for split, split_name in (("train", "training"), ("test", "test")):
            if f"{split}_accuracy" not in c:
                continue
            row[f"{split_name} accuracy"] = fmt(c.get(f"{split}_accuracy"), "percent")
            for n in notions:
                if f"{split}_{n}" in c:
                    row[f"{split_name} gap: {names.get(n, n)}"] = fmt(c.get(f"{split}_{n}"), "points")
        rows.append(row)
    return pd.DataFrame(rows).set_index("tree")


def cost_chart(comparison: Sequence[dict[str, Any]], notion: str, delta: float | None, split: str) -> dict[str, Any] | None:
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
    if delta is not None:
        layers.append({"data": {"values": [{"delta": delta}]}, "mark": {"type": "rule", "strokeDash": [5, 4],
                                                                      "color": PASS},
                       "encoding": {"x": {"field": "delta", "type": "quantitative"}}})
    return {"data": {"values": data}, "layer": layers}
