"""A tree in sentences, on trees built by hand: leaves with one prediction merged, the default
class and its exceptions, every count the training rows of its path."""

import re

import numpy as np
import pandas as pd
import pytest

from strongtree_core.encoding import TableEncoder
from strongtree_core.structure import LEAF, PRUNED, TreeStructure
from strongtree_core.tree import FittedTree, SolveRecord
from strongtree_core.tree.summary import MAX_EXCEPTIONS, merged_paths, tree_summary


def build(df: pd.DataFrame, y: np.ndarray, classes: tuple, feature: list, prediction: list, depth: int,
          n_buckets: int = 4, target: str = "hired") -> FittedTree:
    plan = TableEncoder(n_buckets=n_buckets).fit(df)
    structure = TreeStructure(depth, np.array(feature), np.array(prediction))
    return FittedTree.from_training(structure, plan, classes, target, plan.transform(df), y, SolveRecord("optimal"))


@pytest.fixture(scope="module")
def table():
    """100 applicants: experience 0..99 (tests at 24.5, 49.5, 74.5), a referral yes/no."""
    return pd.DataFrame({"experience": np.arange(100.0), "referral": ["yes", "no"] * 50})


def feature_index(tree_or_plan, label: str) -> int:
    plan = tree_or_plan
    return list(plan.labels).index(label)


def test_a_single_leaf_says_every_row_gets_it(table):
    y = np.array([0] * 70 + [1] * 30)
    tree = build(table, y, ("no", "yes"), [LEAF], [0], 0)
    assert tree_summary(tree) == ("The tree asks nothing: every row is predicted no (100 training rows, 70.0% of "
                                  "them no).",)


def test_one_question_reads_as_a_default_and_an_exception(table):
    plan = TableEncoder(n_buckets=4).fit(table)
    j = feature_index(plan, "experience ≤ 74.5")
    y = (table["experience"] > 74.5).to_numpy().astype(int)
    y[:5] = 1  # five of the 75 rows at or below 74.5 are hired anyway
    tree = build(table, y, ("no", "yes"), [j, LEAF, LEAF], [-1, 1, 0], 1)  # > 74.5 (node 2): yes
    overview, sentence = tree_summary(tree, "applicants")
    assert overview == ("The tree predicts hired from 1 column (experience); of the 100 training rows, it predicts "
                        "no for 75 and yes for 25.")
    assert sentence == ("Applicants are predicted no (75 training rows, 93.3% no), unless experience > 74.5 "
                        "(25 training rows, 100.0% yes): then they are predicted yes.")


def test_questions_whose_answers_agree_are_merged(table):
    plan = TableEncoder(n_buckets=4).fit(table)
    exp, ref = feature_index(plan, "experience ≤ 49.5"), feature_index(plan, "referral = yes")
    y = ((table["experience"] > 49.5) & (table["referral"] == "yes")).to_numpy().astype(int)
    # Node 3 (experience ≤ 49.5) asks about the referral but predicts "no" either way: one leaf for the reader.
    tree = build(table, y, ("no", "yes"), [exp, ref, ref, LEAF, LEAF, LEAF, LEAF], [-1, -1, -1, 0, 1, 0, 0], 2)
    paths = merged_paths(tree)
    assert [p.node for p in paths] == [3, 5, 4]
    assert sum(p.n_rows for p in paths) == 100
    assert [p.n_rows for p in paths] == [tree.node_counts[n - 1].sum() for n in (3, 5, 4)]
    sentence = tree_summary(tree)[1]
    assert sentence == ("Rows are predicted no (75 training rows, 100.0% no), unless experience > 49.5 and "
                        "referral = yes (25 training rows, 100.0% yes): then they are predicted yes.")
    assert "referral" in tree_summary(tree)[0] and sentence.count("experience") == 1


def test_exceptions_of_several_classes_name_their_class():
    df = pd.DataFrame({"x": np.arange(90.0)})
    y = np.repeat([0, 1, 2], 30)
    plan = TableEncoder(n_buckets=3).fit(df)
    low, high = feature_index(plan, "x ≤ 29.5"), feature_index(plan, "x ≤ 59.5")
    # x ≤ 59.5 ? (yes: x ≤ 29.5 ? a : b) : c
    tree = build(df, y, ("a", "b", "c"), [high, LEAF, low, PRUNED, PRUNED, LEAF, LEAF], [-1, 2, -1, -1, -1, 1, 0],
                 2, n_buckets=3, target="kind")
    overview, sentence = tree_summary(tree)
    assert overview.endswith("it predicts a for 30, b for 30, c for 30.")
    assert sentence.startswith("Rows are predicted a (30 training rows, 100.0% a), unless one of these holds: ")
    assert "(30 training rows, 100.0% b: predicted b)" in sentence and "(30 training rows, 100.0% c: predicted c)" in sentence
    assert "then they are predicted" not in sentence


def test_many_exceptions_are_told_branch_by_branch_with_every_count():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.integers(0, 2, 400), "b": rng.integers(0, 2, 400), "c": rng.integers(0, 2, 400),
                       "d": rng.integers(0, 2, 400)})
    plan = TableEncoder().fit(df)
    fa, fb, fc, fd = (feature_index(plan, c) for c in "abcd")  # 0/1 columns: one flag each
    # depth 3, alternating predictions: eight leaves, four exceptions to either class
    feature = [fa, fb, fc, fd, fd, fd, fd] + [LEAF] * 8
    prediction = [-1] * 7 + [0, 1, 0, 1, 0, 1, 0, 1]
    y = rng.integers(0, 2, 400)
    tree = build(df, y, ("no", "yes"), feature, prediction, 3)
    sentences = tree_summary(tree)
    assert len(sentences) == 3  # the overview, then one per branch of the first question
    first = tree.encoding.features[fa]
    assert sentences[1].startswith(f"Rows with {first.label} are predicted ")
    assert sentences[2].startswith(f"Rows with {first.negated_label} are predicted ")
    # Every count in a sentence is the training rows of a path or of a branch.
    counts = {int(tree.node_counts[n - 1].sum()) for n in range(1, 16)}
    for sentence in sentences[1:]:
        told = [int(n.replace(",", "")) for n in re.findall(r"\(([\d,]+) training rows", sentence)]
        assert told, sentence
        branch_rows = [p.n_rows for p in merged_paths(tree, 3 if sentence is sentences[1] else 2)]
        assert set(told[1:]) <= counts and told[0] <= sum(branch_rows)
    assert MAX_EXCEPTIONS == 3


def test_the_shares_are_those_of_the_predicted_class(table):
    plan = TableEncoder(n_buckets=4).fit(table)
    j = feature_index(plan, "experience ≤ 24.5")
    y = np.zeros(100, dtype=int)
    y[::4] = 1  # a quarter hired everywhere
    tree = build(table, y, ("no", "yes"), [j, LEAF, LEAF], [-1, 0, 1], 1)  # ≤ 24.5 (node 3): yes
    sentence = tree_summary(tree)[1]
    leaf = tree.node_counts[2]
    assert f"({leaf.sum()} training rows, {100 * leaf[1] / leaf.sum():.1f}% yes)" in sentence
