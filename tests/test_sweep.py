"""Sweeps: every point's numbers recomputed from its stored tree, the frontier, the paper's
calibration, and the backends (threads, local processes, Dask) against the serial run, with a
worker killed mid-sweep and HiGHS's one-solve-per-process limit met from threads."""

from __future__ import annotations

import json
import math
import os
import signal
import threading
import time

import numpy as np
import pandas as pd
import pytest

from benchmarks.fairness_benchmark import (
    _numpy_gap,  # the gaps written out with numpy, not the metrics package
)
from strongtree_core import StrongTreeClassifier, cli
from strongtree_core.errors import StrongTreeError
from strongtree_core.solvers import highs_run
from strongtree_core.source import dask_connect
from strongtree_core.sweep import (
    SCHEDULER_ENV,
    backends,
    dask_backend,
    calibrate,
    frontier,
    grid,
    iter_sweep,
    sweep,
    to_table,
)
from strongtree_core.sweep.calibrate import BAD_TIES
from strongtree_core.sweep.run import plan
from strongtree_core.tree import FittedTree

distributed = pytest.importorskip("dask.distributed")

NOTIONS = ("statistical_parity", "conditional_statistical_parity", "predictive_equality", "equal_opportunity",
           "equalized_odds")


def _data(n: int = 90, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.integers(0, 2, n), "b": rng.integers(0, 3, n), "c": rng.integers(0, 5, n),
                      "level": rng.choice(["lo", "hi"], n)})
    group = pd.Series(rng.choice(["f", "m", "x"], n, p=[0.45, 0.45, 0.1]), name="group")
    score = X["a"] + (group == "m") + 0.3 * X["c"] + rng.random(n)
    y = pd.Series(np.where(score > 2.0, "yes", "no"), name="hired")
    return X, y, group


def _estimator(**kw) -> StrongTreeClassifier:
    return StrongTreeClassifier(**{"depth": 2, "pos_label": "yes", "time_limit": 10, **kw})


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12


def _tree_without_runtime(text: str) -> dict:
    data = json.loads(text)
    data["record"].pop("runtime")
    return data


# -- every number of every point, from its stored tree --------------------------------------------------


def test_every_point_s_accuracy_and_gaps_are_recomputed_from_its_stored_tree():
    X, y, group = _data()
    rows = np.random.default_rng(1).permutation(len(X))
    split = (rows[:50], rows[50:70], rows[70:])
    table = sweep(_estimator(depth=1), X, y, sensitive_features=group, legitimate_features="level",
                  grid={"fairness": list(NOTIONS), "fairness_bound": [0.0, 0.1, 0.3]}, cv=[split])
    assert len(table) == 15 and list(table["point"]) == list(range(15))
    assert table["tree"].notna().all(), table[["status", "error"]]
    legit = X["level"]
    for row in table.to_dict("records"):
        tree = FittedTree.from_json(row["tree"])
        for part, idx in zip(("train", "calibration", "test"), split):
            pred = tree.predict(X.iloc[idx].reset_index(drop=True))
            truth = y.iloc[idx].to_numpy()
            assert row[f"n_{part}"] == idx.size
            assert row[f"{part}_accuracy"] == pytest.approx(np.mean(pred == truth), abs=1e-12)
            for notion in NOTIONS:
                expected = _numpy_gap(notion, truth, pred, group.iloc[idx].to_numpy(), legit.iloc[idx].to_numpy(), "yes")
                assert _same(row[f"{part}_{notion}"], expected), (row["point"], part, notion)
            assert _same(row[f"{part}_gap"], row[f"{part}_{row['fairness']}"])
        assert row["train_gap"] <= row["fairness_bound"] + 1e-9
        assert row["objective"] == pytest.approx(row["train_accuracy"] * row["n_train"])


def test_an_infeasible_point_is_a_row_with_its_reason_and_the_others_go_on():
    X, y, group = _data()
    table = sweep(_estimator(depth=1, min_recall=1.0, min_precision=1.0), X, y, sensitive_features=group,
                  grid={"fairness": ["statistical_parity"], "fairness_bound": [0.0, 0.5]})
    assert set(table["status"]) == {"infeasible"}
    assert table["tree"].isna().all() and table["train_accuracy"].isna().all()
    assert all(e.startswith("No tree of depth 1 satisfies all the constraints together") for e in table["error"])


