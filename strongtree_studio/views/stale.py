"""Whether a result on screen was made with the settings now chosen, and if not,
what changed since, in words.

A result is *stale* when the table, the column roles, the split or the model
settings have changed since its solve was started: the pages then label it
(:data:`MSG_STALE`) instead of letting it pass for the current settings.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from strongtree_core.vocabulary import SETTING_NAMES, setting_name
from strongtree_studio.data.choices import ENCODINGS, FORMULATIONS, OBJECTIVES, SOLVERS, ModelConfig, Roles, SplitConfig
from strongtree_studio.views.explain import FAIRNESS_NOTIONS
from strongtree_studio.views.markup import md
from strongtree_studio.views.status_words import fmt

MSG_STALE = (
    "From earlier settings: this result was solved before you changed {changes}. "
    "Solve again to see the current settings."
)
#: Changes named before "and N more".
MAX_NAMED = 3

#: The settings' names inside a sentence: the one name of each (strongtree_core.vocabulary.SETTING_NAMES).
_MODEL_NAMES = {name: setting_name(name, inside=True) for name in SETTING_NAMES}
_ROLE_NAMES = {"target": "target", "pos_label": "positive class", "protected": "protected attribute",
               "legitimate": "legitimate factor", "ignored": "ignored columns"}
_SPLIT_NAMES = {"test_size": "test share", "seed": "random seed", "stratify": "stratification"}


def settings(fingerprint: str, roles: Roles, split: SplitConfig, model: ModelConfig) -> dict[str, Any]:
    """The settings a solve is made with, as JSON-like data (what a stored run keeps)."""
    config = {"roles": asdict(roles), "split": asdict(split), "model": asdict(model)}
    return {"fingerprint": fingerprint, "config": json.loads(json.dumps(config, default=str))}


def _value(section: str, name: str, value: Any) -> str:
    if value is None or value == [] or value == ():
        return "none"
    if section == "model" and name == "fairness":
        return ", ".join(FAIRNESS_NOTIONS[n].name if n in FAIRNESS_NOTIONS else str(n) for n in value)
    if section == "model" and name == "fairness_bound":
        return fmt(value, "points")
    if section == "model" and name in ("formulation", "solver", "objective", "encoding"):
        return {"formulation": FORMULATIONS, "solver": SOLVERS, "objective": OBJECTIVES,
                "encoding": ENCODINGS}[name].get(value, str(value))
    if section == "model" and name == "time_limit":
        return fmt(value, "seconds")
    if section == "split" and name == "test_size":
        return fmt(value, "percent")
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def changes(then: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What differs from ``then`` to ``now`` (both from :func:`settings`), as short
    plain phrases: "the table", "depth 2 → 3", "δ 5.0 pp → 2.0 pp"."""
    out: list[str] = []
    if then.get("fingerprint") != now.get("fingerprint"):
        out.append("the table")
    names = {"roles": _ROLE_NAMES, "split": _SPLIT_NAMES, "model": _MODEL_NAMES}
    old_config, new_config = then.get("config", {}), now.get("config", {})
    for section in ("roles", "model", "split"):
        old, new = old_config.get(section, {}), new_config.get(section, {})
        for name, label in names[section].items():
            a, b = old.get(name), new.get(name)
            if name == "fairness_bound" and not old.get("fairness") and not new.get("fairness"):
                continue  # δ bounds nothing without a fairness notion
            if section == "model" and _unused(name, old, new):
                continue  # the number of buckets or thresholds that neither coding uses
            if _norm(a) != _norm(b):
                out.append(f"{label} {_value(section, name, a)} → {_value(section, name, b)}")
    return out


def _unused(name: str, old: dict[str, Any], new: dict[str, Any]) -> bool:
    data = [settings.get("encoding") == "data" for settings in (old, new)]
    return (name == "max_thresholds" and not any(data)) or (name == "n_buckets" and all(data))


def _norm(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return value


def stale_message(then: dict[str, Any], now: dict[str, Any] | None) -> str:
    """The label of a stale result (Markdown, user text escaped), or "" when it is current."""
    if now is None:
        return ""
    found = changes(then, now)
    if not found:
        return ""
    named = ", ".join(md(c) for c in found[:MAX_NAMED])
    more = len(found) - MAX_NAMED
    if more > 0:
        named += f" and {more} more setting" + ("s" if more > 1 else "")
    return MSG_STALE.format(changes=named)
