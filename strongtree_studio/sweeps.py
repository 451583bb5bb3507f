"""Trade-off sweeps from the dashboard: the user's grid checked and turned into a
worker's request, a finished sweep stored, and its points as a table, a CSV and a
frontier figure.

A sweep fits one tree per fairness notion x bound δ x depth x λ on the training
rows of the current split (:func:`strongtree_core.sweep.iter_sweep` in a worker
process, one point after another) and measures each tree on the training and
test rows.  Nothing here imports Streamlit.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, replace
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from strongtree_core.sweep import best_per_bound, pareto_front, to_table
from strongtree_studio.config import ModelConfig, Roles, SplitConfig, SplitTables, check_model, check_roles, split_table
from strongtree_studio.explain import FAIRNESS_NOTIONS
from strongtree_studio.jobs import Job
from strongtree_studio.outcome import SolveContext, build_entry
from strongtree_studio.roles import class_values
from strongtree_studio.runs import RunStore, RunStoreError, SweepEntry
from strongtree_studio.words import fmt, status_word
from strongtree_studio.worker import SweepSpec

#: Most points one sweep from the dashboard may have (the command line runs larger ones).
MAX_SWEEP_POINTS = 120
#: The default bound grid: 10 bounds from 0 to 20 pp, evenly spaced (rounded to 0.1 pp).
DEFAULT_BOUNDS_TEXT = ", ".join(f"{b:g}" for b in np.round(np.linspace(0.0, 20.0, 10), 1))

MSG_NO_PROTECTED = (
    "A trade-off sweep measures fairness between groups, and no protected attribute is chosen: "
    "choose one on the Data page."
)
MSG_ONE_GROUP = (
    "The protected attribute {columns} has a single group in the training rows ({group}): fairness compares two "
    "groups or more. Choose another protected attribute on the Data page."
)
MSG_EMPTY_GRID = (
    "The grid is empty: choose at least one fairness notion, one bound δ, one depth and one λ value."
)
MSG_BOUNDS_TEXT = (
    "The bounds δ could not be read ({text}): type numbers in percentage points separated by commas, "
    "e.g. 0, 2, 5, 10."
)
MSG_BOUNDS_RANGE = (
    "Every bound δ must be between 0 and 100 percentage points; {values} is not. Type the bounds in percentage "
    "points, e.g. 0, 2, 5, 10."
)
MSG_LAMBDA_TEXT = "The λ values could not be read ({text}): type numbers separated by commas, e.g. 0, 0.01, 0.05."
MSG_LAMBDA_RANGE = "Every λ must be at least 0 and below 1; {values} is not. Type values such as 0, 0.01, 0.05."
MSG_TOO_MANY = (
    "The grid has {n} points; a sweep here runs at most {limit}. Choose fewer notions, bounds, depths or λ "
    "values (the command line, strongtree sweep, runs larger grids)."
)
MSG_POINT_NO_TREE = "Point {point} has no tree to open: {reason}"
MSG_POINT_NEEDS_TABLE = (
    "The tree of a point opens with the table the sweep was learned on ({dataset}): load it on the Data page first."
)
ERR_SAVE_SWEEP = "This sweep could not be stored in the history. {reason}"

#: How a sweep ended, as stored.
SWEEP_STATUS = {"finished": "Finished", "stopped": "Stopped (finished points kept)", "failed": "Failed"}


@dataclass(frozen=True)
class SweepChoice:
    """The grid chosen on the Trade-offs page (bounds and λ as typed)."""

    notions: tuple[str, ...] = ("statistical_parity",)
    fairness_bounds: str = DEFAULT_BOUNDS_TEXT  # percentage points
    depths: tuple[int, ...] = (2,)
    lambdas: str = "0"
    time_limit: float = 10.0  # seconds per point


@dataclass(frozen=True)
class SweepGrid:
    """A checked grid: the values each setting takes (bounds as shares, 0-1)."""

    notions: tuple[str, ...]
    fairness_bounds: tuple[float, ...]
    depths: tuple[int, ...]
    lambdas: tuple[float, ...]

    @property
    def n_points(self) -> int:
        return len(self.notions) * len(self.fairness_bounds) * len(self.depths) * len(self.lambdas)

    def as_params(self) -> dict[str, list[Any]]:
        """The grid as estimator parameters (:func:`strongtree_core.sweep.sweep`'s ``grid``)."""
        return {"fairness": list(self.notions), "fairness_bound": list(self.fairness_bounds), "depth": list(self.depths),
                "regularization": list(self.lambdas)}


class _Unreadable(ValueError):
    pass


def parse_numbers(text: str) -> tuple[float, ...]:
    """Numbers typed with commas, semicolons or spaces between them, sorted, each once ("pp" and "%" allowed)."""
    tokens = [t for t in re.split(r"[,;\s]+", str(text).replace("pp", " ").replace("%", " ")) if t]
    values = []
    for token in tokens:
        try:
            value = float(token)
        except ValueError:
            raise _Unreadable(token) from None
        if not math.isfinite(value):
            raise _Unreadable(token)
        values.append(value)
    return tuple(sorted(set(values)))


def _read_values(text: str, inside: Callable[[float], bool], unreadable: str, outside: str, shape: str,
                 problems: list[str]) -> tuple[float, ...]:
    """The numbers typed in ``text``; a problem is added when one cannot be read or lies outside."""
    try:
        values = parse_numbers(text)
    except _Unreadable as err:
        problems.append(unreadable.format(text=err))
        return ()
    bad = [v for v in values if not inside(v)]
    if bad:
        problems.append(outside.format(values=", ".join(shape.format(v) for v in bad)))
    return values


def allowed_notions(roles: Roles | None) -> list[str]:
    """The notions the column roles allow (conditional parity needs a legitimate factor)."""
    if roles is None or not roles.protected:
        return []
    return [n for n in FAIRNESS_NOTIONS if n != "conditional_statistical_parity" or roles.legitimate]


def check_sweep(frame: pd.DataFrame, roles: Roles, split: SplitConfig, model: ModelConfig,
                choice: SweepChoice) -> tuple[SweepGrid | None, list[str]]:
    """The checked grid, or None and the problems in words (the first that apply)."""
    if not roles.protected:
        return None, [MSG_NO_PROTECTED]
    problems = check_roles(frame, roles, model.allow_protected_splits)
    if problems:
        return None, problems
    train = split_table(frame, roles, split).train
    groups = train[list(roles.protected)].drop_duplicates()
    if len(groups) < 2:
        group = ", ".join(str(v) for v in groups.iloc[0]) if len(groups) else "no value"
        return None, [MSG_ONE_GROUP.format(columns=", ".join(roles.protected), group=group)]
    notions = tuple(n for n in choice.notions if n in allowed_notions(roles))
    problems = check_model(replace(model, fairness=notions or ("statistical_parity",)), roles,
                           len(class_values(frame, roles.target)))
    bounds = _read_values(choice.fairness_bounds, lambda b: 0 <= b <= 100, MSG_BOUNDS_TEXT, MSG_BOUNDS_RANGE, "{:g} pp",
                          problems)
    lambdas = _read_values(choice.lambdas, lambda v: 0 <= v < 1, MSG_LAMBDA_TEXT, MSG_LAMBDA_RANGE, "{:g}", problems)
    if problems:
        return None, problems
    grid = SweepGrid(notions, tuple(round(b / 100.0, 6) for b in bounds), tuple(sorted(set(choice.depths))),
                     lambdas)
    if grid.n_points == 0:
        return None, [MSG_EMPTY_GRID]
    if grid.n_points > MAX_SWEEP_POINTS:
        return None, [MSG_TOO_MANY.format(n=grid.n_points, limit=MAX_SWEEP_POINTS)]
    return grid, []


@dataclass(frozen=True)
class SweepContext:
    """What a sweep job needs to be stored when it ends."""

    dataset: str
    fingerprint: str
    roles: Roles
    split: SplitConfig
    model: ModelConfig  # the settings every point shares (the time limit is the per-point one)
    grid: SweepGrid
    tables: SplitTables
    owner: str = ""

    def config(self) -> dict[str, Any]:
        return {"roles": asdict(self.roles), "split": asdict(self.split), "model": asdict(self.model),
                "grid": asdict(self.grid)}


def sweep_context(dataset: str, fingerprint: str, frame: pd.DataFrame, roles: Roles, split: SplitConfig,
                  model: ModelConfig, grid: SweepGrid, time_limit: float, owner: str) -> SweepContext:
    base = replace(model, fairness=(), time_limit=float(time_limit))
    return SweepContext(dataset, fingerprint, roles, split, base, grid, split_table(frame, roles, split), owner)


def sweep_spec(context: SweepContext) -> SweepSpec:
    """The worker's request: the training rows then the test rows, one fold that trains on the first."""
    roles, tables = context.roles, context.tables
    rows = pd.concat([tables.train, tables.test], ignore_index=True)
    n_train = len(tables.train)
    cv = [(list(range(n_train)), list(range(n_train, len(rows))))]
    return SweepSpec(X=rows[roles.model_columns(rows)], y=rows[roles.target],
                     params=context.model.estimator_params(roles), grid=context.grid.as_params(), cv=cv,
                     sensitive=tuple(roles.protected), legitimate=tuple(roles.legitimate))


@dataclass(frozen=True)
class SweepOutcome:
    """A finished sweep job's stored entry (``job.outcome``); ``error`` says why it could not be stored."""

    entry: SweepEntry | None
    error: str = ""


def finish_sweep(job: Job, open_store: Callable[[], RunStore]) -> None:
    """``on_finished`` hook for sweep jobs: store the finished points (a stopped sweep keeps them)."""
    context: SweepContext | None = job.context
    main = job.phases["main"]
    if context is None:
        return
    status = "stopped" if job.stop_requested is not None else "finished" if main.done else "failed"
    entry = SweepEntry(context.dataset, context.fingerprint, status, context.config(), list(main.rows),
                       owner=context.owner)
    try:
        entry = replace(entry, id=open_store().save_sweep(entry))
    except RunStoreError as err:
        job.outcome = SweepOutcome(entry, ERR_SAVE_SWEEP.format(reason=err))
        return
    job.run_id = entry.id
    job.outcome = SweepOutcome(entry)


# -- the points as a table, a CSV and a figure ---------------------------------------------------


def points_table(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """The rows as :func:`strongtree_core.sweep.sweep` returns them (sorted by point; stored nulls as NaN)."""
    table = to_table([{k: (math.nan if v is None and k != "tree" else v) for k, v in r.items()} for r in rows])
    if "certified" in table.columns:
        table["certified"] = table["certified"].fillna(False).astype(bool)
    return table


def csv_bytes(table: pd.DataFrame) -> bytes:
    """The table as CSV (every column, the trees as JSON)."""
    return table.to_csv(index=False).encode("utf-8")


def notion_name(key: Any) -> str:
    if not isinstance(key, str):
        return "none"
    return " + ".join(FAIRNESS_NOTIONS[k].name if k in FAIRNESS_NOTIONS else k for k in key.split("+"))


def has_test(table: pd.DataFrame) -> bool:
    return "n_test" in table.columns and bool((table["n_test"].fillna(0) > 0).any())


def shown_table(table: pd.DataFrame) -> pd.DataFrame:
    """One line per point, every number and status in words (:func:`strongtree_studio.words.fmt`); with test rows,
    accuracy and gap read "training / test"."""
    test = has_test(table)

    def pair(part_values: str, kind: str) -> list[str]:
        train = table[f"train_{part_values}"].map(lambda v: fmt(v, kind))
        if not test:
            return list(train)
        return [f"{a} / {fmt(b, kind)}" for a, b in zip(train, table[f"test_{part_values}"])]

    suffix = " training / test" if test else " (training)"
    return pd.DataFrame({
        "point": table["point"].map(lambda v: fmt(v, "int")),
        "notion": table["fairness"].map(notion_name),
        "δ": table["fairness_bound"].map(lambda v: fmt(v, "points")),
        "depth": table["depth"].map(lambda v: fmt(v, "int")),
        "λ": table["regularization"].map(fmt),
        "status": table["status"].map(lambda s: status_word(s).label),
        "accuracy" + suffix: pair("accuracy", "percent"),
        "gap" + suffix: pair("gap", "points"),
        "time": table["time"].map(lambda v: fmt(v, "seconds")),
    })


def point_label(row: Any) -> str:
    """A point in words for a list: its settings (λ when not 0), training accuracy and gap, and status."""
    price = f" · λ {fmt(row['regularization'])}" if row["regularization"] else ""
    return (f"Point {fmt(row['point'], 'int')} · {notion_name(row['fairness'])} ≤ {fmt(row['fairness_bound'], 'points')}"
            f" · depth {fmt(row['depth'], 'int')}{price} · {fmt(row['train_accuracy'], 'percent')}, "
            f"gap {fmt(row['train_gap'], 'points')} · {status_word(row['status']).label}")


#: One colour per notion (Okabe and Ito's palette, told apart with colour-blind eyes too).
NOTION_COLOURS = {"statistical_parity": "#0072B2", "conditional_statistical_parity": "#CC79A7",
                  "predictive_equality": "#D55E00", "equal_opportunity": "#E69F00", "equalized_odds": "#009E73"}
DELTA_COLOUR = "#9aa5b1"
#: Marker shapes: a proven optimum is a filled circle, any other tree an open diamond.
CERTIFIED_SYMBOL, UNCERTIFIED_SYMBOL = "circle", "diamond-open"
LABEL_CERTIFIED = "proven optimal"
LABEL_UNCERTIFIED = "not proven (time limit or Stop)"
LABEL_DELTA = "bound δ of the points"
LABEL_FRONTIER = "frontier"


def nice_ticks(low: float, high: float, target: int = 5) -> list[float]:
    """Round tick values covering [low, high], about ``target`` of them."""
    span = max(high - low, 1e-9)
    raw = span / target
    step = min((s * 10 ** math.floor(math.log10(raw)) for s in (1, 2, 2.5, 5, 10)),
               key=lambda s: (s < raw, abs(s - raw)))
    start = math.floor(low / step) * step
    ticks = [round(start + i * step, 10) for i in range(int(math.ceil((high - start) / step)) + 1)]
    return [t for t in ticks if low - 1e-9 <= t <= high + 1e-9] or [low]


def plotted(table: pd.DataFrame, part: str) -> pd.DataFrame:
    """The points with a tree and a measured accuracy and gap on ``part``."""
    if table.empty:
        return table
    keep = table["tree"].notna() & table[f"{part}_accuracy"].notna() & table[f"{part}_gap"].notna()
    return table[keep]


def picked_point(selection) -> int | None:
    """The point a click on the frontier selected (its number, from the marker's
    ``customdata``), or None: lines and the δ lines carry no point."""
    try:
        points = selection["selection"]["points"]
    except (KeyError, TypeError):
        return None
    for point in points or ():
        data = point.get("customdata") if isinstance(point, dict) else None
        if isinstance(data, (list, tuple)) and len(data) >= 2:
            try:
                return int(data[1])
            except (TypeError, ValueError):
                continue
    return None


def frontier_figure(table: pd.DataFrame, fairness_bounds: Sequence[float]):
    """Accuracy against the measured gap of each point's own notion, on the training rows and
    (when there are test rows) the test rows side by side: one colour per notion, the training
    frontier drawn as a line, proven optima as filled circles and other trees as open diamonds,
    and a dotted vertical line at each bound δ."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    parts = ["train", "test"] if has_test(table) else ["train"]
    titles = {"train": "Training rows", "test": "Test rows"}
    fig = make_subplots(rows=1, cols=len(parts), shared_yaxes=True, horizontal_spacing=0.06)
    shown = [plotted(table, p) for p in parts]
    accuracies = [v for s, p in zip(shown, parts) for v in s[f"{p}_accuracy"]]
    gaps = [v for s, p in zip(shown, parts) for v in s[f"{p}_gap"]] + list(fairness_bounds)
    y_low, y_high = (min(accuracies), max(accuracies)) if accuracies else (0.5, 1.0)
    pad = max((y_high - y_low) * 0.08, 0.01)
    y_low, y_high = max(0.0, y_low - pad), min(1.0, y_high + pad)
    x_high = max(gaps + [0.01]) * 1.05
    notions = [n for n in NOTION_COLOURS if n in set(table.get("fairness", pd.Series(dtype=object)).dropna())]
    for col, (part, points) in enumerate(zip(parts, shown), start=1):
        for notion in notions:
            mine = points[points["fairness"] == notion]
            colour = NOTION_COLOURS[notion]
            if part == "train" and len(mine):
                front = pareto_front(best_per_bound(mine, "train"), "train").sort_values("train_gap")
                fig.add_trace(go.Scatter(
                    x=100 * front["train_gap"], y=100 * front["train_accuracy"], mode="lines",
                    line={"color": colour, "width": 2}, name=f"{FAIRNESS_NOTIONS[notion].name} {LABEL_FRONTIER}",
                    legendgroup=notion, hoverinfo="skip"), row=1, col=col)
            for certified in (True, False):
                subset = mine[mine["certified"] == certified]
                if subset.empty:
                    continue
                hover = [f"{point_label(r)}<br>{titles[part].lower()}: accuracy {fmt(r[f'{part}_accuracy'], 'percent')}"
                         f", gap {fmt(r[f'{part}_gap'], 'points')}" for _, r in subset.iterrows()]
                fig.add_trace(go.Scatter(
                    x=100 * subset[f"{part}_gap"], y=100 * subset[f"{part}_accuracy"], mode="markers",
                    marker={"color": colour, "size": 10 if certified else 11,
                            "symbol": CERTIFIED_SYMBOL if certified else UNCERTIFIED_SYMBOL,
                            "line": {"width": 2, "color": colour}},
                    name=FAIRNESS_NOTIONS[notion].name, legendgroup=notion, showlegend=False,
                    customdata=np.array([[h, int(p)] for h, p in zip(hover, subset["point"])], dtype=object),
                    hovertemplate="%{customdata[0]}<extra></extra>"), row=1, col=col)
        xs, ys = [], []
        for b in fairness_bounds:
            xs += [100 * b, 100 * b, None]
            ys += [100 * y_low, 100 * y_high, None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line={"color": DELTA_COLOUR, "width": 1, "dash": "dot"},
                                 name=LABEL_DELTA, legendgroup="delta", showlegend=col == 1, hoverinfo="skip"),
                      row=1, col=col)
        x_ticks = nice_ticks(0.0, 100 * x_high)
        fig.update_xaxes(range=[-0.02 * 100 * x_high, 100 * x_high], tickvals=x_ticks,
                         ticktext=[fmt(t / 100, "points") for t in x_ticks],
                         title_text=f"{titles[part]}: measured gap",
                         zeroline=False, row=1, col=col)
    for label, symbol in ((LABEL_CERTIFIED, CERTIFIED_SYMBOL), (LABEL_UNCERTIFIED, UNCERTIFIED_SYMBOL)):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=label, legendgroup="shape",
                                 marker={"color": "#555", "size": 10, "symbol": symbol, "line": {"width": 2,
                                                                                               "color": "#555"}}),
                      row=1, col=1)
    y_ticks = nice_ticks(100 * y_low, 100 * y_high)
    fig.update_yaxes(range=[100 * y_low, 100 * y_high], tickvals=y_ticks,
                     ticktext=[fmt(t / 100, "percent") for t in y_ticks])
    fig.update_yaxes(title_text="accuracy", row=1, col=1)
    fig.update_layout(height=400, margin={"l": 10, "r": 10, "t": 10, "b": 10}, hovermode="closest",
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0, "font": {"size": 13}},
                      font={"size": 13})
    return fig


# -- a point's tree as a run ---------------------------------------------------------------------


def point_model(config: dict[str, Any], row: Any) -> ModelConfig:
    """The model settings of one point: the shared ones with its notion, bound, depth and λ."""
    model = ModelConfig.from_dict(config["model"])
    notions = tuple(str(row["fairness"]).split("+")) if isinstance(row["fairness"], str) else ()
    bound = float(row["fairness_bound"]) if notions else model.fairness_bound
    return replace(model, fairness=notions, fairness_bound=bound, depth=int(row["depth"]),
                   regularization=float(row["regularization"]))


def point_run(entry_config: dict[str, Any], dataset: str, fingerprint: str, row: Any, frame: pd.DataFrame,
              owner: str):
    """The point's tree measured on its rows and packaged as a run (:class:`strongtree_studio.runs.RunEntry`)."""
    roles = Roles(**{**entry_config["roles"], **{k: tuple(entry_config["roles"].get(k) or ())
                                                 for k in ("protected", "legitimate", "ignored")}})
    split = SplitConfig(**entry_config["split"])
    context = SolveContext(dataset, fingerprint, roles, split, point_model(entry_config, row),
                           split_table(frame, roles, split), owner=owner)
    return build_entry(context, row["tree"], None)
