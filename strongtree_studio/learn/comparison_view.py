"""What the Learn page shows, as pure functions of a comparison's messages and rows:
the live progress of each run, the side-by-side table, the chart of LP bounds
against the optimum, and the words that explain them (with the paper's
equation numbers).  Every number goes through :func:`strongtree_studio.views.status_words.fmt`; every
outcome is said by :func:`strongtree_core.tree.claim.claim` (a run's row carries its label and words:
"Optimal over kept thresholds" where the quantile cuts left a threshold out), the statuses of runs
without a record through the vocabulary of :mod:`strongtree_studio.views.status_words`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from strongtree_core.tree.claim import KEPT_LABEL
from strongtree_core.compare.formulations import COMPARED
from strongtree_studio.jobs.comparison_job import MAX_ROWS, N_BUCKETS, ComparisonResult
from strongtree_studio.views.status_words import COMPARISON_STEP, backend_words, fmt, status_word

#: The runs as the page names them (the exact search is not "automatic" here: it is asked for).
RUN_NAMES: dict[str, str] = {
    "oct": "OCT",
    "binoct": "BinOCT",
    "flow": "FlowOCT",
    "benders": "BendersOCT",
    "auto": "Exact search",
    "local_search": "Local search",
}
#: Where each run comes from, said once under the table.
RUN_SOURCES = (
    "OCT: Bertsimas and Dunn (2017), formulation (24) (the paper's appendix on OCT). BinOCT: Verwer and Zhang "
    "(2019). FlowOCT: the paper's formulation (1), Section 2.2 (formulation (7) of Section 4.1 with λ). "
    "BendersOCT: the same problem as its main problem (4) with cut-set inequalities (4b) added by Algorithm 1, "
    "Section 3. Exact search: the built-in search over trees (dynamic programming with bounds), no MIO. "
    "Local search: coordinate descent over the nodes from CART and 100 random starts; it proves nothing."
)
#: The note of the local search's row.
HEURISTIC_NOTE = "Heuristic: no bound, never proven optimal."
#: The note of a run that was refused or failed (its reason, often long, is said under the table).
NOT_RUN_NOTE = "Not run: the reason is under the table."
#: A refused or failed run, under the table.
NOT_RUN = "{name} was not run: {reason}"
#: What the chart is about, under it.
CHART_CAPTION = (
    "Each bar runs from the optimum (dark line) to the formulation's LP bound: the value of its linear "
    "relaxation, where branch-and-bound starts. A shorter bar is a tighter relaxation. Theorem 1: FlowOCT's is "
    "never longer than OCT's or BinOCT's; BendersOCT's, with every cut-set inequality (4b), equals FlowOCT's."
)
MSG_NO_LP = "No formulation reported an LP bound, so there is nothing to chart."

#: Columns of the side-by-side table, in order.
COLUMNS = ("Formulation", "Status", "Variables", "Constraints", "Non-zeros", "LP bound", "Best tree",
           "Time", "Nodes", "Benders cuts", "Gap to optimum", "Solver", "Note")


#: The table choice that means "the table loaded on the Data page".
LOADED = "__loaded__"
#: The seed of the sample drawn from a larger table.
SAMPLE_SEED = 0
#: The cap, said on the page.
CAP_NOTE = (
    "The MIOs grow with rows × binary features, so a comparison takes at most {cap} rows (a random sample, seed "
    "{seed}, from a larger table) and splits each numeric column at {buckets} quantile thresholds."
)
MSG_NO_ROLES = "The loaded table has no target yet: choose one on the Data page, or pick a built-in table here."
MSG_NO_FEATURES = "The table {name!r} has no column to split on besides the target {target!r}."


@dataclass(frozen=True)
class LearnChoice:
    """The Learn page's durable choices."""

    table: str = "Balance scale (generated, as in the paper)"  # the first preset's (learn_presets.py)
    rows: int = 200
    depth: int = 2
    time_limit: float = 5.0
    regularization: float = 0.0


@dataclass(frozen=True)
class Sample:
    """The rows a comparison runs on, and where they come from."""

    name: str
    X: pd.DataFrame
    y: pd.Series
    of_rows: int  # rows with a target in the whole table


def sample_table(name: str, frame: pd.DataFrame, target: str, features: Sequence[str], rows: int) -> Sample:
    """At most ``min(rows, MAX_ROWS)`` rows of ``frame`` with a target (a seeded random sample
    when there are more), its ``features`` and its ``target``; ValueError when there is nothing to split on."""
    if not features:
        raise ValueError(MSG_NO_FEATURES.format(name=name, target=target))
    kept = frame[frame[target].notna()]
    n = max(1, min(int(rows), MAX_ROWS))
    part = kept.sample(n, random_state=SAMPLE_SEED) if len(kept) > n else kept
    part = part.reset_index(drop=True)
    return Sample(name, part[list(features)], part[target], len(kept))