def _errors():
    """Errors a point's fit may end in, with the status its row must read."""
    from strongtree_core.engine.routes import INFEASIBLE, NO_TREE_IN_TIME, InfeasibleError, NoTreeInTimeError
    from strongtree_core.formulation.quality_constraints import MinRecall
    from strongtree_core.formulation.spec import TreeSpec

    proof = InfeasibleError(TreeSpec(depth=1, side_constraints=(MinRecall(1.0),)))
    kept = proof.with_record(proof.record, "No tree of depth 1 asking only the 8 of the 40 thresholds kept satisfies "
                                           "all the constraints together; a tree asking another threshold might.")
    in_time = NoTreeInTimeError(NO_TREE_IN_TIME.format(limit=5))
    return [
        ("infeasible", proof, "infeasible"),
        ("infeasible over the kept thresholds", kept, "infeasible"),
        ("no tree in time", in_time, "time_limit_no_tree"),
        # refusals that happen to read like those: their words do not make them so
        ("a refusal in the words of a proof", StrongTreeError(str(proof)), "error"),
        ("a refusal in the words of no tree in time", StrongTreeError(str(in_time)), "error"),
        ("a refusal that starts like a proof", StrongTreeError(INFEASIBLE.split("{")[0] + "column 'x'? pass y."),
         "error"),
        ("another refusal", StrongTreeError("depth must be at most 8"), "error"),
    ]


@pytest.mark.parametrize("name, error, status", _errors(), ids=[case[0] for case in _errors()])
def test_a_point_s_status_is_read_from_the_type_of_its_error_not_from_its_words(monkeypatch, name, error, status):
    """A point whose fit proves no tree fits (over every threshold, or over the kept ones: words that begin
    with the claim's sentence) reads "infeasible", one that found no tree in time "time_limit_no_tree";
    any other error is an "error", even when its message uses the same words.  The error reaches the row
    from a worker process pickled: it keeps its type there."""
    import pickle

    def refused(self, *args, **kwargs):
        raise error

    monkeypatch.setattr(StrongTreeClassifier, "fit", refused)
    X, y, _ = _data(30)
    table = sweep(_estimator(), X, y, grid={"depth": [1, 2]})
    assert list(table["status"]) == [status, status], name
    assert list(table["error"]) == [str(error)] * 2 and table["tree"].isna().all()
    travelled = pickle.loads(pickle.dumps(error))
    assert type(travelled) is type(error) and str(travelled) == str(error)


# -- frontier ------------------------------------------------------------------------------------------


def _dominates(a, b) -> bool:
    return (a["train_accuracy"] >= b["train_accuracy"] and a["train_gap"] <= b["train_gap"]
            and (a["train_accuracy"] > b["train_accuracy"] or a["train_gap"] < b["train_gap"]))


def test_the_frontier_is_monotone_and_pareto_filtered():
    X, y, group = _data(n=120, seed=3)
    bounds = [0.0, 0.02, 0.05, 0.1, 0.2, 0.4]
    notions = ["statistical_parity", "equalized_odds"]
    est = _estimator()
    front = frontier(est, X, y, sensitive_features=group, fairness=notions, fairness_bound=bounds, grid={"depth": [1, 2]})
    full = sweep(est, X, y, sensitive_features=group,
                 grid={"fairness": notions, "fairness_bound": bounds, "depth": [1, 2]})
    assert list(pd.unique(front["fairness"])) == notions
    assert {"fairness", "fairness_bound", "certified", "objective", "bound", "train_accuracy", "train_gap", "time",
            "tree"} <= set(front.columns)
    for notion in notions:
        mine = front[front["fairness"] == notion]
        assert len(mine) >= 2
        assert np.all(np.diff(mine["train_accuracy"]) > 0) and np.all(np.diff(mine["train_gap"]) >= 0)
        everyone = full[full["fairness"] == notion].to_dict("records")
        for kept in mine.to_dict("records"):
            assert not any(_dominates(other, kept) for other in everyone)
            assert kept["train_gap"] <= kept["fairness_bound"] + 1e-9
            assert kept["train_accuracy"] == max(r["train_accuracy"] for r in everyone
                                                 if r["fairness_bound"] == kept["fairness_bound"])
        for other in everyone:  # every point left out is matched or beaten by a kept one
            assert any(k["train_accuracy"] >= other["train_accuracy"] and k["train_gap"] <= other["train_gap"]
                       for k in mine.to_dict("records"))
        certified = mine[mine["certified"]]
        bigger_bound_better = certified.sort_values("fairness_bound")["train_accuracy"]
        assert bigger_bound_better.is_monotonic_increasing


