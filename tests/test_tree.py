"""The fitted tree value (strongtree_core.tree): predict, store, draw, export."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess

import numpy as np
import pandas as pd
import pytest

from strongtree_core.encoding import TableEncoder
from strongtree_core.structure import LEAF, PRUNED, TreeStructure
from strongtree_core.tree import FINAL_STATUSES, STATUSES, FittedTree, SolveRecord
from strongtree_core.tree import fitted as fitted_module
from strongtree_core.tree import record as record_module

HOSTILE = 'a"b\\c<d>'
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz 'dot' is not installed")


def mixed_table(n: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    income = rng.lognormal(10.0, 0.8, n).round(-1)
    income[rng.random(n) < 0.1] = np.nan
    race = rng.choice(["Caucasian", "African-American", "Hispanic", "Other"], n).astype(object)
    race[rng.random(n) < 0.05] = None
    return pd.DataFrame(
        {
            "age": rng.normal(40.0, 12.0, n).round(1),
            "priors_count": rng.integers(0, 6, n),
            "race": race,
            "smoker": rng.random(n) < 0.3,
            HOSTILE: rng.choice(["x", "y'z", "w\"v"], n),
            "income": income,
        }
    )


def labels_of(df: pd.DataFrame) -> np.ndarray:
    young = df["age"] < 36
    return np.where(young & (df["race"] == "Caucasian") | df["income"].isna(), "yes", "no")


def node_of(plan, label: str) -> int:
    return plan.labels.index(label)


def build(plan, df, structure, classes=("no", "yes"), record=None) -> FittedTree:
    y = labels_of(df)
    y_index = np.array([classes.index(v) for v in y])
    record = record or SolveRecord("optimal", objective=250.0, bound=250.0, gap=0.0, backend="highs",
                                   formulation="FlowOCT (balanced, eq. 1)", method="flow", certified=True)
    return FittedTree.from_training(structure, plan, classes, "recid", plan.transform(df), y_index, record)


def mixed_tree(continuous: str = "thermometer") -> tuple[FittedTree, pd.DataFrame]:
    """A depth-3 tree over every kind of test, with one subtree pruned."""
    df = mixed_table()
    plan = TableEncoder(continuous=continuous).fit(df)
    age = [l for l in plan.labels if l.startswith("age")][1]
    feature = np.full(15, PRUNED)
    prediction = np.full(15, -1)
    # 1: age test; right (yes) = 3: race = Caucasian; left (no) = 2: income missing
    feature[[0, 1, 2]] = [node_of(plan, age), node_of(plan, "income missing"), node_of(plan, "race = Caucasian")]
    # 3 -> 7: smoker, 6: hostile level; 2 -> 5: leaf (missing income), 4: priors (ordinal)
    feature[[6, 5, 4, 3]] = [node_of(plan, "smoker"), node_of(plan, f"{HOSTILE} = x"), LEAF,
                             node_of(plan, "priors_count ≤ 2")]
    prediction[4] = 1
    leaves = [7, 8, 11, 12, 13, 14]  # positions of the leaves 8, 9, 12, 13, 14, 15
    feature[leaves] = LEAF
    prediction[leaves] = [0, 1, 0, 1, 0, 1]
    structure = TreeStructure(3, feature, prediction)
    assert structure.is_valid()
    return build(plan, df, structure), df


def walk(tree: FittedTree, x_row: np.ndarray) -> list[int]:
    """Reference routing of one binary row, one node at a time."""
    node, path = 1, [1]
    while tree.structure.feature[node - 1] >= 0:
        node = 2 * node + int(x_row[tree.structure.feature[node - 1]])
        path.append(node)
    return path


@pytest.mark.parametrize("continuous", ["thermometer", "onehot_buckets"])
def test_node_counts_match_row_by_row_routing(continuous):
    tree, df = mixed_tree(continuous)
    X = tree.encoding.transform(df)
    y = labels_of(df)
    expected = np.zeros((15, 2), dtype=int)
    for x_row, label in zip(X, y):
        for node in walk(tree, x_row):
            expected[node - 1, tree.classes.index(label)] += 1
    np.testing.assert_array_equal(tree.node_counts, expected)
    assert tree.node_counts[0].sum() == len(df)
    assert [walk(tree, X[i])[-1] for i in range(len(df))] == tree.apply(df).tolist()


def test_predict_reads_raw_columns_by_name():
    tree, df = mixed_tree()
    expected = np.array(tree.classes)[tree.structure.predict(tree.encoding.transform(df))]
    np.testing.assert_array_equal(tree.predict(df), expected)
    reordered = df[list(reversed(df.columns))].assign(unused=0)
    np.testing.assert_array_equal(tree.predict(reordered), expected)
    assert set(tree.predict(df)) == {"yes", "no"}


def test_decision_path_of_one_row():
    tree, df = mixed_tree()
    X = tree.encoding.transform(df)
    for i in (0, 1, 2, 17):
        assert tree.decision_path(df.iloc[[i]]) == walk(tree, X[i])
    assert tree.decision_path(df.iloc[0].to_dict()) == walk(tree, X[0])
    with pytest.raises(ValueError) as err:
        tree.decision_path(df.iloc[:2])
    assert str(err.value) == fitted_module.ONE_ROW.format(n=2)


@pytest.mark.parametrize("continuous", ["thermometer", "onehot_buckets"])
def test_python_export_reproduces_predict(continuous):
    tree, _ = mixed_tree(continuous)
    tree = FittedTree(tree.structure, tree.encoding, tree.classes, 'x"""\n' + HOSTILE, tree.node_counts,
                      tree.record, tree.feature_names)
    fresh = mixed_table(n=400, seed=7)
    namespace: dict = {}
    exec(compile(tree.to_python(), "<tree>", "exec"), namespace)
    exported = [namespace["predict"](row) for row in fresh.to_dict("records")]
    assert exported == tree.predict(fresh).tolist()
    assert "import strongtree" not in tree.to_python()


