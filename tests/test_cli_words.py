"""The command line speaks its own words: every library message that names a Python parameter is
said with the option the user typed (exact text, through `strongtree fit` and `strongtree sweep`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from strongtree_core import cli
from strongtree_core.cli.words import (
    CLI_BAD_POSITIVE,
    CLI_BAD_VALUE,
    CLI_NEEDS_LEGITIMATE,
    CLI_NEEDS_PROTECTED,
    FLAGS,
    cli_words,
)
from strongtree_core.estimator.classifier import StrongTreeClassifier
from strongtree_core.estimator.training import NEEDS_LEGITIMATE, NEEDS_SENSITIVE


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(0)
    n = 40
    frame = pd.DataFrame({"score": rng.integers(0, 10, n), "gender": rng.choice(["f", "m"], n),
                          "level": rng.choice(["a", "b"], n)})
    frame["hired"] = np.where(frame["score"] > 4, "yes", "no")
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    return path


def _fit(data, *extra) -> list[str]:
    return ["fit", str(data), "--target", "hired", "--time-limit", "10", *map(str, extra)]


#: A value out of its range is refused while the options are read, in the option's own words and with exit
#: code 2 (tests/test_hostile_numbers.py); what remains here is what the library refuses in fit.
CASES = [
    (["--fairness", "statistical_parity"],
     "--fairness statistical_parity compares groups: name the protected column with --protected COLUMN."),
    (["--fairness", "conditional_statistical_parity", "--protected", "gender"],
     "--fairness conditional_statistical_parity needs the legitimate factor: name its column with --legitimate COLUMN."),
    (["--pos-label", "maybe"], "--pos-label maybe is not a value of the target column; its values are ['no', 'yes']."),
]


@pytest.mark.parametrize("extra, expected", CASES, ids=[c[1][:30] for c in CASES])
def test_fit_says_it_with_the_option(data, capsys, extra, expected):
    code = cli.main(_fit(data, *extra))
    err = capsys.readouterr().err
    assert code == 1
    assert err.strip().splitlines()[-1] == "error: " + expected
    assert "StrongTreeClassifier" not in err and "fit(" not in err and "sensitive_features" not in err


def test_sweep_says_it_with_the_option_too(data, capsys):
    code = cli.main(["sweep", str(data), "--target", "hired", "--fairness", "statistical_parity", "--time-limit", "5"])
    out, err = capsys.readouterr()
    assert code == 2
    assert err.strip().splitlines()[-1] == cli.SWEEP_NEEDS_PROTECTED
    assert "StrongTreeClassifier" not in out + err


def test_every_option_of_the_table_is_an_option_of_fit():
    from strongtree_core.cli.parser import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if hasattr(a, "choices") and isinstance(a.choices, dict))
    options = {o for a in sub.choices["fit"]._actions for o in a.option_strings}
    assert set(FLAGS.values()) <= options
    assert set(FLAGS) <= set(StrongTreeClassifier().get_params())


def test_messages_the_command_line_does_not_name_pass_unchanged():
    assert cli_words("The table has no rows.") == "The table has no rows."
    assert cli_words(NEEDS_LEGITIMATE) == CLI_NEEDS_LEGITIMATE
    assert cli_words(NEEDS_SENSITIVE.format(fairness=["statistical_parity", "equalized_odds"])) == \
        CLI_NEEDS_PROTECTED.format(notions="statistical_parity equalized_odds")
    assert CLI_BAD_VALUE and CLI_BAD_POSITIVE