def builtin_sample(table: str, rows: int) -> Sample:
    """The rows of a built-in table (:data:`strongtree_studio.data.demo_tables.DEMOS`) a comparison
    runs on: every column but the target, the protected and the ignored ones."""
    from strongtree_studio.data.demo_tables import DEMOS

    demo = DEMOS[table]
    frame = demo.load()
    excluded = {demo.target, *demo.protected, *demo.ignored}
    return sample_table(demo.name, frame, demo.target, [c for c in frame.columns if c not in excluded], rows)


def cap_note() -> str:
    return CAP_NOTE.format(cap=fmt(MAX_ROWS, "int"), seed=SAMPLE_SEED, buckets=N_BUCKETS)


def run_name(word: str) -> str:
    return RUN_NAMES.get(word, word)


@dataclass(frozen=True)
class RunProgress:
    """One run's latest report during a comparison."""

    word: str
    step: str  # a key of COMPARISON_STEP
    elapsed: float | None = None
    objective: float | None = None
    bound: float | None = None
    nodes: int | None = None


def run_progress(history: Sequence[dict[str, Any]], formulations: Sequence[str], active: bool) -> list[RunProgress]:
    """Each run's step and latest numbers from the job's progress points (whose
    ``message`` is the run's word): runs before the latest reporting one are done,
    the latest is running while the job is active, later ones wait."""
    latest: dict[str, dict[str, Any]] = {}
    for point in history:
        latest[point["message"]] = point
    reporting = [i for i, word in enumerate(formulations) if word in latest]
    current = max(reporting) if reporting else (0 if active else -1)
    out = []
    for i, word in enumerate(formulations):
        point = latest.get(word)
        if i < current or (i == current and not active):
            step = "done" if point is not None or i < current else "waiting"
        elif i == current:
            step = "running"
        else:
            step = "waiting"
        if point is None:
            out.append(RunProgress(word, step))
        else:
            out.append(RunProgress(word, step, point["elapsed"], point["objective"], point["bound"], point["nodes"]))
    return out


def progress_table(runs: Sequence[RunProgress]) -> pd.DataFrame:
    """The live table: one row per run, its step in words and its latest numbers."""
    return pd.DataFrame(
        [{"Formulation": run_name(r.word), "Step": COMPARISON_STEP[r.step].label,
          "Elapsed": fmt(r.elapsed, "seconds"), "Best tree": fmt(r.objective), "Bound": fmt(r.bound),
          "Explored": fmt(r.nodes, "int")} for r in runs]
    )


def optimum_of(rows: Sequence[dict[str, Any]]) -> float | None:
    """The best certified objective of the comparison, or None when no run proved one."""
    values = [r["objective"] for r in rows if r.get("certified") and r.get("objective") is not None]
    return max(values) if values else None


def _status_label(row: dict[str, Any]) -> str:
    """The claim's label of a run with a record; the status of one refused, failed or stopped before a tree."""
    return row.get("claim") or status_word(row["status"]).label


#: Under the table, when the quantile cuts left thresholds out: what every proof in it is about.
KEPT_NOTE = ("{label}: {words} Every run asks the same thresholds ({buckets} quantile cuts per numeric column), "
             "so the comparison of the formulations is exact; the optimum is over those thresholds.")


def kept_note(result: ComparisonResult) -> str:
    """The claim's words of the first run certified over kept thresholds ("" when no run was, e.g. on
    categorical columns, where every question is kept)."""
    row = next((r for r in result.rows if r.get("claim") == KEPT_LABEL), None)
    return "" if row is None else KEPT_NOTE.format(label=KEPT_LABEL, words=row["claim_words"], buckets=N_BUCKETS)


def optimum_words(rows: Sequence[dict[str, Any]]) -> str:
    """"the proven optimum", or "the optimum proven over the kept thresholds" when the run that proved it
    was certified over kept thresholds only."""
    optimum = optimum_of(rows)
    kept = any(r.get("claim") == KEPT_LABEL and r.get("objective") == optimum for r in rows)
    return "the optimum proven over the kept thresholds" if kept else "the proven optimum"


def _note(row: dict[str, Any]) -> str:
    if row["status"] in ("refused", "failed"):
        return NOT_RUN_NOTE
    if row["status"] == "heuristic":
        return HEURISTIC_NOTE
    return ""


