"""The names of version 0.2 and the earlier ones: each earlier name is refused with a message that gives
its name now (estimator, set_params, metrics, frontier, sweep grids, the command line), and what users
stored under the earlier names (runs in the SQLite history, saved trees) still opens."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from strongtree_core import StrongTreeClassifier, StrongTreeError, cli, metrics
from strongtree_core.cli.messages import RENAMED_FLAG
from strongtree_core.cli.parser import RENAMED_FLAGS
from strongtree_core.renames import (
    RENAMED_PARAMETER,
    RENAMED_PARAMETERS,
    UNEXPECTED_PARAMETER,
    RenamedParameterError,
)
from strongtree_core.sweep import frontier, sweep
from strongtree_core.sweep.grid import RENAMED_GRID_KEY
from strongtree_core.tree import FittedTree
from strongtree_studio.data.choices import ModelConfig, Roles
from strongtree_studio.stores.run_history import RunEntry, RunStore, SweepEntry
from strongtree_studio.sweeps.sweep_grid import SweepGrid

HERE = Path(__file__).resolve().parent
OWNER = "StrongTreeClassifier"


def _data(n: int = 24):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"score": rng.integers(0, 10, n), "group": rng.choice(["a", "b"], n)})
    y = pd.Series(np.where(X["score"] > 4, "yes", "no"), name="hired")
    return X, y


@pytest.mark.parametrize("old, new", sorted(RENAMED_PARAMETERS.items()))
def test_the_estimator_refuses_an_earlier_name_with_its_name_now(old, new):
    message = RENAMED_PARAMETER.format(owner=OWNER, old=old, new=new)
    with pytest.raises(RenamedParameterError) as info:
        StrongTreeClassifier(**{old: 1})
    assert str(info.value) == message
    # Python's and scikit-learn's conventions for a bad keyword, and the project's own root.
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)
    assert isinstance(info.value, StrongTreeError)
    with pytest.raises(RenamedParameterError) as info:
        StrongTreeClassifier().set_params(**{old: 1})
    assert str(info.value) == message


def test_the_messages_read_as_written():
    with pytest.raises(TypeError) as info:
        StrongTreeClassifier(depth=2, positive_class="yes")
    assert str(info.value) == (
        "StrongTreeClassifier has no parameter 'positive_class': it is now called 'pos_label' (same meaning). "
        "Write pos_label=... instead."
    )
    with pytest.raises(TypeError) as info:
        StrongTreeClassifier(colour="red")
    assert str(info.value) == UNEXPECTED_PARAMETER.format(owner=OWNER, name="colour")
    assert str(info.value) == "StrongTreeClassifier got an unexpected keyword argument 'colour'"


def test_the_new_names_are_the_estimator_s_parameters():
    params = StrongTreeClassifier().get_params()
    assert set(RENAMED_PARAMETERS.values()) <= set(params)
    assert not set(RENAMED_PARAMETERS) & set(params)


def test_a_pipeline_and_a_grid_search_refuse_an_earlier_name():
    X, y = _data()
    pipe = Pipeline([("id", FunctionTransformer()), ("tree", StrongTreeClassifier(depth=1, time_limit=5))])
    with pytest.raises(RenamedParameterError, match="now called 'max_features_used'"):
        pipe.set_params(tree__max_features=1)
    search = GridSearchCV(StrongTreeClassifier(depth=1, time_limit=5), {"warm_start": [True, False]}, cv=2)
    with pytest.raises(RenamedParameterError, match="now called 'heuristic_start'"):
        search.fit(X, y)


def test_metrics_refuse_positive_label():
    with pytest.raises(RenamedParameterError) as info:
        metrics.recall(["yes", "no"], ["yes", "yes"], positive_label="yes")
    assert str(info.value) == RENAMED_PARAMETER.format(owner="recall", old="positive_label", new="pos_label")
    with pytest.raises(RenamedParameterError) as info:
        metrics.statistical_parity_difference(["yes", "no"], ["yes", "yes"], sensitive_features=["a", "b"],
                                              positive_label="yes")
    assert str(info.value) == RENAMED_PARAMETER.format(
        owner="statistical_parity_difference", old="positive_label", new="pos_label")
    assert metrics.recall(["yes", "no"], ["yes", "yes"], pos_label="yes") == 1.0


def test_frontier_refuses_bounds_and_a_grid_refuses_an_earlier_key():
    X, y = _data()
    with pytest.raises(RenamedParameterError) as info:
        frontier(StrongTreeClassifier(depth=1), X, y, sensitive_features="group", bounds=[0.1])
    assert str(info.value) == RENAMED_PARAMETER.format(owner="frontier", old="bounds", new="fairness_bound")
    with pytest.raises(StrongTreeError) as info:
        sweep(StrongTreeClassifier(depth=1), X, y, grid={"accelerator": [True, False]})
    assert str(info.value) == RENAMED_GRID_KEY.format(key="accelerator", new="exact_search")
    assert str(info.value) == (
        "grid names 'accelerator', which is now called 'exact_search' (same meaning): name 'exact_search' in the "
        "grid instead."
    )


FLAG_CASES = [(command, old, new) for command, names in RENAMED_FLAGS.items() for old, new in names.items()]


@pytest.mark.parametrize("command, old, new", FLAG_CASES)
def test_the_command_line_refuses_an_earlier_option(command, old, new, tmp_path, capsys):
    X, y = _data()
    path = tmp_path / "data.csv"
    X.assign(hired=y).to_csv(path, index=False)
    extra = ["--target", "hired"] if command in ("fit", "sweep") else ["--tree", "t.json"]
    value = [] if old == "--no-accelerator" else ["1"]
    with pytest.raises(SystemExit) as info:
        cli.main([command, str(path), *extra, old, *value])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == f"strongtree {command}: error: " + RENAMED_FLAG.format(old=old, new=new)


def test_the_command_line_message_reads_as_written(tmp_path, capsys):
    with pytest.raises(SystemExit):
        cli.main(["fit", "x.csv", "--target", "y", "--max-features", "2"])
    assert capsys.readouterr().err.splitlines()[-1] == (
        "strongtree fit: error: --max-features is now called --max-features-used (same meaning): "
        "use --max-features-used."
    )


def test_runs_stored_under_the_earlier_names_open_under_today_s(tmp_path):
    """A run and a sweep written by the dashboard before 0.2 (roles.positive, model.max_features, summary and
    evaluation delta, grid bounds) read back under today's names, and the dashboard's values build from them."""
    store = RunStore(tmp_path / "runs.sqlite3")
    old_run = RunEntry(
        dataset="hiring", fingerprint="abc", status="optimal",
        config={"roles": {"target": "hired", "positive": "yes", "protected": ["gender"], "legitimate": [],
                          "ignored": []},
                "split": {"test_size": 0.25, "seed": 0, "stratify": True},
                "model": {"depth": 2, "max_features": 3, "fairness": ["statistical_parity"], "fairness_bound": 0.05}},
        summary={"depth": 2, "fairness": "Statistical parity", "delta": 0.05, "train_accuracy": 0.8},
        evaluation={"delta": 0.05, "positive": "yes", "notions": ["statistical_parity"]},
    )
    run = store.get(store.save(old_run))
    assert run.config["roles"]["pos_label"] == "yes" and "positive" not in run.config["roles"]
    assert run.config["model"]["max_features_used"] == 3 and "max_features" not in run.config["model"]
    assert run.summary["fairness_bound"] == 0.05 and "delta" not in run.summary
    assert run.evaluation["fairness_bound"] == 0.05 and run.evaluation["pos_label"] == "yes"
    assert store.table()["fairness_bound"].tolist() == [0.05]
    roles = Roles(**run.config["roles"])
    assert roles.pos_label == "yes"
    model = ModelConfig.from_dict(run.config["model"])
    assert model.max_features_used == 3
    assert model.estimator_params(roles)["pos_label"] == "yes"

    old_sweep = SweepEntry(
        dataset="hiring", fingerprint="abc", status="finished",
        config={"roles": {"target": "hired", "positive": "yes"}, "model": {"max_features": None},
                "grid": {"notions": ["statistical_parity"], "bounds": [0.0, 0.05], "depths": [2], "lambdas": [0.0]}},
        points=[{"point": 0, "fairness_bound": 0.0}],
    )
    got = store.get_sweep(store.save_sweep(old_sweep))
    grid = SweepGrid(**{k: tuple(v) for k, v in got.config["grid"].items()})
    assert grid.fairness_bounds == (0.0, 0.05) and grid.n_points == 2
    assert got.config["roles"]["pos_label"] == "yes"


def test_a_tree_saved_before_the_renames_loads_and_predicts():
    """Written by version 0.1 (StrongTreeClassifier(positive_class="yes", fairness="statistical_parity",
    fairness_bound=0.5) on the eight rows below): the stored tree names none of the renamed parameters,
    so it loads unchanged and predicts what it predicted then."""
    text = (HERE / "data" / "tree_written_before_0_2.json").read_text(encoding="utf-8")
    tree = FittedTree.from_json(text)
    X = pd.DataFrame({"age": [22, 35, 47, 51, 29, 62, 41, 33], "score": [0.2, 0.9, 0.4, 0.8, 0.5, 0.7, 0.1, 0.6]})
    assert list(tree.predict(X)) == ["no", "yes", "yes", "yes", "no", "yes", "yes", "yes"]
    assert FittedTree.from_json(tree.to_json()) == tree


def test_a_stored_fit_context_under_the_earlier_names_reads_under_today_s():
    from strongtree_core.tree.context import FitContext

    old = {"protected": ["gender"], "positive_class": "yes",
           "settings": {"depth": 2, "max_features": 3, "warm_start": False, "accelerator": True}}
    context = FitContext.from_dict(old)
    assert context.pos_label == "yes"
    assert context.settings == {"depth": 2, "max_features_used": 3, "heuristic_start": False, "exact_search": True}
