"""The fairness constraints of a specification as comparisons of counts.

Every notion of ``formulation/fairness_constraints.py`` compares, in each cohort, the
groups' counts of rows predicted positive: with ``N_j`` rows of group ``j`` in
the cohort and ``T_j`` of them predicted positive, formulation (11)'s row for
the groups ``j``, ``m`` reads, multiplied by ``g = gcd(N_j, N_m)``,

    N_m T_j - N_j T_m <= H[j, m],    H[j, m] = g floor(delta N_j N_m / g)

(and the same with ``j``, ``m`` swapped): integers on both sides, so the
comparison is exact.  A *cell* is a cohort and a group; an *atom* is a set of
patterns that lie in the same cells (one cell each when there is one notion;
several notions, such as statistical parity and equal opportunity together,
make atoms of the cells' intersections).  A subtree's effect on every
comparison is the vector of its atoms' rows predicted positive: the state of
the exact search of ``accel/count_search.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from strongtree_core.encoding.patterns import PatternData
from strongtree_core.formulation.fairness_constraints import ParityConstraint
from strongtree_core.formulation.quality_constraints import exact_bound, resolve_positive
from strongtree_core.formulation.spec import TreeSpec


@dataclass(frozen=True)
class GroupCounts:
    """Comparisons of groups' counts, as the compiled kernels take them (``accel/fronts.py``).

    Attributes
    ----------
    atom : ndarray of int64, shape (P,)
        The atom of each pattern, -1 for a pattern that no comparison counts.
    atom_rows : ndarray of int64, shape (n_atoms,)
        Rows of each atom.
    cg_start : ndarray of int64, shape (n_cohorts + 1,)
        The groups of cohort ``c`` are ``cg_start[c] .. cg_start[c + 1] - 1``.
    gN : ndarray of int64, shape (n_groups,)
        Rows of each group of each cohort (``N_j``).
    ga_start, ga_atoms : ndarray of int64
        The atoms of group ``j`` are ``ga_atoms[ga_start[j]:ga_start[j + 1]]``.
    H : ndarray of int64
        The bounds ``H[j, m]`` of each cohort, a ``k x k`` block (``k`` its groups) from
        ``ch_start[c]`` on, row-major in the cohort's own numbering of its groups.
    ch_start : ndarray of int64, shape (n_cohorts + 1,)
    positive : int
        The class whose predictions are counted.
    labels : tuple of str
        Each cohort in words ("conditional statistical parity: rows of legitimate level 'a'").
    """

    atom: np.ndarray
    atom_rows: np.ndarray
    cg_start: np.ndarray
    gN: np.ndarray
    ga_start: np.ndarray
    ga_atoms: np.ndarray
    H: np.ndarray
    ch_start: np.ndarray
    positive: int
    labels: tuple[str, ...]

    @property
    def n_atoms(self) -> int:
        return int(self.atom_rows.size)

    @property
    def n_cohorts(self) -> int:
        return int(self.cg_start.size - 1)

    @property
    def n_groups(self) -> int:
        return int(self.gN.size)

    def group_totals(self, keys: np.ndarray) -> np.ndarray:
        """Rows predicted positive per group, (m, n_groups), from atoms' counts (m, n_atoms)."""
        keys = np.asarray(keys)
        out = np.zeros((keys.shape[0], self.n_groups), dtype=np.int64)
        for j in range(self.n_groups):
            atoms = self.ga_atoms[self.ga_start[j]:self.ga_start[j + 1]]
            out[:, j] = keys[:, atoms].sum(axis=1)
        return out

    def holds(self, totals: np.ndarray) -> bool:
        """Every comparison holds at the groups' totals (n_groups,): plain Python, the reference."""
        for c in range(self.n_cohorts):
            g0, g1 = int(self.cg_start[c]), int(self.cg_start[c + 1])
            k = g1 - g0
            block = self.H[self.ch_start[c]:self.ch_start[c] + k * k].reshape(k, k)
            for j in range(k):
                for m in range(k):
                    if j != m and int(self.gN[g0 + m]) * int(totals[g0 + j]) - int(self.gN[g0 + j]) * int(totals[g0 + m]) \
                            > int(block[j, m]):
                        return False
        return True

    def cohort(self, c: int) -> "GroupCounts":
        """The comparisons of cohort ``c`` alone, over its own atoms (numbered 0 ..)."""
        g0, g1 = int(self.cg_start[c]), int(self.cg_start[c + 1])
        atoms = np.unique(self.ga_atoms[self.ga_start[g0]:self.ga_start[g1]])
        renumber = np.full(self.n_atoms, -1, dtype=np.int64)
        renumber[atoms] = np.arange(atoms.size)
        atom = np.where(self.atom >= 0, renumber[np.maximum(self.atom, 0)], -1)
        k = g1 - g0
        return GroupCounts(
            atom=atom, atom_rows=self.atom_rows[atoms],
            cg_start=np.array([0, k], dtype=np.int64), gN=self.gN[g0:g1].copy(),
            ga_start=self.ga_start[g0:g1 + 1] - self.ga_start[g0],
            ga_atoms=renumber[self.ga_atoms[self.ga_start[g0]:self.ga_start[g1]]],
            H=self.H[self.ch_start[c]:self.ch_start[c] + k * k].copy(), ch_start=np.array([0, k * k], dtype=np.int64),
            positive=self.positive, labels=(self.labels[c],),
        )