#: Refusals in this page's words: what the formulation cannot take and which control above changes it.
REFUSAL_WORDS: dict[str, str] = {
    "binoct": ("it learns balanced trees that only count correct rows, so it has no split penalty λ (Verwer and "
               "Zhang's formulation has no imbalanced trees, as the paper notes in Section 4.1). Set the "
               "simplicity weight λ to 0 above to include it."),
}
#: The library's advice names its own parameters; the page says where to change things instead.
_API_ADVICE = re.compile(r"\s*Use formulation=.*$", re.DOTALL)


def refusal_words(word: str, note: str) -> str:
    """Why ``word`` refused, in the page's words: its own sentence where the page has one,
    else the library's reason without its advice about parameters."""
    if word in REFUSAL_WORDS:
        return REFUSAL_WORDS[word]
    return _API_ADVICE.sub("", note).strip()


def not_run(result: ComparisonResult) -> list[str]:
    """Why each refused or failed run did not run, in words (what it cannot take and what to change)."""
    return [NOT_RUN.format(name=run_name(r["word"]),
                           reason=(refusal_words(r["word"], r.get("note") or "") if r["status"] == "refused" else "")
                           or r.get("note") or status_word(r["status"]).sentence)
            for r in result.rows if r["status"] in ("refused", "failed")]


def _solver(row: dict[str, Any]) -> str:
    """The MIO's backend; the exact and the local search run inside the library."""
    if row["word"] in ("auto", "local_search"):
        return "built in"
    return backend_words(row["backend"]) if row.get("backend") else fmt(None)


def comparison_table(result: ComparisonResult) -> pd.DataFrame:
    """One row per run, every number through ``fmt`` and every status in words (refusals as words, in their row)."""
    table = []
    for row in result.rows:
        solved = row["status"] not in ("refused", "failed")
        table.append({
            "Formulation": run_name(row["word"]),
            "Status": _status_label(row),
            "Variables": fmt(row.get("variables"), "int"),
            "Constraints": fmt(row.get("constraints"), "int"),
            "Non-zeros": fmt(row.get("nonzeros"), "int"),
            "LP bound": fmt(row.get("lp_bound")),
            "Best tree": fmt(row.get("objective")),
            "Time": fmt(row.get("seconds"), "seconds"),
            "Nodes": fmt(row.get("nodes"), "int"),
            "Benders cuts": fmt(row.get("cuts"), "int"),
            "Gap to optimum": fmt(row.get("gap_to_optimum"), "percent"),
            "Solver": _solver(row) if solved else fmt(None),
            "Note": _note(row),
        })
    return pd.DataFrame(table, columns=list(COLUMNS))


def objective_axis(regularization: float) -> str:
    """What the objective counts, for the chart's axis: correct rows, or eq. (7)'s score with λ."""
    if not regularization:
        return "Objective: correct training rows (1a)"
    return f"Objective (7): (1 − λ) × correct rows − λ × splits, λ = {fmt(regularization)}"


def lp_chart(result: ComparisonResult, regularization: float = 0.0) -> dict[str, Any] | None:
    """Vega-Lite spec: a bar per MIO from the optimum to its LP bound (the gap the
    relaxation leaves), labelled with that gap in rows, and the optimum as a rule.

    Without a proven optimum the bars start at the best tree found (the caption says so).
    """
    bars = [r for r in result.rows if r.get("lp_bound") is not None]
    if not bars:
        return None
    base = optimum_of(result.rows)
    if base is None:
        found = [r["objective"] for r in result.rows if r.get("objective") is not None]
        if not found:
            return None
        base = max(found)
    order = [run_name(w) for w in COMPARED if w in {r["word"] for r in bars}]
    data = [{"formulation": run_name(r["word"]), "lp": r["lp_bound"], "base": base,
             "label": f"LP {fmt(r['lp_bound'])}, {fmt(r['lp_bound'] - base)} above"} for r in bars]
    top = max(r["lp_bound"] for r in bars)
    span = max(top - base, 1e-9)
    domain = [base - 0.15 * span, top + 0.6 * span]
    x = {"field": "lp", "type": "quantitative", "title": objective_axis(regularization),
         "scale": {"domain": domain, "zero": False}, "axis": {"labelFontSize": 12, "titleFontSize": 12}}
    y = {"field": "formulation", "type": "nominal", "sort": order, "title": None,
         "axis": {"labelFontSize": 13, "labelLimit": 200}}
    return {
        "data": {"values": data},
        "layer": [
            {"mark": {"type": "bar", "color": "#1f6f8b", "height": 22},
             "encoding": {"y": y, "x": x, "x2": {"field": "base"},
                          "tooltip": [{"field": "formulation", "title": "Formulation"},
                                      {"field": "label", "title": "LP bound"}]}},
            {"mark": {"type": "text", "align": "left", "dx": 5, "fontSize": 12},
             "encoding": {"y": y, "x": x, "text": {"field": "label"}}},
            {"mark": {"type": "rule", "color": "#222", "strokeWidth": 2},
             "encoding": {"x": {"field": "base", "type": "quantitative"}}},
        ],
    }


