"""The Learn page's drawing of the root LP (:mod:`strongtree_core.compare.root_lp`): each
formulation's fractional split choices side by side, one training row's flow through
FlowOCT's tree from the source to the sink, where OCT puts the same row, the slack of
OCT's big-M rows, and the words that explain them (Theorem 1, formulation 1, OCT's
formulation 24).  Pure functions of the comparison's ``root`` (a dict); no Streamlit.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from strongtree_core.compare.root_lp import INTEGRAL_TOL, RootLP, RootRelaxation
from strongtree_studio.views.status_words import fmt

#: The formulations drawn side by side, in the paper's order, with their split variable's name.
DRAWN = (("oct", "OCT (24), its b"), ("binoct", "BinOCT, its f"), ("flow", "FlowOCT (1), its b"))
#: The colour of a flow or share above 0, and of nothing.
FLOW_COLOUR, EMPTY_COLOUR = "#1f6f8b", "#c8ccd0"
MSG_NOT_DRAWN = ("The root LP is drawn for depth-2 comparisons without the split penalty λ (balanced trees); "
                 "pick the first preset to see it.")
SPLITS_CAPTION = (
    "Each cell: the LP's value of \"this node splits on this feature\" (1 is a split, between 0 and 1 a "
    "fractional one). Only features some LP uses are listed. Every node's column adds up to 1 (rows 1b / OCT k / "
    "BinOCT 2)."
)


def root_of(result_root: dict[str, Any] | None) -> RootLP | None:
    return None if not result_root else RootLP.from_dict(result_root)


def drawable(root: RootLP | None) -> bool:
    """Depth 2 and balanced (the flows and leaves were read back)."""
    if root is None or root.depth != 2:
        return False
    flow = relaxation(root, "flow")
    return flow is not None and bool(flow.arcs)


def relaxation(root: RootLP, word: str) -> RootRelaxation | None:
    return next((r for r in root.relaxations if r.formulation == word and r.value is not None), None)


def used_features(root: RootLP) -> list[int]:
    """Features some drawn LP gives a split value above 0, in the table's order."""
    used = set()
    for word, _ in DRAWN:
        r = relaxation(root, word)
        if r is None:
            continue
        for node in r.splits:
            used |= {j for j, v in enumerate(node) if v > INTEGRAL_TOL}
    return sorted(used)


def splits_chart(root: RootLP, word: str, features: list[int]) -> dict[str, Any] | None:
    """Vega-Lite heat map: features down, branching nodes across, the LP's split value in each cell."""
    r = relaxation(root, word)
    if r is None or not features:
        return None
    data = [{"feature": root.features[j], "node": f"node {n + 1}", "value": r.splits[n][j],
             "label": "" if r.splits[n][j] <= INTEGRAL_TOL else fmt(round(r.splits[n][j], 2))}
            for n in range(len(r.splits)) for j in features]
    y = {"field": "feature", "type": "nominal", "sort": [root.features[j] for j in features], "title": None,
         "axis": {"labelFontSize": 11, "labelLimit": 160, "labelOverlap": False}}
    x = {"field": "node", "type": "nominal", "title": None, "axis": {"labelAngle": 0, "labelFontSize": 11,
                                                                     "orient": "top"}}
    return {
        "data": {"values": data},
        "encoding": {"y": y, "x": x},
        "layer": [
            {"mark": {"type": "rect", "stroke": "#fff"},
             "encoding": {"color": {"field": "value", "type": "quantitative", "title": None, "legend": None,
                                    "scale": {"domain": [0, 1], "range": ["#f4f6f8", FLOW_COLOUR]}},
                          "tooltip": [{"field": "feature"}, {"field": "node"},
                                      {"field": "value", "format": ".3f"}]}},
            {"mark": {"type": "text", "fontSize": 11},
             "encoding": {"text": {"field": "label"},
                          "color": {"condition": {"test": "datum.value > 0.5", "value": "#fff"}, "value": "#222"}}},
        ],
    }


#: Where the nodes of a depth-2 tree sit in the drawing (x across, y down).
_POSITIONS = {"source": (4.0, 0.0), "1": (4.0, 1.0), "2": (2.0, 2.0), "3": (6.0, 2.0), "4": (0.8, 3.0),
              "5": (3.0, 3.0), "6": (5.0, 3.0), "7": (7.2, 3.0), "sink": (4.0, 5.0)}


