"""One verdict for a measured fairness gap against the bound δ, for every surface (the Fairness
page's cards and bars, the HTML report, the command line), and one rule for a rate measured on
too few rows ("small").

* On the **training rows** of a tree fitted under the constraint, the certificate decides: the
  solver proved the gap is at most δ there, and the measured gap says so exactly.
* A **constant tree** (one class for every row) has every group's rate 0 % or 100 % on any rows:
  its gap is 0 on the population too, within any δ, whatever an interval from few rows says.
* Otherwise (test rows, new rows, a gap not constrained) the gap's interval decides: *within δ*
  when all of it is at most δ, *beyond δ* when all of it is above, *undecided* when it straddles
  δ; without an interval (runs stored before intervals), the measured gap, said as such.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from strongtree_core.words import fmt

GapState = Literal["within", "beyond", "undecided"]
#: Slack of the comparison with δ (sums of weights, rounding).
TOLERANCE = 1e-9
#: A rate measured on fewer rows than this is flagged small: its interval is wide and its coverage uncertain.
SMALL_ROWS = 30
#: The words of each state, before δ ("within δ = 5.0 pp").
STATE_WORDS: dict[str, str] = {"within": "within", "beyond": "beyond", "undecided": "undecided against"}


@dataclass(frozen=True)
class GapVerdict:
    """A gap against δ.

    Attributes
    ----------
    state : {"within", "beyond", "undecided"}
    text : str
        "within δ = 5.0 pp", "beyond δ = 5.0 pp", "undecided against δ = 5.0 pp".
    because : str
        What decided it: "the certificate on these rows", "a constant tree: gap 0 on any rows",
        "95 % interval 0.0 pp to 20.4 pp", "the measured gap (no interval)".
    """

    state: str
    text: str
    because: str

    @property
    def words(self) -> str:
        """ "within δ = 5.0 pp (the certificate on these rows)"."""
        return f"{self.text} ({self.because})"


def gap_verdict(gap: float | None, fairness_bound: float, *, training: bool, constrained: bool,
                interval: tuple[float | None, float | None] | None = None, constant: bool = False,
                confidence: float = 0.95) -> GapVerdict | None:
    """The verdict on ``gap`` (a share) against ``fairness_bound`` δ (see the module).

    Parameters
    ----------
    gap : float or None
        The measured gap on these rows (None: nothing to judge, returns None).
    fairness_bound : float
        δ, a share.
    training : bool
        These are the rows the tree was fitted on.
    constrained : bool
        The tree was fitted under this notion's constraint (then the certificate decides on the
        training rows).
    interval : (low, high) or None
        The gap's simultaneous interval on these rows, at ``confidence``.
    constant : bool
        The tree predicts one class for every row.

    Examples
    --------
    >>> gap_verdict(0.083, 0.05, training=False, constrained=True, interval=(0.0, 0.204)).text
    'undecided against δ = 5.0 pp'
    >>> gap_verdict(0.0, 0.05, training=False, constrained=True, interval=(0.0, 0.3), constant=True).state
    'within'
    """
    if gap is None or gap != gap:
        return None
    bound = fmt(fairness_bound, "points")

    def said(state: str, because: str) -> GapVerdict:
        return GapVerdict(state, f"{STATE_WORDS[state]} δ = {bound}", because)

    if constant:
        return said("within", "a constant tree: gap 0 on any rows")
    if training and constrained:
        return said("within" if gap <= fairness_bound + TOLERANCE else "beyond", "the certificate on these rows")
    low, high = interval if interval is not None else (None, None)
    if low is None or high is None or low != low or high != high:
        return said("within" if gap <= fairness_bound + TOLERANCE else "beyond", "the measured gap, no interval")
    span = f"{round(100 * confidence)} % interval {fmt(low, 'points')} to {fmt(high, 'points')}"
    if high <= fairness_bound + TOLERANCE:
        return said("within", span)
    if low > fairness_bound + TOLERANCE:
        return said("beyond", span)
    return said("undecided", span)


def is_small(rows: float | None) -> bool:
    """A rate measured on fewer than :data:`SMALL_ROWS` rows (its denominator) is small.  Few rows of
    one outcome on many rows is not: a rate of 0 of 2,371 is known to within a fraction of a point."""
    return rows is not None and rows == rows and rows < SMALL_ROWS


def small_words(rows: float) -> str:
    """The flag of a small rate: "small: 12 rows"."""
    return f"small: {fmt(rows, 'int')} row" + ("" if rows == 1 else "s")
