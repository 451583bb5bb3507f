"""The command line speaks in its own words: a library message that names a Python parameter
(``The 'fairness_bound' parameter of StrongTreeClassifier must be ...``, ``pass
fit(..., sensitive_features=...)``) is said with the option the user typed.

Units: ``--fairness-bound`` takes δ as the library does, a share in [0, 1] (0.05 is 5
percentage points; the dashboard shows the same δ in points), so that a value in a
script, on the command line and in a sweep's ``fairness_bound`` column is one number.
"""

from __future__ import annotations

import re

from strongtree_core.estimator.classifier import (
    BAD_PARAMETER,
    BAD_POSITIVE,
    CONFIDENCE_WITHOUT_FAIRNESS,
    METHOD_WITHOUT_CONFIDENCE,
)
from strongtree_core.estimator.training import NEEDS_LEGITIMATE, NEEDS_SENSITIVE
from strongtree_core.sweep.grid import TOO_MANY_FOLDS
from strongtree_core.words import message_pattern

#: Estimator parameter -> the option that sets it (``fit`` and ``sweep``).
FLAGS: dict[str, str] = {
    "depth": "--depth", "formulation": "--formulation", "solver": "--solver", "time_limit": "--time-limit",
    "threads": "--threads", "regularization": "--regularization", "max_branching": "--max-branching",
    "max_features_used": "--max-features-used", "min_leaf": "--min-leaf", "objective": "--objective",
    "pos_label": "--pos-label", "min_recall": "--min-recall", "min_precision": "--min-precision",
    "min_specificity": "--min-specificity", "fairness": "--fairness", "fairness_bound": "--fairness-bound",
    "n_buckets": "--n-buckets", "max_thresholds": "--max-thresholds", "memory_limit": "--memory-limit-gb", "fairness_confidence": "--fairness-confidence",
    "fairness_confidence_method": "--fairness-confidence-method",
}
#: ``sweep`` takes a list of depths.
SWEEP_FLAGS: dict[str, str] = {**FLAGS, "depth": "--depths"}
#: What a value means, for the options whose unit is not plain from the range.
UNITS: dict[str, str] = {
    "fairness_bound": " (δ as a share: 0.05 is 5 percentage points)",
    "regularization": " (the paper's λ)",
    "time_limit": " (seconds)",
    "fairness_confidence": " (the probability that the bound holds on new rows, e.g. 0.9)",
}

#: The messages in the command line's words; tests assert their text.
CLI_BAD_VALUE = "{flag} must be {allowed}{unit}. Got {value} instead."
CLI_NEEDS_PROTECTED = "--fairness {notions} compares groups: name the protected column with --protected COLUMN."
CLI_NEEDS_LEGITIMATE = (
    "--fairness conditional_statistical_parity needs the legitimate factor: name its column with --legitimate COLUMN."
)
CLI_BAD_POSITIVE = "--pos-label {value} is not a value of the target column; its values are {classes}."
CLI_TOO_MANY_FOLDS = (
    "--folds {k} asks for {k} folds, but the data has {n} rows and its largest class {label} has {count}: stratified "
    "folds need at least one row of a class per fold. Choose --folds between 2 and {most}."
)
CLI_CONFIDENCE_WITHOUT_FAIRNESS = (
    "--fairness-confidence promises a fairness bound on new rows, but no --fairness notion was given: add "
    "--fairness NOTION --protected COLUMN, or drop --fairness-confidence."
)
CLI_METHOD_WITHOUT_CONFIDENCE = (
    "--fairness-confidence-method {method} says how a fairness promise on new rows is kept, but "
    "--fairness-confidence is not given, so no promise is made: add --fairness-confidence C (e.g. 0.9), or drop "
    "--fairness-confidence-method."
)


_BAD_PARAMETER = message_pattern(BAD_PARAMETER)
_BAD_POSITIVE = message_pattern(BAD_POSITIVE)
_NEEDS_SENSITIVE = message_pattern(NEEDS_SENSITIVE)
_TOO_MANY_FOLDS = message_pattern(TOO_MANY_FOLDS)
_METHOD_WITHOUT_CONFIDENCE = message_pattern(METHOD_WITHOUT_CONFIDENCE)
#: Parameters named inside other messages (``fairness_confidence_method='margin'``, ``a larger fairness_bound``).
_NAMED_VALUE = re.compile(r"\b(fairness_confidence_method|fairness_bound)(?:='([^']*)')?")
#: The thresholds that keep every cut, named in notes and errors (``max_thresholds=57``).
_MAX_THRESHOLDS = re.compile(r"\bmax_thresholds=(\d+)")


def _notions(shown: str) -> str:
    """``'statistical_parity'`` or ``['a', 'b']`` (a Python repr) as the words typed after --fairness."""
    return " ".join(re.findall(r"'([^']+)'", shown)) or shown


def cli_words(message: str, flags: dict[str, str] = FLAGS) -> str:
    """``message`` with the estimator's parameter names replaced by the command line's options
    (``flags``: :data:`FLAGS` for ``fit``, :data:`SWEEP_FLAGS` for ``sweep``).

    Examples
    --------
    >>> cli_words("The 'depth' parameter of StrongTreeClassifier must be an int in the range [0, 8]. Got 99 instead.")
    '--depth must be an int in the range [0, 8]. Got 99 instead.'
    >>> cli_words("fairness='statistical_parity' needs the protected attribute: pass fit(..., sensitive_features=...).")
    '--fairness statistical_parity compares groups: name the protected column with --protected COLUMN.'
    """
    found = _BAD_PARAMETER.match(message)
    if found and found["name"].strip("'") in flags:
        name = found["name"].strip("'")
        value = found["value"].strip("'")
        return CLI_BAD_VALUE.format(flag=flags[name], allowed=found["allowed"], unit=UNITS.get(name, ""), value=value)
    found = _NEEDS_SENSITIVE.match(message)
    if found:
        return CLI_NEEDS_PROTECTED.format(notions=_notions(found["fairness"]))
    if message == NEEDS_LEGITIMATE:
        return CLI_NEEDS_LEGITIMATE
    found = _BAD_POSITIVE.match(message)
    if found:
        return CLI_BAD_POSITIVE.format(value=found["value"].strip("'"), classes=found["classes"])
    found = _TOO_MANY_FOLDS.match(message)
    if found:
        return CLI_TOO_MANY_FOLDS.format(**found.groupdict())
    if message == CONFIDENCE_WITHOUT_FAIRNESS:
        return CLI_CONFIDENCE_WITHOUT_FAIRNESS
    found = _METHOD_WITHOUT_CONFIDENCE.match(message)
    if found:
        return CLI_METHOD_WITHOUT_CONFIDENCE.format(method=found["method"].strip("'"))
    if "fairness_confidence_method=" in message:  # the promise's refusals name a method to try instead
        return _NAMED_VALUE.sub(lambda m: flags[m.group(1)] + ("" if m.group(2) is None else f" {m.group(2)}"), message)
    return _MAX_THRESHOLDS.sub(lambda m: f"{flags['max_thresholds']} {m.group(1)}", message)
