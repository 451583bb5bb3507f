"""The paper's MIO, live: FlowOCT (formulation 1) on HiGHS and BendersOCT (problem 4,
cuts of Algorithm 1) on SCIP solve one small table alone, with no warm start and no
exact search behind them, and the exact search solves it after them; the Solve page
draws each run's best tree rising and its bound falling from the solvers' own
callbacks (HiGHS's improving-solution and interrupt callbacks, SCIP's event handler).

Pure functions of the comparison job's messages (:mod:`strongtree_studio.jobs.comparison_job`):
the job to submit, each run's progress points closed by its final record, the chart
of one run, the table of the finished runs and the sentences under them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from strongtree_studio.jobs.comparison_job import CompareSpec, ComparisonResult
from strongtree_studio.learn.comparison_view import builtin_sample, run_name
from strongtree_studio.views.ticks import seconds_x
from strongtree_studio.views.status_words import backend_words, fmt, status_word

#: The colours of the Solve page's own progress chart (best tree, bound).
BEST_COLOUR, BOUND_COLOUR = "#1f6f8b", "#c0392b"


@dataclass(frozen=True)
class LiveMio:
    """The table and settings of the live MIO: both MIOs finish well within a minute.

    Measured (``benchmarks/learn_presets.py``, RESULTS section 18): on the 200-row
    sample of the balance-scale table at depth 2, FlowOCT on HiGHS proved the optimum
    (141) in 44 s, its bound falling in 12 steps from its LP relaxation (177.5), and
    BendersOCT on SCIP in 12 s, from the trivial 200 in 3 steps, on a 2-core machine
    with a load average of 23-28.  The 200-row sample of the hiring table did not
    finish in 60 s at that load (its LP relaxations are trivial: nothing to see before
    branching).
    """

    table: str = "Balance scale (generated, as in the paper)"
    rows: int = 200
    depth: int = 2
    time_limit: float = 60.0
    #: (formulation, backend) of each run, in order; "auto" is the exact search.
    runs: tuple[tuple[str, str], ...] = (("flow", "highs"), ("benders", "scip"), ("auto", "auto"))

    @property
    def formulations(self) -> tuple[str, ...]:
        return tuple(word for word, _ in self.runs)


LIVE = LiveMio()
#: What the button does, said beside it.
LIVE_SUMMARY = (
    "The paper's MIO alone, as in its experiments: FlowOCT (formulation 1) on HiGHS, then BendersOCT "
    "(problem 4 with the cuts of Algorithm 1) on SCIP, each without a warm start and with no exact search "
    "behind it, then the exact search. Table: {rows} rows of the balance-scale table (a random sample, seed 0), "
    "depth {depth}, every row counts 1, at most {limit} per run; about a minute in all."
)
#: Under the charts.
LIVE_CAPTION = (
    "Solid line: the best tree the solver has found (correct training rows); dashed: its bound, the best any "
    "tree of depth {depth} could do, proven. The thin grey line is the formulation's LP relaxation (its bound "
    "before branching, Theorem 1). Each chart's clock starts with its run."
)
MSG_NO_TREE_YET = "No numbers yet: the solver reports once it has a first tree or bound."

#: Columns of the table of finished runs.
COLUMNS = ("Run", "Solver", "Status", "LP relaxation", "Best tree", "Bound", "Time", "Nodes", "Benders cuts")


def live_sample():
    """The rows the live MIO solves (the same sample the Learn page draws of this table)."""
    return builtin_sample(LIVE.table, LIVE.rows)


def live_spec() -> CompareSpec:
    """The job: the MIOs alone on their backends, then the exact search."""
    sample = live_sample()
    return CompareSpec(sample.X, sample.y, depth=LIVE.depth, time_limit=LIVE.time_limit,
                       formulations=LIVE.formulations,
                       solvers=tuple((word, solver) for word, solver in LIVE.runs if word != "auto"))


def live_summary() -> str:
    return LIVE_SUMMARY.format(rows=fmt(LIVE.rows, "int"), depth=LIVE.depth, limit=f"{LIVE.time_limit:.0f} s")


def run_label(word: str) -> str:
    """A run with its backend: "FlowOCT on HiGHS", "Exact search"."""
    solver = dict(LIVE.runs).get(word, "auto")
    return run_name(word) if solver == "auto" else f"{run_name(word)} on {backend_words(solver)}"


def run_points(history: Sequence[dict[str, Any]], result: ComparisonResult | None, word: str,
               now: float | None = None) -> list[dict[str, Any]]:
    """One run's progress points (``elapsed`` from the run's start), closed by its final
    record when the job has reported it, and held up to ``now`` while it runs."""
    points = [p for p in history if p["message"] == word]
    row = None if result is None else next((r for r in result.rows if r["word"] == word), None)
    if row is not None and row.get("objective") is not None:
        last = points[-1] if points else {"elapsed": 0.0}
        end = max(float(row.get("seconds") or 0.0), last["elapsed"])
        points.append({"elapsed": end, "objective": row["objective"], "bound": row.get("bound"), "message": word})
    elif now is not None and points and now > points[-1]["elapsed"]:
        points.append({**points[-1], "elapsed": now, "held": True})
    return points


def shared_domain(series: Sequence[Sequence[dict[str, Any]]]) -> list[float] | None:
    """One objective axis for every run: from the lowest best tree worth drawing (first
    trees below half the best are drawn along the bottom edge) to the highest bound."""
    best = [p["objective"] for points in series for p in points if p.get("objective") is not None]
    bounds = [p["bound"] for points in series for p in points if p.get("bound") is not None]
    if not best and not bounds:
        return None
    top_best = max(best) if best else min(bounds)
    low = min([v for v in best if v >= 0.5 * top_best] or [top_best])
    high = max(bounds + [top_best])
    pad = max(0.04 * (high - low), 0.5)
    return [low - pad, high + pad]


def run_chart(points: Sequence[dict[str, Any]], domain: list[float], lp_bound: float | None = None) -> dict[str, Any] | None:
    """Vega-Lite spec of one run: its best tree and its bound against its own clock, as
    steps, and its LP relaxation as a thin rule."""
    rows = []
    for p in points:
        for series, field in (("best tree", "objective"), ("bound", "bound")):
            if p.get(field) is not None:
                rows.append({"seconds": round(p["elapsed"], 2), "value": p[field], "series": series,
                             "held": bool(p.get("held"))})
    if not rows:
        return None
    y = {"field": "value", "type": "quantitative", "title": "correct rows",
         "scale": {"domain": domain, "clamp": True, "zero": False},
         "axis": {"format": ",.4~g", "labelFontSize": 12, "titleFontSize": 12}}
    colour = {"field": "series", "type": "nominal", "title": None,
              "scale": {"domain": ["best tree", "bound"], "range": [BEST_COLOUR, BOUND_COLOUR]},
              "legend": {"orient": "bottom", "labelFontSize": 12}}
    layers: list[dict[str, Any]] = [
        {"mark": {"type": "line", "interpolate": "step-after", "strokeWidth": 2.5},
         "encoding": {"strokeDash": {"field": "series", "type": "nominal", "legend": None,
                                     "scale": {"domain": ["best tree", "bound"], "range": [[1, 0], [6, 4]]}}}},
        {"mark": {"type": "point", "filled": True, "size": 30}, "transform": [{"filter": "!datum.held"}]},
    ]
    spec: dict[str, Any] = {
        "data": {"values": rows},
        "encoding": {
            "x": seconds_x(rows),
            "y": y, "color": colour,
            "tooltip": [{"field": "series"}, {"field": "seconds", "format": ".1f"}, {"field": "value", "format": ",.6~g"}],
        },
        "layer": layers,
    }
    if lp_bound is not None:
        layers.append({"data": {"values": [{"lp": lp_bound}]},
                       "mark": {"type": "rule", "color": "#888", "strokeWidth": 1.5},
                       "encoding": {"y": {"field": "lp", "type": "quantitative"}, "x": None, "color": None,
                                    "tooltip": None}})
    return spec


def results_table(result: ComparisonResult) -> pd.DataFrame:
    """The finished runs: backend, status in words, LP relaxation, best tree, bound, time, nodes, cuts."""
    out = []
    for row in result.rows:
        word = row["word"]
        solved = row["status"] not in ("refused", "failed")
        out.append({
            "Run": run_name(word),
            "Solver": "built in" if word == "auto" else (backend_words(row["backend"]) if row.get("backend") else
                                                         fmt(None)),
            "Status": row.get("claim") or status_word(row["status"]).label,  # the claim's, over the kept thresholds
            "LP relaxation": fmt(row.get("lp_bound")) if solved else fmt(None),
            "Best tree": fmt(row.get("objective")),
            "Bound": fmt(None if row.get("bound") is None else round(row["bound"], 6)),
            "Time": fmt(row.get("seconds"), "seconds"),
            "Nodes": fmt(row.get("nodes"), "int"),
            "Benders cuts": fmt(row.get("cuts"), "int"),
        })
    return pd.DataFrame(out, columns=list(COLUMNS))


def outcome_sentences(result: ComparisonResult, history: Sequence[dict[str, Any]]) -> list[str]:
    """What the runs show, in words: how far each MIO's bound fell and how fast each proved."""
    rows = {r["word"]: r for r in result.rows}
    said = []
    for word in ("flow", "benders"):
        row = rows.get(word)
        if row is None or row.get("objective") is None:
            continue
        bounds = [p["bound"] for p in history if p["message"] == word and p.get("bound") is not None]
        first = bounds[0] if bounds else None
        proven = row["status"] == "optimal"
        verdict = (row.get("claim") or status_word("optimal").label).lower()  # the claim's: "optimal over kept thresholds"
        ending = (f"met the best tree ({fmt(row['objective'])}) after {fmt(row.get('seconds'), 'seconds')}: {verdict}"
                  if proven else
                  f"stopped at {fmt(row.get('bound'))}, above the best tree ({fmt(row['objective'])}), at the limit")
        start = f"from {fmt(first)}" if first is not None else "from its first report"
        lp = row.get("lp_bound")
        if word == "benders" and first is not None and lp is not None and first > lp + 1e-6:
            why = (f"its main problem (4) starts without cuts; with every cut-set inequality (4b) its relaxation "
                   f"would be FlowOCT's, {fmt(lp)}")
        else:
            why = f"its LP relaxation: {fmt(lp)}"
        said.append(f"**{run_label(word)}**: the bound fell {start} ({why}) "
                    f"and {ending}, after {fmt(row.get('nodes'), 'int')} branch-and-bound nodes.")
    exact = rows.get("auto")
    if exact is not None and exact.get("objective") is not None:
        words = exact.get("claim_words") or status_word(exact["status"]).sentence + "."
        said.append(f"**Exact search**: {fmt(exact['objective'])} in {fmt(exact.get('seconds'), 'seconds')}. "
                    f"{words[0].upper() + words[1:]} It needs no LP: dynamic programming over the subtrees, with "
                    "bounds (no MIO model).")
    return said
