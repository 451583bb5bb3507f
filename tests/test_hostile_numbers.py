"""Numbers and option values as people type them: one reading everywhere (strongtree_core.numbers), every
option error of the command line and of ``strongtree app`` in the command's own words with exit code 2, a
fairness bound below the smallest a solver honours refused alike however it is written (library, command
line, Trade-offs grid, Model page), and stored text that is not what it claims (a tree that is no JSON, a
codebook nested thousands deep) refused by name, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from strongtree_core import StrongTreeClassifier, cli
from strongtree_core.estimator.classifier import BOUND_TOO_SMALL, ParameterError
from strongtree_core.numbers import MIN_FAIRNESS_BOUND, bound_too_small, finer_than, read_integer, read_number
from strongtree_core.sweep import frontier, sweep
from strongtree_core.tree import FittedTree, StoredTreeError
from strongtree_core.tree import fitted
from strongtree_studio import launch
from strongtree_studio.data.codebook import ERR_JSON, JSON_TOO_DEEP, CodebookError, read_codebook
from strongtree_studio.data.choices import ERR_BOUND_TOO_SMALL, ModelConfig, Roles, SplitConfig, check_model
from strongtree_studio.data.demo_tables import DEMOS
from strongtree_studio.data.roles import suggest_roles
from strongtree_studio.sweeps.sweep_grid import BOUND_DECIMALS, MSG_BOUNDS_TOO_FINE, SweepChoice, check_sweep

ROOT = Path(__file__).resolve().parents[1]
HIRING = "Hiring (teaching data with planted bias)"


def table(n: int = 40, seed: int = 0) -> tuple[pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    X = pd.DataFrame({"a": a, "g": np.where(rng.random(n) < 0.5, "f", "m")})
    return X, pd.Series(np.where(a == 1, "hire", "reject"), name="decision")


# -- one reading of a typed number --------------------------------------------------------------------------
READ = [
    ("0.05", 0.05), (" 7 ", 7.0), ("-0", 0.0), ("1e-3", 0.001), (".5", 0.5), ("5.", 5.0), ("+2", 2.0),
    ("nan", None), ("NaN", None), ("inf", None), ("-inf", None), ("1e999", None), ("1_000", None), ("0x10", None),
    ("１２", None), ("", None), ("   ", None), ("1,5", None), ("5pp", None), ("e5", None), ("--1", None),
    ("1e", None), ("\x000", None),
]


@pytest.mark.parametrize("text,value", READ, ids=[repr(t) for t, _ in READ])
def test_a_typed_number_is_read_by_one_rule(text, value):
    """Decimal digits with a sign, a point and an exponent, finite: nan, inf, 1_000, 0x10 and other scripts'
    digits (which Python's float reads) are no number here, on every surface."""
    got = read_number(text)
    assert got == value and (got is None or str(got) != "-0.0")


@pytest.mark.parametrize("text,value", [("3", 3), ("-1", -1), ("+4", 4), ("3.0", None), ("1e3", None), ("", None),
                                        ("٣", None), ("3 4", None)])
def test_a_typed_whole_number_is_digits(text, value):
    """A whole number is digits and a sign: 3.0 and 1e3 are refused where a count is asked."""
    assert read_integer(text) == value


def test_finer_than_is_relative_to_the_size_of_the_number():
    """1e-300 has more decimals than 4, as 0.000001 has (the grid rounded 1e-300 to 0 without a word)."""
    assert finer_than(1e-300, 4) and finer_than(0.000001, 4) and finer_than(0.00004, 4)
    assert not finer_than(0.0001, 4) and not finer_than(0.1 + 0.2, 1) and not finer_than(0.0, 4)
    assert bound_too_small(1e-300) and bound_too_small(5e-324) and bound_too_small(9.99e-7)
    assert not bound_too_small(0.0) and not bound_too_small(MIN_FAIRNESS_BOUND) and not bound_too_small(0.5)


# -- every option of the command line --------------------------------------------------------------------------
def _fit(*extra: str) -> list[str]:
    return ["fit", "data.csv", "--target", "y", *extra]


def _sweep(*extra: str) -> list[str]:
    return ["sweep", "data.csv", "--target", "y", *extra]


def _err(command: str, option: str, message: str) -> str:
    return f"strongtree {command}: error: argument {option}: {message}"


BAD_OPTIONS = []
for value in ("12", "9", "-1", "2.5", "abc", "", "1e1"):
    BAD_OPTIONS.append((f"fit --depth {value!r}", _fit("--depth", value),
                        _err("fit", "--depth", cli.BAD_DEPTH.format(most=8, value=value))))
for value in ("0", "-5", "nan", "inf", "1e999", "abc", "1_000"):
    BAD_OPTIONS.append((f"fit --time-limit {value!r}", _fit("--time-limit", value),
                        _err("fit", "--time-limit", cli.BAD_SECONDS.format(value=value))))
for value in ("0", "-1", "1.5", "two"):
    BAD_OPTIONS.append((f"fit --threads {value!r}", _fit("--threads", value),
                        _err("fit", "--threads", cli.BAD_THREADS.format(value=value))))
for value in ("0", "1.5", "all"):
    BAD_OPTIONS.append((f"fit --n-jobs {value!r}", _fit("--n-jobs", value),
                        _err("fit", "--n-jobs", cli.BAD_JOBS.format(value=value))))
for value in ("1", "-0.1", "nan", "1.5"):
    BAD_OPTIONS.append((f"fit --regularization {value!r}", _fit("--regularization", value),
                        _err("fit", "--regularization", cli.BAD_LAMBDA.format(value=value))))
for option, value in (("--min-recall", "1.5"), ("--min-precision", "-0.1"), ("--min-specificity", "nan"),
                      ("--min-recall", "80%")):
    BAD_OPTIONS.append((f"fit {option} {value!r}", _fit(option, value),
                        _err("fit", option, cli.BAD_SHARE.format(value=value))))
for value in ("1e-300", "0.0000001", "5e-7", "9.99e-7", "-0.1", "1.5", "nan", "abc", "5pp"):
    BAD_OPTIONS.append((f"fit --fairness-bound {value!r}", _fit("--fairness-bound", value),
                        _err("fit", "--fairness-bound", cli.BAD_BOUND.format(smallest=MIN_FAIRNESS_BOUND, value=value))))
for value in ("1", "0", "nan", "-0.5", "abc", "90", "inf", "1.0"):
    BAD_OPTIONS.append((f"fit --fairness-confidence {value!r}", _fit("--fairness-confidence", value),
                        _err("fit", "--fairness-confidence", cli.BAD_CONFIDENCE.format(value=value))))
for option, value, least, example in (("--max-branching", "-1", 0, 3), ("--max-features-used", "2.5", 0, 2),
                                      ("--min-leaf", "-3", 0, 5), ("--max-thresholds", "0", 1, 16),
                                      ("--n-buckets", "1", 2, 5), ("--max-thresholds", "many", 1, 16)):
    BAD_OPTIONS.append((f"fit {option} {value!r}", _fit(option, value),
                        _err("fit", option, cli.BAD_COUNT.format(least=least, example=example, value=value))))
for option, value, message in (
    ("--depths", "9", cli.BAD_DEPTH.format(most=8, value="9")),
    ("--fairness-bound", "1e-300", cli.BAD_BOUND.format(smallest=MIN_FAIRNESS_BOUND, value="1e-300")),
    ("--fairness-bound", "0.000001", None),
    ("--regularization", "1", cli.BAD_LAMBDA.format(value="1")),
    ("--folds", "1", cli.BAD_COUNT.format(least=2, example=5, value="1")),
    ("--n-jobs", "0", cli.BAD_JOBS.format(value="0")),
    ("--time-limit", "nan", cli.BAD_SECONDS.format(value="nan")),
    ("--min-leaf", "-3", cli.BAD_COUNT.format(least=0, example=5, value="-3")),
):
    if message is not None:
        BAD_OPTIONS.append((f"sweep {option} {value!r}", _sweep(option, value), _err("sweep", option, message)))
for value in ("0", "nan", "-1"):
    BAD_OPTIONS.append((f"report --baseline-time-limit {value!r}",
                        ["report", "data.csv", "--tree", "t.json", "--output", "r.html", "--baseline-time-limit", value],
                        _err("report", "--baseline-time-limit", cli.BAD_SECONDS.format(value=value))))


@pytest.mark.parametrize("case,argv,message,code", [(*c, 2) for c in BAD_OPTIONS], ids=[c[0] for c in BAD_OPTIONS])
def test_an_option_value_is_refused_in_the_command_s_words(case, argv, message, code, capsys, tmp_path, monkeypatch):
    """Refused while the options are read: exit code 2, one line in the command's words, nothing read or solved
    (the data file does not even exist)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == code
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == message
    assert "Traceback" not in err and "StrongTreeClassifier" not in err


ACCEPTED = [("--fairness-bound", "0", 0.0), ("--fairness-bound", "1e-6", 1e-6), ("--fairness-bound", "1", 1.0),
            ("--fairness-bound", "0.000001", 1e-6), ("--fairness-confidence", "0.9", 0.9),
            ("--fairness-confidence", "1e-300", 1e-300), ("--depth", "0", 0), ("--depth", "8", 8),
            ("--time-limit", "0.5", 0.5), ("--regularization", "0", 0.0), ("--n-jobs", "-2", -2)]


@pytest.mark.parametrize("option,text,value", ACCEPTED, ids=[f"{o} {t}" for o, t, _ in ACCEPTED])
def test_the_edges_of_an_option_s_range_are_accepted(option, text, value):
    """The smallest bound a solver honours (1e-06), 0 and 1, depth 0 and 8: read as the values typed."""
    from strongtree_core.cli.parser import build_parser

    args = build_parser().parse_args(_fit(option, text))
    assert getattr(args, option.lstrip("-").replace("-", "_")) == value


# -- strongtree app ------------------------------------------------------------------------------------------
KNOWN = {"server.port": int, "server.headless": bool, "server.maxUploadSize": int, "browser.serverPort": int,
         "runner.connectionDefaultTTL": float, "server.address": str}
APP_CASES = [
    ("--server.port 99999", ["--server.port", "99999"],
     launch.ERR_OPTION_VALUE.format(option="--server.port", what=launch.OPTION_WORDS["port"], value="99999")),
    ("--server.port=70000", ["--server.port=70000"],
     launch.ERR_OPTION_VALUE.format(option="--server.port", what=launch.OPTION_WORDS["port"], value="70000")),
    ("--server.port 0", ["--server.port", "0"],
     launch.ERR_OPTION_VALUE.format(option="--server.port", what=launch.OPTION_WORDS["port"], value="0")),
    ("--server.port abc", ["--server.port", "abc"],
     launch.ERR_OPTION_VALUE.format(option="--server.port", what=launch.OPTION_WORDS["port"], value="abc")),
    ("--browser.serverPort -1", ["--browser.serverPort", "-1"],
     launch.ERR_OPTION_VALUE.format(option="--browser.serverPort", what=launch.OPTION_WORDS["port"], value="-1")),
    ("--server.maxUploadSize lots", ["--server.maxUploadSize", "lots"],
     launch.ERR_OPTION_VALUE.format(option="--server.maxUploadSize", what=launch.OPTION_WORDS[int], value="lots")),
    ("--runner.connectionDefaultTTL nan", ["--runner.connectionDefaultTTL", "nan"],
     launch.ERR_OPTION_VALUE.format(option="--runner.connectionDefaultTTL", what=launch.OPTION_WORDS[float],
                                    value="nan")),
    ("--server.headless maybe", ["--server.headless", "maybe"],
     launch.ERR_OPTION_VALUE.format(option="--server.headless", what=launch.OPTION_WORDS[bool], value="maybe")),
    ("--server.prot 8600", ["--server.prot", "8600"],
     launch.ERR_UNKNOWN_OPTION.format(option="--server.prot", hint="; did you mean --server.port?")),
    ("--zzz 1", ["--zzz", "1"], launch.ERR_UNKNOWN_OPTION.format(option="--zzz", hint="")),
    ("--server.port with no value", ["--server.port"], launch.ERR_NO_VALUE.format(option="--server.port", example="8600")),
    ("--server.port --server.headless true", ["--server.port", "--server.headless", "true"],
     launch.ERR_NO_VALUE.format(option="--server.port", example="8600")),
]


@pytest.mark.parametrize("case,args,message,code", [(*c, 2) for c in APP_CASES], ids=[c[0] for c in APP_CASES])
def test_strongtree_app_refuses_an_option_streamlit_cannot_start_with(case, args, message, code):
    """Checked before Streamlit starts (a port past 65535 ended in Streamlit's traceback): one line, exit code 2."""
    assert launch.option_problem(args, KNOWN) == message


def test_the_dashboard_s_launcher_stops_before_streamlit_with_exit_2(capsys):
    """``python -m strongtree_studio`` (what ``strongtree app`` runs) checks against Streamlit's own options."""
    assert launch.main(["--server.port", "99999"]) == 2
    assert capsys.readouterr().err.strip() == launch.ERR_OPTION_VALUE.format(
        option="--server.port", what=launch.OPTION_WORDS["port"], value="99999")


def test_strongtree_app_passes_good_options_and_the_script_s_own():
    """Good values, ``--a=b`` and ``--a b`` alike, and everything after ``--`` pass unchecked."""
    assert launch.option_problem(["--server.port", "8600", "--server.headless=true", "--server.address", "0.0.0.0",
                                  "--", "--anything", "x"], KNOWN) is None
    assert launch.option_problem(["--server.port", "65535", "--runner.connectionDefaultTTL", "1.5"], KNOWN) is None


def test_strongtree_app_with_a_port_past_65535_is_one_line_and_exit_2():
    """The installed command, as a user runs it: no traceback, Streamlit never starts."""
    done = subprocess.run([sys.executable, "-m", "strongtree_core", "app", "--server.port", "99999"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip() == launch.ERR_OPTION_VALUE.format(option="--server.port",
                                                                 what=launch.OPTION_WORDS["port"], value="99999")


# -- a bound below the smallest a solver honours, however it is written -------------------------------------
TOO_SMALL = [1e-300, 5e-324, 1e-7, 9.99e-7, 0.0000001]


@pytest.mark.parametrize("case,bound,message", [(f"fairness_bound={b!r} (fit, sweep, frontier)", b,
                                                 BOUND_TOO_SMALL.format(value=b, smallest=MIN_FAIRNESS_BOUND))
                                                for b in TOO_SMALL], ids=[repr(b) for b in TOO_SMALL])
def test_the_library_refuses_a_bound_a_solver_cannot_tell_from_0(case, bound, message):
    """fit, sweep and frontier say the same: 1e-300 was solved as δ = 0 without a word."""
    X, y = table()
    with pytest.raises(ParameterError) as info:
        StrongTreeClassifier(depth=1, time_limit=5, fairness="statistical_parity", fairness_bound=bound).fit(
            X, y, sensitive_features=["g"])
    assert str(info.value) == message
    with pytest.raises(ParameterError) as info:
        sweep(StrongTreeClassifier(depth=1, time_limit=5), X, y, sensitive_features=["g"],
              grid={"fairness": ["statistical_parity"], "fairness_bound": [0.0, 0.05, bound]})
    assert str(info.value) == message
    with pytest.raises(ParameterError) as info:
        frontier(StrongTreeClassifier(depth=1, time_limit=5), X, y, sensitive_features=["g"],
                 fairness="statistical_parity", fairness_bound=[bound])
    assert str(info.value) == message


GRID_TOO_FINE = ["1e-300", "0.000001", "0.00004", "1E-20", "0, 2.5, 1e-300"]


def _too_fine(text: str) -> str:
    token = [t for t in text.split(", ") if finer_than(float(t), BOUND_DECIMALS)][0]
    return MSG_BOUNDS_TOO_FINE.format(text=token, decimals=BOUND_DECIMALS, rounded=round(float(token), BOUND_DECIMALS))


@pytest.mark.parametrize("case,text,message", [(f"Trade-offs bounds {t!r}", t, _too_fine(t)) for t in GRID_TOO_FINE],
                         ids=GRID_TOO_FINE)
def test_the_trade_offs_grid_refuses_1e_300_as_it_refuses_0_000001(case, text, message):
    """The grid keeps 4 decimals of a percentage point; a bound finer than that, however written, is the same
    message (1e-300 became δ = 0 in silence)."""
    demo = DEMOS[HIRING]
    frame = demo.load()
    roles = suggest_roles(frame, demo)
    grid, problems = check_sweep(frame, roles, SplitConfig(), ModelConfig(), SweepChoice(fairness_bounds=text))
    assert grid is None and problems == [message]


@pytest.mark.parametrize("case,bound,message", [
    (f"Model page: a stored bound {b!r}", b, ERR_BOUND_TOO_SMALL.format(value=100.0 * b, smallest=100.0 * MIN_FAIRNESS_BOUND))
    for b in (1e-300, 1e-8, 9e-7)], ids=["1e-300", "1e-8", "9e-7"])
def test_the_model_page_refuses_a_stored_bound_a_solver_cannot_tell_from_0(case, bound, message):
    """A bound from a stored run or a restored session that the slider could not make: a problem on the page."""
    roles = Roles(target="y", protected=("g",))
    problems = check_model(ModelConfig(fairness=("statistical_parity",), fairness_bound=bound), roles, 2)
    assert problems == [message]
    assert check_model(ModelConfig(fairness=("statistical_parity",), fairness_bound=MIN_FAIRNESS_BOUND), roles, 2) == []


# -- stored text that is not what it claims ----------------------------------------------------------------
NOT_TREES = [
    ("not json", "not json", fitted.NOT_JSON.format(detail="Expecting value at line 1 column 1")),
    ("empty text", "", fitted.NOT_JSON.format(detail="Expecting value at line 1 column 1")),
    ("half an object", '{"format": ', fitted.NOT_JSON.format(detail="Expecting value at line 1 column 12")),
    ("100 KB of [", "[" * 100_000, fitted.TOO_DEEP),
    ("100 KB of {\"a\":", '{"a":' * 20_000, fitted.TOO_DEEP),
    ("bytes not UTF-8", b"\x80abc", fitted.NOT_JSON.format(detail="invalid start byte")),
    ("None", None, fitted.NOT_TEXT.format(kind="NoneType")),
    ("a number", 42, fitted.NOT_TEXT.format(kind="int")),
    ("JSON null", "null", "'format' is not 'strongtree.fitted_tree'"),
    ("a list", "[1, 2]", "'format' is not 'strongtree.fitted_tree'"),
    ("another format", '{"format": "x", "version": 1}', "'format' is not 'strongtree.fitted_tree'"),
]


@pytest.mark.parametrize("case,text,reason,message", [(f"from_json: {c}", t, r, fitted.BAD_TREE_JSON.format(reason=r))
                                                      for c, t, r in NOT_TREES], ids=[c[0] for c in NOT_TREES])
def test_from_json_names_what_is_wrong(case, text, reason, message):
    """FittedTree.from_json('not json') raised json's own JSONDecodeError, and 100 KB of '[' a RecursionError."""
    with pytest.raises(StoredTreeError) as info:
        FittedTree.from_json(text)
    assert str(info.value) == message
    assert info.value.reason == reason and isinstance(info.value, ValueError)


DEEP_CODEBOOKS = [("100 KB of [", "[" * 100_000), ("100 KB of {\"a\":", '{"a":' * 20_000),
                  ("deep inside a record", '[{"column": "a", "code": 1, "label": ' + "[" * 50_000 + "]" * 50_000 + "}]")]


@pytest.mark.parametrize("case,text,message", [(f"codebook: {c}", t, ERR_JSON.format(reason=JSON_TOO_DEEP))
                                                for c, t in DEEP_CODEBOOKS], ids=[c[0] for c in DEEP_CODEBOOKS])
def test_a_deeply_nested_json_codebook_is_a_message(case, text, message):
    """Under the 2 MB limit, nested deeper than the parser goes: the codebook's message, not RecursionError
    ('This app has encountered an error')."""
    assert len(text) < 2_000_000
    with pytest.raises(CodebookError) as info:
        read_codebook(text)
    assert str(info.value) == message
