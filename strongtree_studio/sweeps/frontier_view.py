"""The frontier of a sweep as a plotly figure: accuracy against each point's measured gap."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from strongtree_core.sweep import best_per_bound, pareto_front
from strongtree_studio.views.explain import FAIRNESS_NOTIONS
from strongtree_studio.sweeps.points import certified_words, has_test, is_promise, point_label
from strongtree_studio.views.ticks import nice_ticks
from strongtree_studio.views.status_words import fmt

#: One colour per notion (Okabe and Ito's palette, told apart with colour-blind eyes too).
NOTION_COLOURS = {"statistical_parity": "#0072B2", "conditional_statistical_parity": "#CC79A7",
                  "predictive_equality": "#D55E00", "equal_opportunity": "#E69F00", "equalized_odds": "#009E73"}
DELTA_COLOUR = "#9aa5b1"
#: Marker shapes: a proven optimum is a filled circle, any other tree an open diamond; a tree with a promise on
#: new rows (``fairness_confidence``) is a star, filled when proven optimal under its tightened bound.
CERTIFIED_SYMBOL, UNCERTIFIED_SYMBOL = "circle", "diamond-open"
PROMISE_SYMBOL, PROMISE_UNCERTIFIED_SYMBOL = "star", "star-open"
LABEL_PROMISE = "promise on new rows"
#: The filled circles while no point is certified (else :func:`~strongtree_studio.sweeps.points.certified_words`).
LABEL_CERTIFIED = "proven optimal"
LABEL_UNCERTIFIED = "not proven (time limit or Stop)"
LABEL_DELTA = "bound δ of the points"
LABEL_FRONTIER = "frontier"
LABEL_BASELINE = "majority class"
LABEL_REFERENCE = "without a fairness constraint"
LABEL_CART = "CART, same depth"
#: The references' shapes: the tree without a constraint, CART.
REFERENCE_SYMBOL, CART_SYMBOL = "x", "square-open"
BASELINE_COLOUR = "#7f8c8d"


def _baseline(points: pd.DataFrame, part: str) -> float | None:
    """The majority-class accuracy of a part (the mean over the sweep's folds), or None (older sweeps)."""
    column = f"{part}_baseline_accuracy"
    if column not in points or points[column].isna().all():
        return None
    return float(points[column].mean())


def plotted(table: pd.DataFrame, part: str) -> pd.DataFrame:
    """The points with a tree and a measured accuracy and gap on ``part``."""
    if table.empty:
        return table
    keep = table["tree"].notna() & table[f"{part}_accuracy"].notna() & table[f"{part}_gap"].notna()
    return table[keep]


def _lighter(colour: str, alpha: float = 0.35) -> str:
    """``#rrggbb`` as a translucent fill (the promise's stars: a point drawn on one stays visible)."""
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r}, {g}, {b}, {alpha})"


