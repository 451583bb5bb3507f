"""The root LP of each formulation, read back in the paper's terms.

Branch-and-bound starts from the LP relaxation (integrality dropped). Theorem 1
(Section 2.2, proved in the paper's appendix "Comparison with OCT") says FlowOCT's
(formulation 1) is never looser than OCT's (Bertsimas and Dunn, formulation 24) and
BinOCT's (Verwer and Zhang); BendersOCT's main problem (4) with every cut-set
inequality (4b) has FlowOCT's relaxation.  This module solves those relaxations on one
table and returns, for each, its value, the fractional split choice at every branching
node, and one training row followed through the tree: FlowOCT's flow on each arc from
the source to the sink (1c-1h), OCT's share of the row at each leaf (zeta) with the
slack of its big-M routing rows (OCT i, j), BinOCT's share at each leaf (d).
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

import numpy as np

from strongtree_core.formulation import build_model, relaxation_arrays
from strongtree_core.solvers.relaxation import lp_solution
from strongtree_core.structure import TreeGraph

#: The formulations whose root LP can be read back here.
READABLE: tuple[str, ...] = ("oct", "binoct", "flow", "benders")
#: Values closer than this to 0 or 1 count as integral.
INTEGRAL_TOL = 1e-6


@dataclass(frozen=True)
class RouteRow:
    """One of OCT's routing rows (OCT i: right, OCT j: left) for the traced row.

    ``activity`` is the row's left-hand side ``sum_f b_mf x_f - v_m`` (i) or
    ``v_m - sum_f b_mf x_f`` (j) with the leaf term moved right, ``rhs`` what it must
    reach, ``slack`` by how much it holds: the big-M constant (1) is what lets a
    fractional row hold with slack.
    """

    leaf: int
    ancestor: int
    side: str  # "right" (OCT i) or "left" (OCT j)
    activity: float
    rhs: float
    slack: float


@dataclass(frozen=True)
class LeafRow:
    """OCT's misclassification rows (OCT b) at one leaf, at the root LP.

    ``L_n >= Q_n - Q_nk - |I| (1 - w_nk)`` for every class k: ``held`` is the weight of rows
    at the leaf (``Q_n``), ``misclassified`` what the LP counts misclassified there (``L_n``),
    ``bound`` the largest right-hand side over the classes and ``slack`` = misclassified - bound.
    With a fractional prediction ``w`` the big-M term |I| (1 - w_nk) pushes every right-hand
    side below 0, so ``L_n`` = 0 satisfies them all: no row is counted misclassified.
    """

    leaf: int
    held: float
    misclassified: float
    bound: float
    slack: float


@dataclass(frozen=True)
class RootRelaxation:
    """One formulation's root LP.

    Attributes
    ----------
    formulation : str
        ``"oct"``, ``"binoct"``, ``"flow"`` or ``"benders"`` (its relaxation with every cut, problem 6).
    value : float or None
        The LP bound, in the objective's units; None when not solved in time.
    splits : list of list of float, shape (|B|, F)
        LP value of "branching node n splits on feature f" (``b`` of (1) and (24), ``f`` of BinOCT).
    leaf_share : list of float, shape (|L|,)
        The traced row's share at each leaf: FlowOCT's flow into it, OCT's ``zeta``, BinOCT's ``d``.
    leaf_class : list of float, shape (|L|,)
        LP value of "the leaf predicts the traced row's class" (``w`` / ``p``).
    arcs : list of (str, float)
        FlowOCT only: the traced row's flow on every arc, source to sink.
    routes : list of RouteRow
        OCT only: its routing rows for the traced row, at every leaf.
    leaves : list of LeafRow
        OCT only: its misclassification rows (OCT b) at every leaf.
    """

    formulation: str
    value: float | None
    splits: list[list[float]] = field(default_factory=list)
    leaf_share: list[float] = field(default_factory=list)
    leaf_class: list[float] = field(default_factory=list)
    arcs: list[tuple[str, float]] = field(default_factory=list)
    routes: list[RouteRow] = field(default_factory=list)
    leaves: list[LeafRow] = field(default_factory=list)

    @property
    def fractional_splits(self) -> int:
        """How many split choices the LP left strictly between 0 and 1."""
        values = np.asarray(self.splits, dtype=float)
        return int(((values > INTEGRAL_TOL) & (values < 1 - INTEGRAL_TOL)).sum())


@dataclass(frozen=True)
class RootLP:
    """The root LPs of several formulations on one table, and the row they follow.

    Attributes
    ----------
    depth : int
    features : list of str
        The binary features' labels (``"left_weight = 3"``), columns of ``splits``.
    row : int
        Index of the traced row in the table given.
    row_features : list of str
        The features that are 1 for that row (it goes right at a node splitting on one).
    row_class : str
    relaxations : list of RootRelaxation
    """

    depth: int
    features: list[str]
    row: int
    row_features: list[str]
    row_class: str
    relaxations: list[RootRelaxation]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RootLP":
        relaxations = [RootRelaxation(**{**r, "arcs": [tuple(a) for a in r["arcs"]],
                                         "routes": [RouteRow(**x) for x in r["routes"]],
                                         "leaves": [LeafRow(**x) for x in r.get("leaves", [])]})
                       for r in data["relaxations"]]
        return cls(**{**data, "relaxations": relaxations})


def _round(value: float) -> float:
    return round(float(value), 9) + 0.0


def _clean(values) -> list:
    """Rounded to 9 decimals, with -0.0 as 0.0 (JSON- and eye-friendly)."""
    return (np.round(np.asarray(values, dtype=float), 9) + 0.0).tolist()


def _arc_names(graph: TreeGraph) -> list[str]:
    names = ["source → 1"]
    for n in graph.branching_nodes:
        names += [f"{n} → {2 * n}", f"{n} → {2 * n + 1}"]
    return names + [f"{n} → sink" for n in graph.terminal_nodes]


def _read(word: str, x: np.ndarray, index, data, graph: TreeGraph, pattern: int) -> dict[str, Any]:
    """The parts of one LP solution ``x`` the drawing shows (balanced trees: leaves are the terminal nodes)."""
    T, B = graph.terminal_nodes, graph.branching_nodes
    k = int(data.y[pattern])
    xi = data.X[pattern].astype(float)
    if word == "binoct":
        return {"splits": x[index["f"]], "leaf_share": x[index["d"][pattern]], "leaf_class": x[index["p"][:, k]]}
    splits = x[index["b"]]
    w = index["w"]
    leaf_class = x[w[T - 1, k]] if w.shape[0] == graph.n_nodes else x[w[:, k]]
    if word == "oct":
        zeta = x[index["zeta"][pattern]]
        v = x[index["v"]]
        routes = []
        for position, leaf in enumerate(T):
            node, child = leaf // 2, leaf
            while node >= 1:
                goes = xi @ splits[node - 1]
                if child == 2 * node + 1:  # (OCT i): sum_f b_mf x_f >= v_m + zeta - 1
                    activity, rhs = goes - v[node - 1], zeta[position] - 1.0
                    routes.append(RouteRow(int(leaf), int(node), "right", _round(activity), _round(rhs),
                                           _round(activity - rhs)))
                else:  # (OCT j): sum_f b_mf x_f <= v_m - 2 zeta + 1
                    activity, rhs = v[node - 1] - goes, 2.0 * zeta[position] - 1.0
                    routes.append(RouteRow(int(leaf), int(node), "left", _round(activity), _round(rhs),
                                           _round(activity - rhs)))
                node, child = node // 2, node
        W = float(data.weight.sum())
        Qn, L, Q, wv = x[index["Qn"]], x[index["L"]], x[index["Q"]], x[index["w"]]
        leaves = []
        for position, leaf in enumerate(T):
            bound = float(np.max(Qn[position] - Q[position] - W * (1.0 - wv[position])))
            leaves.append(LeafRow(int(leaf), _round(Qn[position]), _round(L[position]), _round(bound),
                                  _round(L[position] - bound)))
        return {"splits": splits, "leaf_share": zeta, "leaf_class": leaf_class, "routes": routes, "leaves": leaves}
    z = x[index["z"][pattern]]  # flow into node n at z[n - 1]
    flows = [z[0]]
    for n in B:
        flows += [z[2 * n - 1], z[2 * n]]
    flows += [z[n - 1] for n in T]  # (1d): a leaf passes on all it receives, up to (1h)
    return {"splits": splits, "leaf_share": z[T - 1], "leaf_class": leaf_class,
            "arcs": list(zip(_arc_names(graph), map(float, flows)))}


def root_relaxations(
    X,
    y,
    *,
    depth: int = 2,
    formulations: Sequence[str] = READABLE,
    time_limit: float = 20.0,
    row: int | None = None,
    stop: threading.Event | None = None,
    **params: Any,
) -> RootLP:
    """Solve the root LP of each formulation in ``formulations`` on (X, y).

    Parameters
    ----------
    X, y
        As for :meth:`StrongTreeClassifier.fit` (encoded the same way).
    depth : int, default=2
    formulations : sequence of str
        Among :data:`READABLE`; a formulation that refuses the settings is left out.
    time_limit : float, default=20.0
        Seconds for each LP (and for waiting on another HiGHS run of this process).
    row : int, optional
        The row to follow; by default the one FlowOCT's LP counts least correct
        (the least flow reaching the sink), where the relaxations differ most.
    stop : threading.Event, optional
        Ends the LP that is going (it then has no value) and skips the rest.
    **params
        Other :class:`StrongTreeClassifier` parameters (``regularization``, ``n_buckets``, ...).

    Returns
    -------
    RootLP
        Balanced trees only (λ = 0) have ``leaf_share``, ``arcs`` and ``routes``; with λ > 0
        the relaxations carry their value and splits.
    """
    from strongtree_core.estimator.classifier import StrongTreeClassifier

    clf = StrongTreeClassifier(depth=depth, **params)
    data, spec, labels = clf._problem(X, y)
    graph = TreeGraph(spec.depth)
    solved: dict[str, tuple[float, np.ndarray, Any] | None] = {}
    for word in formulations:
        if stop is not None and stop.is_set():
            break
        try:
            built = build_model(data, spec, word)
        except ValueError:  # the formulation cannot take these settings
            continue
        relaxed = relaxation_arrays(data, built)
        result = lp_solution(relaxed, time_limit=time_limit, wait=time_limit, stop=stop)
        solved[word] = None if result is None else (result[0], result[1], relaxed.index)
    balanced = not spec.needs_imbalanced
    flow = solved.get("flow") or solved.get("benders")
    if row is None:
        pattern = 0
        if flow is not None and balanced:
            reach = flow[1][flow[2]["z"][:, 0]]  # flow out of the source = flow into the sink
            pattern = int(np.lexsort((-data.count, reach))[0])
        row = int(np.flatnonzero(data.row_to_pattern == pattern)[0])
    pattern = int(data.row_to_pattern[row])
    relaxations = []
    for word, result in solved.items():
        if result is None:
            relaxations.append(RootRelaxation(word, None))
            continue
        value, x, index = result
        if balanced:
            parts = _read(word, x, index, data, graph, pattern)
        else:
            parts = {"splits": x[index["f" if word == "binoct" else "b"]]}
        relaxations.append(RootRelaxation(
            word, float(value),
            splits=_clean(parts["splits"]),
            leaf_share=_clean(parts.get("leaf_share", [])),
            leaf_class=_clean(parts.get("leaf_class", [])),
            arcs=[(name, round(v, 9) + 0.0) for name, v in parts.get("arcs", [])],
            routes=parts.get("routes", []),
            leaves=parts.get("leaves", []),
        ))
    return RootLP(
        depth=spec.depth, features=list(labels), row=row,
        row_features=[labels[j] for j in np.flatnonzero(data.X[pattern])],
        row_class=str(clf.classes_[int(data.y[pattern])]), relaxations=relaxations,
    )
