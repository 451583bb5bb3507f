"""Codebooks: read from CSV or JSON, every problem a message, applied to every column at once on
the Data page (COMPAS's 7 coded columns, German credit's 21) and undone."""

import json
from pathlib import Path

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from strongtree_studio.data.codebook import (
    ERR_CONFLICT,
    ERR_EMPTY,
    ERR_HEADER,
    ERR_JSON,
    ERR_NO_LABELS,
    ERR_NO_MATCH,
    ERR_NOT_TEXT,
    ERR_ROW,
    Codebook,
    CodebookError,
    codebook_edits,
    codebook_template,
    read_codebook,
)
from strongtree_studio.data.column_types import ColumnEdit, apply_edits
from strongtree_studio.views.markup import md
from strongtree_studio.page.state import GENERATIONS

ROOT = Path(__file__).resolve().parents[1]
FAIRNESS = ROOT.parent / "shared" / "datasets" / "fairness"
COMPAS = FAIRNESS / "compas" / "compas.csv"
GERMAN = FAIRNESS / "german" / "german.csv"
#: COMPAS's codes as its manifest gives them (race, the target) and two more named for the test.
COMPAS_BOOK = """column,code,label
race,1,African-American
race,2,Caucasian
race,3,Hispanic
race,4,Other
target,1,no recidivism
target,2,recidivism
sex,1,sex one
sex,2,sex two
"""


def test_csv_and_json_read_the_same():
    book = read_codebook(COMPAS_BOOK.encode())
    assert book.by_column()["race"] == {"1": "African-American", "2": "Caucasian", "3": "Hispanic", "4": "Other"}
    records = [{"column": c, "code": k, "label": v} for c, k, v in book.entries]
    assert read_codebook(json.dumps(records)) == book
    nested = json.dumps(book.by_column())
    assert read_codebook(nested) == book
    # Semicolons, a byte-order mark, columns in another order, numbers as codes in JSON, spaces trimmed.
    assert read_codebook("\ufefflabel;column;code\n African-American ;race;1\n".encode()).entries == (
        ("race", "1", "African-American"),)
    assert read_codebook('{"race": {"1": "A", "2.0": "B"}}').by_column() == {"race": {"1": "A", "2.0": "B"}}
    assert read_codebook('[{"column": "race", "code": 1, "label": "A"}]').entries == (("race", "1", "A"),)


@pytest.mark.parametrize("text, message", [
    ("", ERR_EMPTY),
    ("   \n", ERR_EMPTY),
    ("name,value\nrace,1\n", ERR_HEADER.format(found="name, value")),
    ("column,code,label\n,1,A\n", ERR_ROW.format(line=2, what="column")),
    ("column,code,label\nrace,,A\n", ERR_ROW.format(line=2, what="code")),
    ("column,code,label\nrace,1,\nrace,2,\n", ERR_NO_LABELS),
    ("column,code,label\nrace,1,A\nrace,1,B\n",
     ERR_CONFLICT.format(code="1", column="race", first="A", first_line=2, second="B", second_line=3)),
    ('{"race": [1, 2]}', ERR_JSON.format(reason="the entry of 'race' is not an object of code: label")),
    ('[{"column": "race"}]', ERR_JSON.format(reason="record 1 lacks one of column, code, label")),
    ('[1, 2', ERR_JSON.format(reason="it does not parse: Expecting ',' delimiter at line 1")),
])
def test_a_bad_codebook_is_a_message(text, message):
    with pytest.raises(CodebookError) as err:
        read_codebook(text)
    assert str(err.value) == message


def test_a_codebook_that_is_not_text():
    with pytest.raises(CodebookError) as err:
        read_codebook(b"\xff\xfe\x00\x81\x00")
    assert str(err.value) == ERR_NOT_TEXT