def frontier_figure(table: pd.DataFrame, fairness_bounds: Sequence[float], references: Sequence[dict] = ()):
    """Accuracy against the measured gap of each point's own notion, on the training rows and
    (when there are test rows) the test rows side by side: one colour per notion, the training
    frontier drawn as a line, proven optima as filled circles and other trees as open diamonds,
    a dotted vertical line at each bound δ, a dashed horizontal line at the majority class's
    accuracy, and on the test rows each gap's 95 % interval as a horizontal error bar.  The
    references sit at each notion's gap in its colour: the trees solved without a fairness
    constraint (the points whose ``fairness`` is empty) as crosses, and ``references``
    (CART of each depth, measured at the end of the sweep) as open squares."""
    from plotly.subplots import make_subplots

    parts = ["train", "test"] if has_test(table) else ["train"]
    fig = make_subplots(rows=1, cols=len(parts), shared_yaxes=True, horizontal_spacing=0.06)
    shown = [plotted(table, p) for p in parts]
    free = table[table["fairness"].isna() & table["tree"].notna()] if "fairness" in table else table.iloc[:0]
    notions = [n for n in NOTION_COLOURS if n in set(table.get("fairness", pd.Series(dtype=object)).dropna())]
    (y_low, y_high), x_high = _ranges(parts, shown, free, notions, fairness_bounds, references)
    for col, (part, points) in enumerate(zip(parts, shown), start=1):
        for notion in notions:
            mine = points[points["fairness"] == notion]
            if part == "train" and len(mine):
                _add_frontier(fig, mine, notion, col)
            _add_points(fig, mine, part, notion, col)
        for notion in notions:
            _add_free_trees(fig, free, part, notion, col)
            _add_cart(fig, references, part, notion, col)
        _add_baseline(fig, _baseline(points, part), x_high, col)
        _add_bounds(fig, fairness_bounds, y_low, y_high, col)
        x_ticks = nice_ticks(0.0, 100 * x_high)
        fig.update_xaxes(range=[-0.02 * 100 * x_high, 100 * x_high], tickvals=x_ticks,
                         ticktext=[fmt(t / 100, "points") for t in x_ticks],
                         title_text=f"{TITLES[part]}: measured gap",
                         zeroline=False, row=1, col=col)
    _add_shape_legend(fig, table, references)
    y_ticks = nice_ticks(100 * y_low, 100 * y_high)
    fig.update_yaxes(range=[100 * y_low, 100 * y_high], tickvals=y_ticks,
                     ticktext=[fmt(t / 100, "percent") for t in y_ticks])
    fig.update_yaxes(title_text="accuracy", row=1, col=1)
    fig.update_layout(height=400, margin={"l": 10, "r": 10, "t": 10, "b": 10}, hovermode="closest",
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0, "font": {"size": 13}},
                      font={"size": 13})
    return fig


#: The panels' titles.
TITLES = {"train": "Training rows", "test": "Test rows"}


def _ranges(parts, shown, free, notions, fairness_bounds, references) -> tuple[tuple[float, float], float]:
    """The accuracy axis (padded, within [0, 1]) and the gap axis's end, holding every point, the
    references, each bound and the test gaps' intervals."""
    accuracies = [v for s, p in zip(shown, parts) for v in s[f"{p}_accuracy"]]
    accuracies += [b for p, s in zip(parts, shown) if (b := _baseline(s, p)) is not None]
    gaps = [v for s, p in zip(shown, parts) for v in s[f"{p}_gap"]] + list(fairness_bounds)
    gaps += [v for s, p in zip(shown, parts) if p != "train" and f"{p}_gap_high" in s
             for v in s[f"{p}_gap_high"].dropna()]
    for part in parts:  # the references are drawn too: the axes hold them
        for notion in notions:
            column = f"{part}_{notion}"
            rows = [(r.get(column), r.get(f"{part}_accuracy")) for r in references]
            if column in free:
                rows += list(zip(free[column], free[f"{part}_accuracy"]))
            for gap, accuracy in rows:
                if gap is not None and accuracy is not None and gap == gap and accuracy == accuracy:
                    gaps.append(float(gap))
                    accuracies.append(float(accuracy))
    y_low, y_high = (min(accuracies), max(accuracies)) if accuracies else (0.5, 1.0)
    pad = max((y_high - y_low) * 0.08, 0.01)
    return (max(0.0, y_low - pad), min(1.0, y_high + pad)), max(gaps + [0.01]) * 1.05


def _add_frontier(fig, mine: pd.DataFrame, notion: str, col: int) -> None:
    """The training frontier of one notion's points, as a line."""
    import plotly.graph_objects as go

    front = pareto_front(best_per_bound(mine, "train"), "train").sort_values("train_gap")
    fig.add_trace(go.Scatter(
        x=100 * front["train_gap"], y=100 * front["train_accuracy"], mode="lines",
        line={"color": NOTION_COLOURS[notion], "width": 2}, name=f"{FAIRNESS_NOTIONS[notion].name} {LABEL_FRONTIER}",
        legendgroup=notion, hoverinfo="skip"), row=1, col=col)


