"""Bad and hostile inputs to sweeps, frontiers and the tables the command line writes.

Splits given by hand (float positions, masks of the wrong length, repeated or shared rows, more folds
than rows), frontiers without a notion, grids too large to plan, column names that read the same as
text, output files of an unknown kind, and cells a spreadsheet would run as formulas.  Each refusal
asserts its exact message; each accepted case asserts what it gives.  Depth-1 trees on 40 rows.
"""

from __future__ import annotations

import csv
import io
import json
import math
import threading
import time

import numpy as np
import pandas as pd
import pytest

from strongtree_core import StrongTreeClassifier, StrongTreeError, cli
from strongtree_core.estimator import classifier as est
from strongtree_core.cli.tables import output_format
from strongtree_core.cli.words import CLI_TOO_MANY_FOLDS
from strongtree_core.csv_format import read_spreadsheet_cell, runs_as_formula, spreadsheet_cell
from strongtree_core.encoding import EncodingError
from strongtree_core.encoding import errors as enc
from strongtree_core.sweep import frontier, grid as G
from strongtree_core.sweep import run as sweep_run
from strongtree_core.sweep.frontier import BAD_BOUNDS, BAD_NOTIONS, NO_BOUNDS
from strongtree_core.vocabulary import FAIRNESS_NOTIONS

N = 40
FORMULA = "=cmd|' /C calc'!A0"
NOTIONS = ", ".join(map(repr, FAIRNESS_NOTIONS))


def table() -> tuple[pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, N)
    X = pd.DataFrame({"a": a, "b": rng.integers(0, 4, N), "sex": np.where(rng.random(N) < 0.5, "f", "m")})
    return X, pd.Series(np.where(a == 1, "hire", "reject"), name="hired")


def plan_with(**options):
    def run():
        X, y = table()
        return sweep_run.plan(StrongTreeClassifier(depth=1, time_limit=5), X, y, **options)

    return run


def frontier_with(**options):
    def run():
        X, y = table()
        return frontier(StrongTreeClassifier(depth=1, time_limit=5), X, y, sensitive_features=X["sex"], **options)

    return run


def fit_columns(columns):
    def run():
        X, y = table()
        X = X[["a", "b"]].set_axis(columns, axis=1)
        return StrongTreeClassifier(depth=1, time_limit=5).fit(X, y)

    return run


# (case id, surface, run, exception type, exact message)
CASES = [
    ("cv: a float position 0.5", "sweep", plan_with(cv=[([0.5, 1, 2], [3, 4])]), StrongTreeError,
     G.SPLIT_NOT_POSITIONS.format(k=0, value=0.5)),
    ("cv: a text position", "sweep", plan_with(cv=[(["1", 2], [3, 4])]), StrongTreeError,
     G.SPLIT_NOT_POSITIONS.format(k=0, value="1")),
    ("cv: a mask of 10 values for 40 rows", "sweep", plan_with(cv=[(np.ones(10, bool), [3, 4])]), StrongTreeError,
     G.MASK_LENGTH.format(k=0, m=10, n=N)),
    ("cv: a row twice in one part", "sweep", plan_with(cv=[([1, 1, 2], [3, 4])]), StrongTreeError,
     G.SPLIT_REPEATS_ROW.format(k=0, row=1, part="train")),
    ("cv: a row in train and test", "sweep", plan_with(cv=[([1, 2, 3], [3, 4])]), StrongTreeError,
     G.SPLIT_OVERLAP.format(k=0, row=3, first="train", second="test")),
    ("cv: a row in calibration and test", "sweep", plan_with(cv=[([1, 2], [5, 6], [6, 7])]), StrongTreeError,
     G.SPLIT_OVERLAP.format(k=0, row=6, first="calibration", second="test")),
    ("cv=10000 folds on 40 rows", "sweep", plan_with(cv=10000), StrongTreeError,
     G.TOO_MANY_FOLDS.format(k=10000, n=N, label="hire", count=23, most=23)),
    ("a grid of 1,001,000 points", "sweep", plan_with(grid={"depth": list(range(1000)), "time_limit": [5.0] * 1001}),
     StrongTreeError, G.TOO_MANY_POINTS.format(settings=1_001_000, folds=1, points=1_001_000, limit=G.MAX_POINTS)),
    ("frontier(fairness=None)", "frontier", frontier_with(fairness=None), StrongTreeError,
     BAD_NOTIONS.format(value=None, allowed=NOTIONS)),
    ("frontier: an unknown notion", "frontier", frontier_with(fairness=["statistical_parity", "fair"]),
     StrongTreeError, BAD_NOTIONS.format(value=["statistical_parity", "fair"], allowed=NOTIONS)),
    ("frontier: a bound as text", "frontier", frontier_with(fairness_bound="0.1"), StrongTreeError,
     BAD_BOUNDS.format(value="0.1")),
    ("frontier: a bound True", "frontier", frontier_with(fairness_bound=[0.1, True]), StrongTreeError,
     BAD_BOUNDS.format(value=[0.1, True])),
    ("frontier: a bound of None", "frontier", frontier_with(fairness_bound=None), StrongTreeError,
     BAD_BOUNDS.format(value=None)),
    ("frontier: no bound", "frontier", frontier_with(fairness_bound=[]), StrongTreeError, NO_BOUNDS),
    ("columns 0 and '0'", "fit", fit_columns([0, "0"]), EncodingError,
     enc.NAMES_THE_SAME_AS_TEXT.format(names="0, '0'")),
]