@pytest.mark.parametrize("continuous", ["thermometer", "onehot_buckets"])
def test_sql_export_reproduces_predict(continuous):
    tree, _ = mixed_tree(continuous)
    fresh = mixed_table(n=400, seed=11)
    with sqlite3.connect(":memory:") as con:
        fresh.to_sql("rows", con, index=False)
        got = [r[0] for r in con.execute(f"SELECT {tree.to_sql()} FROM rows ORDER BY rowid")]
    assert got == tree.predict(fresh).tolist()


def test_exports_with_integer_classes():
    df = mixed_table()
    plan = TableEncoder().fit(df)
    structure = TreeStructure(1, np.array([node_of(plan, "smoker"), LEAF, LEAF]), np.array([-1, 0, 1]))
    y_index = df["smoker"].to_numpy().astype(int)
    tree = FittedTree.from_training(structure, plan, (1, 2), "target", plan.transform(df), y_index,
                                    SolveRecord("time_limit"))
    assert tree.predict(df).tolist() == (df["smoker"].astype(int) + 1).tolist()
    namespace: dict = {}
    exec(tree.to_python(), namespace)
    assert namespace["predict"]({"smoker": True}) == 2
    with sqlite3.connect(":memory:") as con:
        df.to_sql("rows", con, index=False)
        got = [r[0] for r in con.execute(f"SELECT {tree.to_sql()} FROM rows ORDER BY rowid")]
    assert got == tree.predict(df).tolist()


def test_text_rules_one_line_per_leaf():
    df = pd.DataFrame({"age": [20.0, 30.0, 40.0, 50.0, 60.0, np.nan] * 5,
                       "race": ["Caucasian", "Other", "Caucasian", "Other", "Hispanic", "Other"] * 5})
    plan = TableEncoder(n_buckets=2).fit(df, kinds={"age": "continuous"})
    assert plan.labels == ("age ≤ 45", "age missing", "race = Caucasian", "race = Hispanic", "race = Other")
    # 1: age ≤ 45 ; yes -> 3: race = Caucasian ; no -> 2: age missing
    structure = TreeStructure(
        2,
        np.array([0, 1, 2, LEAF, LEAF, LEAF, LEAF]),
        np.array([-1, -1, -1, 0, 1, 0, 1]),
    )
    y = np.array([1, 0, 0, 0, 0, 1] * 5)
    tree = FittedTree.from_training(structure, plan, ("no", "yes"), "t", plan.transform(df), y,
                                    SolveRecord("optimal"))
    assert tree.to_text().splitlines() == [
        "IF age ≤ 45 AND race = Caucasian THEN yes (10 rows, 50% yes)",
        "IF age ≤ 45 AND race ≠ Caucasian THEN no (5 rows, 100% no)",
        "IF age missing THEN yes (5 rows, 100% yes)",
        "IF age > 45 THEN no (10 rows, 100% no)",
    ]
    assert [r.leaf for r in tree.rules()] == [7, 6, 5, 4]
    assert [c.text for c in tree.rules()[3].conditions] == ["age > 45", "age not missing"]