def _add_points(fig, mine: pd.DataFrame, part: str, notion: str, col: int) -> None:
    """One notion's trees on ``part``, one trace per shape (proven or not, with a promise or not); on the
    test rows each gap's interval as an error bar."""
    import plotly.graph_objects as go

    colour = NOTION_COLOURS[notion]
    promised = (mine.apply(is_promise, axis=1).astype(bool) if "fairness_confidence" in mine and len(mine)
                else pd.Series(False, index=mine.index))
    # stars first, filled light: a circle or diamond at the same place (often the same tree, when the promise
    # did not need a tighter bound) stays visible on top of one
    for certified, promise in ((True, True), (False, True), (True, False), (False, False)):
        subset = mine[(mine["certified"] == certified) & (promised == promise)]
        if subset.empty:
            continue
        symbol = ((PROMISE_SYMBOL if certified else PROMISE_UNCERTIFIED_SYMBOL) if promise
                  else CERTIFIED_SYMBOL if certified else UNCERTIFIED_SYMBOL)
        hover = [f"{point_label(r)}<br>{TITLES[part].lower()}: accuracy {fmt(r[f'{part}_accuracy'], 'percent')}"
                 f", gap {fmt(r[f'{part}_gap'], 'points')}" for _, r in subset.iterrows()]
        error_x = None
        if part != "train" and f"{part}_gap_low" in subset and subset[f"{part}_gap_high"].notna().any():
            error_x = {"type": "data", "symmetric": False, "color": colour, "thickness": 1.2, "width": 3,
                       "array": 100 * (subset[f"{part}_gap_high"] - subset[f"{part}_gap"]).fillna(0),
                       "arrayminus": 100 * (subset[f"{part}_gap"] - subset[f"{part}_gap_low"]).fillna(0)}
        fig.add_trace(go.Scatter(
            error_x=error_x,
            x=100 * subset[f"{part}_gap"], y=100 * subset[f"{part}_accuracy"], mode="markers",
            marker={"color": _lighter(colour) if promise else colour,
                    "size": (20 if promise else 10) if certified else (20 if promise else 11),
                    "symbol": symbol, "line": {"width": 2, "color": colour}},
            name=FAIRNESS_NOTIONS[notion].name, legendgroup=notion, showlegend=False,
            customdata=np.array([[h, int(p)] for h, p in zip(hover, subset["point"])], dtype=object),
            hovertemplate="%{customdata[0]}<extra></extra>"), row=1, col=col)


def _add_free_trees(fig, free: pd.DataFrame, part: str, notion: str, col: int) -> None:
    """The trees solved without a fairness constraint, at their gap of ``notion``, as crosses."""
    import plotly.graph_objects as go

    colour = NOTION_COLOURS[notion]
    column = f"{part}_{notion}"
    mine = free[free[column].notna() & free[f"{part}_accuracy"].notna()] if column in free else free.iloc[:0]
    if not len(mine):
        return
    hover = [f"{point_label(r)}<br>without a fairness constraint, {TITLES[part].lower()}: accuracy "
             f"{fmt(r[f'{part}_accuracy'], 'percent')}, {FAIRNESS_NOTIONS[notion].name.lower()} gap "
             f"{fmt(r[column], 'points')}" for _, r in mine.iterrows()]
    fig.add_trace(go.Scatter(
        x=100 * mine[column], y=100 * mine[f"{part}_accuracy"], mode="markers",
        marker={"color": colour, "size": 11, "symbol": REFERENCE_SYMBOL, "line": {"width": 1, "color": colour}},
        name=LABEL_REFERENCE, legendgroup=notion, showlegend=False,
        customdata=np.array([[h, int(p)] for h, p in zip(hover, mine["point"])], dtype=object),
        hovertemplate="%{customdata[0]}<extra></extra>"), row=1, col=col)