@pytest.mark.parametrize("case_id,surface,run,kind,message", CASES, ids=[c[0] for c in CASES])
def test_refused_with_the_exact_message(case_id, surface, run, kind, message):
    with pytest.raises(kind) as info:
        run()
    assert str(info.value) == message


# -- the command line --------------------------------------------------------------------------------------
@pytest.fixture()
def data_csv(tmp_path):
    X, y = table()
    X = X.assign(note=np.where(np.arange(N) % 2, FORMULA, "-5"), hired=y)
    path = tmp_path / "data.csv"
    X.to_csv(path, index=False)
    return path


@pytest.fixture()
def tree_json(data_csv, tmp_path):
    path = tmp_path / "tree.json"
    assert cli.main(["fit", str(data_csv), "--target", "hired", "--depth", "1", "--time-limit", "5",
                     "--output", str(path)]) == 0
    return path


GIGABYTES = "strongtree fit: error: argument --memory-limit-gb: " + cli.BAD_GIGABYTES

CLI_CASES = [
    ("--memory-limit-gb nan", ["fit", "{data}", "--target", "hired", "--memory-limit-gb", "nan"], 2,
     GIGABYTES.format(value="nan")),
    ("--memory-limit-gb inf", ["fit", "{data}", "--target", "hired", "--memory-limit-gb", "inf"], 2,
     GIGABYTES.format(value="inf")),
    ("--memory-limit-gb 0", ["fit", "{data}", "--target", "hired", "--memory-limit-gb", "0"], 2,
     GIGABYTES.format(value="0")),
    ("--memory-limit-gb lots", ["fit", "{data}", "--target", "hired", "--memory-limit-gb", "lots"], 2,
     GIGABYTES.format(value="lots")),
    ("predict --output p.pdf", ["predict", "{data}", "--tree", "{tree}", "--output", "{d}/p.pdf"], 2,
     cli.OUTPUT_FORMAT.format(path="{d}/p.pdf", suffix=".pdf")),
    ("sweep --output s.parquet", ["sweep", "{data}", "--target", "hired", "--depths", "1", "--output",
                                  "{d}/s.parquet"], 2, cli.OUTPUT_FORMAT.format(path="{d}/s.parquet", suffix=".parquet")),
    ("sweep --folds 10000", ["sweep", "{data}", "--target", "hired", "--depths", "1", "--folds", "10000"], 1,
     "error: " + CLI_TOO_MANY_FOLDS.format(k=10000, n=N, label="'hire'", count=23, most=23)),
]


