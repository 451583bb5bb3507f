"""The fitted tree as a plain value: no solver needed to use, show or store it."""

from __future__ import annotations

import json
import numbers
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from strongtree_core.encoding.binarize import EncodingPlan
from strongtree_core.encoding.errors import EncodingError, stored_format_problem
from strongtree_core.errors import StrongTreeError
from strongtree_core.encoding.features import ColumnName, level_key, python_scalar
from strongtree_core.structure import TreeGraph, TreeStructure
from strongtree_core.tree.context import FitContext
from strongtree_core.tree.dot import tree_to_dot
from strongtree_core.tree.export import tree_to_python, tree_to_sql
from strongtree_core.tree.record import SolveRecord
from strongtree_core.tree.rules import Rule, rules_text, tree_rules

TREE_FORMAT = "strongtree.fitted_tree"
TREE_VERSION = 1

ONE_ROW = "decision_path takes exactly one row, got {n}. Select a row first, e.g. df.iloc[[i]]."
BAD_TREE = "Inconsistent tree: {reason}."
BAD_TREE_JSON = "Not a stored tree: {reason}. Store trees with FittedTree.to_json()."
#: Reasons of BAD_TREE_JSON for text that is no JSON at all.
NOT_JSON = "it is not JSON ({detail})"
TOO_DEEP = "its JSON nests lists or objects deeper than can be read"
NOT_TEXT = "it is a {kind}, not JSON text"


class StoredTreeError(StrongTreeError):
    """Text or data that is not a stored tree (:data:`BAD_TREE_JSON` says why); a ``ValueError`` as before.
    ``reason`` is the why alone (the command line words the rest its own way).

    Examples
    --------
    >>> from strongtree_core.tree import FittedTree, StoredTreeError
    >>> try:
    ...     FittedTree.from_json("not json")
    ... except StoredTreeError as error:
    ...     print(error.reason)
    it is not JSON (Expecting value at line 1 column 1)
    """

    def __init__(self, reason: str) -> None:
        super().__init__(BAD_TREE_JSON.format(reason=reason))
        self.reason = reason
TEXT_BECAME_OTHER = (
    "Column {column!r} held text at fit ({levels}) but now holds {now} ({examples}): the tree would read every "
    "such row as a category it never saw, which silently changes its predictions. Map the values back onto "
    "the labels seen at fit with df[{column!r}].map(...), then predict again."
)


@dataclass(frozen=True)
class ChangedLeaf:
    """A leaf that predicts a class other than its training rows' majority, and why.

    Attributes
    ----------
    node : int
        The leaf's node number.
    majority, predicted : label
        Its training rows' majority class and the class it predicts.
    reason : str
        What relabelling it to ``majority`` would do, measured at fit time on the
        training rows ("relabelling this leaf to 'yes' breaks statistical parity:
        gap 7.2 pp > 5.0 pp", or the objective's reason).
    breaks : tuple of str
        The constraints that relabelling would break (empty when the objective decides).

    Examples
    --------
    >>> from strongtree_core.tree import ChangedLeaf
    >>> leaf = ChangedLeaf(node=3, majority='no', predicted='yes', reason='relabelling this leaf to no breaks statistical parity', breaks=('statistical_parity',))
    >>> ChangedLeaf.from_dict(leaf.to_dict()) == leaf
    True
    """

    node: int
    majority: object
    predicted: object
    reason: str
    breaks: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """JSON-safe description; :meth:`from_dict` reads it back."""
        return {"node": self.node, "majority": self.majority, "predicted": self.predicted, "reason": self.reason,
                "breaks": list(self.breaks)}

    @classmethod
    def from_dict(cls, data: Mapping) -> "ChangedLeaf":
        """Read a changed leaf written by :meth:`to_dict`."""
        return cls(int(data["node"]), data["majority"], data["predicted"], str(data["reason"]),
                   tuple(data.get("breaks", ())))