def _add_cart(fig, references: Sequence[dict], part: str, notion: str, col: int) -> None:
    """CART of each depth at its gap of ``notion``, as open squares."""
    import plotly.graph_objects as go

    colour = NOTION_COLOURS[notion]
    column = f"{part}_{notion}"
    carts = [r for r in references if r.get(column) is not None and r.get(f"{part}_accuracy") is not None]
    if not carts:
        return
    fig.add_trace(go.Scatter(
        x=[100 * r[column] for r in carts], y=[100 * r[f"{part}_accuracy"] for r in carts], mode="markers",
        marker={"color": colour, "size": 10, "symbol": CART_SYMBOL, "line": {"width": 2, "color": colour}},
        name=LABEL_CART, legendgroup=notion, showlegend=False,
        hovertemplate=[f"CART, depth {r['depth']}, {TITLES[part].lower()}: accuracy "
                       f"{fmt(r[f'{part}_accuracy'], 'percent')}, {FAIRNESS_NOTIONS[notion].name.lower()} "
                       f"gap {fmt(r[column], 'points')}<extra></extra>" for r in carts]),
        row=1, col=col)


def _add_baseline(fig, baseline: float | None, x_high: float, col: int) -> None:
    """The majority class's accuracy, as a dashed horizontal line (none for older sweeps)."""
    import plotly.graph_objects as go

    if baseline is None:
        return
    fig.add_trace(go.Scatter(x=[0, 100 * x_high], y=[100 * baseline] * 2, mode="lines",
                             line={"color": BASELINE_COLOUR, "width": 1.5, "dash": "dash"},
                             name=LABEL_BASELINE, legendgroup="baseline", showlegend=col == 1,
                             hovertemplate=f"majority class: {fmt(baseline, 'percent')}<extra></extra>"),
                  row=1, col=col)


def _add_bounds(fig, fairness_bounds: Sequence[float], y_low: float, y_high: float, col: int) -> None:
    """Each bound δ as a dotted vertical line (one trace)."""
    import plotly.graph_objects as go

    xs, ys = [], []
    for b in fairness_bounds:
        xs += [100 * b, 100 * b, None]
        ys += [100 * y_low, 100 * y_high, None]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line={"color": DELTA_COLOUR, "width": 1, "dash": "dot"},
                             name=LABEL_DELTA, legendgroup="delta", showlegend=col == 1, hoverinfo="skip"),
                  row=1, col=col)


def circle_words(table: pd.DataFrame) -> str:
    """What the filled circles are (the certified points without a promise), in their claims' words: "optimal
    over kept thresholds" over quantile cuts, never "proven optimal" for those."""
    if "certified" not in table or not len(table):
        return LABEL_CERTIFIED
    return certified_words(table[~table.apply(is_promise, axis=1).astype(bool)].to_dict("records"))


def _add_shape_legend(fig, table: pd.DataFrame, references: Sequence[dict]) -> None:
    """The legend of the shapes the figure uses, in grey (empty traces: the colours are the notions')."""
    import plotly.graph_objects as go

    shapes = [(circle_words(table), CERTIFIED_SYMBOL), (LABEL_UNCERTIFIED, UNCERTIFIED_SYMBOL)]
    if "fairness_confidence" in table and table.apply(is_promise, axis=1).astype(bool).any():
        shapes.append((LABEL_PROMISE, PROMISE_SYMBOL))
    if "fairness" in table and (table["fairness"].isna() & table["tree"].notna()).any():
        shapes.append((LABEL_REFERENCE, REFERENCE_SYMBOL))
    if references:
        shapes.append((LABEL_CART, CART_SYMBOL))
    for label, symbol in shapes:
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=label, legendgroup="shape",
                                 marker={"color": "#555", "size": 10, "symbol": symbol, "line": {"width": 2,
                                                                                                "color": "#555"}}),
                      row=1, col=1)
