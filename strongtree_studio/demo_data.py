"""Built-in tables that need no internet: scikit-learn's bundled datasets and a
generated teaching dataset with a protected attribute, a legitimate factor and
planted historical bias."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Callable

import numpy as np
import pandas as pd

from strongtree_studio.config import ModelConfig, SplitConfig

#: Levels of the legitimate factor of the hiring table, lowest first.
EDUCATION_LEVELS = ("secondary", "bachelor", "master")

HIRING_DESCRIPTION = """\
**Hiring (teaching data).** Generated with a fixed seed so every run sees the same
table. Each row is one past applicant; `hired` is what recruiters decided.

1. `gender` is *female* or *male* with equal probability (the **protected attribute**).
2. `education` (the **legitimate factor**) is secondary / bachelor / master with
   probabilities 0.25 / 0.45 / 0.30 for women and 0.35 / 0.45 / 0.20 for men.
3. `career_break` is *yes* for 45 % of women and 8 % of men; a break takes
   0–3 years off `experience`, which is otherwise a rounded Gamma(2, 3) draw (0–25 years).
4. `test_score` is Normal(60 + 8·level, 12) rounded and clipped to 0–100, where level
   is 0 / 1 / 2 for the three education levels.
5. `referral` is *yes* for 12 % of women and 40 % of men; `age` is uniform on 21–60.
   Neither affects merit.
6. Merit is `0.6·level + 0.12·experience + 0.04·(test_score − 60) + Normal(0, 0.6)`;
   an applicant is *qualified* when merit > 1.4 (the merit column is not in the table).
7. **Planted bias** in the historical decision: qualified applicants were hired,
   except that qualified women were turned down with probability 0.35 and qualified
   applicants with a career break with probability 0.4; unqualified applicants with a
   referral were hired anyway with probability 0.45. Finally 3 % of decisions are
   flipped at random.

So hiring rates differ by gender overall (statistical parity), within each education
level (conditional statistical parity), among the qualified (equal opportunity) and
among the unqualified (predictive equality), and `career_break` and `referral` act as
proxies for gender: the most accurate depth-2 tree never asks about gender, yet
splits on `referral` and `career_break` and hires men far more often than women.
"""


def make_hiring(n_rows: int = 800, seed: int = 7) -> pd.DataFrame:
    """Generate the hiring teaching table described in :data:`HIRING_DESCRIPTION`.

    Parameters
    ----------
    n_rows : int, default 800
    seed : int, default 7

    Returns
    -------
    pandas.DataFrame
        Columns ``gender, age, education, experience, career_break, test_score,
        referral, hired``; ``hired`` is ``"yes"``/``"no"``.
    """
    rng = np.random.default_rng(seed)
    female = rng.random(n_rows) < 0.5
    p_edu = np.where(female[:, None], [0.25, 0.45, 0.30], [0.35, 0.45, 0.20])
    level = (rng.random(n_rows)[:, None] > p_edu.cumsum(axis=1)).sum(axis=1)
    career_break = rng.random(n_rows) < np.where(female, 0.45, 0.08)
    experience = np.round(rng.gamma(2.0, 3.0, n_rows)) - career_break * rng.integers(0, 4, n_rows)
    experience = np.clip(experience, 0, 25).astype(int)
    test_score = np.clip(np.round(rng.normal(60 + 8 * level, 12)), 0, 100).astype(int)
    referral = rng.random(n_rows) < np.where(female, 0.12, 0.40)
    age = rng.integers(21, 61, n_rows)

    merit = 0.6 * level + 0.12 * experience + 0.04 * (test_score - 60) + rng.normal(0, 0.6, n_rows)
    qualified = merit > 1.4
    turned_down = (female & (rng.random(n_rows) < 0.35)) | (career_break & (rng.random(n_rows) < 0.4))
    favoured = referral & (rng.random(n_rows) < 0.45)
    hired = np.where(qualified, ~turned_down, favoured)
    hired ^= rng.random(n_rows) < 0.03

    return pd.DataFrame(
        {
            "gender": np.where(female, "female", "male"),
            "age": age,
            "education": pd.Categorical(
                np.asarray(EDUCATION_LEVELS)[level], categories=EDUCATION_LEVELS, ordered=True
            ),
            "experience": experience,
            "career_break": np.where(career_break, "yes", "no"),
            "test_score": test_score,
            "referral": np.where(referral, "yes", "no"),
            "hired": np.where(hired, "yes", "no"),
        }
    )


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
#: bounds on the 7,500 training rows (with 3,000 rows it was over in 3 s).
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