def local_search_sentence(result: ComparisonResult) -> str:
    """The local search against the optimum, in words (never called optimal)."""
    local = next((r for r in result.rows if r["word"] == "local_search"), None)
    if local is None or local.get("objective") is None:
        return ""
    optimum = optimum_of(result.rows)
    if optimum is None:
        return (f"The local search found a tree of value {fmt(local['objective'])} in {fmt(local['seconds'], 'seconds')}; "
                "no run proved an optimum, so its gap is unknown. Heuristic search proves nothing.")
    gap = local.get("gap_to_optimum")
    reach = f"reached {optimum_words(result.rows)} this time" if gap is not None and gap <= 1e-9 else \
        f"is {fmt(gap, 'percent')} below {optimum_words(result.rows)} of {fmt(optimum)}"
    return (f"The local search's tree (value {fmt(local['objective'])}, {fmt(local['seconds'], 'seconds')}) {reach}. "
            "Heuristic search has no bound: it cannot know that, and on other tables it stops short.")


def theorem_check(result: ComparisonResult) -> str:
    """Theorem 1 on the numbers shown: FlowOCT's LP bound against OCT's and BinOCT's."""
    lp = {r["word"]: r.get("lp_bound") for r in result.rows}
    flow = lp.get("flow")
    if flow is None:
        return ""
    parts = []
    for word in ("oct", "binoct"):
        other = lp.get(word)
        if other is None:
            continue
        if abs(other - flow) <= 1e-6 * max(1.0, abs(flow)):
            parts.append(f"equal to {run_name(word)}'s ({fmt(other)})")
        else:
            relation = "tighter than" if flow < other else "looser than"
            share = abs(other - flow) / max(result.n_rows, 1)
            parts.append(f"{relation} {run_name(word)}'s ({fmt(other)}) by {fmt(abs(other - flow))} "
                         f"({fmt(share, 'percent')} of the {fmt(result.n_rows, 'int')} rows)")
    if not parts:
        return ""
    return f"Theorem 1 on this table: FlowOCT's LP bound ({fmt(flow)}) is " + " and ".join(parts) + "."


#: The plain-words explanation, with the paper's equation numbers.
EXPLANATION = """\
**Flows (formulation 1).** FlowOCT sees a tree as a network: every training row sends at most one
unit of flow from a source into the root (1e). At each branching node the flow may only leave
along the branch the row's feature allows (1f, 1g), flow is conserved at every node (1c, 1d), and
it reaches the sink only through a leaf that predicts the row's class (1h). A row is correctly
classified exactly when its flow reaches the sink, so the objective (1a) counts correct rows.
Misclassified rows carry no flow at all: there are no big-M constraints and no variable saying
which leaf a wrong row lands in.

**Cuts (problem 4, Algorithm 1).** Once the splits and the predictions are fixed, each row's flow
is a small max-flow problem (3) of its own. BendersOCT keeps only the splits, the predictions and
one value g per row in its main problem (4) and adds a cut-set inequality (4b) whenever a
candidate tree claims a row it misclassifies: Algorithm 1 follows the row down the tree and
returns the minimum cut in time proportional to the depth; the paper proves these cuts are
facet-defining, the strongest of their kind. The model stays tiny; the cuts column counts the inequalities it needed
(Algorithm 2 does the same for trees with the split penalty λ).

**Why a tighter relaxation prunes more (Theorem 1).** Branch-and-bound drops the requirement
that splits be 0 or 1 to get an upper bound (the LP bound) and discards every branch whose bound
is no better than the best tree found. The closer the LP bound is to the optimum, the earlier
branches are discarded and the fewer nodes are explored. Theorem 1 proves that the LP relaxation
of FlowOCT is never looser than those of OCT (formulation 24 of Bertsimas and Dunn) and BinOCT,
whose big-M rows hold only loosely once the splits are fractional. On small
balanced trees all of them often reach the trivial bound (every row correct); add the split
penalty λ to see FlowOCT's bound come in below OCT's. Time and nodes also depend on the solver's
own cuts and heuristics, so the order of times can differ from the order of bounds.
"""


