"""A tree as rules: one conjunction of tests per leaf.

Leaves are listed depth first with the "yes" branch (binary value 1, the
right child) before the "no" branch, the order in which the drawing shows
them from left to right.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from strongtree_core.encoding.features import BinaryFeature, format_number
from strongtree_core.structure import TreeStructure
from strongtree_core.words import count_of, label_text, one_line, shown_name

if TYPE_CHECKING:  # pragma: no cover
    from strongtree_core.tree.fitted import FittedTree


@dataclass(frozen=True)
class Condition:
    """A test on the way to a leaf: binary feature ``feature`` equals ``holds``.

    Examples
    --------
    >>> import pandas as pd
    >>> from strongtree_core import StrongTreeClassifier
    >>> X = pd.DataFrame({'score': [1, 5, 2, 8, 7, 3, 9, 4], 'group': list('abababab')})
    >>> y = ['no', 'yes', 'no', 'yes', 'yes', 'no', 'yes', 'no']
    >>> clf = StrongTreeClassifier(depth=1, time_limit=10).fit(X, y)
    >>> condition = clf.tree_.rules()[0].conditions[0]
    >>> condition.holds in (True, False)
    True
    """

    feature: int
    holds: bool
    text: str


@dataclass(frozen=True)
class Rule:
    """The path to one leaf.

    Attributes
    ----------
    leaf : int
        Node number of the leaf.
    conditions : tuple of Condition
        Tests from the root down.
    prediction : label
        The class predicted at the leaf.
    class_counts : tuple of int
        Training rows in the leaf by class (order of ``FittedTree.classes``).

    Examples
    --------
    >>> import pandas as pd
    >>> from strongtree_core import StrongTreeClassifier
    >>> X = pd.DataFrame({'score': [1, 5, 2, 8, 7, 3, 9, 4], 'group': list('abababab')})
    >>> y = ['no', 'yes', 'no', 'yes', 'yes', 'no', 'yes', 'no']
    >>> clf = StrongTreeClassifier(depth=1, time_limit=10).fit(X, y)
    >>> rule = clf.tree_.rules()[0]
    >>> type(rule).__name__, type(rule.conditions[0]).__name__
    ('Rule', 'Condition')
    """

    leaf: int
    conditions: tuple[Condition, ...]
    prediction: object
    class_counts: tuple[int, ...]

    @property
    def n_rows(self) -> int:
        """How many training rows reach the rule's leaf."""
        return sum(self.class_counts)


def reachable_nodes(structure: TreeStructure) -> list[tuple[int, tuple[tuple[int, bool], ...]]]:
    """Every reachable node with its path ``((node, went_right), ...)``, depth first, right child first."""
    out = []
    stack: list[tuple[int, tuple]] = [(1, ())]
    while stack:
        node, path = stack.pop()
        out.append((node, path))
        if structure.feature[node - 1] >= 0:
            stack.append((2 * node, path + ((node, False),)))
            stack.append((2 * node + 1, path + ((node, True),)))
    return out


def tree_rules(tree: "FittedTree") -> tuple[Rule, ...]:
    """One rule per reachable leaf of ``tree``."""
    features = tree.encoding.features
    rules = []
    for node, path in reachable_nodes(tree.structure):
        if tree.structure.feature[node - 1] >= 0:
            continue
        conditions = []
        for parent, right in path:
            j = int(tree.structure.feature[parent - 1])
            text = features[j].label if right else features[j].negated_label
            conditions.append(Condition(j, right, text))
        k = int(tree.structure.prediction[node - 1])
        counts = tuple(int(c) for c in tree.node_counts[node - 1])
        rules.append(Rule(node, tuple(conditions), tree.classes[k], counts))
    return tuple(rules)


def rules_text(tree: "FittedTree") -> str:
    """``IF age ≤ 35.5 AND race = Caucasian THEN yes (120 rows, 83% yes)``, one line per leaf.

    Tests on the same column are merged (``30 < age ≤ 35.5``); a numeric
    ``>`` test that missing values also pass reads ``age > 35.5 or missing``.
    A leaf that does not predict its rows' majority class ends with
    ``[not the majority, no: <reason>]`` (:class:`~strongtree_core.tree.fitted.ChangedLeaf`).
    """
    features = tree.encoding.features
    may_be_missing = {f.source for f in features if f.kind == "missing"}
    changed = {c.node: c for c in getattr(tree, "changed_leaves", ())}
    lines = []
    for rule in tree.rules():
        parts = simplified_conditions(rule.conditions, features, may_be_missing)
        condition = " AND ".join(one_line(p) for p in parts) if parts else "TRUE"
        label = label_text(rule.prediction)
        if rule.n_rows:
            k = tree.classes.index(rule.prediction)
            share = 100.0 * rule.class_counts[k] / rule.n_rows
            size = f"{count_of(rule.n_rows, 'row')}, {share:.0f}% {label}"
        else:
            size = "0 rows"
        line = f"IF {condition} THEN {label} ({size})"
        note = changed.get(rule.leaf)
        if note is not None:
            line += f" [not the majority, {label_text(note.majority)}: {one_line(note.reason)}]"
        lines.append(line)
    return "\n".join(lines)


def simplified_conditions(
    conditions: tuple[Condition, ...], features: tuple[BinaryFeature, ...], may_be_missing: set
) -> list[str]:
    """The conditions of one path as short texts, one group per raw column in order of first use."""
    by_source: dict = {}
    for c in conditions:
        by_source.setdefault(features[c.feature].source, []).append((features[c.feature], c))
    parts: list[str] = []
    for source, items in by_source.items():
        parts.extend(_column_conditions(shown_name(source), items, source in may_be_missing))
    return parts


def _column_conditions(shown: str, items: list, may_be_missing: bool) -> list[str]:
    is_missing = [c.holds for f, c in items if f.kind == "missing"]
    if True in is_missing:
        # A missing value is 0 in every other test of its column.
        if all(not c.holds for f, c in items if f.kind != "missing"):
            return [f"{shown} missing"]
        return [c.text for _, c in items]
    present = False in is_missing or any(c.holds for f, c in items if f.kind != "missing")
    lower = upper = None
    equal = None
    other: list[str] = []
    not_equal: list[str] = []
    for f, c in items:
        if f.kind == "at_most" and c.holds:
            upper = f.threshold if upper is None else min(upper, f.threshold)
        elif f.kind == "at_most":
            lower = f.threshold if lower is None else max(lower, f.threshold)
        elif f.kind == "in_range" and c.holds:
            if f.threshold is not None:
                upper = f.threshold if upper is None else min(upper, f.threshold)
            if f.lower is not None:
                lower = f.lower if lower is None else max(lower, f.lower)
        elif f.kind == "equals" and c.holds:
            equal = c.text
        elif f.kind == "equals":
            not_equal.append(c.text)
        elif f.kind != "missing" and c.text not in other:
            other.append(c.text)
    if equal is None:
        other = not_equal + other
    out: list[str] = []
    if lower is not None and upper is not None:
        out.append(f"{format_number(lower)} < {shown} ≤ {format_number(upper)}")
    elif upper is not None:
        out.append(f"{shown} ≤ {format_number(upper)}")
    elif lower is not None:
        out.append(f"{shown} > {format_number(lower)}" + (" or missing" if may_be_missing and not present else ""))
    if equal is not None:
        out.append(equal)
    out.extend(other)
    if not out and False in is_missing:
        out.append(f"{shown} not missing")
    return out
