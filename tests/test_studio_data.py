"""App-side data helpers: the teaching table, loading uploads, roles and the split."""

import io

import numpy as np
import pandas as pd
import pytest

from strongtree_studio.data.choices import (
    ERR_BOTH_ROLES,
    ERR_MANY_CLASSES,
    ERR_NO_FEATURES,
    ERR_ONE_CLASS,
    ERR_TARGET_IN_ROLE,
    NOTE_MISSING_TARGET,
    ModelConfig,
    Roles,
    SplitConfig,
    check_model,
    check_roles,
    split_table,
    ERR_FAIRNESS_NEEDS_GROUP,
    ERR_CSP_NEEDS_LEGIT,
)
from strongtree_studio.data.demo_tables import DEMOS, make_hiring
from strongtree_studio.data.loading import (
    ERR_BAD_BOM,
    ERR_BINARY,
    ERR_DUPLICATE_COLUMNS,
    ERR_EMPTY,
    ERR_EXCEL_DAMAGED,
    ERR_HEADER_ONLY,
    ERR_OLD_EXCEL,
    ERR_TOO_FEW_COLUMNS,
    ERR_TOO_FEW_ROWS,
    ERR_TYPE,
    MIN_ROWS,
    NOTE_ENCODING,
    OLE2_MAGIC,
    LoadError,
    column_overview,
    fingerprint,
    load_file,
    read_table,
)
from strongtree_studio.data.roles import default_positive, suggest_roles


def hire_rate(frame: pd.DataFrame) -> pd.Series:
    return frame.groupby("gender")["hired"].apply(lambda s: (s == "yes").mean())


def test_hiring_table_is_seeded_and_has_the_documented_columns():
    a, b = make_hiring(300, seed=3), make_hiring(300, seed=3)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(make_hiring(300, seed=4))
    assert list(a.columns) == ["gender", "age", "education", "experience", "career_break", "test_score", "referral", "hired"]
    assert set(a["hired"]) == {"yes", "no"}
    assert a["experience"].between(0, 25).all() and a["test_score"].between(0, 100).all()


def test_hiring_table_carries_the_planted_bias():
    frame = make_hiring(4000, seed=1)
    rates = hire_rate(frame)
    assert rates["male"] - rates["female"] > 0.08  # statistical parity gap
    for level in ("secondary", "bachelor", "master"):  # also within each level of the legitimate factor
        within = hire_rate(frame[frame["education"] == level])
        assert within["male"] > within["female"]
    breaks = frame.groupby("gender")["career_break"].apply(lambda s: (s == "yes").mean())
    assert breaks["female"] > 2 * breaks["male"]  # a proxy of gender


def test_every_demo_loads_with_its_suggested_roles():
    for demo in DEMOS.values():
        frame = demo.load()
        roles = suggest_roles(frame, demo)
        assert check_roles(frame, roles) == [], demo.name


def test_read_table_sniffs_csv_separators_and_reads_excel_and_parquet():
    frame = make_hiring(40, seed=0)
    for sep in (",", ";", "\t"):
        data = frame.to_csv(index=False, sep=sep).encode()
        pd.testing.assert_frame_equal(read_table("x.csv", data), frame.astype({"education": "str"}), check_dtype=False)
    buffer = io.BytesIO()
    frame.to_excel(buffer, index=False)
    assert read_table("x.xlsx", buffer.getvalue()).shape == frame.shape
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    assert read_table("x.parquet", buffer.getvalue()).shape == frame.shape


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("a.csv", b"", ERR_EMPTY.format(name="a.csv", min_rows=MIN_ROWS)),
        ("a.json", b"{}", ERR_TYPE.format(suffix=".json")),
        ("a.csv", b"only\n" + b"1\n" * 20, ERR_TOO_FEW_COLUMNS.format(name="a.csv", n_cols=1)),
        ("a.csv", b"x,y\n1,2\n3,4\n", ERR_TOO_FEW_ROWS.format(name="a.csv", n_rows=2, min_rows=MIN_ROWS)),
    ],
)
def test_read_table_refuses_bad_files_with_a_readable_message(name, data, message):
    with pytest.raises(LoadError) as err:
        read_table(name, data)
    assert str(err.value) == message


def test_read_table_refuses_repeated_column_names():
    data = b"a;b;a\n" + b"1;2;3\n" * 12
    with pytest.raises(LoadError) as err:
        read_table("r.csv", data)
    assert str(err.value) == ERR_DUPLICATE_COLUMNS.format(name="r.csv", names="'a'")


def test_read_table_reports_a_broken_excel_file():
    with pytest.raises(LoadError, match="Could not read 'b.xlsx' as Excel"):
        read_table("b.xlsx", b"this is not a spreadsheet")


