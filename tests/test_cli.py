"""The command line: fit / predict / export, standard input and output, --json, the
separator sniffed, help and defaults, the progress bar, and Ctrl-C on a real process.

Most cases call ``cli.main`` in this process on a few dozen rows; three start a real
process (``python -m strongtree_core``): the version, a pipe through ``fit - --output -``,
and SIGINT sent to a long FlowOCT solve, which must exit 130 with the tree written.
"""

from __future__ import annotations

import argparse
import io
import json
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from strongtree_core import cli
from strongtree_core.cli import parser as cli_parser
from strongtree_core.cli import progress_bar as cli_progress
from strongtree_core.csv_format import sniff_separator
from strongtree_core.encoding import errors as encoding_errors
from strongtree_core.tree import FittedTree

ROOT = Path(__file__).resolve().parents[1]
N = 60


def _table(n: int = N, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    score = rng.integers(40, 100, n)
    referral = np.where(rng.random(n) < 0.4, "yes", "no")
    hired = np.where((score > 70) | (referral == "yes"), "yes", "no")
    hired = np.where(rng.random(n) < 0.1, np.where(hired == "yes", "no", "yes"), hired)
    return pd.DataFrame({"score": score, "referral": referral, "gender": rng.choice(["f", "m"], n), "hired": hired})


def _csv(folder: Path, name: str = "data.csv", sep: str = ",", frame: pd.DataFrame | None = None) -> Path:
    path = folder / name
    (_table() if frame is None else frame).to_csv(path, index=False, sep=sep)
    return path


def _fit_args(data, *extra) -> list[str]:
    return ["fit", str(data), "--target", "hired", "--depth", "2", "--time-limit", "10", *map(str, extra)]


def _stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


# -- fit -------------------------------------------------------------------------------------------


def test_fit_json_is_one_object_whose_numbers_are_those_of_its_tree(tmp_path, capsys):
    data = _csv(tmp_path)
    assert cli.main(_fit_args(data, "--json", "--output", tmp_path / "t.json")) == 0
    out = capsys.readouterr().out
    result = json.loads(out)
    tree = FittedTree.from_dict(result["tree"])
    frame = pd.read_csv(data)
    assert result["training_accuracy"] == pytest.approx(np.mean(tree.predict(frame) == frame["hired"].to_numpy()))
    assert result["status"] == tree.record.status == "optimal" and result["certified"] is True
    assert result["interrupted"] is False and result["constraint_checks"] == []
    assert result["tree_file"] == str(tmp_path / "t.json")
    assert FittedTree.from_json((tmp_path / "t.json").read_text(encoding="utf-8")) == tree


def test_a_fit_on_a_fresh_machine_says_the_compiled_code_is_being_prepared(tmp_path, capsys, monkeypatch):
    from strongtree_core.accel import prepare
    from strongtree_core.accel.compiled import LibraryStatus
    from strongtree_core.cli import fit as cli_fit

    building = prepare.Preparation((LibraryStatus("kernels", "ready"), LibraryStatus("treedp", "building", 3, 33, 9.0)))
    monkeypatch.setattr(prepare, "preparation", lambda: building)
    assert cli.main(_fit_args(_csv(tmp_path), "--output", tmp_path / "t.json")) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == cli_fit.PREPARING_NOTE.format(words=building.words())
    monkeypatch.setattr(prepare, "preparation", lambda: prepare.Preparation((LibraryStatus("kernels", "ready"),)))
    assert cli.main(_fit_args(_csv(tmp_path), "--output", tmp_path / "t2.json")) == 0
    assert "compiled code" not in capsys.readouterr().err


def test_fit_json_reports_the_constraint_checks(tmp_path, capsys):
    data = _csv(tmp_path)
    args = _fit_args(data, "--json", "--protected", "gender", "--fairness", "statistical_parity", "--fairness-bound", "0.1",
                     "--pos-label", "yes")
    assert cli.main(args) == 0
    result = json.loads(capsys.readouterr().out)
    (check,) = result["constraint_checks"]
    frame = pd.read_csv(data)
    predicted = FittedTree.from_dict(result["tree"]).predict(frame) == "yes"
    rates = pd.Series(predicted).groupby(frame["gender"]).mean()
    assert check["measured"] == pytest.approx(rates.max() - rates.min()) and check["measured"] <= 0.1


def test_fit_reads_standard_input_and_writes_the_tree_to_standard_output(tmp_path, capsys, monkeypatch):
    _stdin(monkeypatch, _table().to_csv(index=False).encode())
    assert cli.main(_fit_args("-", "--output", "-")) == 0
    captured = capsys.readouterr()
    tree = FittedTree.from_json(captured.out)
    assert tree.target == "hired"
    assert "training accuracy:" in captured.err and "IF " in captured.err  # the report went to standard error


def test_json_and_a_tree_on_standard_output_are_refused(tmp_path, capsys):
    assert cli.main(_fit_args(_csv(tmp_path), "--json", "--output", "-")) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == cli.JSON_AND_STDOUT
    assert json.loads(captured.out) == {"error": cli.JSON_AND_STDOUT, "exit_code": 2}


def test_a_refusal_with_json_is_json_too(tmp_path, capsys):
    data = _csv(tmp_path)
    assert cli.main(["fit", str(data), "--target", "outcome", "--json"]) == 2
    message = cli.NO_TARGET.format(target="outcome", path=data, columns="score, referral, gender, hired")
    assert json.loads(capsys.readouterr().out) == {"error": message, "exit_code": 2}


def test_fit_keeps_a_fairness_promise_and_reports_the_baseline(tmp_path, capsys):
    data = _csv(tmp_path)
    args = _fit_args(data, "--protected", "gender", "--fairness", "statistical_parity", "--fairness-bound", "0.05",
                     "--pos-label", "yes", "--fairness-confidence", "0.9", "--fairness-confidence-method", "margin",
                     "--time-limit", "30", "--json")
    assert cli.main(args) == 0
    out = json.loads(capsys.readouterr().out)
    promise = out["fairness_promise"]
    assert promise["confidence"] == 0.9 and promise["method"] == "margin" and promise["delta"] == 0.05
    assert promise["training_bound"] <= 0.05
    frame = pd.read_csv(data)
    assert out["baseline_accuracy"] == pytest.approx(frame["hired"].value_counts(normalize=True).max())
    assert cli.main([a for a in args if a != "--json"]) == 0
    captured = capsys.readouterr()
    assert "majority-class baseline:" in captured.out + captured.err


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_the_separator_is_sniffed_as_the_dashboard_does(tmp_path, capsys, sep):
    assert cli.main(_fit_args(_csv(tmp_path, "comma.csv"), "--json")) == 0
    comma = json.loads(capsys.readouterr().out)["tree"]
    assert cli.main(_fit_args(_csv(tmp_path, "other.csv", sep=sep), "--json")) == 0
    other = json.loads(capsys.readouterr().out)["tree"]
    assert other["structure"] == comma["structure"] and other["encoding"] == comma["encoding"]


def test_sniffing_keeps_a_comma_file_with_semicolons_in_a_quoted_field_and_falls_back_to_commas():
    assert sniff_separator('a,b,c\n1,"x;y",2\n3,"p;q",4\n') == ","
    assert sniff_separator("a;b\n1,5;2\n3,5;4\n") == ";"
    assert sniff_separator("single\n1\n2\n") == ","


# -- predict and export ---------------------------------------------------------------------------


@pytest.fixture()
def stored(tmp_path):
    data = _csv(tmp_path)
    assert cli.main(_fit_args(data, "--output", tmp_path / "tree.json")) == 0
    return data, tmp_path / "tree.json", FittedTree.from_json((tmp_path / "tree.json").read_text(encoding="utf-8"))


def test_predict_adds_the_tree_s_predictions_and_class_shares(stored, tmp_path, capsys):
    data, tree_file, tree = stored
    capsys.readouterr()
    out = tmp_path / "pred.csv"
    assert cli.main(["predict", str(data), "--tree", str(tree_file), "--proba", "--output", str(out)]) == 0
    frame = pd.read_csv(data)
    got = pd.read_csv(out)
    assert list(got.columns) == list(frame.columns) + ["predicted_hired", "proba_no", "proba_yes"]
    assert got["predicted_hired"].tolist() == tree.predict(frame).tolist()
    np.testing.assert_allclose(got[["proba_no", "proba_yes"]].to_numpy(), tree.predict_proba(frame), rtol=1e-12)
    accuracy = np.mean(tree.predict(frame) == frame["hired"].to_numpy())
    assert capsys.readouterr().err.strip() == cli.ACCURACY_AGAINST.format(target="hired", accuracy=accuracy, n=N)


def test_predict_reads_standard_input_and_writes_standard_output(stored, capsys, monkeypatch):
    data, tree_file, tree = stored
    capsys.readouterr()
    rows = pd.read_csv(data).drop(columns="hired").head(7)
    _stdin(monkeypatch, rows.to_csv(index=False, sep=";").encode())
    assert cli.main(["predict", "-", "--tree", str(tree_file), "--column", "decision"]) == 0
    captured = capsys.readouterr()
    got = pd.read_csv(io.StringIO(captured.out))
    assert got["decision"].tolist() == tree.predict(rows).tolist() and captured.err == ""


def test_predict_refuses_with_the_exact_message(stored, tmp_path, capsys):
    data, tree_file, _ = stored
    capsys.readouterr()
    cases = [
        (["predict", "-", "--tree", "-"], cli.BOTH_FROM_STDIN),
        (["predict", str(data), "--tree", str(tree_file), "--column", "hired"],
         cli.COLUMN_EXISTS.format(path=data, column="hired")),
        (["predict", str(data), "--tree", str(tmp_path / "none.json")],
         cli.TREE_UNREADABLE.format(path=tmp_path / "none.json", reason="No such file or directory")),
        (["predict", str(data), "--tree", str(data)],
         cli.TREE_UNREADABLE.format(path=data, reason="it is not JSON (Expecting value at line 1 column 1)")),
        (["predict", str(_csv(tmp_path, "part.csv", frame=_table()[["referral", "gender"]])), "--tree", str(tree_file)],
         cli.PREDICT_FAILED.format(path=tmp_path / "part.csv", tree=tree_file,
                                   reason=encoding_errors.MISSING_COLUMNS.format(n=1, missing="'score'"))),
        (["predict", str(data), "--tree", str(tree_file), "--output", str(tmp_path / "no" / "p.csv")],
         cli.WRITE_FAILED.format(path=tmp_path / "no" / "p.csv", reason="No such file or directory")),
    ]
    for args, message in cases:
        assert cli.main(args) == 2, args
        assert capsys.readouterr().err.strip() == message


@pytest.mark.parametrize("fmt", ["text", "json", "dot", "sql", "python"])
def test_export_writes_what_the_tree_gives(stored, tmp_path, capsys, fmt):
    _, tree_file, tree = stored
    capsys.readouterr()
    assert cli.main(["export", "--tree", str(tree_file), "--format", fmt]) == 0
    expected = {"text": tree.to_text, "json": lambda: tree.to_json(indent=2), "dot": tree.to_dot,
                "sql": tree.to_sql, "python": tree.to_python}[fmt]()
    assert capsys.readouterr().out.rstrip("\n") == expected.rstrip("\n")
    assert cli.main(["export", "--tree", str(tree_file), "--format", fmt, "--output", str(tmp_path / "x")]) == 0
    assert (tmp_path / "x").read_text(encoding="utf-8").rstrip("\n") == expected.rstrip("\n")


def test_export_reads_the_tree_from_standard_input(stored, capsys, monkeypatch):
    _, tree_file, tree = stored
    capsys.readouterr()
    _stdin(monkeypatch, tree_file.read_bytes())
    assert cli.main(["export", "--tree", "-", "--format", "sql"]) == 0
    assert capsys.readouterr().out.rstrip("\n") == tree.to_sql()


# -- help, defaults, progress ---------------------------------------------------------------------


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    top = cli_parser.build_parser()
    (sub,) = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_every_option_has_help_and_says_its_default():
    formatter = cli_parser.HelpFormatter("strongtree")
    for name, sub in _subparsers().items():
        for action in sub._actions:
            if isinstance(action, (argparse._HelpAction, cli_parser.RenamedOption)):  # renamed: hidden, refused
                continue
            assert action.help, f"{name} {action.dest} has no help"
            if action.option_strings:
                shown = formatter._get_help_string(action)
                assert shown.endswith(("(required)", "(default: none)", "(default: off)", "(default: %(default)s)")), shown


def test_fit_defaults_are_the_estimator_s():
    from strongtree_core import StrongTreeClassifier

    args = cli_parser.build_parser().parse_args(["fit", "x.csv", "--target", "y"])
    params = StrongTreeClassifier().get_params()
    for option, param in [("depth", "depth"), ("time_limit", "time_limit"), ("fairness_bound", "fairness_bound"),
                          ("min_leaf", "min_leaf"), ("n_buckets", "n_buckets"), ("max_thresholds", "max_thresholds"),
                          ("objective", "objective"),
                          ("formulation", "formulation"), ("solver", "solver"), ("threads", "threads"),
                          ("n_jobs", "n_jobs")]:
        assert getattr(args, option) == params[param], option


def test_help_prints_every_default(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["fit", "--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for phrase in ("--depth DEPTH maximum depth of the tree (default: 2)", "seconds (default: 60.0)",
                   "(default: 0.05)", "name of the column to predict (required)", "Exit codes: 0 done"):
        assert phrase in text


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Event:
    def __init__(self, elapsed, objective=None, bound=None, gap=None, nodes=0, message=""):
        self.elapsed, self.objective, self.bound, self.gap, self.nodes, self.message = (
            elapsed, objective, bound, gap, nodes, message)


def test_the_progress_bar_shows_on_a_terminal_after_a_second_and_is_cleared():
    now = [0.0]
    screen = _Terminal()
    progress = cli_progress.Progress(60.0, screen, clock=lambda: now[0])
    progress(_Event(0.2, objective=500, bound=520, gap=0.04))
    progress.tick()
    assert screen.getvalue() == ""  # a quick solve shows no bar
    now[0] = 15.0
    progress.tick()
    line = "[######··················]   15.0s / 60s  best 500  bound 520  gap 4.00%"
    assert screen.getvalue() == "\r" + line.ljust(cli_progress.LINE_WIDTH)
    progress.end()
    assert screen.getvalue().endswith("\r" + " " * cli_progress.LINE_WIDTH + "\r")


def test_no_bar_off_a_terminal_only_log_lines():
    now = [0.0]
    log = io.StringIO()
    progress = cli_progress.Progress(60.0, log, clock=lambda: now[0])
    progress(_Event(0.5, objective=500, message="warm start: CART"))
    progress(_Event(1.0, objective=500))  # nothing new: no line
    progress(_Event(2.0, objective=510))
    now[0] = 30.0
    progress.tick()
    progress(_Event(31.0, objective=510, bound=510, message="certified optimal"))
    progress.end()
    assert log.getvalue().splitlines() == [
        "   0.5s  best 500  nodes 0  warm start: CART",
        "   2.0s  best 510  nodes 0",
        # the search closing is no claim: the outcome's proof line says over what it holds
        "  31.0s  best 510  bound 510  nodes 0  search closed (bound met)",
    ]


# -- real processes ---------------------------------------------------------------------------------


def _run(*args: str, data: bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "strongtree_core", *args], input=data, capture_output=True,
                          cwd=ROOT, timeout=timeout)


def test_a_pipe_through_fit_and_export(tmp_path):
    fitted = _run("fit", "-", "--target", "hired", "--depth", "1", "--output", "-",
                  data=_table().to_csv(index=False, sep=";").encode())
    assert fitted.returncode == 0, fitted.stderr.decode()
    tree = FittedTree.from_json(fitted.stdout.decode())
    exported = _run("export", "--tree", "-", "--format", "text", data=fitted.stdout)
    assert exported.returncode == 0 and exported.stdout.decode().rstrip("\n") == tree.to_text()


def _long_problem(folder: Path) -> Path:
    """400 rows, 8 continuous columns, a noisy interaction: FlowOCT at depth 3 runs for minutes."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(400, 8)).round(2), columns=[f"f{j}" for j in range(8)])
    signal_ = X["f0"] * X["f1"] + np.sin(3 * X["f2"]) + 0.5 * X["f3"] ** 2 + rng.normal(scale=0.8, size=400)
    X["y"] = np.where(signal_ > 0.4, "a", "b")
    path = folder / "long.csv"
    X.to_csv(path, index=False)
    return path


def _lines(stream, into: queue.Queue) -> None:
    for line in iter(stream.readline, b""):
        into.put(line.decode())
    into.put(None)


@pytest.mark.timing
def test_ctrl_c_exits_130_with_the_best_tree_written(tmp_path):
    data, tree_file = _long_problem(tmp_path), tmp_path / "tree.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "strongtree_core", "fit", str(data), "--target", "y", "--depth", "3",
         "--formulation", "flow", "--solver", "highs", "--no-exact-search", "--time-limit", "300",
         "--output", str(tree_file)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_lines, args=(process.stderr, lines), daemon=True).start()
    seen = []
    try:
        deadline = time.monotonic() + 60
        while not any("best" in line for line in seen):  # the solve has a tree
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None, "".join(seen)
            seen.append(line)
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)  # standard error is read by the thread above; the report is small
        stopped_after = time.monotonic() - sent
        out = process.stdout.read()
    finally:
        if process.poll() is None:
            process.kill()
    while (line := lines.get(timeout=5)) is not None:
        seen.append(line)
    err = "".join(seen)
    assert process.returncode == 130, err
    assert cli.STOPPING in err and "Traceback" not in err
    assert "terminate called" not in err  # HiGHS's threads torn down at exit aborted the process (SIGABRT)
    tree = FittedTree.from_json(tree_file.read_text(encoding="utf-8"))
    assert tree.record.status == "interrupted" and not tree.record.certified
    report = out.decode()
    assert "status: interrupted" in report and f"tree written to {tree_file}" in report
    assert cli.INTERRUPTED.format(elapsed=tree.record.runtime) in err
    assert stopped_after < 30