# -- calibration ---------------------------------------------------------------------------------------


def _calibration_accuracy(row, X, y, rows) -> float:
    pred = FittedTree.from_json(row["tree"]).predict(X.iloc[rows].reset_index(drop=True))
    return float(np.mean(pred == y.iloc[rows].to_numpy()))


@pytest.mark.parametrize("ties", ["last", "first"])
def test_calibration_picks_the_argmax_on_the_calibration_rows_then_refits_and_tests(ties):
    X, y, _ = _data(n=120, seed=7)  # a table whose lambdas both differ and tie (asserted at the end)
    lambdas = [0.0, 0.3, 0.6, 0.9]
    splits = [grid.holdout_split(len(X), random_state=s) for s in (1, 2)]
    result = calibrate(_estimator(), X, y, grid={"depth": [1, 2], "regularization": lambdas}, for_each=["depth"],
                       cv=splits, ties=ties)
    points = result.points
    assert len(points) == 2 * 4 * 2 and len(result.chosen) == 4
    varied = tied = 0
    for chosen in result.chosen.to_dict("records"):
        train, calibration, test = splits[chosen["split"]]
        mine = points[(points["depth"] == chosen["depth"]) & (points["fold"] == chosen["split"])].sort_values("point")
        scores = [_calibration_accuracy(r, X, y, calibration) for r in mine.to_dict("records")]
        assert scores == pytest.approx(list(mine["calibration_accuracy"]), abs=1e-12)
        varied += len(set(scores)) > 1
        highest = [k for k, v in enumerate(scores) if v == max(scores)]
        tied += len(highest) > 1
        best = highest[-1] if ties == "last" else highest[0]
        assert chosen["regularization"] == lambdas[best]
        assert chosen["calibration_accuracy"] == pytest.approx(scores[best])
        assert chosen["n_train"] == train.size + calibration.size and chosen["n_test"] == test.size
        refit = FittedTree.from_json(chosen["tree"])
        assert refit.node_counts[0].sum() == train.size + calibration.size
        assert chosen["test_accuracy"] == pytest.approx(_calibration_accuracy(chosen, X, y, test), abs=1e-12)
    assert varied >= 2, "the calibration accuracies should differ between lambdas for this check to mean much"
    assert tied >= 2, "some choices should be among tied lambdas for the tie rule to be checked"


def test_k_fold_calibration_chooses_by_the_mean_held_out_accuracy():
    X, y, _ = _data(n=120, seed=7)
    lambdas = [0.0, 0.1, 0.5]
    result = calibrate(_estimator(depth=2), X, y, grid={"regularization": lambdas}, cv=3, test_size=0.25)
    points = result.points
    assert len(points) == 9 and set(points["fold"]) == {0, 1, 2}
    means = points.groupby("regularization")["calibration_accuracy"].mean().reindex(lambdas)
    (chosen,) = result.chosen.to_dict("records")
    highest = [lam for lam, v in means.items() if v >= means.max() - 1e-12]
    assert chosen["regularization"] == highest[-1]
    assert chosen["calibration_accuracy"] == pytest.approx(means.max())
    assert chosen["n_train"] == 90 and chosen["n_test"] == 30


# -- backends ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dask_client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        yield client


def _backend_case():
    X, y, group = _data(n=100, seed=11)
    # a long limit: the tables are compared exactly, and a loaded machine (a worker compiling its kernels
    # first) must not turn a proven point into a stopped one
    return dict(estimator=_estimator(time_limit=300), X=X, y=y, sensitive_features=group,
                grid={"fairness": ["statistical_parity", "equal_opportunity"], "fairness_bound": [0.05],
                      "depth": [1, 2]}, cv=2)


def _assert_same_table(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.drop(columns=["time", "tree"]), b.drop(columns=["time", "tree"]))
    assert [_tree_without_runtime(t) for t in a["tree"]] == [_tree_without_runtime(t) for t in b["tree"]]


