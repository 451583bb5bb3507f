"""A sweep's points as data: a table (its CSV), the same in words, a point's label,
the point a click on the frontier picked, and a point's tree packaged as a run."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Sequence

import numpy as np
import pandas as pd

from strongtree_core.csv_format import spreadsheet_safe
from strongtree_core.sweep import to_table
from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig, split_table
from strongtree_studio.views.explain import FAIRNESS_NOTIONS
from strongtree_studio.jobs.solve_job import SolveContext, build_entry
from strongtree_studio.views.status_words import claim_of, fmt, status_word

MSG_FROM_POINT = "The tree of point {point}{sweep} ({label}), opened from the Trade-offs page."
MSG_POINT_NO_TREE = "Point {point} has no tree to open: {reason}"
MSG_POINT_NEEDS_TABLE = (
    "The tree of a point opens with the table the sweep was learned on ({dataset}): load it on the Data page first."
)


def points_table(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """The rows as :func:`strongtree_core.sweep.sweep` returns them (sorted by point; stored nulls as NaN)."""
    table = to_table([{k: (math.nan if v is None and k != "tree" else v) for k, v in r.items()} for r in rows])
    if "certified" in table.columns:
        table["certified"] = table["certified"].fillna(False).astype(bool)
    return table


#: Gap columns end in these; they (and δ) go to the CSV in percentage points, as the page shows them.
GAP_ENDINGS = ("_gap", "_gap_low", "_gap_high", "_statistical_parity", "_conditional_statistical_parity",
               "_predictive_equality", "_equal_opportunity", "_equalized_odds")


def csv_table(table: pd.DataFrame, meta: dict[str, Any] | None = None) -> pd.DataFrame:
    """The points as the CSV gives them: first the table, target, positive class and protected and legitimate
    columns they were learned on, then every column of the sweep with δ and every gap in percentage points
    (``fairness_bound_pp``, ``training_bound_pp`` with a promise level, ``train_gap_pp``, ...) and accuracies in percent (``train_accuracy_percent``), as on
    the page; the trees as JSON."""
    out = table.copy()
    renamed = {}
    for column in out.columns:
        if column in ("fairness_bound", "training_bound") or column.endswith(GAP_ENDINGS):
            out[column] = 100.0 * out[column]
            renamed[column] = f"{column}_pp"
        elif column.endswith("_accuracy"):
            out[column] = 100.0 * out[column]
            renamed[column] = f"{column}_percent"
    out = out.rename(columns=renamed)
    config = (meta or {}).get("config", {})
    roles = config.get("roles", {})
    lead = {
        "table": (meta or {}).get("dataset", ""),
        "target": roles.get("target", ""),
        "positive_class": roles.get("pos_label", ""),
        "protected": " & ".join(roles.get("protected") or ()),
        "legitimate": " & ".join(roles.get("legitimate") or ()),
    }
    for i, (name, value) in enumerate(lead.items()):
        out.insert(i, name, value)
    return out


def csv_bytes(table: pd.DataFrame, meta: dict[str, Any] | None = None) -> bytes:
    """The CSV download of a sweep (:func:`csv_table`); text a spreadsheet would run as a formula (a table or
    column name typed by the user) gets a leading quote (:func:`strongtree_core.csv_format.spreadsheet_safe`)."""
    return spreadsheet_safe(csv_table(table, meta)).to_csv(index=False).encode("utf-8")


def notion_name(key: Any) -> str:
    if not isinstance(key, str):
        return "none (reference)"
    return " + ".join(FAIRNESS_NOTIONS[k].name if k in FAIRNESS_NOTIONS else k for k in key.split("+"))


def has_test(table: pd.DataFrame) -> bool:
    return "n_test" in table.columns and bool((table["n_test"].fillna(0) > 0).any())


def shown_table(table: pd.DataFrame) -> pd.DataFrame:
    """One line per point, every number and status in words (:func:`strongtree_studio.views.status_words.fmt`); with test rows,
    accuracy and gap read "training / test"."""
    test = has_test(table)

    def pair(part_values: str, kind: str) -> list[str]:
        train = table[f"train_{part_values}"].map(lambda v: fmt(v, kind))
        if not test:
            return list(train)
        return [f"{a} / {fmt(b, kind)}" for a, b in zip(train, table[f"test_{part_values}"])]

    suffix = " training / test" if test else " (training)"
    shown = pd.DataFrame({
        "point": table["point"].map(lambda v: fmt(v, "int")),
        "notion": table["fairness"].map(notion_name),
        "δ": table["fairness_bound"].map(lambda v: fmt(v, "points")),
        "depth": table["depth"].map(lambda v: fmt(v, "int")),
        "λ": table["regularization"].map(fmt),
        "status": [point_status(r) for r in table.to_dict("records")],
        "accuracy" + suffix: pair("accuracy", "percent"),
        "gap" + suffix: pair("gap", "points"),
        "time": table["time"].map(lambda v: fmt(v, "seconds")),
    })
    if "fairness_confidence" in table.columns:  # a sweep with promise levels: what each point promised
        shown.insert(3, "on new rows", [promise_text(r) for r in table.to_dict("records")])
    return shown


def point_status(row: Any) -> str:
    """How a point's solve ended, in its claim's words when its tree is at hand ("Optimal over kept
    thresholds", "Constant tree (promise)"), else in its status's (a reference model, a refused fit)."""
    tree = row.get("tree") if hasattr(row, "get") else None
    if isinstance(tree, str) and tree:
        said = claim_of(tree)
        if said is not None:
            return said.short
    return status_word(row["status"]).label


def certified_labels(rows: Sequence[Any]) -> dict[str, int]:
    """The points whose solve was certified, counted by their claim's label as it reads inside a sentence
    ({"optimal over kept thresholds": 6, "proven optimal": 1}): a certificate over the thresholds kept, or a
    constant tree a promise left, is never counted as "proven optimal"."""
    counts: dict[str, int] = {}
    for row in rows:
        if not bool(row.get("certified")):
            continue
        tree = row.get("tree")
        said = claim_of(tree) if isinstance(tree, str) and tree else None
        label = said.label if said is not None else status_word(row["status"]).label
        label = label[:1].lower() + label[1:]
        counts[label] = counts.get(label, 0) + 1
    return counts


def certified_words(rows: Sequence[Any]) -> str:
    """What the certified points are, for a legend or a caption: "proven optimal", "optimal over kept thresholds",
    or both joined by "or" ("proven optimal" when there is none yet)."""
    return " or ".join(sorted(certified_labels(rows), reverse=True)) or "proven optimal"


def is_promise(row: Any) -> bool:
    """Whether the point promised its bound on new rows (a ``fairness_confidence`` level)."""
    level = row.get("fairness_confidence") if hasattr(row, "get") else None
    return isinstance(level, (int, float)) and level == level


def promise_text(row: Any) -> str:
    """What a point promised on new rows: "90 % confidence, trained at 2.9 pp" (its tightened training bound),
    "90 % confidence: only a constant tree keeps it", "training rows only" without a promise, "–" for a reference."""
    if not isinstance(row.get("fairness"), str):
        return "–"
    if not is_promise(row):
        return "training rows only"
    level = f"{round(100 * float(row['fairness_confidence']))} % confidence"
    constant = row.get("promise_constant")  # NaN (a sweep's stored null) is not True
    if isinstance(constant, (bool, np.bool_)) and constant:
        return f"{level}: only a constant tree keeps it"
    trained = row.get("training_bound")
    at = f", trained at {fmt(trained, 'points')}" if isinstance(trained, (int, float)) and trained == trained else ""
    return f"{level}{at}"


def point_label(row: Any) -> str:
    """A point in words for a list: its settings (λ when not 0), training accuracy and gap, and status."""
    price = f" · λ {fmt(row['regularization'])}" if row["regularization"] else ""
    notion = (f"{notion_name(row['fairness'])} ≤ {fmt(row['fairness_bound'], 'points')}"
              if isinstance(row["fairness"], str) else "without a fairness constraint")
    if isinstance(row["fairness"], str) and is_promise(row):
        notion += f" on new rows ({promise_text(row)})"
    return (f"Point {fmt(row['point'], 'int')} · {notion}"
            f" · depth {fmt(row['depth'], 'int')}{price} · {fmt(row['train_accuracy'], 'percent')}, "
            f"gap {fmt(row['train_gap'], 'points')} · {point_status(row)}")


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


def point_model(config: dict[str, Any], row: Any) -> ModelConfig:
    """The model settings of one point: the shared ones with its notion, bound, depth and λ."""
    model = ModelConfig.from_dict(config["model"])
    notions = tuple(str(row["fairness"]).split("+")) if isinstance(row["fairness"], str) else ()
    bound = float(row["fairness_bound"]) if notions else model.fairness_bound
    level = float(row["fairness_confidence"]) if notions and is_promise(row) else None
    return replace(model, fairness=notions, fairness_bound=bound, depth=int(row["depth"]),
                   regularization=float(row["regularization"]), fairness_confidence=level)


def point_run(entry_config: dict[str, Any], dataset: str, fingerprint: str, row: Any, frame: pd.DataFrame,
              owner: str, sweep_id: int | None = None):
    """The point's tree measured on its rows and packaged as a run (:class:`strongtree_studio.stores.run_history.RunEntry`);
    its config says which point of which sweep it is (``sweep_point``), so the pages can say so."""
    roles = Roles(**{**entry_config["roles"], **{k: tuple(entry_config["roles"].get(k) or ())
                                                 for k in ("protected", "legitimate", "ignored")}})
    split = SplitConfig(**entry_config["split"])
    context = SolveContext(dataset, fingerprint, roles, split, point_model(entry_config, row),
                           split_table(frame, roles, split), owner=owner)
    entry = build_entry(context, row["tree"], None)
    origin = {"sweep": sweep_id, "point": int(row["point"]), "label": point_label(row).split(" · ", 1)[1]}
    return replace(entry, config={**entry.config, "sweep_point": origin})


def point_origin(config: dict[str, Any]) -> str:
    """Where a run opened from a sweep point comes from, in words ("" for any other run)."""
    origin = config.get("sweep_point")
    if not origin:
        return ""
    sweep = f" of sweep {origin['sweep']}" if origin.get("sweep") is not None else " of this session's sweep"
    return MSG_FROM_POINT.format(point=origin["point"], sweep=sweep, label=origin.get("label", ""))