def test_edits_name_every_column_keep_other_labels_and_say_what_they_did():
    frame = pd.DataFrame({"race": [1, 2, 3, 5], "target": [1, 2, 1, 2], "age": [20.5, 30, 40, 50]})
    earlier = {"race": ColumnEdit("category", (("5", "Five"), ("1", "old one")))}
    book = read_codebook(COMPAS_BOOK)
    result = codebook_edits(book, frame, earlier)
    assert result.named == ("race", "target")
    assert result.missing_columns == ("sex",)
    assert result.unused_codes == {"race": ("4",)}
    assert result.unnamed_values == {}  # 5 already had a label
    assert result.edits["race"].kind == "category"  # the kind chosen before is kept
    assert result.edits["race"].label_map == {"1": "African-American", "2": "Caucasian", "3": "Hispanic", "5": "Five"}
    edited, _ = apply_edits(frame, result.edits)
    assert list(edited["race"]) == ["African-American", "Caucasian", "Hispanic", "Five"]
    assert list(edited["target"]) == ["no recidivism", "recidivism", "no recidivism", "recidivism"]
    assert edited["age"].equals(frame["age"])
    sentences = result.sentences()
    assert sentences[0] == "Named the codes of 2 columns: race, target."
    assert "Not in this table, so left aside: sex." in sentences
    assert "race: 1 code of the codebook not in the data (4)." in sentences
    with pytest.raises(CodebookError) as err:
        codebook_edits(Codebook((("colour", "1", "red"),)), frame, {})
    assert str(err.value) == ERR_NO_MATCH.format(columns="colour")


def test_the_template_lists_every_coded_column_and_reads_back_once_filled():
    frame = pd.DataFrame({"race": [1, 2, 2], "score": [0.5, 1.5, 2.5], "id": range(3)})
    template = codebook_template(frame)
    assert template.splitlines()[:3] == ["column,code,label", "race,1,", "race,2,"]
    filled = template.replace("race,1,", "race,1,one")
    assert read_codebook(filled).entries == (("race", "1", "one"),)


# -- on the Data page ---------------------------------------------------------------------------------


@pytest.fixture(autouse=True, scope="module")
def isolated_history(tmp_path_factory):
    patch = pytest.MonkeyPatch()
    patch.setenv("STRONGTREE_RUNS_DB", str(tmp_path_factory.mktemp("runs") / "runs.sqlite3"))
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()
    patch.undo()


def upload(path: Path) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.file_uploader(key="data.upload").set_value((path.name, path.read_bytes(), "text/csv")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def role(at: AppTest, name: str) -> str:
    return f"roles.{name}.{at.session_state[GENERATIONS.name]['roles']}"


needs_data = pytest.mark.skipif(not COMPAS.exists() or not GERMAN.exists(), reason="needs ../shared/datasets/fairness")


@needs_data
def test_compas_codebook_names_its_codes_and_undo_brings_them_back():
    at = upload(COMPAS)
    at.selectbox(key=role(at, "target")).set_value("target").run()
    at.selectbox(key=role(at, "pos_label")).set_value(1).run()
    at.multiselect(key=role(at, "protected")).set_value(["race"]).run()
    at.text_area(key="data.codebook_text").set_value(COMPAS_BOOK).run()
    at.button(key="data.apply_codebook").click().run()
    assert not at.exception
    table = at.session_state["table"].frame
    assert set(table["race"]) == {"African-American", "Caucasian", "Hispanic", "Other"}
    assert set(table["target"]) == {"no recidivism", "recidivism"}
    assert at.session_state["roles"].pos_label == "no recidivism"  # the positive class keeps its meaning
    assert at.session_state["roles"].protected == ("race",)
    success = [s.value for s in at.success]
    assert success and success[0].startswith(md("Named the codes of 3 columns: race, target, sex."))
    # Undo: back to the codes, positive class included.
    at.button(key="data.undo_edits").click().run()
    table = at.session_state["table"].frame
    assert set(table["race"]) == {1, 2, 3, 4} and at.session_state["roles"].pos_label == 1
    assert at.button(key="data.undo_edits").disabled


@needs_data
def test_german_codebook_of_21_columns_applies_at_once():
    frame = pd.read_csv(GERMAN)
    coded = [c for c in frame.columns if frame[c].nunique() <= 20]
    assert len(coded) == 21
    book = "column,code,label\n" + "".join(
        f"{c},{v},{c} level {v}\n" for c in coded for v in sorted(frame[c].unique()))
    at = upload(GERMAN)
    at.text_area(key="data.codebook_text").set_value(book).run()
    at.button(key="data.apply_codebook").click().run()
    assert not at.exception and not at.error
    table = at.session_state["table"].frame
    for column in coded:
        assert table[column].map(lambda v: v.startswith(f"{column} level ")).all(), column
    assert len(at.session_state["edits"]) == 21
    at.button(key="data.undo_edits").click().run()
    pd.testing.assert_frame_equal(at.session_state["table"].frame, frame)
