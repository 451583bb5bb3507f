"""Datasets for teaching and tests: a generated hiring table with a protected attribute,
a legitimate factor and planted historical bias, and the balance-scale table of the
paper's experiments, generated from its rule (no download, no internet)."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["BALANCE_DESCRIPTION", "EDUCATION_LEVELS", "HIRING_DESCRIPTION", "make_balance_scale", "make_hiring"]

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
        Number of applicants (rows).
    seed : int, default 7
        Seed of the random generator: the same seed gives the same table.

    Returns
    -------
    pandas.DataFrame
        Columns ``gender, age, education, experience, career_break, test_score,
        referral, hired``; ``hired`` is ``"yes"``/``"no"``, ``education`` an ordered
        categorical (secondary < bachelor < master).

    Examples
    --------
    >>> from strongtree_core.datasets import make_hiring
    >>> df = make_hiring(200, seed=0)
    >>> df.shape
    (200, 8)
    >>> list(df.columns)
    ['gender', 'age', 'education', 'experience', 'career_break', 'test_score', 'referral', 'hired']
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


BALANCE_DESCRIPTION = """\
**Balance scale (generated).** Every one of the 5 x 5 x 5 x 5 = 625 ways to put a weight of
1-5 at a distance of 1-5 on each side of a balance, and which way it tips: `L` when
left weight x left distance is larger, `R` when the right's is, `B` (balanced) when they
are equal. This is the whole of the UCI table the paper's experiments use (balance-scale,
625 rows), generated from its rule. The four columns are categories, so a split asks
"left_weight = 3?" as in the paper's one-hot encoding; no single split comes near the
rule (a product of two columns), which is why formulations differ in how much of that
they can see before branching.
"""


def make_balance_scale() -> pd.DataFrame:
    """Generate the balance-scale table described in :data:`BALANCE_DESCRIPTION`.

    Returns
    -------
    pandas.DataFrame
        625 rows; columns ``left_weight, left_distance, right_weight, right_distance``
        (unordered categoricals of the integers 1-5) and ``tips`` (``"L"``, ``"B"`` or ``"R"``).

    Examples
    --------
    >>> table = make_balance_scale()
    >>> table.shape, dict(sorted(table["tips"].value_counts().items()))
    ((625, 5), {'B': 49, 'L': 288, 'R': 288})
    """
    levels = np.arange(1, 6)
    lw, ld, rw, rd = (axis.ravel() for axis in np.meshgrid(levels, levels, levels, levels, indexing="ij"))
    left, right = lw * ld, rw * rd
    tips = np.where(left > right, "L", np.where(left < right, "R", "B"))
    columns = {"left_weight": lw, "left_distance": ld, "right_weight": rw, "right_distance": rd}
    frame = pd.DataFrame({name: pd.Categorical(values, categories=levels) for name, values in columns.items()})
    frame["tips"] = tips
    return frame