def test_fingerprint_follows_content_and_overview_counts_missing():
    frame = make_hiring(50, seed=0)
    assert fingerprint(frame) == fingerprint(frame.copy())
    changed = frame.copy()
    changed.loc[0, "age"] = 99
    assert fingerprint(changed) != fingerprint(frame)
    changed.loc[[1, 2], "test_score"] = np.nan
    overview = column_overview(changed).set_index("column")
    assert overview.loc["test_score", "missing"] == 2 and overview.loc["gender", "distinct"] == 2


def test_check_roles_names_each_problem():
    frame = make_hiring(60, seed=0)
    assert check_roles(frame, Roles("hired", "yes", ("gender",), ("education",))) == []
    assert ERR_TARGET_IN_ROLE.format(target="hired", role="a protected attribute") in check_roles(
        frame, Roles("hired", "yes", ("hired",))
    )
    assert ERR_BOTH_ROLES.format(columns="'gender'") in check_roles(frame, Roles("hired", "yes", ("gender",), ("gender",)))
    constant = frame.assign(hired="yes")
    assert check_roles(constant, Roles("hired", "yes")) == [ERR_ONE_CLASS.format(target="hired", value="yes")]
    assert ERR_MANY_CLASSES.format(target="age", n=frame["age"].nunique()) in check_roles(frame, Roles("age"))
    everything = tuple(c for c in frame.columns if c not in ("hired", "gender"))
    assert ERR_NO_FEATURES in check_roles(frame, Roles("hired", "yes", ("gender",), (), everything))
    assert check_roles(frame, Roles("hired", "yes", ("gender",), (), everything), allow_protected_splits=True) == []


def test_check_model_needs_groups_for_fairness():
    model = ModelConfig(fairness=("conditional_statistical_parity",))
    assert check_model(model, Roles("hired", "yes"), 2) == [ERR_FAIRNESS_NEEDS_GROUP, ERR_CSP_NEEDS_LEGIT]
    assert check_model(model, Roles("hired", "yes", ("gender",), ("education",)), 2) == []


def test_split_is_stratified_seeded_and_drops_rows_without_target():
    frame = make_hiring(400, seed=0)
    frame.loc[:4, "hired"] = None
    roles = Roles("hired", "yes", ("gender",), (), ("age",))
    parts = split_table(frame, roles, SplitConfig(test_size=0.25, seed=5))
    assert len(parts.train) + len(parts.test) == 395
    assert len(parts.test) == 99
    assert "age" not in parts.train.columns
    assert parts.notes == (NOTE_MISSING_TARGET.format(n=5, target="hired"),)
    share = lambda f: (f["hired"] == "yes").mean()  # noqa: E731
    assert abs(share(parts.train) - share(parts.test)) < 0.01
    again = split_table(frame, roles, SplitConfig(test_size=0.25, seed=5))
    pd.testing.assert_frame_equal(parts.test, again.test)
    everything = split_table(frame, roles, SplitConfig(test_size=0.0))
    assert len(everything.train) == 395 and len(everything.test) == 0


def test_estimator_params_follow_the_contract():
    from strongtree_core import StrongTreeClassifier

    roles = Roles("hired", "yes", ("gender",))
    params = ModelConfig(depth=3, fairness=("statistical_parity",), fairness_bound=0.1).estimator_params(roles)
    model = StrongTreeClassifier(**params)
    assert model.get_params()["depth"] == 3
    assert params["fairness"] == ["statistical_parity"] and params["pos_label"] == "yes"
    assert ModelConfig().estimator_params(roles)["fairness"] is None
    assert ModelConfig.from_dict({"depth": 4, "fairness": ["equal_opportunity"], "unknown": 1}) == ModelConfig(
        depth=4, fairness=("equal_opportunity",)
    )


def test_default_positive_is_the_second_sorted_class():
    frame = pd.DataFrame({"y": ["b", "a", "b"], "x": [1, 2, 3]})
    assert default_positive(frame, "y") == "b"
    assert default_positive(pd.DataFrame({"y": [1, 2, 3]}), "y") is None


def xlsx_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_excel(buffer, index=False)
    return buffer.getvalue()


#: Random bytes (seeded), as a broken upload of any type would carry.
NOISE = np.random.default_rng(5).integers(0, 256, 4000, dtype=np.uint8).tobytes()


