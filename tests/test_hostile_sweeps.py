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

import numpy as np
import pandas as pd
import pytest

from strongtree_core import StrongTreeClassifier, StrongTreeError, cli
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
    from strongtree_studio.codebook import codebook_template, read_codebook

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
    from strongtree_studio.sweep_points import csv_bytes

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
    from strongtree_studio.sweep_grid import BOUND_DECIMALS, MSG_BOUNDS_TOO_FINE
    from strongtree_studio.sweep_parse import TooFine, parse_numbers

    with pytest.raises(TooFine) as info:
        parse_numbers("0, 0.00004", BOUND_DECIMALS)
    assert MSG_BOUNDS_TOO_FINE.format(text=info.value, decimals=BOUND_DECIMALS, rounded=0.0) == (
        "The bound δ 0.00004 pp has more decimals than a sweep tells apart (it keeps 4 decimals of a percentage "
        "point, one row in a million): round it, e.g. to 0.")
    assert parse_numbers("0, 0.0001, -0", BOUND_DECIMALS) == (0.0, 0.0001)
    assert math.copysign(1, parse_numbers("-0", BOUND_DECIMALS)[0]) == 1
