"""Solver-neutral model arrays and a vectorized row builder.

A formulation becomes a :class:`ModelArrays`: objective ``c``, sparse constraint
matrix ``A`` with ranged rows ``row_lower <= A x <= row_upper``, column bounds,
integrality and index maps from the paper's variable names to column numbers.
Backends read only these arrays; no solver is imported here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Literal, Mapping

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

#: Cut rows returned by a separation routine: (A_cut, lower, upper) with ``A_cut``
#: a CSR matrix over the model's columns.  (scipy.sparse is imported where a model is built: the
#: exact search reads the constraints' classes here and never builds one.)
CutRows = tuple["sp.csr_matrix", np.ndarray, np.ndarray]
Separator = Callable[[np.ndarray], CutRows]


@dataclass(frozen=True)
class ModelArrays:
    """A mixed-integer linear model in array form.

    Attributes
    ----------
    sense : {"max", "min"}
        Optimization sense of ``c @ x + obj_offset``.
    c : ndarray, shape (n_cols,)
    A : csr_matrix, shape (n_rows, n_cols)
    row_lower, row_upper : ndarray, shape (n_rows,)
        Ranged rows; ``-inf`` / ``inf`` for one-sided rows.
    col_lower, col_upper : ndarray, shape (n_cols,)
    integrality : ndarray of bool, shape (n_cols,)
    index : mapping of str to ndarray of int
        Column numbers of each variable family, shaped like the family
        (for example ``index["b"]`` has shape ``(|B|, F)``).
    name : str
        Human-readable formulation name ("FlowOCT (eq. 1)", ...).
    separator : callable or None
        For decompositions solved with lazy constraints: a pure function of an
        integral solution vector returning violated cut rows (empty when none).
    lazy_locks : mapping of str to {"up", "down"}
        Direction in which each variable family appears in lazy cuts
        (needed by solvers that must know the cuts' variable locks).
    obj_offset : float
    branch_priority : ndarray of int, shape (n_cols,), or None
        Branching priority of each column for backends that honour one
        (SCIP, Gurobi; a larger value is branched on first); None leaves the
        choice to the solver.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from strongtree_core.encoding import TableEncoder, collapse_patterns
    >>> X = pd.DataFrame({'a': [0, 1, 0, 1, 1, 0], 'b': [1, 1, 0, 0, 1, 0]})
    >>> y = np.array([0, 1, 0, 1, 1, 1])
    >>> plan = TableEncoder().fit(X)
    >>> data = collapse_patterns(plan.transform(X), y, 2)
    >>> from strongtree_core.formulation import TreeSpec, build_model
    >>> built = build_model(data, TreeSpec(depth=1), 'flow')
    >>> arrays = built.arrays
    >>> arrays.A.shape == (arrays.n_rows, arrays.n_cols)
    True
    """

    sense: Literal["max", "min"]
    c: np.ndarray
    A: sp.csr_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integrality: np.ndarray
    index: Mapping[str, np.ndarray]
    name: str = "model"
    separator: Separator | None = None
    lazy_locks: Mapping[str, str] = field(default_factory=dict)
    obj_offset: float = 0.0
    branch_priority: np.ndarray | None = None

    @property
    def n_cols(self) -> int:
        """How many variables (columns)."""
        return int(self.c.shape[0])

    @property
    def n_rows(self) -> int:
        """How many constraints (rows of ``A``)."""
        return int(self.A.shape[0])

    @property
    def n_integer(self) -> int:
        """How many variables are integer."""
        return int(self.integrality.sum())

    def objective(self, x: np.ndarray) -> float:
        """The objective's value at ``x`` (``c @ x`` plus the constant offset)."""
        return float(self.c @ x + self.obj_offset)

    def max_violation(self, x: np.ndarray) -> float:
        """Largest violation of rows and bounds by ``x`` (0 when feasible)."""
        ax = self.A @ x
        viol = np.concatenate(
            [
                self.row_lower - ax,
                ax - self.row_upper,
                self.col_lower - x,
                x - self.col_upper,
                [0.0],
            ]
        )
        return float(np.nanmax(np.where(np.isfinite(viol), viol, 0.0)))


def with_objective_cap(model: ModelArrays, cap: float) -> ModelArrays:
    """Add the row ``c x + offset <= cap`` (``>=`` when minimizing).

    ``cap`` must be a valid bound on the optimum, e.g. the optimum of a
    relaxation; it tightens the root bound so the reported gap is honest from
    the start.
    """
    import scipy.sparse as sp

    row = sp.csr_matrix(model.c.reshape(1, -1))
    rhs = cap + 1e-7 * max(1.0, abs(cap)) - model.obj_offset  # never cut the optimum on round-off
    lower, upper = (-np.inf, rhs) if model.sense == "max" else (rhs, np.inf)
    return replace(
        model,
        A=sp.vstack([model.A, row]).tocsr(),
        row_lower=np.append(model.row_lower, lower),
        row_upper=np.append(model.row_upper, upper),
    )


class ColumnAllocator:
    """Hands out consecutive column blocks and records bounds and integrality."""

    def __init__(self) -> None:
        self._n = 0
        self.index: dict[str, np.ndarray] = {}
        self._lower: list[np.ndarray] = []
        self._upper: list[np.ndarray] = []
        self._integer: list[np.ndarray] = []

    def add(self, name: str, shape: tuple[int, ...], *, lower: float = 0.0, upper: float = 1.0, integer: bool) -> np.ndarray:
        size = int(np.prod(shape)) if shape else 1
        cols = np.arange(self._n, self._n + size).reshape(shape)
        self._n += size
        self.index[name] = cols
        self._lower.append(np.full(size, lower, dtype=float))
        self._upper.append(np.full(size, upper, dtype=float))
        self._integer.append(np.full(size, integer, dtype=bool))
        return cols

    @property
    def n_cols(self) -> int:
        return self._n

    def bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self._lower:
            empty = np.zeros(0)
            return empty, empty, np.zeros(0, dtype=bool)
        return np.concatenate(self._lower), np.concatenate(self._upper), np.concatenate(self._integer)


class RowBuilder:
    """Collects blocks of rows as COO triplets, built with numpy index arithmetic.

    ``add(cols, coefs, lower, upper)`` takes ``cols`` and ``coefs`` of shape
    (n_new_rows, terms_per_row) (coefficient 0 entries are dropped), and appends
    ``n_new_rows`` rows ``lower <= sum_j coefs[r, j] x[cols[r, j]] <= upper``.
    """

    def __init__(self) -> None:
        self._rows: list[np.ndarray] = []
        self._cols: list[np.ndarray] = []
        self._vals: list[np.ndarray] = []
        self._lower: list[np.ndarray] = []
        self._upper: list[np.ndarray] = []
        self._names: list[tuple[str, int, int]] = []
        self.n_rows = 0

    def add(self, name: str, cols: np.ndarray, coefs: np.ndarray, lower, upper) -> slice:
        cols = np.asarray(cols)
        coefs = np.broadcast_to(np.asarray(coefs, dtype=float), cols.shape)
        if cols.ndim == 1:
            cols = cols[None, :]
            coefs = coefs[None, :]
        n_new = cols.shape[0]
        rows = np.broadcast_to(np.arange(self.n_rows, self.n_rows + n_new)[:, None], cols.shape)
        keep = coefs != 0
        self._rows.append(rows[keep])
        self._cols.append(cols[keep])
        self._vals.append(coefs[keep])
        self._lower.append(np.broadcast_to(np.asarray(lower, dtype=float), (n_new,)).copy())
        self._upper.append(np.broadcast_to(np.asarray(upper, dtype=float), (n_new,)).copy())
        block = slice(self.n_rows, self.n_rows + n_new)
        self._names.append((name, block.start, block.stop))
        self.n_rows += n_new
        return block

    def add_csr(self, name: str, M: sp.spmatrix, lower, upper) -> slice:
        """Append rows given as a sparse matrix over the columns."""
        import scipy.sparse as sp

        M = sp.coo_matrix(M)
        n_new = M.shape[0]
        self._rows.append(M.row + self.n_rows)
        self._cols.append(M.col)
        self._vals.append(M.data.astype(float))
        self._lower.append(np.broadcast_to(np.asarray(lower, dtype=float), (n_new,)).copy())
        self._upper.append(np.broadcast_to(np.asarray(upper, dtype=float), (n_new,)).copy())
        block = slice(self.n_rows, self.n_rows + n_new)
        self._names.append((name, block.start, block.stop))
        self.n_rows += n_new
        return block

    @property
    def row_blocks(self) -> list[tuple[str, int, int]]:
        """(name, first row, end row) of each block, for messages and tests."""
        return list(self._names)

    def matrix(self, n_cols: int) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
        import scipy.sparse as sp

        if not self._rows:
            return sp.csr_matrix((0, n_cols)), np.zeros(0), np.zeros(0)
        A = sp.csr_matrix(
            (np.concatenate(self._vals), (np.concatenate(self._rows), np.concatenate(self._cols))),
            shape=(self.n_rows, n_cols),
        )
        A.sum_duplicates()
        return A, np.concatenate(self._lower), np.concatenate(self._upper)
