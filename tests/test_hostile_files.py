"""Files and columns as spreadsheets and other programs write them: decimal commas in files separated
by semicolons, lines ended by a carriage return alone, Excel sheets whose first row is not the names,
a Parquet file's index, infinite numbers, pandas' own column types.  Each refusal asserts its exact
text; each file that is read asserts the values read (a tree on misread numbers is a silent wrong
answer)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from strongtree_core import StrongTreeClassifier, cli
from strongtree_core.cli.files import read_table as cli_read_table
from strongtree_core.csv_format import NOTE_DECIMAL_COMMA
from strongtree_core.report.references import references
from strongtree_studio.data.choices import ERR_TARGET_INFINITE, Roles, check_roles
from strongtree_studio.data.loading import ERR_DUPLICATE_COLUMNS, ERR_NO_HEADER, LoadError, load_file
from strongtree_studio.views.markup import md

ROOT = Path(__file__).resolve().parents[1]
N = 40
SCORES = np.round(np.random.default_rng(0).normal(50, 10, N), 2)


def scores_table() -> pd.DataFrame:
    """40 rows: a score with two decimals that decides the class, a group, the class."""
    sex = np.where(np.arange(N) % 3 == 0, "f", "m")
    return pd.DataFrame({"score": SCORES, "sex": sex, "hired": np.where(SCORES > 50, "yes", "no")})


def european(sep: str = ";", bom: bool = False, crlf: bool = False, grouped: bool = False) -> bytes:
    """The table as a spreadsheet writes it where the comma is the decimal mark."""
    frame = scores_table()
    if grouped:  # thousands grouped by dots: 1.234,5
        frame["score"] = frame["score"] * 100
    text = frame.to_csv(index=False, sep=sep, decimal=",", lineterminator="\r\n" if crlf else "\n")
    if grouped:
        text = "\n".join(_group(line, sep) for line in text.split("\n"))
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode()


def _group(line: str, sep: str) -> str:
    cells = line.split(sep)
    whole, _, decimals = cells[0].partition(",")
    if whole.isdigit() and len(whole) > 3:
        cells[0] = f"{int(whole):,}".replace(",", ".") + ("," + decimals if decimals else "")
    return sep.join(cells)


def xlsx(rows: list[list]) -> bytes:
    book = openpyxl.Workbook()
    for row in rows:
        book.active.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


BODY = [[i % 7, i % 5, "yes" if i % 2 else "no"] for i in range(20)]


# (case id, file name, its bytes, the exact message of the upload's refusal)
UPLOADS = [
    ("Excel: a column name repeated", "dup.xlsx", xlsx([["a", "a", "t"], *BODY]),
     ERR_DUPLICATE_COLUMNS.format(name="dup.xlsx", names="'a'")),
    ("Excel: a name repeated beside the name pandas gives the repeat", "dup.xlsx",
     xlsx([["a", "a.1", "a", "t"], *[[0, *r] for r in BODY]]), ERR_DUPLICATE_COLUMNS.format(name="dup.xlsx", names="'a'")),
    ("Excel: an empty first row", "top.xlsx", xlsx([[None, None, None], ["a", "b", "t"], *BODY]),
     ERR_NO_HEADER.format(name="top.xlsx", named=0, n_cols=3)),
    ("Excel: a title row above the names", "title.xlsx",
     xlsx([["Hiring 2024", None, None, None], ["a", "b", "c", "t"], *[[0, *r] for r in BODY]]),
     ERR_NO_HEADER.format(name="title.xlsx", named=1, n_cols=4)),
    ("CSV: a first row of separators only", "seps.csv", b";;\n" + b"1;2;yes\n" * 12,
     ERR_NO_HEADER.format(name="seps.csv", named=0, n_cols=3)),
]


@pytest.mark.parametrize("case_id,file_name,data,message", UPLOADS, ids=[c[0] for c in UPLOADS])
def test_an_upload_whose_names_pandas_would_change_is_refused(case_id, file_name, data, message):
    """pandas renames a repeated name ('a' again is 'a.1') and names an empty cell 'Unnamed: 1': an Excel sheet
    with a repeated name, or with a title or empty row above its names, was read with those names, the names
    row becoming a row of data (a class 't' among 'yes' and 'no')."""
    with pytest.raises(LoadError) as raised:
        load_file(file_name, data)
    assert str(raised.value) == message


def test_an_infinite_target_is_a_problem_of_the_roles():
    """A target of inf and -inf: the Data page says so (scikit-learn's stratified split raised, a traceback)."""
    frame = scores_table().assign(hired=[np.inf, -np.inf] * (N // 2))
    assert check_roles(frame, Roles("hired")) == [ERR_TARGET_INFINITE.format(target="hired", n=N, total=N)]
    frame.loc[3:, "hired"] = 1.0
    assert check_roles(frame, Roles("hired")) == [ERR_TARGET_INFINITE.format(target="hired", n=3, total=N)]
    assert check_roles(scores_table(), Roles("hired")) == []


# -- read as numbers --------------------------------------------------------------------------------------------


def _read(reader: str, tmp_path: Path, name: str, data: bytes, capsys) -> tuple[pd.DataFrame, list[str]]:
    """The table and its notes, as the dashboard's upload or the command line reads the file."""
    if reader == "dashboard":
        loaded = load_file(name, data)
        return loaded.frame, list(loaded.notes)
    (tmp_path / name).write_bytes(data)
    frame = cli_read_table(tmp_path / name, None)
    assert not isinstance(frame, str), frame
    err = capsys.readouterr().err
    return frame, [line.removeprefix("note: ") for line in err.splitlines()]


def _note(example: str, value: str, separator: str = "semicolons") -> str:
    return NOTE_DECIMAL_COMMA.format(column="score", example=example, value=value, separator=separator)


VARIANTS = {
    "semicolons": (dict(), "51,26", "51.26", "semicolons"),
    "semicolons, BOM, CRLF": (dict(bom=True, crlf=True), "51,26", "51.26", "semicolons"),
    "tabs": (dict(sep="\t"), "51,26", "51.26", "tabs"),
    "thousands grouped by dots": (dict(grouped=True), "5.126,0", "5126", "semicolons"),
}


@pytest.mark.parametrize("reader", ["dashboard", "command line"])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_decimal_commas_are_read_as_numbers_and_said(reader, variant, tmp_path, capsys):
    """A CSV file separated by semicolons or tabs whose numbers have a decimal comma (a spreadsheet's export where
    the comma is the decimal mark): each number read as written, and a note naming the column. The column was
    text, and the encoding refused it with advice to drop the commas (51,26 would have become 5126)."""
    options, example, value, separator = VARIANTS[variant]
    frame, notes = _read(reader, tmp_path, "eu.csv", european(**options), capsys)
    expected = SCORES * (100 if options.get("grouped") else 1)
    assert frame["score"].dtype == float and np.allclose(frame["score"].to_numpy(), expected, rtol=0, atol=1e-9)
    assert list(frame.columns) == ["score", "sex", "hired"] and set(frame["hired"]) == {"yes", "no"}
    assert notes == [_note(example, value, separator)]


@pytest.mark.parametrize("reader", ["dashboard", "command line"])
def test_commas_of_a_comma_separated_file_and_mixed_columns_stay_text(reader, tmp_path, capsys):
    """A comma in a file separated by commas is no decimal mark, and a column with a word among its numbers
    is not numbers: both stay as read (the encoding then says what it refuses)."""
    quoted = b'score,sex,hired\n' + b''.join(b'"5%d,5",m,%s\n' % (i, b"yes" if i % 2 else b"no") for i in range(12))
    frame, notes = _read(reader, tmp_path, "c.csv", quoted, capsys)
    assert frame["score"].tolist()[:2] == ["50,5", "51,5"] and notes == []
    words = european().replace(b"51,26", b"high", 1)
    frame, notes = _read(reader, tmp_path, "w.csv", words, capsys)
    assert "high" in set(frame["score"]) and notes == []


def test_the_command_line_fits_a_decimal_comma_file_on_its_numbers(tmp_path, capsys):
    """`strongtree fit` on the semicolon file: the tree asks the score at a threshold between 40 and 60 (it
    exited with the advice to remove the commas)."""
    (tmp_path / "eu.csv").write_bytes(european())
    assert cli.main(["fit", str(tmp_path / "eu.csv"), "--target", "hired", "--depth", "1", "--time-limit", "10",
                     "--max-thresholds", "64"]) == 0
    out, err = capsys.readouterr()
    assert f"note: {_note('51,26', '51.26')}" in err.splitlines()
    rule = next(line for line in out.splitlines() if line.startswith("IF score ≤"))
    assert 40 < float(rule.split("≤ ")[1].split(" ")[0]) < 60 and "100% " in rule


# -- read as written ---------------------------------------------------------------------------------------------


def _plain() -> bytes:
    return scores_table().to_csv(index=False).encode()


LAYOUTS = {
    "lines ended by a carriage return alone": lambda: _plain().replace(b"\n", b"\r"),
    "a UTF-8 byte-order mark": lambda: b"\xef\xbb\xbf" + _plain(),
    "Windows line endings": lambda: _plain().replace(b"\n", b"\r\n"),
    "a quoted header name holding a line break": lambda: _plain().replace(b"score,", b'"test\nscore",', 1),
}


@pytest.mark.parametrize("reader", ["dashboard", "command line"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_csv_layout_reads_as_the_plain_file(reader, layout, tmp_path, capsys):
    """The same table read from each layout: the same values, the names as written. Lines ended by a
    carriage return alone were refused with Python's 'new-line character seen in unquoted field - do you need
    to open the file in universal-newline mode?'."""
    frame, notes = _read(reader, tmp_path, "l.csv", LAYOUTS[layout](), capsys)
    expected = scores_table()
    if "header" in layout:
        expected = expected.rename(columns={"score": "test\nscore"})
    pd.testing.assert_frame_equal(frame, expected, check_dtype=False)
    assert notes == []


def test_a_parquet_index_is_a_column_of_the_table():
    """A table saved with ``set_index("age").to_parquet()``: age is a column of the upload (pandas made it the
    index again, and it was gone from the Data page)."""
    frame = scores_table().assign(age=np.arange(N) + 20)
    buffer = io.BytesIO()
    frame.set_index("age").to_parquet(buffer)
    loaded = load_file("p.parquet", buffer.getvalue()).frame
    assert list(loaded.columns) == ["age", "score", "sex", "hired"] and loaded["age"].tolist() == list(range(20, 60))
    buffer = io.BytesIO()
    frame.to_parquet(buffer)  # an unnamed index stays out
    assert list(load_file("q.parquet", buffer.getvalue()).frame.columns) == list(frame.columns)


def test_infinite_feature_values_are_measured_and_reported(tmp_path, capsys):
    """A column of inf and -inf beside the numbers the tree asks: the compared models are fitted (the logistic
    regression's scaler refused them: the Solve page said 'could not be measured: Input X contains infinity'
    and `strongtree report` ended in an internal error, exit code 3)."""
    frame = scores_table().assign(edge=[np.inf, -np.inf] * (N // 2), empty=np.nan)
    data = tmp_path / "inf.csv"
    frame.to_csv(data, index=False)
    tree_file = tmp_path / "t.json"
    assert cli.main(["fit", str(data), "--target", "hired", "--depth", "1", "--output", str(tree_file)]) == 0
    assert cli.main(["report", str(data), "--tree", str(tree_file), "--output", str(tmp_path / "r.html")]) == 0
    assert "internal error" not in capsys.readouterr().err
    tree = StrongTreeClassifier(depth=1, time_limit=5).fit(frame.drop(columns="hired"), frame["hired"]).tree_
    found = references(tree, {"train": frame, "test": frame}, "hired")
    assert [len(r.predictions["test"]) for r in found] == [N, N, N]


DTYPES = {
    "Int64 with a missing value": lambda X: X.astype({"n": "Int64"}).assign(n=lambda d: d["n"].mask(d.index == 3)),
    "boolean": lambda X: X.assign(flag=X["flag"].astype("boolean")),
    "string[pyarrow]": lambda X: X.astype({"c": "string[pyarrow]"}),
    "string[python]": lambda X: X.astype({"c": "string[python]"}),
    "category with an unused level": lambda X: X.assign(c=pd.Categorical(X["c"], categories=["x", "y", "z", "w"])),
}


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_pandas_column_types_fit_the_tree_of_plain_columns(dtype):
    """pandas' nullable and categorical types give the tree and predictions of numpy's (the missing value of
    Int64 compared against the same missing value as a float NaN)."""
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"n": rng.integers(0, 5, 60).astype(float), "flag": rng.random(60) < 0.5,
                      "c": rng.choice(["x", "y", "z"], 60)})
    y = np.where((X["n"] >= 2) ^ (X["c"] == "z"), "hire", "no")
    plain = X.assign(n=X["n"].mask(X.index == 3)) if dtype.startswith("Int64") else X
    typed = DTYPES[dtype](X)
    a = StrongTreeClassifier(depth=2, time_limit=10).fit(plain, y)
    b = StrongTreeClassifier(depth=2, time_limit=10).fit(typed, y)
    assert b.tree_.to_text() == a.tree_.to_text()
    assert np.array_equal(b.predict(typed), a.predict(plain))


# -- the dashboard ---------------------------------------------------------------------------------------------


@pytest.fixture()
def app(tmp_path, monkeypatch):
    monkeypatch.setenv("STRONGTREE_RUNS_DB", str(tmp_path / "runs.sqlite3"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()


def test_the_data_page_reads_decimal_commas_and_refuses_an_infinite_target(app):
    """Uploads on the Data page: the semicolon file's score is numbers, with the note (it was an error with the
    advice to drop the commas); a last column of inf and -inf, the target by default, is the roles' problem
    (it was a traceback)."""
    app.file_uploader(key="data.upload").set_value(("eu.csv", european(), "text/csv")).run()
    assert not app.exception and not app.error
    assert [i.value for i in app.info if "decimal comma" in i.value] == [md(_note("51,26", "51.26"))]
    overview = next(d.value for d in app.dataframe if "type" in d.value.columns)
    assert overview.set_index("column").loc["score", "type"] == "numbers"

    infinite = scores_table().assign(edge=[np.inf, -np.inf] * (N // 2)).to_csv(index=False).encode()
    app.file_uploader(key="data.upload").set_value(("inf.csv", infinite, "text/csv")).run()
    assert not app.exception
    assert [e.value for e in app.error] == [md(ERR_TARGET_INFINITE.format(target="edge", n=N, total=N))]