def test_threads_processes_and_dask_return_the_serial_table(dask_client, monkeypatch):
    case = _backend_case()
    serial = sweep(**case)
    assert len(serial) == 8 and serial["tree"].notna().all()
    _assert_same_table(serial, sweep(**case, backend="threads", n_jobs=2))
    _assert_same_table(serial, sweep(**case, backend="processes", n_jobs=2))
    _assert_same_table(serial, sweep(**case, backend="dask", scheduler=dask_client))
    _assert_same_table(serial, sweep(**case, backend="dask", scheduler=dask_client.scheduler.address))
    monkeypatch.setenv(SCHEDULER_ENV, dask_client.scheduler.address)
    _assert_same_table(serial, sweep(**case, backend="dask"))


def test_dask_without_a_scheduler_starts_a_local_cluster_of_process_workers(monkeypatch):

    monkeypatch.delenv(SCHEDULER_ENV, raising=False)
    # as an earlier cluster with Dask's defaults leaves this process (its nanny writes them here)
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    case = _backend_case()
    case["grid"] = {"fairness": ["statistical_parity"], "fairness_bound": [0.05], "depth": [1, 2]}
    rows, seen = dask_backend.dask_rows, []

    def watched(problem, points, stop, client, relay):
        seen.append(client.run(lambda: {name: os.environ.get(name) for name in dask_backend.WORKER_MALLOC}))
        yield from rows(problem, points, stop, client, relay)

    monkeypatch.setattr(dask_backend, "dask_rows", watched)
    _assert_same_table(sweep(**case), sweep(**case, backend="dask", n_jobs=2))
    # its workers allocate with glibc's upper defaults, not Dask's (every array above 128 KiB mapped and unmapped)
    settings = {name: str(value) for name, value in dask_backend.WORKER_MALLOC.items()}
    assert len(seen) == 1 and list(seen[0].values()) == [settings, settings]
    assert os.environ["MALLOC_TRIM_THRESHOLD_"] == "65536" and "MALLOC_MMAP_THRESHOLD_" not in os.environ


def _slow_points():
    """Points that each run about half a second: FlowOCT alone on HiGHS, stopped by its time limit (long
    enough for a worker to be caught running one, or for two solves to overlap)."""
    rng = np.random.default_rng(2)
    n = 250
    X = pd.DataFrame(rng.integers(0, 4, (n, 8)), columns=[f"f{j}" for j in range(8)])
    y = pd.Series(np.where(X.sum(axis=1) + rng.normal(0, 2, n) > 12, "yes", "no"))
    est = _estimator(formulation="flow", exact_search=False, solver="highs", time_limit=0.5)
    return est, X, y, {"min_leaf": list(range(8))}


@pytest.mark.timing
def test_a_killed_dask_worker_loses_no_point(dask_client):
    est, X, y, grid_ = _slow_points()
    seen, killed = [], []
    for ev in iter_sweep(est, X, y, grid=grid_, backend="dask", scheduler=dask_client):
        seen.append(ev.row)
        if not killed:
            for _ in range(200):  # a worker that is running a point right now
                running = dask_client.run(lambda dask_worker: [str(ts.key) for ts in dask_worker.state.executing])
                busy = {w: keys for w, keys in running.items() if any(k.startswith("strongtree-point-") for k in keys)}
                if busy:
                    worker, keys = next(iter(busy.items()))
                    os.kill(dask_client.run(os.getpid, workers=[worker])[worker], signal.SIGKILL)
                    killed.extend(int(k.rsplit("-", 1)[1]) for k in keys)
                    break
                time.sleep(0.02)
    assert killed, "no worker was seen running a point"
    points = sorted(r["point"] for r in seen)
    assert points == list(range(8))
    for row in seen:
        assert row["tree"] is not None and row["status"] in ("optimal", "time_limit"), row["error"]


def _worker_pids_running_points(client) -> list[int]:
    """Pids of workers that are running a point right now (waits up to 10 s for one)."""
    for _ in range(500):
        running = client.run(lambda dask_worker: [str(ts.key) for ts in dask_worker.state.executing])
        busy = [w for w, keys in running.items() if any(k.startswith("strongtree-point-") for k in keys)]
        if busy:
            return [client.run(os.getpid, workers=[w])[w] for w in busy]
        time.sleep(0.02)
    return []