#: Why node counts do not follow the LP bounds alone, said under the table.
NODES_NOTE = (
    "Nodes: the branch-and-bound nodes the solver explored. The LP bound is where the search starts; how many "
    "nodes it then needs also depends on how tight the relaxation stays deeper in the search, on the solver's "
    "own cuts, presolve and heuristics, and on the backend."
)


def nodes_sentence(result: ComparisonResult) -> str:
    """FlowOCT's and BendersOCT's node counts side by side, explained (the same LP bound, different searches)."""
    rows = {r["word"]: r for r in result.rows}
    flow, benders = rows.get("flow"), rows.get("benders")
    if not flow or not benders or flow.get("nodes") is None or benders.get("nodes") is None:
        return ""
    at_root = (" FlowOCT's time ran out while its solver was still at the root node (its own cuts and "
               "heuristics), before any branching." if flow["nodes"] == 0 and flow["status"] != "optimal" else "")
    return (f"**Nodes.** FlowOCT explored {fmt(flow['nodes'], 'int')} nodes and BendersOCT "
            f"{fmt(benders['nodes'], 'int')}, from the same LP bound ({fmt(flow.get('lp_bound'))}): BendersOCT's "
            "main problem (4) starts without cuts, at the trivial bound, and adds the cut-set inequalities (4b) "
            f"as it goes ({fmt(benders.get('cuts'), 'int')} here), "
            f"{'so it explores more nodes, each' if benders['nodes'] > flow['nodes'] else 'and each of its nodes is'} "
            f"a much smaller LP ({fmt(benders.get('constraints'), 'int')} rows before its cuts against FlowOCT's "
            f"{fmt(flow.get('constraints'), 'int')}). Its backend ({backend_words(benders['backend']) if benders.get('backend') else fmt(None)}) "
            "adds its own cuts and heuristics too: compare times, not only nodes (Section 3 of the paper)." + at_root)


#: Columns of the downloaded comparison (raw numbers, none formatted).
EXPORT_COLUMNS = ("formulation", "status", "variables", "constraints", "nonzeros", "lp_bound", "best_tree", "bound",
                  "seconds", "nodes", "benders_cuts", "gap_to_optimum", "solver")


def export_frame(result: ComparisonResult) -> pd.DataFrame:
    """The comparison as numbers, one row per run (for the CSV)."""
    out = []
    for row in result.rows:
        out.append({
            "formulation": run_name(row["word"]), "status": row["status"], "variables": row.get("variables"),
            "constraints": row.get("constraints"), "nonzeros": row.get("nonzeros"), "lp_bound": row.get("lp_bound"),
            "best_tree": row.get("objective"), "bound": row.get("bound"), "seconds": row.get("seconds"),
            "nodes": row.get("nodes"), "benders_cuts": row.get("cuts"), "gap_to_optimum": row.get("gap_to_optimum"),
            "solver": _solver(row) if row["status"] not in ("refused", "failed") else None,
        })
    return pd.DataFrame(out, columns=list(EXPORT_COLUMNS))


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "λ": r"$\lambda$",
                  "–": "--", "−": "-"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def comparison_latex(result: ComparisonResult, caption: str) -> str:
    """The table as shown on the page (Note column left out), as a LaTeX ``table`` with booktabs rules."""
    frame = comparison_table(result).drop(columns=["Note"])
    spec = "l" + "r" * (frame.shape[1] - 1)
    lines = [r"\begin{table}[ht]", r"\centering", r"\small", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
             " & ".join(latex_escape(c) for c in frame.columns) + r" \\", r"\midrule"]
    lines += [" & ".join(latex_escape(v) for v in values) + r" \\" for values in frame.itertuples(index=False)]
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{latex_escape(caption)}}}", r"\end{table}", ""]
    return "\n".join(lines)


#: Said above results the settings have moved away from.
STALE = ("These results are for earlier settings ({settings}). Press Compare to run the settings above, or pick "
         "the preset again.")


def settings_words(started: dict[str, Any]) -> str:
    """The settings a comparison ran with, in words: table, rows, depth, λ, time per run."""
    return (f"{started.get('name', '')}: {fmt(started.get('n_rows'), 'int')} rows, depth {started.get('depth', '')}, "
            f"λ = {fmt(started.get('regularization'))}, {fmt(started.get('time_limit'), 'seconds')} per run")


def is_stale(started: dict[str, Any], choice: LearnChoice, sample_name: str | None) -> bool:
    """Whether the choices now differ from those the shown comparison ran with (or the loaded table changed)."""
    ran = LearnChoice(**{name: started[name] for name in LearnChoice.__dataclass_fields__ if name in started})
    return ran != choice or (sample_name is not None and started.get("name") not in (None, sample_name))