def fairness_only(spec: TreeSpec) -> bool:
    """Every side constraint is a fairness notion (and there is one)."""
    return bool(spec.side_constraints) and all(isinstance(c, ParityConstraint) for c in spec.side_constraints)


def group_counts(data: PatternData, spec: TreeSpec) -> GroupCounts | None:
    """The comparisons of ``spec``'s fairness constraints on ``data``; None when a side constraint is
    not a fairness notion or the notions count different positive classes."""
    if not fairness_only(spec):
        return None
    positives = {resolve_positive(c.pos_label, spec.pos_label, c.name) for c in spec.side_constraints}
    if len(positives) != 1:
        return None
    (positive,) = positives
    count = np.asarray(data.count, dtype=np.int64)
    cells: list[np.ndarray] = []  # mask of patterns per cell
    cohorts: list[tuple[str, list[int], list[int]]] = []  # (label, cell ids, sizes)
    bounds: list[Fraction] = []
    for constraint in spec.side_constraints:
        delta = exact_bound(constraint.bound, "fairness_bound")
        found, _ = constraint.cohorts(data.y, data.group, data.legit, positive, count)
        group = np.asarray(data.group, dtype=np.int64)
        for cohort in found:
            present = np.flatnonzero(cohort.sizes > 0)
            if present.size < 2:
                continue  # nothing to compare there
            ids = []
            for g in present:
                ids.append(len(cells))
                cells.append(cohort.mask & (group == g))
            cohorts.append((f"{constraint.notion}: {cohort.label}", ids, [int(cohort.sizes[g]) for g in present]))
            bounds.append(delta)
    P = data.n_patterns
    if not cells:
        member = np.zeros((P, 0), dtype=bool)
    else:
        member = np.stack(cells, axis=1)
    counted = member.any(axis=1)
    signatures, atom_of = np.unique(member[counted], axis=0, return_inverse=True)
    atom = np.full(P, -1, dtype=np.int64)
    atom[counted] = atom_of.ravel()
    atom_rows = np.bincount(atom[counted], weights=count[counted], minlength=len(signatures)).astype(np.int64)
    cg_start, gN, ga_start, ga_atoms, H, ch_start = [0], [], [0], [], [], [0]
    for (label, ids, sizes), delta in zip(cohorts, bounds):
        for cell in ids:
            atoms = np.flatnonzero(signatures[:, cell])
            ga_atoms.extend(atoms.tolist())
            ga_start.append(len(ga_atoms))
        gN.extend(sizes)
        cg_start.append(len(gN))
        k = len(sizes)
        for j in range(k):
            for m in range(k):
                if j == m:
                    H.append(0)
                    continue
                g = math.gcd(sizes[j], sizes[m])
                H.append(g * math.floor(delta * sizes[j] * sizes[m] / g))
        ch_start.append(len(H))
    as_array = lambda v: np.asarray(v, dtype=np.int64)  # noqa: E731
    return GroupCounts(
        atom=atom, atom_rows=atom_rows, cg_start=as_array(cg_start), gN=as_array(gN), ga_start=as_array(ga_start),
        ga_atoms=as_array(ga_atoms), H=as_array(H), ch_start=as_array(ch_start), positive=int(positive),
        labels=tuple(label for label, _, _ in cohorts),
    )