def test_text_merges_tests_on_one_column():
    df = pd.DataFrame({"x": np.arange(1.0, 101.0)})
    plan = TableEncoder(n_buckets=4).fit(df)  # x ≤ 25.5, x ≤ 50.5, x ≤ 75.5
    structure = TreeStructure(2, np.array([2, LEAF, 0, PRUNED, PRUNED, LEAF, LEAF]),
                              np.array([-1, 0, -1, -1, -1, 0, 1]))
    tree = FittedTree.from_training(structure, plan, (0, 1), "t", plan.transform(df),
                                    (df["x"] <= 25.5).to_numpy().astype(int), SolveRecord("optimal"))
    assert tree.to_text().splitlines() == [
        "IF x ≤ 25.5 THEN 1 (25 rows, 100% 1)",
        "IF 25.5 < x ≤ 75.5 THEN 0 (50 rows, 100% 0)",
        "IF x > 75.5 THEN 0 (25 rows, 100% 0)",
    ]


def test_json_round_trip_is_exact():
    tree, df = mixed_tree("onehot_buckets")
    record = SolveRecord("interrupted", objective=-12.5, bound=float("inf"), gap=None, runtime=1.25,
                         backend="scip", message="stopped\nby user", choice="b&b", n_rows=300)
    tree = build(tree.encoding, df, tree.structure, record=record)
    text = tree.to_json()
    json.loads(text)  # plain JSON: no NaN or Infinity tokens
    assert "Infinity" not in text
    back = FittedTree.from_json(text)
    assert back == tree
    assert back.to_json() == text
    np.testing.assert_array_equal(back.predict(df), tree.predict(df))
    assert back.to_dot() == tree.to_dot()


def test_record_keeps_the_lp_bound_cuts_and_nodes_and_reads_older_records():
    record = SolveRecord("optimal", objective=40.0, bound=40.0, lp_bound=43.5, n_cuts=17, nodes=250, certified=True)
    back = SolveRecord.from_dict(json.loads(json.dumps(record.to_dict())))
    assert back == record and (back.lp_bound, back.n_cuts, back.nodes) == (43.5, 17, 250)
    unbounded = SolveRecord("time_limit", lp_bound=float("inf"))
    assert SolveRecord.from_dict(json.loads(json.dumps(unbounded.to_dict()))).lp_bound == float("inf")
    older = {k: v for k, v in record.to_dict().items() if k not in ("lp_bound", "n_cuts", "nodes")}
    assert SolveRecord.from_dict(older) == SolveRecord("optimal", objective=40.0, bound=40.0, certified=True)
    assert SolveRecord("optimal", lp_bound=float("nan")).lp_bound is None


def test_a_heuristic_record_is_never_certified():
    assert SolveRecord("heuristic", objective=10.0).certified is False
    with pytest.raises(ValueError) as err:
        SolveRecord("heuristic", objective=10.0, certified=True)
    assert str(err.value) == record_module.HEURISTIC_CERTIFIED


def test_json_keeps_class_label_types():
    tree, df = mixed_tree()
    numeric = FittedTree(tree.structure, tree.encoding, (0, 1), "t", tree.node_counts, tree.record,
                         tree.feature_names)
    back = FittedTree.from_json(numeric.to_json())
    assert back.classes == (0, 1) and all(type(c) is int for c in back.classes)
    assert back != FittedTree(tree.structure, tree.encoding, ("0", "1"), "t", tree.node_counts,
                              tree.record, tree.feature_names)


def test_inconsistent_tree_refused():
    tree, _ = mixed_tree()
    with pytest.raises(ValueError) as err:
        FittedTree(tree.structure, tree.encoding, ("a", "b", "c"), "t", tree.node_counts, tree.record, ())
    assert str(err.value) == fitted_module.BAD_TREE.format(
        reason="node_counts has shape (15, 2), expected (15, 3)"
    )


def test_record_statuses_and_messages():
    from strongtree_core.solvers.base import Status

    assert set(FINAL_STATUSES) == {s.value for s in Status}
    assert set(STATUSES) == set(FINAL_STATUSES) | {"running", "heuristic"}
    running = SolveRecord.in_progress(2.5, -10.0, -8.0, 0.2)
    assert (running.status, running.runtime, running.objective, running.certified) == ("running", 2.5, -10.0, False)
    assert SolveRecord(Status.TIME_LIMIT).status == "time_limit"
    assert SolveRecord("optimal", objective=float("nan")).objective is None
    with pytest.raises(ValueError) as err:
        SolveRecord("done")
    assert str(err.value) == record_module.BAD_STATUS.format(allowed=", ".join(STATUSES), status="done")