#: Broken uploads and their messages (the xlsx bytes carry the time they were written: the test ids
#: name the cases, so that every pytest-xdist worker collects the same tests).
BROKEN_UPLOADS = [
    ("cut.xlsx", xlsx_bytes(make_hiring(40, seed=0))[:1500], ERR_EXCEL_DAMAGED.format(name="cut.xlsx")),
    ("end.xlsx", xlsx_bytes(make_hiring(40, seed=0))[:-20], ERR_EXCEL_DAMAGED.format(name="end.xlsx")),
    ("noise.xlsx", NOISE, ERR_EXCEL_DAMAGED.format(name="noise.xlsx")),
    ("old.xls", OLE2_MAGIC + NOISE, ERR_OLD_EXCEL.format(name="old.xls")),
    ("noise.csv", NOISE, ERR_BINARY.format(name="noise.csv")),
    ("noise.txt", NOISE.replace(b"\x00", b"1"), ERR_BINARY.format(name="noise.txt")),
    ("empty.csv", b"", ERR_EMPTY.format(name="empty.csv", min_rows=MIN_ROWS)),
    ("blank.csv", b" \r\n\n  ", ERR_EMPTY.format(name="blank.csv", min_rows=MIN_ROWS)),
    ("header.csv", b"gender,age,hired\n", ERR_HEADER_ONLY.format(name="header.csv", min_rows=MIN_ROWS)),
    ("header.csv", b"gender;age;hired\r\n", ERR_HEADER_ONLY.format(name="header.csv", min_rows=MIN_ROWS)),
    ("bom.csv", b"\xff\xfe" + b"\x00\xd8" * 30, ERR_BAD_BOM.format(name="bom.csv", encoding="UTF-16",
                                                                   reason="illegal UTF-16 surrogate")),
]


@pytest.mark.parametrize(("name", "data", "message"), BROKEN_UPLOADS,
                         ids=[f"{i}-{case[0]}" for i, case in enumerate(BROKEN_UPLOADS)])
def test_broken_uploads_are_messages(name, data, message):
    with pytest.raises(LoadError) as err:
        read_table(name, data)
    assert str(err.value) == message


def test_a_parquet_file_that_is_not_one_names_the_reader():
    with pytest.raises(LoadError) as err:
        read_table("n.parquet", NOISE)
    assert str(err.value).startswith("Could not read 'n.parquet' as Parquet: ")
    assert str(err.value).endswith(". Check that the file is a valid Parquet file.")


TEXT = "gender;hired;note\n" + "féminin;oui;Zoë’s café\nmasculin;non;naïve – ok\n" * 10
EXPECTED = pd.DataFrame({"gender": ["féminin", "masculin"] * 10, "hired": ["oui", "non"] * 10,
                         "note": ["Zoë’s café", "naïve – ok"] * 10})


@pytest.mark.parametrize(
    ("data", "notes"),
    [
        (TEXT.encode("utf-8"), ()),
        (TEXT.encode("utf-8-sig"), ()),
        (TEXT.encode("utf-16"), ()),  # with its byte-order mark
        ("\ufeff".encode("utf-16-be") + TEXT.encode("utf-16-be"), ()),
        (TEXT.encode("utf-32"), ()),
        (TEXT.encode("utf-16-le"), (NOTE_ENCODING.format(name="t.csv", encoding="UTF-16 (little-endian, without a byte-order mark)"),)),
        (TEXT.encode("utf-16-be"), (NOTE_ENCODING.format(name="t.csv", encoding="UTF-16 (big-endian, without a byte-order mark)"),)),
        (TEXT.encode("cp1252"), (NOTE_ENCODING.format(name="t.csv", encoding="Windows-1252 (Western European)"),)),
    ],
)
def test_text_encodings_are_decoded_or_named(data, notes):
    loaded = load_file("t.csv", data)
    pd.testing.assert_frame_equal(loaded.frame, EXPECTED)
    assert loaded.notes == notes


def test_latin1_text_reads_feminin_and_says_which_encoding():
    data = ("genre,embauche\n" + "féminin,oui\nmasculin,non\n" * 6).encode("latin-1")
    loaded = load_file("l.csv", data)
    assert loaded.frame["genre"].tolist()[:2] == ["féminin", "masculin"]
    assert loaded.notes == (
        "'l.csv' is not UTF-8 text; it was read as Windows-1252 (Western European). If some letters look wrong, "
        "save the file as UTF-8 CSV and upload it again.",
    )
    # bytes Windows-1252 leaves undefined fall back to Latin-1, which decodes every byte
    undefined = ("a,b\n" + "x\x81y,1\n" + "plain text row,1\n" * 20).encode("latin-1")
    loaded = load_file("u.csv", undefined)
    assert loaded.frame["a"][0] == "x\x81y"
    assert loaded.notes == (NOTE_ENCODING.format(name="u.csv", encoding="Latin-1 (ISO-8859-1)"),)