@dataclass(frozen=True, eq=False)
class FittedTree:
    """A classification tree over raw columns, with its encoding and solve record.

    Attributes
    ----------
    structure : TreeStructure
        Branching feature per node (an index into ``encoding.features``; a row
        whose binary value is 1 goes right), prediction (class index) per leaf.
    encoding : EncodingPlan
        Turns raw tables into the binary features the tree tests.
    classes : tuple
        Original class labels; position = class index.
    target : str
        Name of the label column.
    node_counts : ndarray of int, shape (n_nodes, n_classes)
        Training rows reaching each node, by true class.
    record : SolveRecord
        How the tree was solved.
    feature_names : tuple
        The raw input columns the tree was trained with.
    node_weights : ndarray of float, shape (n_nodes, n_classes), or None
        Summed sample weight of the training rows reaching each node, by true
        class; None when every row weighed 1 (then it equals ``node_counts``).
    changed_leaves : tuple of ChangedLeaf
        Leaves predicting a class other than their training rows' majority, each
        with the reason measured at fit time (empty for trees from earlier versions).
    context : FitContext or None
        The roles and settings it was fitted with (protected columns, positive
        class, the estimator's parameters, ...); None when not known.
    baseline_accuracy : float or None
        The majority-class baseline: the (weighted) share of the training rows in
        their most common class, the accuracy of predicting that class for everyone.
        Stored in the JSON; None for trees stored before it was kept.

    Examples
    --------
    >>> import pandas as pd
    >>> from strongtree_core import StrongTreeClassifier
    >>> X = pd.DataFrame({'score': [1, 5, 2, 8, 7, 3, 9, 4], 'group': list('abababab')})
    >>> y = ['no', 'yes', 'no', 'yes', 'yes', 'no', 'yes', 'no']
    >>> clf = StrongTreeClassifier(depth=1, time_limit=10).fit(X, y)
    >>> tree = clf.tree_
    >>> print(tree.to_text())
    IF score ≤ 4 THEN no (4 rows, 100% no)
    IF score > 4 THEN yes (4 rows, 100% yes)
    >>> from strongtree_core import FittedTree
    >>> FittedTree.from_json(tree.to_json()) == tree
    True
    >>> tree.predict(X.head(3)).tolist()
    ['no', 'yes', 'no']
    """

    structure: TreeStructure
    encoding: EncodingPlan
    classes: tuple
    target: str
    node_counts: np.ndarray
    record: SolveRecord
    feature_names: tuple[ColumnName, ...]
    node_weights: np.ndarray | None = None
    changed_leaves: tuple[ChangedLeaf, ...] = ()
    context: FitContext | None = None
    baseline_accuracy: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "classes", tuple(python_scalar(c) for c in self.classes))
        object.__setattr__(self, "feature_names", tuple(self.feature_names))
        counts = np.asarray(self.node_counts, dtype=np.int64)
        counts.setflags(write=False)
        object.__setattr__(self, "node_counts", counts)
        graph = TreeGraph(self.structure.depth)
        if counts.shape != (graph.n_nodes, len(self.classes)):
            raise ValueError(
                BAD_TREE.format(
                    reason=f"node_counts has shape {counts.shape}, expected "
                    f"({graph.n_nodes}, {len(self.classes)})"
                )
            )
        if self.node_weights is not None:
            weights = np.asarray(self.node_weights, dtype=np.float64)
            if weights.shape != counts.shape:
                raise ValueError(
                    BAD_TREE.format(reason=f"node_weights has shape {weights.shape}, expected {counts.shape}")
                )
            weights.setflags(write=False)
            object.__setattr__(self, "node_weights", weights)
        used = self.structure.feature[self.structure.feature >= 0]
        if used.size and used.max() >= self.encoding.n_binary:
            raise ValueError(
                BAD_TREE.format(
                    reason=f"a node tests feature {used.max()} but the encoding has "
                    f"{self.encoding.n_binary} binary features"
                )
            )
        predicted = self.structure.prediction[self.structure.leaves - 1]
        if predicted.size and (predicted.min() < 0 or predicted.max() >= len(self.classes)):
            raise ValueError(BAD_TREE.format(reason="a leaf predicts a class index out of range"))

    # ------------------------------------------------------------------ building

    @classmethod
    def from_training(
        cls,
        structure: TreeStructure,
        encoding: EncodingPlan,
        classes: Sequence,
        target: str,
        X_binary: np.ndarray,
        y_index: np.ndarray,
        record: SolveRecord,
        *,
        feature_names: Sequence[ColumnName] | None = None,
        sample_weight: np.ndarray | None = None,
    ) -> "FittedTree":
        """Build the tree value, counting training rows at every node.

        Parameters
        ----------
        structure : TreeStructure
        encoding : EncodingPlan
        classes : sequence of labels, length n_classes
        target : str
        X_binary : array of 0/1, shape (n_rows, n_binary)
            ``encoding.transform`` of the training table.
        y_index : array of int, shape (n_rows,)
            Class index of each training row.
        record : SolveRecord
        feature_names : sequence of column names, optional
            Raw training columns; defaults to the columns the encoding reads.
        sample_weight : array of float, shape (n_rows,), optional
            Weight of each training row, summed into ``node_weights``.
        """
        X_binary, y_index = np.asarray(X_binary), np.asarray(y_index)
        counts = node_class_counts(structure, X_binary, y_index, len(classes))
        weights = None
        if sample_weight is not None:
            weights = node_class_counts(structure, X_binary, y_index, len(classes), weight=sample_weight)
        names = encoding.source_columns if feature_names is None else tuple(feature_names)
        root = (counts if weights is None else weights)[0].astype(float)
        baseline = float(root.max() / root.sum()) if root.sum() > 0 else None
        return cls(structure, encoding, tuple(classes), target, counts, record, names, weights,
                   baseline_accuracy=baseline)

    @classmethod
    def from_patterns(
        cls,
        structure: TreeStructure,
        encoding: EncodingPlan,
        classes: Sequence,
        target: str,
        patterns,
        record: SolveRecord,
        *,
        feature_names: Sequence[ColumnName] | None = None,
        weighted: bool = False,
    ) -> "FittedTree":
        """:meth:`from_training` from the training rows merged into weighted patterns
        (:class:`~strongtree_core.encoding.patterns.PatternData`): the same counts,
        found by routing each distinct row once (a million rows are a few thousand
        patterns: milliseconds instead of seconds).

        ``weighted``: the rows had a ``sample_weight`` (its sums per node are kept,
        ``node_weights``); without one every pattern's weight is its row count.
        """
        X, y = np.asarray(patterns.X), np.asarray(patterns.y)
        rows = node_class_counts(structure, X, y, len(classes), weight=np.asarray(patterns.count, dtype=np.float64))
        counts = np.rint(rows).astype(np.int64)  # sums of whole numbers below 2^53: exact
        weights = None
        if weighted:
            weights = node_class_counts(structure, X, y, len(classes), weight=patterns.weight)
        names = encoding.source_columns if feature_names is None else tuple(feature_names)
        root = (counts if weights is None else weights)[0].astype(float)
        baseline = float(root.max() / root.sum()) if root.sum() > 0 else None
        return cls(structure, encoding, tuple(classes), target, counts, record, names, weights,
                   baseline_accuracy=baseline)

    # ------------------------------------------------------------------ using

    @property
    def n_classes(self) -> int:
        """How many classes the tree knows (``len(classes)``)."""
        return len(self.classes)

    @property
    def depth(self) -> int:
        """Depth of the deepest reachable leaf."""
        leaves = self.structure.leaves
        return int(np.floor(np.log2(leaves)).max()) if leaves.size else 0

    def apply(self, df: pd.DataFrame) -> np.ndarray:
        """Leaf node number reached by each row of the raw table ``df``, shape (n_rows,)."""
        return self.structure.apply(self._binary(df))

    def _binary(self, df: pd.DataFrame) -> np.ndarray:
        """The encoded table, after checking that no text column now holds other values.

        A category never seen in training is fine (it takes the "≠" branch of every
        test on its column); a column of text labels given as numbers or True/False
        (yes/no at fit, 1/0 now) is refused, since every row would be such a category.
        """
        if isinstance(df, pd.DataFrame):
            features = self.encoding.features
            tested = {features[j].source for j in self.structure.feature[self.structure.feature >= 0]}
            for column in self.encoding.columns:
                if column.kind == "categorical" and column.name in tested and column.name in df.columns:
                    _check_still_text(column, df[column.name])
        return self.encoding.transform(df)

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        """Class label predicted for each row of the raw table ``df``, shape (n_rows,).

        Raises
        ------
        EncodingError
            A fitted column is absent, or holds values of another type than at fit
            (text in a numeric column; numbers or True/False in a text column the tree tests).
        """
        return self.predict_binary(self._binary(df))

    def predict_binary(self, X_binary: np.ndarray) -> np.ndarray:
        """Class label predicted for each row of a table already encoded (``encoding.transform``), shape (n_rows,)."""
        index = self.structure.prediction[self.structure.apply(X_binary) - 1]
        return _label_array(self.classes)[index]

    @property
    def class_weights(self) -> np.ndarray:
        """Training weight reaching each node by class, shape (n_nodes, n_classes): ``node_weights``,
        or ``node_counts`` when every row weighed 1."""
        return self.node_counts.astype(np.float64) if self.node_weights is None else self.node_weights

    def predict_proba(self, df: pd.DataFrame) -> np.ndarray:
        """Share of each class among the training rows (weighted) of the leaf each row of ``df`` reaches.

        A leaf that no training row reached takes the shares of the nearest node above it that
        some row reached.  Shape (n_rows, n_classes), columns in the order of ``classes``.
        """
        return self.leaf_shares()[self.apply(df) - 1]

    def leaf_shares(self) -> np.ndarray:
        """Class shares at every node, shape (n_nodes, n_classes) (see :meth:`predict_proba`)."""
        weights = self.class_weights
        shares = np.zeros_like(weights)
        for index in range(weights.shape[0]):  # heap order: a node's parent comes before it
            total = weights[index].sum()
            if total > 0:
                shares[index] = weights[index] / total
            elif index > 0:
                shares[index] = shares[(index + 1) // 2 - 1]
            else:  # no training weight at all: every class equally likely
                shares[index] = 1.0 / weights.shape[1]
        return shares

    def paths(self, df: pd.DataFrame) -> np.ndarray:
        """Node numbers from the root to the leaf for every row of ``df``, shape (n_rows, depth + 1);
        0 after the leaf when it is shallower than the tree's depth."""
        return np.asarray(self.structure.path_nodes(self._binary(df)), dtype=np.int64)

    def decision_path(self, row: pd.DataFrame | Mapping) -> list[int]:
        """Node numbers from the root to the leaf for one raw row (DataFrame of one row or dict)."""
        if not isinstance(row, pd.DataFrame):
            row = pd.DataFrame([dict(row)])
        if len(row) != 1:
            raise ValueError(ONE_ROW.format(n=len(row)))
        nodes = self.structure.path_nodes(self._binary(row))[0]
        return [int(n) for n in nodes if n > 0]

    def rules(self) -> tuple[Rule, ...]:
        """One :class:`~strongtree_core.tree.rules.Rule` per reachable leaf, "yes" branch first."""
        return tree_rules(self)

    # ------------------------------------------------------------------ exports

    def to_text(self) -> str:
        """One line per leaf: ``IF age ≤ 35.5 AND race = Caucasian THEN yes (120 rows, 83% yes)``."""
        return rules_text(self)

    def to_dot(self, highlight: Sequence[int] = (), group_mix: Mapping | None = None) -> str:
        """Graphviz DOT text; see :func:`strongtree_core.tree.dot.tree_to_dot`."""
        return tree_to_dot(self, highlight=highlight, group_mix=group_mix)

    def to_python(self) -> str:
        """Source of a standalone ``def predict(row: dict)`` over raw column values."""
        return tree_to_python(self)

    def to_sql(self) -> str:
        """A SQL ``CASE`` expression over the raw columns giving the predicted label."""
        return tree_to_sql(self)

    # ------------------------------------------------------------------ storing

    def to_dict(self) -> dict:
        """JSON-safe description; :meth:`from_dict` reads it back exactly."""
        record = self.record.to_dict()
        promise = record.pop("promise", None)
        scope = record.pop("scope", None)
        return {
            "format": TREE_FORMAT,
            "version": TREE_VERSION,
            "target": self.target,
            "classes": list(self.classes),
            "feature_names": list(self.feature_names),
            "structure": {
                "depth": self.structure.depth,
                "feature": self.structure.feature.tolist(),
                "prediction": self.structure.prediction.tolist(),
            },
            "node_counts": self.node_counts.tolist(),
            **({} if self.node_weights is None else {"node_weights": self.node_weights.tolist()}),
            "encoding": self.encoding.to_dict(),
            "record": record,
            # Kept beside the record, where earlier versions of this format ignore it.
            **({} if promise is None else {"fairness_promise": promise}),
            **({} if scope is None else {"certificate_scope": scope}),
            **({"changed_leaves": [c.to_dict() for c in self.changed_leaves]} if self.changed_leaves else {}),
            **({} if self.context is None else {"context": self.context.to_dict()}),
            **({} if self.baseline_accuracy is None else {"baseline_accuracy": self.baseline_accuracy}),
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> "FittedTree":
        """Read a tree written by :meth:`to_dict`."""
        problem = stored_format_problem(data, TREE_FORMAT, TREE_VERSION)
        if problem:
            raise StoredTreeError(problem)
        try:
            s = data["structure"]
            structure = TreeStructure(
                int(s["depth"]),
                np.asarray(s["feature"], dtype=np.int64),
                np.asarray(s["prediction"], dtype=np.int64),
            )
            return cls(
                structure=structure,
                encoding=EncodingPlan.from_dict(data["encoding"]),
                classes=tuple(data["classes"]),
                target=data["target"],
                node_counts=np.asarray(data["node_counts"], dtype=np.int64).reshape(
                    -1, len(data["classes"])
                ),
                record=SolveRecord.from_dict(
                    {**data["record"], **({"promise": data["fairness_promise"]} if data.get("fairness_promise") else {}),
                     **({"scope": data["certificate_scope"]} if data.get("certificate_scope") else {})}
                ),
                feature_names=tuple(data["feature_names"]),
                node_weights=None if data.get("node_weights") is None else np.asarray(
                    data["node_weights"], dtype=np.float64
                ).reshape(-1, len(data["classes"])),
                changed_leaves=tuple(ChangedLeaf.from_dict(c) for c in data.get("changed_leaves", ())),
                context=None if data.get("context") is None else FitContext.from_dict(data["context"]),
                baseline_accuracy=None if data.get("baseline_accuracy") is None else float(data["baseline_accuracy"]),
            )
        except (KeyError, TypeError) as err:
            raise StoredTreeError(f"missing or malformed entry {err}") from err

    def to_json(self, indent: int | None = None) -> str:
        """The tree as JSON text (:meth:`to_dict`); ``indent`` as in :func:`json.dumps`."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> "FittedTree":
        """Read a tree written by :meth:`to_json`.

        Raises
        ------
        StoredTreeError
            When ``text`` is not JSON (or nests too deeply to read), or not a stored tree; the message says which.
        """
        if not isinstance(text, (str, bytes, bytearray)):
            raise StoredTreeError(NOT_TEXT.format(kind=type(text).__name__))
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise StoredTreeError(NOT_JSON.format(detail=f"{err.msg} at line {err.lineno} column {err.colno}")) from None
        except UnicodeDecodeError as err:
            raise StoredTreeError(NOT_JSON.format(detail=err.reason)) from None
        except RecursionError:
            raise StoredTreeError(TOO_DEEP) from None
        return cls.from_dict(data)

    def __eq__(self, other) -> bool:
        if not isinstance(other, FittedTree):
            return NotImplemented
        return (
            self.structure.depth == other.structure.depth
            and np.array_equal(self.structure.feature, other.structure.feature)
            and np.array_equal(self.structure.prediction, other.structure.prediction)
            and self.encoding == other.encoding
            and _same_labels(self.classes, other.classes)
            and self.target == other.target
            and np.array_equal(self.node_counts, other.node_counts)
            and np.array_equal(self.class_weights, other.class_weights)
            and self.record == other.record
            and _same_labels(self.feature_names, other.feature_names)
            and self.changed_leaves == other.changed_leaves
            and self.context == other.context
            and self.baseline_accuracy == other.baseline_accuracy
        )

    __hash__ = object.__hash__


def node_class_counts(
    structure: TreeStructure, X_binary: np.ndarray, y_index: np.ndarray, n_classes: int, *, weight=None
) -> np.ndarray:
    """Rows reaching each node by class, shape (n_nodes, n_classes), routing all rows at once;
    with ``weight`` (one number per row), their summed weights (float) instead of their number.

    Examples
    --------
    >>> import numpy as np
    >>> from strongtree_core.structure import TreeStructure
    >>> from strongtree_core.tree import node_class_counts
    >>> stump = TreeStructure(1, np.array([0, -1, -1]), np.array([-1, 0, 1]))
    >>> node_class_counts(stump, np.array([[0], [1], [1]]), np.array([0, 1, 1]), 2).tolist()
    [[1, 2], [1, 0], [0, 2]]
    """
    n_nodes = TreeGraph(structure.depth).n_nodes
    if X_binary.shape[0] == 0:
        return np.zeros((n_nodes, n_classes), dtype=np.int64 if weight is None else np.float64)
    # each row counted at its leaf; a node's rows are its children's (a row passes every ancestor of its leaf)
    flat = (structure.apply(X_binary) - 1) * n_classes + np.asarray(y_index, dtype=np.int64)
    counts = np.bincount(flat, weights=None if weight is None else np.asarray(weight, dtype=np.float64),
                         minlength=n_nodes * n_classes).reshape(n_nodes, n_classes)
    for node in range(n_nodes, 1, -1):
        counts[node // 2 - 1] += counts[node - 1]
    return counts


def _check_still_text(column, values) -> None:
    """Raise when a column whose training levels were all text holds non-text values none of them match."""
    if not column.levels or not all(isinstance(level, str) for level in column.levels):
        return
    if isinstance(values, pd.DataFrame):  # a repeated name: the encoding names it
        return
    known = {level_key(level) for level in column.levels}
    present = pd.unique(values[values.notna()].to_numpy(dtype=object))
    other = [v for v in present if not isinstance(v, str) and level_key(v) not in known]
    if not other:
        return
    kinds = {_value_kind(v) for v in other}
    shown = sorted(column.levels)
    raise EncodingError(
        TEXT_BECAME_OTHER.format(
            column=column.name,
            levels=", ".join(repr(level) for level in shown[:5]) + (", ..." if len(shown) > 5 else ""),
            now=" and ".join(sorted(kinds)),
            examples=", ".join(repr(python_scalar(v)) for v in sorted(other, key=repr)[:3]),
        )
    )


def _value_kind(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "True/False"
    return "numbers" if isinstance(value, numbers.Number) else type(value).__name__


def _label_array(classes: tuple) -> np.ndarray:
    """Class labels as an array: numbers stay numbers, anything mixed becomes object (and text ending in a
    NUL byte, which a numpy text array would lose)."""
    if all(isinstance(c, str) and not c.endswith("\x00") for c in classes) or all(
        isinstance(c, (int, float)) and not isinstance(c, bool) for c in classes
    ):
        return np.asarray(classes)
    return np.asarray(classes, dtype=object)


def _same_labels(a: tuple, b: tuple) -> bool:
    """Equal, with types (1 and "1" and True differ)."""
    return len(a) == len(b) and all(type(x) is type(y) and x == y for x, y in zip(a, b))