def dot_nodes(dot: str) -> set[int]:
    return {int(n) for n in re.findall(r"^  n(\d+) \[", dot, flags=re.M)}


def test_dot_shows_reachable_nodes_only_yes_edge_first():
    tree, _ = mixed_tree()
    dot = tree.to_dot()
    reachable = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 14, 15}
    assert dot_nodes(dot) == reachable  # 10, 11 are below the leaf 5
    edges = re.findall(r"^  n(\d+) -> n(\d+) \[label=\"(yes|no)\"", dot, flags=re.M)
    assert len(edges) == len(reachable) - 1
    for i in range(0, len(edges), 2):
        (p1, c1, t1), (p2, c2, t2) = edges[i], edges[i + 1]
        assert p1 == p2 and (int(c1), t1, int(c2), t2) == (2 * int(p1) + 1, "yes", 2 * int(p1), "no")
    assert "ordering=out" in dot


def test_dot_colours_leaves_by_class_and_shows_counts():
    tree, _ = mixed_tree()
    dot = tree.to_dot()
    fills = dict(re.findall(r'^  n(\d+) .*fillcolor="(#[0-9A-F]{6})"', dot, flags=re.M))
    leaves = [int(n) for n in fills]
    assert sorted(leaves) == sorted(tree.structure.leaves.tolist())
    by_class = {}
    for leaf in leaves:
        by_class.setdefault(int(tree.structure.prediction[leaf - 1]), set()).add(fills[str(leaf)])
    assert all(len(c) == 1 for c in by_class.values()) and len(set.union(*by_class.values())) == 2
    root = re.search(r"^  n1 \[.*$", dot, flags=re.M).group(0)
    n_no, n_yes = tree.node_counts[0]
    assert f"{n_no + n_yes} rows" in root and f"no: {n_no} · yes: {n_yes}" in root


def test_dot_highlight_and_group_mix():
    tree, df = mixed_tree()
    path = tree.decision_path(df.iloc[[0]])
    dot = tree.to_dot(highlight=path, group_mix={path[-1]: {"women": 3, "men": 1}})
    heavy_nodes = {int(n) for n in re.findall(r"^  n(\d+) \[.*penwidth=2.5", dot, flags=re.M)}
    assert heavy_nodes == set(path)
    heavy_edges = re.findall(r"^  n(\d+) -> n(\d+) .*penwidth=2.5", dot, flags=re.M)
    assert [(int(a), int(b)) for a, b in heavy_edges] == list(zip(path[:-1], path[1:]))
    assert "groups: women: 3 (75%) · men: 1 (25%)" in dot


def test_dot_escapes_hostile_text():
    tree, _ = mixed_tree()
    plan = tree.encoding
    classes = ('<b>"yes"</b>', "no\\\n")
    weird = FittedTree(tree.structure, plan, classes, "t", tree.node_counts, tree.record, ())
    dot = weird.to_dot(group_mix={1: {"g<1>&": 2}})
    for raw in (HOSTILE, '<b>"yes"</b>', "g<1>&"):
        assert raw not in dot
    assert "a&quot;b\\c&lt;d&gt; = x" in dot and "&lt;b&gt;&quot;yes&quot;&lt;/b&gt;" in dot
    assert "no\\\\n" in dot  # newline written as a visible \n after the backslash
    label_lines = [l for l in dot.splitlines() if l.startswith("  n") and "[label=<" in l]
    assert len(label_lines) == len(dot_nodes(dot))  # one line per node: nothing broke a line


@needs_dot
def test_dot_renders_with_graphviz():
    tree, df = mixed_tree()
    classes = ('<b>"yes"</b>', "no\\\n")
    weird = FittedTree(tree.structure, tree.encoding, classes, "t", tree.node_counts, tree.record, ())
    dot = weird.to_dot(highlight=tree.decision_path(df.iloc[[0]]), group_mix={1: {"é<": 1}})
    done = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stderr == b""
    svg = done.stdout.decode()
    assert "a&quot;b\\c&lt;d&gt; = x" in svg or 'a"b\\c&lt;d&gt; = x' in svg
    assert "≤" in svg and "é&lt;" in svg


