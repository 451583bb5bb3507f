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