def flow_chart(root: RootLP) -> dict[str, Any] | None:
    """Vega-Lite drawing of FlowOCT's flow for the traced row: every arc from the source to the sink,
    as thick as its flow and labelled with it, each leaf with its share of the row's class."""
    flow = relaxation(root, "flow")
    if flow is None or not flow.arcs:
        return None
    arcs = []
    for name, value in flow.arcs:
        tail, head = (part.strip() for part in name.split("→"))
        (x, y), (x2, y2) = _POSITIONS[tail], _POSITIONS[head]
        arcs.append({"x": x, "y": y, "x2": x2, "y2": y2, "flow": value, "width": 1.5 + 9 * value,
                     "mx": (x + x2) / 2, "my": (y + y2) / 2, "label": fmt(round(value, 3)),
                     "carries": value > INTEGRAL_TOL})
    nodes = [{"x": x, "y": y, "name": name} for name, (x, y) in _POSITIONS.items()]
    leaves = [{"x": _POSITIONS[str(4 + i)][0], "y": 3.42,
               "label": f"predicts {root.row_class}: {fmt(round(share, 2))}"}
              for i, share in enumerate(flow.leaf_class)]
    x = {"type": "quantitative", "scale": {"domain": [0, 8]}, "axis": None}
    y = {"type": "quantitative", "scale": {"domain": [5.3, -0.3]}, "axis": None}
    return {
        "layer": [
            {"data": {"values": arcs}, "mark": {"type": "rule"},
             "encoding": {"x": {**x, "field": "x"}, "y": {**y, "field": "y"}, "x2": {"field": "x2"},
                          "y2": {"field": "y2"}, "strokeWidth": {"field": "width", "type": "quantitative",
                                                                 "scale": None},
                          "color": {"condition": {"test": "datum.carries", "value": FLOW_COLOUR},
                                    "value": EMPTY_COLOUR}}},
            {"data": {"values": arcs}, "mark": {"type": "text", "fontSize": 11, "dx": 14, "fontWeight": "bold"},
             "encoding": {"x": {**x, "field": "mx"}, "y": {**y, "field": "my"}, "text": {"field": "label"}}},
            {"data": {"values": nodes}, "mark": {"type": "circle", "size": 500, "color": "#fff", "stroke": "#444",
                                                 "strokeWidth": 1.5, "opacity": 1},
             "encoding": {"x": {**x, "field": "x"}, "y": {**y, "field": "y"}}},
            {"data": {"values": nodes}, "mark": {"type": "text", "fontSize": 10},
             "encoding": {"x": {**x, "field": "x"}, "y": {**y, "field": "y"}, "text": {"field": "name"}}},
            {"data": {"values": leaves}, "mark": {"type": "text", "fontSize": 10, "color": "#555"},
             "encoding": {"x": {**x, "field": "x"}, "y": {**y, "field": "y"}, "text": {"field": "label"}}},
        ],
    }


def oct_table(root: RootLP) -> pd.DataFrame | None:
    """Where OCT puts the traced row, leaf by leaf, with the slack of its big-M rows."""
    oct_ = relaxation(root, "oct")
    if oct_ is None or not oct_.leaves:
        return None
    out = []
    for i, leaf in enumerate(oct_.leaves):
        routes = [r for r in oct_.routes if r.leaf == leaf.leaf]
        out.append({
            "Leaf": fmt(leaf.leaf, "int"),
            "Share of the row (ζ)": fmt(round(oct_.leaf_share[i], 3)),
            f"Predicts {root.row_class} (w)": fmt(round(oct_.leaf_class[i], 3)),
            "Routing rows (i, j): least slack": fmt(round(min(r.slack for r in routes), 3)) if routes else fmt(None),
            "Rows at the leaf (Q)": fmt(round(leaf.held, 2)),
            "Counted wrong (L)": fmt(round(leaf.misclassified, 2)),
            "Row (b): slack": fmt(round(leaf.slack, 2)),
        })
    return pd.DataFrame(out)


def root_words(root: RootLP, n_rows: int) -> list[str]:
    """What the drawing shows, in plain words with the numbers on it."""
    flow, oct_ = relaxation(root, "flow"), relaxation(root, "oct")
    said = []
    if flow is not None and flow.arcs:
        arcs = dict(flow.arcs)
        source = arcs.get("source → 1", 0.0)
        sink = sum(v for name, v in flow.arcs if name.endswith("→ sink"))
        said.append(
            f"**The row followed** is row {fmt(root.row + 1, 'int')} of the sample (class {root.row_class}; "
            f"{', '.join(root.row_features) or 'no feature is 1'}), the one FlowOCT's LP counts least correct. "
            f"In FlowOCT (formulation 1) it is a unit of flow: {fmt(round(source, 3))} of it leaves the source "
            "(1e); at each node it may only go down the branch its features allow, as far as the fractional splits "
            "open it (1f, 1g), flow is conserved (1c), and it reaches the sink only through a leaf as far as that "
            f"leaf predicts its class (1h). {fmt(round(sink, 3))} of the row reaches the sink, so FlowOCT's LP "
            f"counts it {fmt(round(sink, 3))} correct, not 1.")
    if oct_ is not None and oct_.leaves:
        max_slack = max((r.slack for r in oct_.routes), default=0.0)
        wrong = sum(leaf.misclassified for leaf in oct_.leaves)
        said.append(
            f"**OCT (formulation 24)** places the same row in the leaves by ζ (one-leaf rows h) and checks the route "
            "with rows (i, j), whose constant 1 is a big-M: with fractional splits they hold with slack (up to "
            f"{fmt(round(max_slack, 2))} here). Its leaves count misclassified rows with rows (b), "
            f"L ≥ Q − Q_k − {fmt(n_rows, 'int')}·(1 − w_k): once w is fractional the big-M term pushes every right-hand "
            f"side below 0, so L = 0 satisfies them. Its LP counts {fmt(round(wrong, 2))} rows wrong in all: "
            f"the bound {fmt(oct_.value)}.")
    if flow is not None and oct_ is not None and flow.value is not None and oct_.value is not None:
        said.append(
            f"That is Theorem 1 at work: FlowOCT's root bound is {fmt(flow.value)} against OCT's "
            f"{fmt(oct_.value)}. Branch-and-bound starts closer to the optimum and discards more of the search; "
            "the flows have no big-M to go slack.")
    return said