@pytest.mark.timing
@pytest.mark.soak  # in the suite: test_a_killed_dask_worker_loses_no_point (one kill)
def test_workers_killed_at_a_quarter_and_at_three_quarters_lose_no_point_and_return_none_twice():
    """Two kills on a 2-worker cluster: the second may hit the last worker holding the shared data (it
    is then computed again), or come while the first replacement is still starting (the cluster waits
    for it).  Every point comes back exactly once, with its tree."""
    est, X, y, _ = _slow_points()
    grid_ = {"min_leaf": list(range(12))}
    seen, kills = [], []
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        for ev in iter_sweep(est, X, y, grid=grid_, backend="dask", scheduler=client):
            seen.append(ev.row["point"])
            if len(kills) < 2 and ev.done >= (ev.total // 4, 3 * ev.total // 4)[len(kills)]:
                pids = _worker_pids_running_points(client)
                assert pids, "no worker was seen running a point"
                os.kill(pids[0], signal.SIGKILL)
                kills.append(pids[0])
    assert len(kills) == 2
    assert sorted(seen) == list(range(12)), f"lost or twice: {sorted(seen)}"
    assert len(seen) == len(set(seen))


def test_process_workers_wait_for_the_next_sweep_and_serve_it():
    """The second sweep of a session runs on the workers of the first (no new start-up), and an idle
    worker waits minutes, not loky's 10 s, before it ends."""
    X, y, _ = _data()
    est = _estimator()
    sweep(est, X, y, grid={"depth": [1, 2]}, backend="processes", n_jobs=2)
    pool = backends.process_pool(2)
    first = set(pool._processes)
    sweep(est, X, y, grid={"depth": [1, 2]}, backend="processes", n_jobs=2)
    assert backends.process_pool(2) is pool and set(pool._processes) == first
    assert pool._timeout == backends.IDLE_WORKER_SECONDS >= 60


def test_a_killed_process_worker_loses_no_point():
    est, X, y, grid_ = _slow_points()
    seen, killed = [], []
    for ev in iter_sweep(est, X, y, grid=grid_, backend="processes", n_jobs=2):
        seen.append(ev.row)
        if not killed:
            pids = list(backends.process_pool(2)._processes)
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])
    assert sorted(r["point"] for r in seen) == list(range(8))
    for row in seen:
        assert row["tree"] is not None and row["status"] in ("optimal", "time_limit"), row["error"]


def test_two_highs_solves_in_one_process_meet_its_limit_but_threaded_sweeps_take_turns(monkeypatch):
    monkeypatch.setattr(highs_run, "HIGHS_WAIT", 0.01)
    est, X, y, _ = _slow_points()
    failures: list[str] = []

    def fit() -> None:
        try:
            # 3 s, not the points' 0.5: on a loaded machine both fits must still reach HiGHS before their
            # deadline (with 0.5 s this failed in 6 runs of 45 at load 7.6-15.6: the fits never met in HiGHS)
            est.__class__(**{**est.get_params(), "time_limit": 3.0}).fit(X, y)
        except StrongTreeError as exc:
            failures.append(str(exc))

    raw = [threading.Thread(target=fit) for _ in range(2)]
    for t in raw:
        t.start()
    for t in raw:
        t.join()
    assert any(highs_run.HIGHS_BUSY in f for f in failures), "two plain threads should meet HiGHS's limit"
    table = sweep(est, X, y, grid={"min_leaf": [0, 1, 2, 3]}, backend="threads", n_jobs=2)
    assert len(table) == 4 and table["tree"].notna().all(), list(table["error"])
    assert not any(highs_run.HIGHS_BUSY in e for e in table["error"])
    # Dask's default workers are threads too: two of them in this process
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        table = sweep(est, X, y, grid={"min_leaf": [0, 1, 2, 3]}, backend="dask", scheduler=client)
    assert len(table) == 4 and table["tree"].notna().all(), list(table["error"])


