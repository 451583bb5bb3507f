"""The words a user picks, defined once, with the names shown for them.

The estimator validates against these keys, the command line offers them as
choices, the formulations, metrics and exact search key their registries by
them, and the dashboard shows the labels.  A test checks that every registry
covers exactly these words.
"""

from __future__ import annotations

#: formulation= : how the tree is found.
FORMULATIONS: dict[str, str] = {
    "auto": "Automatic (exact search)",
    "flow": "FlowOCT",
    "benders": "BendersOCT",
    "oct": "OCT (Bertsimas and Dunn)",
    "binoct": "BinOCT (Verwer and Zhang)",
    "local_search": "Local search (heuristic)",
}

#: The formulations solved as a MIO (the others: the exact search, the local search).
MIO_FORMULATIONS: tuple[str, ...] = ("flow", "benders", "oct", "binoct")

#: solver= : the MIO backend (the MIO formulations only).
SOLVERS: dict[str, str] = {
    "auto": "Automatic",
    "highs": "HiGHS",
    "scip": "SCIP",
    "gurobi": "Gurobi",
}

#: objective= : what the tree maximizes.
OBJECTIVES: dict[str, str] = {
    "accuracy": "Accuracy",
    "balanced_accuracy": "Balanced accuracy",
    "worst_case_accuracy": "Worst-class accuracy",
    "sensitivity": "Sensitivity (recall of the positive class)",
}

#: fairness= : the notions of the paper (Section 4.3).
FAIRNESS_NOTIONS: dict[str, str] = {
    "statistical_parity": "Statistical parity",
    "conditional_statistical_parity": "Conditional statistical parity",
    "predictive_equality": "Predictive equality",
    "equal_opportunity": "Equal opportunity",
    "equalized_odds": "Equalized odds",
}

#: The quality floors, by the estimator's parameter name.
QUALITY_FLOORS: dict[str, str] = {
    "min_recall": "Minimum recall",
    "min_precision": "Minimum precision",
    "min_specificity": "Minimum specificity",
}

#: encoding= : how continuous columns become binary features.
ENCODINGS: dict[str, str] = {
    "thermometer": "Thresholds (x <= t)",
    "onehot_buckets": "One column per quantile bucket",
}

#: fairness_confidence_method= : how a fairness promise for new rows is kept
#: (docs/fairness-on-new-rows.md); the first is the default.
PROMISE_METHODS: dict[str, str] = {
    "subsample": "Margin after a half-sample estimate of the optimism",
    "bootstrap": "Margin after a bootstrap estimate of the optimism",
    "crossfit": "Margin on out-of-fold gaps",
    "margin": "Margin on the training rows alone",
    "holdout": "Exact test on held-out rows (proved)",
}

#: One name per setting, from the Model page to the report, the Runs table and the notes on
#: stale results; the library's parameter (and the command line's ``--option``) is the key.
SETTING_NAMES: dict[str, str] = {
    "depth": "Maximum depth",
    "formulation": "Formulation",
    "objective": "Objective",
    "regularization": "Simplicity weight λ",
    "max_branching": "Max. splits",
    "max_features_used": "Max. features used",
    "min_leaf": "Min. rows per leaf",
    "min_recall": "Min. recall",
    "min_precision": "Min. precision",
    "min_specificity": "Min. specificity",
    "fairness": "Fairness notions",
    "fairness_bound": "Largest allowed gap δ",
    "fairness_confidence": "Promise on new rows",
    "fairness_confidence_method": "Promise method",
    "allow_protected_splits": "Splits on the protected attribute",
    "solver": "Solver",
    "time_limit": "Time limit",
    "encoding": "Numeric coding",
    "max_thresholds": "Thresholds per numeric column",
    "n_buckets": "Buckets per numeric column",
}


def setting_name(parameter: str, *, inside: bool = False) -> str:
    """The name of a setting (:data:`SETTING_NAMES`); ``inside`` a sentence, its first letter in lower case
    (a name that starts with an acronym stays as it is)."""
    name = SETTING_NAMES.get(parameter, parameter.replace("_", " "))
    if inside and name[:1].isupper() and not name[1:2].isupper():
        return name[:1].lower() + name[1:]
    return name
