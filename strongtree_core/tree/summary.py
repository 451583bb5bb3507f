"""A tree in a few sentences: what it predicts for most rows, and when it predicts otherwise.

The rules list one line per leaf; a reader wants the gist first: "Rows are
predicted *no* (5,155 training rows), unless experience > 7.5 and test_score
> 60.5 (1,910 rows, 74% yes): then they are predicted *yes*."

How the sentences are made:

1. Leaves are merged upwards: a question whose two answers lead to the same
   prediction (after merging below it) is no question for the reader, so its
   subtree reads as one leaf (its rows are the rows reaching the question).
2. The *default* prediction is the class predicted for the most training rows;
   every merged leaf predicting another class is an *exception*, described by
   the questions on its path (tests on one column merged: ``30 < age ≤ 45``), one after the other when there are several.
3. With at most :data:`MAX_EXCEPTIONS` exceptions, one sentence says it all.
   With more, the tree is told branch by branch from its first question, each
   branch with its own default and exceptions (the larger ones first; the rest
   counted and left to the rules).

Every count is training rows reaching the path, and the share is that of the
predicted class among them; numbers go through :mod:`strongtree_core.words`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from strongtree_core.tree.rules import Condition, simplified_conditions
from strongtree_core.words import count_of, fmt, label_text, one_line

if TYPE_CHECKING:  # pragma: no cover
    from strongtree_core.tree.fitted import FittedTree

#: Most exceptions told in one sentence (or per branch) before the smaller ones are only counted.
MAX_EXCEPTIONS = 3


@dataclass(frozen=True)
class Path:
    """A merged leaf: the questions from a starting node down to it, what it predicts, its training rows."""

    node: int
    conditions: tuple[Condition, ...]
    prediction: int  # class index
    counts: tuple[int, ...]

    @property
    def n_rows(self) -> int:
        return int(sum(self.counts))


def merged_paths(tree: "FittedTree", start: int = 1) -> list[Path]:
    """The merged leaves below ``start`` (questions counted from ``start``), "yes" branch first."""
    structure = tree.structure
    features = tree.encoding.features

    def prediction_below(node: int) -> int | None:
        """The class every leaf below ``node`` predicts, or None when they differ."""
        j = int(structure.feature[node - 1])
        if j < 0:
            return int(structure.prediction[node - 1])
        yes, no = prediction_below(2 * node + 1), prediction_below(2 * node)
        return yes if yes is not None and yes == no else None

    out: list[Path] = []

    def walk(node: int, conditions: tuple[Condition, ...]) -> None:
        single = prediction_below(node)
        counts = tuple(int(c) for c in tree.node_counts[node - 1])
        if single is not None:
            out.append(Path(node, conditions, single, counts))
            return
        j = int(structure.feature[node - 1])
        f = features[j]
        walk(2 * node + 1, conditions + (Condition(j, True, f.label),))
        walk(2 * node, conditions + (Condition(j, False, f.negated_label),))

    walk(start, ())
    return out


def _condition_text(tree: "FittedTree", conditions: tuple[Condition, ...]) -> str:
    features = tree.encoding.features
    may_be_missing = {f.source for f in features if f.kind == "missing"}
    parts = simplified_conditions(conditions, features, may_be_missing)
    return " and ".join(one_line(p) for p in parts)


def _label(tree: "FittedTree", k: int) -> str:
    return label_text(tree.classes[k])


def _size(tree: "FittedTree", path: Path) -> str:
    """"1,910 training rows, 74% yes" (the share of the predicted class), or "no training rows"."""
    if not path.n_rows:
        return "no training rows"
    share = path.counts[path.prediction] / path.n_rows
    return f"{count_of(path.n_rows, 'training row')}, {fmt(share, 'percent')} {_label(tree, path.prediction)}"


def _default(paths: list[Path], n_classes: int) -> int:
    """The class predicted for the most training rows (the first such class on a tie)."""
    rows = np.zeros(n_classes, dtype=np.int64)
    for p in paths:
        rows[p.prediction] += p.n_rows
    return int(np.argmax(rows))


def _exceptions(tree: "FittedTree", exceptions: list[Path]) -> str:
    """", unless A (n rows, p% E) or B (...): then they are predicted E" (one class, or each with its own)."""
    shown = sorted(exceptions, key=lambda p: -p.n_rows)[:MAX_EXCEPTIONS]
    shown = [p for p in exceptions if p in shown]  # back in the order of the tree
    rest = [p for p in exceptions if p not in shown]
    classes = {p.prediction for p in exceptions}
    if len(classes) == 1:
        items = [f"{_condition_text(tree, p.conditions)} ({_size(tree, p)})" for p in shown]
    else:
        items = [f"{_condition_text(tree, p.conditions)} ({_size(tree, p)}: predicted {_label(tree, p.prediction)})"
                 for p in shown]
    if rest:
        rows = sum(p.n_rows for p in rest)
        items.append(f"{count_of(len(rest), 'smaller case')} with {count_of(rows, 'training row')} in all "
                     "(see the rules)")
    text = ", unless " + items[0] if len(items) == 1 else ", unless one of these holds: " + "; ".join(items)
    if len(classes) == 1:
        text += f": then they are predicted {_label(tree, next(iter(classes)))}"
    return text


def _told(tree: "FittedTree", paths: list[Path], subject: str) -> str:
    """One sentence: ``subject`` predicted the default class, unless the exceptions."""
    default = _default(paths, tree.n_classes)
    normal = [p for p in paths if p.prediction == default]
    exceptions = [p for p in paths if p.prediction != default]
    rows = sum(p.n_rows for p in normal)
    right = sum(p.counts[default] for p in normal)
    share = f", {fmt(right / rows, 'percent')} {_label(tree, default)}" if rows else ""
    text = f"{subject} predicted {_label(tree, default)} ({count_of(rows, 'training row')}{share})"
    if exceptions:
        text += _exceptions(tree, exceptions)
    return text + "."


def tree_summary(tree: "FittedTree", noun: str = "rows") -> tuple[str, ...]:
    """The tree in a few plain sentences (see the module).

    Parameters
    ----------
    tree : FittedTree
    noun : str, default "rows"
        What a row is ("applicants", "people"), used at the start of sentences.

    Returns
    -------
    tuple of str
        An overview (the columns asked about and how many rows each class is
        predicted for), then one sentence for the whole tree or one per branch
        of its first question.  Plain text (escape it for Markdown or HTML).
    """
    noun = noun.strip() or "rows"
    subject = noun[0].upper() + noun[1:]
    paths = merged_paths(tree)
    total = int(tree.node_counts[0].sum())
    columns = list(dict.fromkeys(str(tree.encoding.features[c.feature].source) for p in paths for c in p.conditions))
    per_class = np.zeros(tree.n_classes, dtype=np.int64)
    for p in paths:
        per_class[p.prediction] += p.n_rows
    predicted = [f"{_label(tree, k)} for {fmt(n, 'int')}" for k, n in enumerate(per_class) if n or k in
                 {p.prediction for p in paths}]
    if not columns:
        k = paths[0].prediction
        share = f", {fmt(tree.node_counts[0][k] / total, 'percent')} of them {_label(tree, k)}" if total else ""
        return (f"The tree asks nothing: every row is predicted {_label(tree, k)} "
                f"({count_of(total, 'training row')}{share}).",)
    overview = (f"The tree predicts {label_text(tree.target)} from {count_of(len(columns), 'column')} "
                f"({', '.join(label_text(c) for c in columns)}); of the {count_of(total, 'training row')}, it predicts "
                + (" and ".join(predicted) if len(predicted) <= 2 else ", ".join(predicted)) + ".")
    exceptions = [p for p in paths if p.prediction != _default(paths, tree.n_classes)]
    if len(exceptions) <= MAX_EXCEPTIONS:
        return overview, _told(tree, paths, subject + " are")
    sentences = [overview]
    root_feature = tree.encoding.features[int(tree.structure.feature[0])]
    for child, holds in ((3, True), (2, False)):
        branch = merged_paths(tree, child)
        condition = _condition_text(tree, (Condition(int(tree.structure.feature[0]), holds,
                                                     root_feature.label if holds else root_feature.negated_label),))
        sentences.append(_told(tree, branch, f"{subject} with {condition} are"))
    return tuple(sentences)