@pytest.mark.parametrize("case_id,args,code,message", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_cli_refuses_with_the_exact_message(case_id, args, code, message, data_csv, tmp_path, capsys):
    tree = tmp_path / "tree.json"
    if "{tree}" in args:
        assert cli.main(["fit", str(data_csv), "--target", "hired", "--depth", "1", "--time-limit", "5",
                         "--output", str(tree)]) == 0
    filled = [a.format(data=data_csv, tree=tree, d=tmp_path) for a in args]
    capsys.readouterr()
    try:
        got = cli.main(filled)
    except SystemExit as exc:  # argparse's own refusals
        got = exc.code
    assert got == code
    assert capsys.readouterr().err.strip().splitlines()[-1] == message.replace("{d}", str(tmp_path))
    assert not list(tmp_path.glob("p.*")) and not list(tmp_path.glob("s.*"))


def test_predict_csv_quotes_cells_a_spreadsheet_would_run_and_raw_keeps_them(data_csv, tree_json, tmp_path):
    """A user's cell `=cmd|...` echoed by predict gets a leading quote (OWASP's CSV-injection advice); a
    plain number such as -5 is left a number; --raw writes the cells as read."""
    safe, raw = tmp_path / "p.csv", tmp_path / "raw.csv"
    assert cli.main(["predict", str(data_csv), "--tree", str(tree_json), "--output", str(safe)]) == 0
    assert cli.main(["predict", str(data_csv), "--tree", str(tree_json), "--output", str(raw), "--raw"]) == 0
    notes = [r["note"] for r in csv.DictReader(safe.open(newline=""))]
    assert set(notes) == {"'" + FORMULA, "-5"}
    assert {r["note"] for r in csv.DictReader(raw.open(newline=""))} == {FORMULA, "-5"}
    assert all(not runs_as_formula(v) for row in csv.reader(safe.open(newline="")) for v in row)


def test_predict_writes_a_workbook_whose_formula_text_is_text(data_csv, tree_json, tmp_path):
    """`--output x.xlsx` writes an Excel workbook (it wrote CSV text under that name); a cell starting with
    = is stored as text, never as a formula, and reads back as written."""
    openpyxl = pytest.importorskip("openpyxl")
    out = tmp_path / "p.xlsx"
    assert cli.main(["predict", str(data_csv), "--tree", str(tree_json), "--output", str(out)]) == 0
    sheet = openpyxl.load_workbook(out).active
    header = [c.value for c in sheet[1]]
    cells = [row[header.index("note")] for row in sheet.iter_rows(min_row=2)]
    assert len(cells) == N and {c.value for c in cells} == {FORMULA, "-5"}
    assert {c.data_type for c in cells} == {"s"}
    assert pd.read_excel(out)["predicted_hired"].tolist() == pd.read_csv(data_csv)["hired"].tolist()


def test_predict_writes_json_records_with_the_cells_as_read(data_csv, tree_json, tmp_path):
    """JSON records are data, not a sheet: the cells are written exactly as read."""
    out = tmp_path / "p.json"
    assert cli.main(["predict", str(data_csv), "--tree", str(tree_json), "--output", str(out)]) == 0
    records = json.loads(out.read_text(encoding="utf-8"))
    assert len(records) == N and {r["note"] for r in records} == {FORMULA, "-5"}


@pytest.mark.parametrize("name,kind", [("t.CSV", "csv"), ("t", "csv"), ("t.txt", "csv"), ("t.Json", "json"),
                                       ("t.xlsx", "xlsx"), ("-", "csv"), ("t.xls", ""), ("t.csv.gz", "")])
def test_output_names_map_to_one_format_or_none(name, kind):
    """The --output name decides the format; an extension the command does not write is no format."""
    assert output_format(name) == kind


@pytest.mark.parametrize("text", [FORMULA, "+1+1", "-A1", "@SUM(A1)", "\tx", "\rx", "=1", "'=x"])
def test_a_formula_cell_quoted_for_a_spreadsheet_reads_back_as_written(text):
    """spreadsheet_cell then read_spreadsheet_cell gives the cell back (codebooks round-trip)."""
    cell = spreadsheet_cell(text)
    assert not runs_as_formula(cell)
    assert read_spreadsheet_cell(cell) == text


def test_the_codebook_template_quotes_formula_codes_and_reads_back_the_same_codes():
    """A code `=HYPERLINK(...)` in a column becomes a quoted cell of the template; filled in and read back,
    the codebook labels the code itself, not the quoted text."""
    from strongtree_studio.data.codebook import codebook_template, read_codebook

    hostile = '=HYPERLINK("http://beacon.example","x")'
    frame = pd.DataFrame({"status": [hostile, "-", "ok"] * 5})
    template = codebook_template(frame)
    rows = list(csv.reader(io.StringIO(template)))
    assert ["status", "'" + hostile, ""] in rows
    assert all(not runs_as_formula(v) for row in rows for v in row)
    out = io.StringIO()
    csv.writer(out).writerows([row[:2] + ["link"] if row[1] == "'" + hostile else row for row in rows])
    filled = out.getvalue()
    book = read_codebook(filled)
    assert book.by_column()["status"][hostile] == "link"


def test_the_sweep_download_quotes_a_formula_a_user_typed():
    """The Trade-offs CSV download: a text cell starting with = gets a quote; numbers stay numbers."""
    from strongtree_studio.sweeps.points import csv_bytes

    table = pd.DataFrame({"fairness_bound": [0.0, 0.05], "train_accuracy": [0.5, 0.75]})
    meta = {"dataset": FORMULA, "config": {"roles": {"target": "@hired", "pos_label": "-yes", "protected": ["+sex"]}}}
    rows = list(csv.DictReader(io.StringIO(csv_bytes(table, meta).decode("utf-8"))))
    assert [(r["table"], r["target"], r["positive_class"], r["protected"]) for r in rows] == [
        ("'" + FORMULA, "'@hired", "'-yes", "'+sex")] * 2
    assert [float(r["train_accuracy_percent"]) for r in rows] == [50.0, 75.0]
    assert all(not runs_as_formula(v) for r in rows for v in r.values())


# -- planning a large grid -------------------------------------------------------------------------------
def test_a_grid_of_100000_points_is_planned_lazily_and_checks_each_value_once(monkeypatch):
    """A 100,000-point grid planned for minutes before its first point: the combinations are made when
    asked for (point 99,999 read directly), and each distinct value is checked once, not each combination."""
    checked = []
    real = sweep_run._checked
    monkeypatch.setattr(sweep_run, "_checked", lambda candidate: (checked.append(1), real(candidate)))
    grid = {"depth": [1, 2] * 50, "time_limit": [float(t) for t in range(1, 1001)], "min_leaf": [1]}
    problem, points = plan_with(grid=grid)()
    assert len(points) == 100_000
    last = points[99_999]
    assert last.index == 99_999 and last.settings == {"depth": 2, "time_limit": 1000.0, "min_leaf": 1}
    assert points[12_345].settings == {"depth": 1 + (12 // 1) % 2, "time_limit": 346.0, "min_leaf": 1}
    assert len(checked) <= 2 + 1000 + 1  # distinct values, not 100,000 combinations
    assert [p.index for p in points[:3]] == [0, 1, 2]


def test_a_value_valid_only_with_another_grid_value_is_not_refused():
    """Checking values one at a time must not refuse a value valid only beside another grid value:
    max_thresholds with n_buckets=None in the same grid."""
    X, y = table()
    est = StrongTreeClassifier(depth=1, time_limit=5, n_buckets=4)
    problem, points = sweep_run.plan(est, X, y, grid={"n_buckets": [None], "max_thresholds": [2, 3]})
    assert [p.settings for p in points] == [{"n_buckets": None, "max_thresholds": 2},
                                            {"n_buckets": None, "max_thresholds": 3}]


def test_stop_during_planning_ends_the_checks():
    """Stop pressed while a grid is checked ends the checks (Stop could not end a 9-minute planning)."""
    X, y = table()
    stop = threading.Event()
    stop.set()
    calls = []
    real = sweep_run._checked
    try:
        sweep_run._checked = lambda c: (calls.append(1), real(c))
        sweep_run.plan(StrongTreeClassifier(depth=1, time_limit=5), X, y,
                       grid={"time_limit": [float(t) for t in range(1, 500)]}, stop=stop)
    finally:
        sweep_run._checked = real
    assert calls == []


def test_a_bound_finer_than_a_sweep_tells_apart_is_refused_not_made_a_second_zero():
    """On the Trade-offs page a bound of 0.00004 pp became a second δ = 0 point; it is refused with the
    decimals kept, and 0.0001 pp is kept as itself."""
    from strongtree_studio.sweeps.sweep_grid import BOUND_DECIMALS, MSG_BOUNDS_TOO_FINE
    from strongtree_studio.sweeps.parse import TooFine, parse_numbers

    with pytest.raises(TooFine) as info:
        parse_numbers("0, 0.00004", BOUND_DECIMALS)
    assert MSG_BOUNDS_TOO_FINE.format(text=info.value, decimals=BOUND_DECIMALS, rounded=0.0) == (
        "The bound δ 0.00004 pp has more decimals than a sweep tells apart (it keeps 4 decimals of a percentage "
        "point, one row in a million): round it, e.g. to 0.")
    assert parse_numbers("0, 0.0001, -0", BOUND_DECIMALS) == (0.0, 0.0001)
    assert math.copysign(1, parse_numbers("-0", BOUND_DECIMALS)[0]) == 1


# -- a backend that fails: never nothing when something finished ----------------------------------------------
from contextlib import contextmanager  # noqa: E402
import warnings  # noqa: E402

from strongtree_core.errors import BackendLostWarning  # noqa: E402
from strongtree_core.sweep import backends, dask_backend  # noqa: E402
from strongtree_core.source import dask_connect  # noqa: E402
from strongtree_core.sweep import sweep as run_sweep  # noqa: E402


def _comm_closed():
    from distributed.comm.core import CommClosedError

    return CommClosedError("in <TCP (closed) ConnectionPool.heartbeat_worker local=tcp://127.0.0.1:41234>: Stream is closed")


START_FAILURES = [
    ("a worker killed while the cluster starts", _comm_closed),
    ("Nanny failed to start", lambda: RuntimeError("Nanny failed to start.")),
    ("no port to listen on", lambda: OSError(98, "Address already in use")),
    ("the cluster took too long", lambda: TimeoutError("Cluster creation timeout; 60s")),
]


def _grid() -> dict:
    return {"depth": [1, 2], "min_leaf": [0, 1, 2]}


def _sweep_caught(**options):
    X, y = table()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = run_sweep(StrongTreeClassifier(depth=1, time_limit=5), X, y, grid=_grid(), **options)
    return out, [str(w.message) for w in caught if issubclass(w.category, BackendLostWarning)]


@pytest.mark.parametrize("case,failure", START_FAILURES, ids=[c[0] for c in START_FAILURES])
def test_a_cluster_that_does_not_start_leaves_the_sweep_to_this_process(case, failure, monkeypatch):
    """A raw CommClosedError (or 'Nanny failed to start') at the cluster's start returned nothing: the points run
    here instead, every one once, and a BackendLostWarning says what happened."""
    exc = failure()

    def broken(slots):
        raise exc

    monkeypatch.setattr(dask_backend, "local_cluster", broken)
    table_, notes = _sweep_caught(backend="dask", n_jobs=2)
    assert table_["point"].tolist() == list(range(6)) and table_["tree"].notna().all()
    assert notes == [sweep_run.BACKEND_FAILED_AT_START.format(backend="dask", reason=sweep_run._reason(exc))]


def _failing_after(k: int, exc: BaseException):
    """A backend that finishes ``k`` points (here, serially) and then fails."""
    serial = backends.serial_rows

    def rows(problem, points, stop, *args):
        for n, row in enumerate(serial(problem, points, stop)):
            if n == k:
                raise exc
            yield row

    return rows


@contextmanager
def _no_cluster(scheduler, slots):
    yield None


@pytest.mark.parametrize("backend", ["dask", "processes", "threads"])
def test_a_backend_lost_part_way_keeps_its_points_and_runs_the_rest_here(backend, monkeypatch):
    """A killed worker whose replacement 'Nanny failed to start' made the sweep raise, returning none of its
    finished points: the finished ones are kept, the others run in this process, each point once."""
    exc = RuntimeError("Nanny failed to start.")
    monkeypatch.setattr(dask_backend, "dask_client", _no_cluster)
    monkeypatch.setattr(dask_backend, "dask_rows", lambda problem, points, stop, client, relay: _failing_after(2, exc)(
        problem, points, stop))
    monkeypatch.setattr(backends, "process_rows", _failing_after(2, exc))
    monkeypatch.setattr(backends, "thread_rows", _failing_after(2, exc))
    if backend == "dask":
        monkeypatch.setattr(sweep_run, "DaskRelay", lambda name, client: None)
    table_, notes = _sweep_caught(backend=backend, n_jobs=2)
    assert table_["point"].tolist() == list(range(6)) and table_["tree"].notna().all()
    assert notes == [sweep_run.BACKEND_LOST.format(backend=backend, done=2, total=6,
                                                   reason="RuntimeError: Nanny failed to start.", left=4)]


def test_a_cluster_that_fails_as_it_closes_loses_no_point(monkeypatch):
    @contextmanager
    def closes_badly(scheduler, slots):
        yield None
        raise _comm_closed()

    monkeypatch.setattr(dask_backend, "dask_client", closes_badly)
    monkeypatch.setattr(dask_backend, "dask_rows", lambda problem, points, stop, client, relay:
                        backends.serial_rows(problem, points, stop))
    monkeypatch.setattr(sweep_run, "DaskRelay", lambda name, client: None)
    table_, notes = _sweep_caught(backend="dask", n_jobs=2)
    assert table_["point"].tolist() == list(range(6))
    assert notes == [sweep_run.BACKEND_FAILED_AT_CLOSE.format(backend="dask", reason=sweep_run._reason(_comm_closed()))]


def test_a_fault_of_the_serial_backend_is_not_hidden(monkeypatch):
    """In this process there is nothing to fall back on: the fault itself is raised."""
    monkeypatch.setattr(backends, "serial_rows", _failing_after(1, ZeroDivisionError("a fault")))
    X, y = table()
    with warnings.catch_warnings(record=True) as caught, pytest.raises(ZeroDivisionError):
        warnings.simplefilter("always")
        run_sweep(StrongTreeClassifier(depth=1, time_limit=5), X, y, grid=_grid(), backend="serial")
    assert not [w for w in caught if issubclass(w.category, BackendLostWarning)]  # no backend was lost


def test_stop_during_a_lost_backend_runs_nothing_more(monkeypatch):
    stop = threading.Event()

    def rows(problem, points, stop_, *args):
        for n, row in enumerate(backends.serial_rows(problem, points, stop_)):
            if n == 2:
                stop.set()
                raise _comm_closed()
            yield row

    monkeypatch.setattr(backends, "process_rows", rows)
    table_, notes = _sweep_caught(backend="processes", n_jobs=2, stop=stop)
    assert table_["point"].tolist() == [0, 1] and len(notes) == 1


class _FakeFuture:
    status = "pending"

    def add_done_callback(self, callback):
        pass


class _ClusterWithNoWorker:
    """A scheduler whose workers are all gone and never come back."""

    def nthreads(self):
        return {}

    def submit(self, *args, **kwargs):
        return _FakeFuture()

    def cancel(self, futures):
        pass


def test_a_cluster_left_with_no_worker_hands_its_points_to_this_process(monkeypatch):
    """Every worker killed and none replaced: the sweep waited 15 minutes and gave every point up; after
    NO_WORKER_WAIT the points left run here."""
    monkeypatch.setattr(dask_backend, "NO_WORKER_WAIT", 0.3)
    monkeypatch.setattr(dask_backend, "RESIZE_EVERY", 0.05)
    monkeypatch.setattr(backends, "POLL", 0.05)
    monkeypatch.setattr(dask_backend, "POLL", 0.05)
    monkeypatch.setattr(dask_backend, "dask_client", lambda scheduler, slots: _yield(_ClusterWithNoWorker()))
    monkeypatch.setattr(sweep_run, "DaskRelay", lambda name, client: backends.LocalRelay())
    table_, notes = _sweep_caught(backend="dask", n_jobs=2)
    assert table_["point"].tolist() == list(range(6)) and table_["tree"].notna().all()
    assert len(notes) == 1 and notes[0].startswith("The dask backend failed after 0 of 6 points (ClusterLost: the "
                                                  "cluster has had no worker for ")
    assert notes[0].endswith("s: a lost worker was not replaced): every finished point is kept, and the 6 point(s) "
                             "left run in this process.")


@contextmanager
def _yield(value):
    yield value


def test_the_command_line_says_what_happened_to_the_backend_in_one_line(monkeypatch, tmp_path, capsys):
    def broken(slots):
        raise RuntimeError("Nanny failed to start.")

    monkeypatch.setattr(dask_backend, "local_cluster", broken)
    X, y = table()
    X.assign(hired=y).to_csv(tmp_path / "d.csv", index=False)
    code = cli.main(["sweep", str(tmp_path / "d.csv"), "--target", "hired", "--depths", "1", "2", "--time-limit", "5",
                     "--backend", "dask", "--n-jobs", "2", "--output", str(tmp_path / "out.csv")])
    assert code == 0
    err = capsys.readouterr().err
    note = "note: " + sweep_run.BACKEND_FAILED_AT_START.format(backend="dask",
                                                              reason="RuntimeError: Nanny failed to start.")
    assert note in err.splitlines() and "Warning" not in err and ".py:" not in err
    assert len(pd.read_csv(tmp_path / "out.csv")) == 2


# -- a scheduler at a closed port; 100,000 values checked in bulk -----------------------------------------------
def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_scheduler_at_a_closed_local_port_is_a_message_at_once():
    """Dask's connect retried a refused connection for its whole timeout (20 s) before 'Could not reach'."""
    address = f"tcp://127.0.0.1:{_closed_port()}"
    X, y = table()
    with pytest.raises(StrongTreeError) as info:
        run_sweep(StrongTreeClassifier(depth=1, time_limit=5), X, y, backend="dask", scheduler=address)
    assert str(info.value) == dask_connect.SCHEDULER_UNREACHABLE.format(address=address, reason="Connection refused",
                                                                       env=dask_connect.SCHEDULER_ENV)


@pytest.mark.timing
def test_a_closed_port_answers_within_seconds():
    started = time.perf_counter()
    assert dask_connect.handshake_problem(f"tcp://127.0.0.1:{_closed_port()}", 20.0) is not None
    assert time.perf_counter() - started < 3.0


def test_100000_valid_bounds_are_checked_in_bulk_without_a_full_check_each(monkeypatch):
    """Every bound went through scikit-learn's check of every parameter (8.4 CPU s before the first event):
    valid values are read against their own constraints, so the full check runs for none of them."""
    checked = []
    real = sweep_run._checked
    monkeypatch.setattr(sweep_run, "_checked", lambda candidate: (checked.append(1), real(candidate)))
    bounds = np.linspace(0, 0.2, 100_000).round(6).tolist()
    problem, points = plan_with(grid={"fairness": ["statistical_parity"], "fairness_bound": bounds})()
    assert len(points) == 100_000 and checked == [1]  # the one check: "fairness", checked with the others


@pytest.mark.parametrize("bad,message", [
    (-0.1, "The 'fairness_bound' parameter of StrongTreeClassifier must be a float in the range [0.0, 1.0]. "
           "Got -0.1 instead."),
    (1e-300, est.BOUND_TOO_SMALL.format(value=1e-300, smallest=1e-06)),
    (True, "The 'fairness_bound' parameter of StrongTreeClassifier must be a number, not True or False. "
           "Got True instead."),
    ("0.1", "The 'fairness_bound' parameter of StrongTreeClassifier must be a float in the range [0.0, 1.0]. "
            "Got '0.1' instead."),
])
def test_one_bad_value_among_100000_is_refused_with_its_message(bad, message):
    """A grid of 100,000 bounds with one bad value: refused before anything runs, as a grid of one."""
    bounds = np.linspace(0, 0.2, 100_000).round(6).tolist() + [bad]
    with pytest.raises(StrongTreeError) as info:
        plan_with(grid={"fairness": ["statistical_parity"], "fairness_bound": bounds})()
    assert str(info.value) == message


VALUES = {"depth": [0, 3, 8, 9, -1, 2.0, True, "2"], "time_limit": [0.1, 0, -1, math.inf, math.nan, "1"],
          "fairness_bound": [0.0, 1e-6, 5e-7, 1.0, 1.5, math.nan], "n_jobs": [1, -1, 0, 1.5, None],
          "regularization": [0.0, 0.5, 1.0], "min_leaf": [0, 3, -1], "pos_label": ["x", None, 3],
          "fairness_confidence": [None, 0.9, 1.0, 0.0], "threads": [1, 0, 2], "memory_limit": [None, 10, 0]}


@pytest.mark.parametrize("name", list(VALUES))
def test_a_value_quick_to_accept_passes_the_full_check(name):
    """The bulk check never accepts what the full check refuses (it may leave a value to the full check)."""
    for value in VALUES[name]:
        if StrongTreeClassifier._valid_alone(name, value):
            StrongTreeClassifier(**{name: value})._check_params()  # raises if it should not have been accepted
        else:
            with pytest.raises(StrongTreeError):
                StrongTreeClassifier(**{name: value})._check_params()


@pytest.mark.timing
def test_a_grid_of_100000_points_reaches_its_first_event_within_a_second_of_cpu():
    X, y = table()
    bounds = np.linspace(0, 0.2, 100_000).round(6).tolist()
    started = time.process_time()
    events = sweep_run.iter_sweep(StrongTreeClassifier(depth=1, time_limit=5), X, y, sensitive_features=X["sex"],
                                  grid={"fairness": ["statistical_parity"], "fairness_bound": bounds})
    first = next(events)
    assert time.process_time() - started < 1.0 and first.total == 100_000
    events.close()


@pytest.mark.soak
def test_a_real_cluster_whose_workers_are_all_lost_finishes_the_sweep_here(monkeypatch):
    """A local cluster of real worker processes, all retired part way and none replaced: the finished points are
    kept and the rest run in this process, with the warning."""
    distributed = pytest.importorskip("dask.distributed")
    monkeypatch.setattr(dask_backend, "NO_WORKER_WAIT", 3.0)
    X, y = table()
    grid = {"depth": [1, 2], "min_leaf": [0, 1, 2, 3, 4, 5, 6, 7]}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        rows, notes = [], []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for event in sweep_run.iter_sweep(StrongTreeClassifier(depth=1, time_limit=5), X, y, grid=grid,
                                              backend="dask", scheduler=client):
                rows.append(event.row)
                if len(rows) == 2:
                    cluster.scale(0)  # every worker gone, none coming back
            notes = [str(w.message) for w in caught if issubclass(w.category, BackendLostWarning)]
    assert sorted(r["point"] for r in rows) == list(range(16))
    assert len(notes) == 1 and "no worker" in notes[0]
