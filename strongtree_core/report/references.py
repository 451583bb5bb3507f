"""The models a tree is measured against: CART of the same depth, a logistic regression and
the majority class, each fitted on the training rows only and predicting every part.

* CART: scikit-learn's greedy tree of the tree's depth on the tree's own binary
  features (the same questions the solver could ask).
* Logistic regression: on the raw columns the tree saw; numbers standardised (a
  missing or infinite number becomes the training median of the finite ones), text
  and categories one column per value (a missing value is a value of its own).  Not a tree: it tells how much
  accuracy the readability of a tree gives up.
* Majority class: the class most frequent in the training rows, for every row: the
  accuracy a model must beat to have learned anything.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.exceptions import ConvergenceWarning
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier

from strongtree_core.tree import FittedTree

#: Seed of CART (its ties between equally good splits).
CART_SEED = 0
#: Iterations of the logistic regression's solver.
LOGISTIC_ITERATIONS = 2000

#: How the compared models are named in tables, charts and sentences.
CART_NAME = "CART (same depth)"
LOGISTIC_NAME = "Logistic regression"
MAJORITY_NAME = "Majority class"


@dataclass(frozen=True)
class Reference:
    """A model fitted for comparison: its predictions on every part (``train``, ``test``, ...)."""

    name: str
    predictions: Mapping[str, np.ndarray] = field(repr=False)
    leaves: int | None
    note: str


def cart_reference(tree: FittedTree, parts: Mapping[str, pd.DataFrame], target: str, depth: int | None = None) -> Reference:
    """CART of ``depth`` (default: the tree's) on the tree's binary encoding."""
    depth = tree.structure.depth if depth is None else depth
    columns = list(tree.feature_names)
    train = parts["train"]
    cart = DecisionTreeClassifier(max_depth=max(depth, 1) if depth else None, random_state=CART_SEED)
    cart.fit(tree.encoding.transform(train[columns]), train[target].to_numpy())
    predictions = {split: cart.predict(tree.encoding.transform(frame[columns])) for split, frame in parts.items()}
    return Reference(CART_NAME, predictions, int(cart.get_n_leaves()),
                     "scikit-learn's greedy tree of the same depth on the same binary questions")


def _logistic_columns(frame: pd.DataFrame, columns: list) -> tuple[list, list]:
    numbers, others = [], []
    for c in columns:
        dtype = frame[c].dtype
        if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
            numbers.append(c)
        else:
            others.append(c)
    return numbers, others


def _finite(values) -> np.ndarray:
    """Numbers with inf and -inf as missing (the scaler refused them: the tree reads them as the largest and
    smallest numbers, and the dashboard and ``strongtree report`` stopped on a column holding one)."""
    numbers = np.array(values, dtype=float)
    numbers[np.isinf(numbers)] = np.nan
    return numbers


def _as_text(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.astype(object).where(frame.notna(), "missing").astype(str)


def logistic_reference(tree: FittedTree, parts: Mapping[str, pd.DataFrame], target: str) -> Reference:
    """A logistic regression on the raw columns the tree saw (see the module)."""
    columns = list(tree.feature_names)
    train = parts["train"]
    numbers, others = _logistic_columns(train, columns)
    # columns by position: scikit-learn reads a list of names through NumPy, whose text arrays drop a name's
    # trailing NUL characters (a column "x\0" would not be found)
    numbers, others = [columns.index(c) for c in numbers], [columns.index(c) for c in others]
    steps = []
    if numbers:
        finite = FunctionTransformer(_finite)
        median = SimpleImputer(strategy="median", keep_empty_features=True)  # a column of none: 0 in every row
        steps.append(("numbers", make_pipeline(finite, median, StandardScaler()), numbers))
    if others:
        steps.append(("values", make_pipeline(FunctionTransformer(_as_text), OneHotEncoder(handle_unknown="ignore")),
                      others))
    model = make_pipeline(ColumnTransformer(steps), LogisticRegression(max_iter=LOGISTIC_ITERATIONS))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(train[columns], train[target].to_numpy())
    predictions = {split: model.predict(frame[columns]) for split, frame in parts.items()}
    return Reference(LOGISTIC_NAME, predictions, None,
                     "a linear model on the same columns (numbers standardised, one column per value of the others)")


def majority_reference(parts: Mapping[str, pd.DataFrame], target: str) -> Reference:
    """The training rows' most frequent class for every row (the first in sorted order on a tie)."""
    y = parts["train"][target].to_numpy()
    labels, counts = np.unique(y, return_counts=True)
    label = labels[int(np.argmax(counts))]
    predictions = {split: np.full(len(frame), label, dtype=y.dtype) for split, frame in parts.items()}
    return Reference(MAJORITY_NAME, predictions, 1, f"predicts {label} for every row")


def references(tree: FittedTree, parts: Mapping[str, pd.DataFrame], target: str, depth: int | None = None) -> list[Reference]:
    """CART, the logistic regression and the majority class, in that order."""
    return [cart_reference(tree, parts, target, depth), logistic_reference(tree, parts, target),
            majority_reference(parts, target)]