def test_from_training_with_no_rows():
    tree, _ = mixed_tree()
    empty = FittedTree.from_training(tree.structure, tree.encoding, tree.classes, "t",
                                     np.zeros((0, tree.encoding.n_binary), dtype=np.uint8),
                                     np.zeros(0, dtype=int), tree.record)
    assert empty.node_counts.sum() == 0
    assert "0 rows" in empty.to_text() and "0 rows" in empty.to_dot()


@pytest.mark.parametrize("weighted", [False, True])
def test_counts_from_patterns_equal_the_counts_from_rows(weighted) -> None:
    """The estimator counts each node's rows on the merged patterns: the same numbers as on every row."""
    from strongtree_core.encoding.patterns import collapse_patterns

    rng = np.random.default_rng(5)
    df = mixed_table(n=2000, seed=5)
    df = pd.concat([df, df.iloc[:700]], ignore_index=True)  # repeated rows: fewer patterns than rows
    plan = TableEncoder().fit(df)
    Xb = plan.transform(df)
    y = rng.integers(0, 3, len(df))
    group = rng.integers(0, 2, len(df))
    weight = rng.uniform(0.5, 3.0, len(df)) if weighted else None
    data = collapse_patterns(Xb, y, 3, sample_weight=weight, group=group)
    assert data.n_patterns < len(df)
    features = rng.integers(0, Xb.shape[1], 7)
    structure = TreeStructure(3, np.r_[features, [LEAF] * 8], np.r_[[-1] * 7, rng.integers(0, 3, 8)])
    record = SolveRecord("optimal")
    rows = FittedTree.from_training(structure, plan, ("a", "b", "c"), "t", Xb, y, record, sample_weight=weight)
    merged = FittedTree.from_patterns(structure, plan, ("a", "b", "c"), "t", data, record, weighted=weighted)
    assert merged.node_counts.dtype == rows.node_counts.dtype
    assert np.array_equal(merged.node_counts, rows.node_counts)
    assert merged.baseline_accuracy == pytest.approx(rows.baseline_accuracy, rel=1e-12)
    if weighted:
        np.testing.assert_allclose(merged.node_weights, rows.node_weights, rtol=1e-12)
    else:
        assert merged.node_weights is None and rows.node_weights is None


def _random_structure(rng, depth: int, n_features: int, n_classes: int) -> TreeStructure:
    """A valid tree of at most ``depth`` with leaves at every level (PRUNED below them)."""
    n_nodes = 2 ** (depth + 1) - 1
    feature = np.full(n_nodes, PRUNED)
    prediction = np.full(n_nodes, -1)
    stack = [(1, 0)]
    while stack:
        node, level = stack.pop()
        if level < depth and rng.random() < 0.75:
            feature[node - 1] = rng.integers(n_features)
            stack += [(2 * node, level + 1), (2 * node + 1, level + 1)]
        else:
            feature[node - 1] = LEAF
            prediction[node - 1] = rng.integers(n_classes)
    return TreeStructure(depth, feature, prediction)


@pytest.mark.parametrize("seed", range(12))
def test_node_counts_are_the_rows_whose_path_passes_each_node(seed):
    """``node_class_counts`` (rows counted at their leaf, then summed up the tree) against its
    definition: the rows whose path from the root visits the node, by class, with and without weights."""
    rng = np.random.default_rng(seed)
    depth, n_classes = int(rng.integers(1, 5)), int(rng.integers(2, 4))
    X = rng.integers(0, 2, (200, 6))
    y = rng.integers(0, n_classes, 200)
    weight = rng.integers(0, 4, 200).astype(float)
    tree = _random_structure(rng, depth, 6, n_classes)
    assert tree.is_valid()
    paths = tree.path_nodes(X)
    expected = np.array([[((paths == node).any(axis=1) & (y == k)).sum() for k in range(n_classes)]
                         for node in range(1, tree.feature.size + 1)])
    counts = fitted_module.node_class_counts(tree, X, y, n_classes)
    assert counts.dtype == np.int64 and np.array_equal(counts, expected)
    weighted = np.array([[weight[(paths == node).any(axis=1) & (y == k)].sum() for k in range(n_classes)]
                         for node in range(1, tree.feature.size + 1)])
    assert np.array_equal(fitted_module.node_class_counts(tree, X, y, n_classes, weight=weight), weighted)
    assert counts[0].sum() == 200 and np.array_equal(counts[tree.leaves - 1].sum(axis=0), np.bincount(y, minlength=n_classes))
