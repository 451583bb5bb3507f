"""Built-in tables that need no internet: scikit-learn's bundled datasets and the
generated hiring table (:func:`strongtree_core.datasets.make_hiring`, importable from
here too), with the roles each suggests and the live demo's preset."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Callable

import numpy as np
import pandas as pd

from strongtree_core.datasets import (
    BALANCE_DESCRIPTION,
    EDUCATION_LEVELS,
    HIRING_DESCRIPTION,
    make_balance_scale,
    make_hiring,
)
from strongtree_studio.data.choices import ModelConfig, SplitConfig

__all__ = ["DEMO", "DEMOS", "EDUCATION_LEVELS", "HIRING_DESCRIPTION", "DemoPreset", "DemoTable", "make_hiring"]

def _sklearn_table(loader: Callable, target: str) -> pd.DataFrame:
    bunch = loader(as_frame=True)
    frame = bunch.frame.drop(columns="target")
    frame[target] = np.asarray(bunch.target_names)[bunch.target.to_numpy()].astype(str)
    return frame


def _breast_cancer() -> pd.DataFrame:
    from sklearn.datasets import load_breast_cancer

    return _sklearn_table(load_breast_cancer, "diagnosis")


def _iris() -> pd.DataFrame:
    from sklearn.datasets import load_iris

    return _sklearn_table(load_iris, "species")


def _wine() -> pd.DataFrame:
    from sklearn.datasets import load_wine

    return _sklearn_table(load_wine, "cultivar")


@dataclass(frozen=True)
class DemoTable:
    """A built-in table and the column roles it suggests."""

    name: str
    load: Callable[[], pd.DataFrame]
    summary: str
    target: str
    pos_label: str | None = None
    protected: tuple[str, ...] = ()
    legitimate: tuple[str, ...] = ()
    ignored: tuple[str, ...] = field(default_factory=tuple)
    description: str = ""  # how the table was made, when there is more to say than the summary


DEMOS: dict[str, DemoTable] = {
    demo.name: demo
    for demo in (
        DemoTable(
            "Hiring (teaching data with planted bias)",
            make_hiring,
            "800 past applicants; predict `hired`. Protected attribute `gender`, legitimate factor `education`; "
            "the historical decisions were biased against women on purpose, so every fairness notion has "
            "something to show.",
            target="hired",
            pos_label="yes",
            protected=("gender",),
            legitimate=("education",),
            description=HIRING_DESCRIPTION,
        ),
        DemoTable(
            "Hiring, 10,000 applicants (live demo)",
            partial(make_hiring, 10_000, 7),
            "The hiring teaching table with 10,000 applicants (same generator, seed 7): the table of the live demo.",
            target="hired",
            pos_label="yes",
            protected=("gender",),
            legitimate=("education",),
            description=HIRING_DESCRIPTION,
        ),
        DemoTable(
            "Breast cancer (Wisconsin, scikit-learn)",
            _breast_cancer,
            "569 tumours, 30 numeric measurements; predict `diagnosis` (malignant / benign). "
            "No protected attribute: use it to see optimal trees without fairness constraints.",
            target="diagnosis",
            pos_label="malignant",
        ),
        DemoTable(
            "Balance scale (generated, as in the paper)",
            make_balance_scale,
            "625 placings of weights on a balance, 4 categorical columns; predict which way it `tips` "
            "(L, B, R). The paper's balance-scale table, generated from its rule.",
            target="tips",
            description=BALANCE_DESCRIPTION,
        ),
        DemoTable(
            "Iris (scikit-learn)",
            _iris,
            "150 flowers, 4 measurements, 3 species. A small multi-class table for teaching.",
            target="species",
        ),
        DemoTable(
            "Wine (scikit-learn)",
            _wine,
            "178 wines, 13 chemical measurements, 3 cultivars.",
            target="cultivar",
        ),
    )
}


@dataclass(frozen=True)
class DemoPreset:
    """A built-in table with model settings whose solve is worth watching."""

    table: str  # a key of DEMOS
    model: ModelConfig
    split: SplitConfig
    summary: str


#: The live demo: a fair tree whose proof takes long enough to watch the best tree rise and
#: the bound fall step by step, yet closes its gap well within the minute: on an idle 2-core
#: machine the exact search certifies it in about 10 s after 11 better trees and 6 tighter
#: bounds on the 7,500 training rows (with 3,000 rows it was over in 3 s), over the 27 of 142
#: thresholds its 10 quantile cuts keep: "Optimal over kept thresholds".  Over every threshold it
#: proved nothing in 117 CPU s (benchmarks/RESULTS.md, section 40).
DEMO = DemoPreset(
    table="Hiring, 10,000 applicants (live demo)",
    model=ModelConfig(depth=4, fairness=("equalized_odds",), fairness_bound=0.01, n_buckets=10, time_limit=60.0),
    split=SplitConfig(test_size=0.25, seed=0, stratify=True),
    summary=(
        "Loads the hiring table with 10,000 applicants and solves a depth-4 tree whose true- and false-positive "
        "rates may differ by at most 1 percentage point between women and men: watch the best tree rise and "
        "the bound fall until they meet."
    ),
)