def test_the_next_point_takes_its_turn_only_when_highs_is_idle():
    """A fit can end with HiGHS still at work in the background (its root relaxation given up at the
    deadline): the next point must wait for it at the slot, not meet it in its solve (HIGHS_BUSY: 3 runs
    of 45 at load 7.6-15.6 of the test above failed so, before)."""
    from strongtree_core.sweep import point as sweep_point

    params = {"formulation": "flow", "solver": "highs", "exact_search": False}
    with sweep_point.highs_slot(params, None) as ready:
        assert ready
        highs_run.HIGHS_LOCK.acquire()  # what the point leaves running
    try:
        assert not sweep_point._HIGHS_SLOT.acquire(timeout=0.3)
    finally:
        highs_run.HIGHS_LOCK.release()
    assert sweep_point._HIGHS_SLOT.acquire(timeout=10)
    sweep_point._HIGHS_SLOT.release()


def test_the_gurobi_licence_of_the_caller_reaches_the_dask_workers(dask_client, monkeypatch):
    from strongtree_core.solvers.licence import licence_params, set_licence_params

    keys = {"WLSACCESSID": "access-id", "WLSSECRET": "secret", "LICENSEID": "1234", "GRB_LICENSE_FILE": "/x/gurobi.lic"}
    for key, value in keys.items():
        monkeypatch.setenv(key, value)
    before = dask_client.run(lambda: {**licence_params(), "file": os.environ.get("GRB_LICENSE_FILE")})
    assert all(seen == {"file": None} for seen in before.values())  # the workers started without them
    X, y, group = _data()
    sweep(_estimator(depth=1), X, y, grid={"min_leaf": [0, 1, 2, 3]}, backend="dask", scheduler=dask_client)
    try:
        after = dask_client.run(lambda: {**licence_params(), "file": os.environ.get("GRB_LICENSE_FILE")})
        expected = {"WLSACCESSID": "access-id", "WLSSECRET": "secret", "LICENSEID": 1234, "file": "/x/gurobi.lic"}
        assert any(seen == expected for seen in after.values()), after
    finally:
        dask_client.run(lambda: (set_licence_params({}), os.environ.pop("GRB_LICENSE_FILE", None)) and None)


# -- stop ---------------------------------------------------------------------------------------------


@pytest.mark.timing
@pytest.mark.parametrize("backend", ["serial", "processes"])
def test_a_stopped_sweep_keeps_the_points_that_finished(backend):
    est, X, y, grid_ = _slow_points()
    stop = threading.Event()
    seen = []

    def progress(ev) -> None:
        seen.append(ev.row["point"])
        stop.set()

    started = time.perf_counter()
    table = sweep(est, X, y, grid=grid_, backend=backend, n_jobs=2, progress=progress, stop=stop)
    assert 1 <= len(table) < 8
    assert list(table["point"]) == sorted(seen)
    assert table["tree"].notna().all()
    assert time.perf_counter() - started < 30


def test_points_streamed_one_by_one_make_the_same_table():
    X, y, group = _data()
    case = dict(sensitive_features=group, grid={"fairness": ["equal_opportunity"], "fairness_bound": [0.05, 0.2],
                                                "depth": [1, 2]})
    events = list(iter_sweep(_estimator(), X, y, **case, backend="threads", n_jobs=2))
    assert sorted(ev.done for ev in events) == [1, 2, 3, 4] and {ev.total for ev in events} == {4}
    _assert_same_table(to_table([ev.row for ev in events]), sweep(_estimator(), X, y, **case))


# -- bad input ----------------------------------------------------------------------------------------


def test_bad_settings_are_refused_before_anything_runs():
    X, y, group = _data()
    est = _estimator()
    with pytest.raises(StrongTreeError) as info:
        sweep(est, X, y, backend="cluster")
    assert str(info.value) == backends.BAD_BACKEND.format(value="cluster", allowed="'serial', 'threads', 'processes', 'dask'")
    with pytest.raises(StrongTreeError) as info:
        sweep(est, X, y, backend="processes", scheduler="tcp://10.0.0.1:8786")
    assert str(info.value) == backends.SCHEDULER_NOT_DASK.format(value="tcp://10.0.0.1:8786", backend="processes")
    with pytest.raises(StrongTreeError) as info:
        sweep(est, X, y, backend="dask", scheduler="10.0.0.1")
    assert str(info.value) == dask_connect.BAD_SCHEDULER.format(value="10.0.0.1")
    with pytest.raises(StrongTreeError) as info:
        plan(est, X, y, grid={"detph": [2]})
    assert str(info.value).startswith("grid names 'detph', which is not a parameter of StrongTreeClassifier")
    with pytest.raises(StrongTreeError) as info:
        plan(est, X, y, cv=1)
    assert str(info.value) == grid.BAD_CV.format(value=1)
    with pytest.raises(StrongTreeError) as info:
        plan(est, X, y, cv=[([0, 1], [500])])
    assert str(info.value) == grid.BAD_SPLIT_ROWS.format(k=0, row=500, n=90, last=89)
    with pytest.raises(StrongTreeError) as info:
        sweep(est, X, y, backend="processes", n_jobs=0)
    assert str(info.value) == backends.BAD_N_JOBS.format(value=0)
    with pytest.raises(StrongTreeError) as info:
        calibrate(est, X, y, ties="random")
    assert str(info.value) == BAD_TIES.format(value="random")
    with pytest.raises(ValueError, match="'depth' parameter of StrongTreeClassifier"):
        plan(est, X, y, grid={"depth": [2, -1]})


# -- command line -------------------------------------------------------------------------------------


def test_the_command_line_writes_every_point_and_the_frontier(tmp_path, capsys):
    X, y, group = _data()
    data = tmp_path / "data.csv"
    X.assign(group=group, hired=y).to_csv(data, index=False)
    args = ["sweep", str(data), "--target", "hired", "--protected", "group", "--pos-label", "yes",
            "--fairness", "statistical_parity", "equalized_odds", "--fairness-bound", "0.02", "0.1", "--depths", "1", "2",
            "--time-limit", "10"]
    assert cli.main([*args, "--output", str(tmp_path / "sweep.csv")]) == 0
    table = pd.read_csv(tmp_path / "sweep.csv")
    assert len(table) == 8 and table["certified"].all()
    assert set(zip(table["fairness"], table["fairness_bound"], table["depth"])) == {
        (n, b, d) for n in ("statistical_parity", "equalized_odds") for b in (0.02, 0.1) for d in (1, 2)}
    expected = sweep(_estimator(), X.assign(group=group), y, sensitive_features="group",
                     grid={"fairness": ["statistical_parity", "equalized_odds"], "fairness_bound": [0.02, 0.1],
                           "depth": [1, 2]})
    assert list(table["train_accuracy"]) == pytest.approx(list(expected["train_accuracy"]))
    assert "8 rows written to" in capsys.readouterr().out
    assert cli.main([*args, "--frontier", "--output", str(tmp_path / "front.json")]) == 0
    records = json.loads((tmp_path / "front.json").read_text())
    assert records and all(isinstance(r["tree"], dict) for r in records)
    assert cli.main(["sweep", str(data), "--target", "hired", "--fairness", "statistical_parity"]) == 2
    assert cli.SWEEP_NEEDS_PROTECTED in capsys.readouterr().err


def _read_twice(shared) -> tuple[bool, list[int]]:
    """In a process worker: the same problem object on the second read, and the worker's BLAS pool sizes."""
    from threadpoolctl import threadpool_info

    first = shared.load()
    return shared.load() is first, sorted({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})


def test_process_workers_read_the_data_once_and_split_the_cores(tmp_path):
    """The processes backend writes the problem to a file once; a worker reads it at its first point
    (not with every point) and holds its BLAS pool to its share of the cores."""
    import pickle

    from joblib.externals.loky import get_reusable_executor

    X, y, group = _data()
    problem, points = plan(_estimator(), X, y, sensitive_features=group, grid={"depth": [1, 2]})
    shared = backends.ProblemFile(str(tmp_path / "problem.pickle"), threads=1)
    with open(shared.path, "wb") as f:
        pickle.dump(problem, f)
    same, threads = get_reusable_executor(max_workers=1).submit(_read_twice, shared).result()
    assert same and threads == [1]
    from joblib import cpu_count

    assert backends.threads_per_worker(2) == max(1, cpu_count() // 2)
    row = get_reusable_executor(max_workers=1).submit(backends.work_shared, shared, points[0],
                                                      backends.FileRelay(str(tmp_path / "stop"))).result()
    assert row["point"] == 0 and row["tree"] is not None
