"""The table the user works on, as the dashboard keeps it."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class LoadedTable:
    """The table the user is working on."""

    name: str
    frame: pd.DataFrame  # what the tree learns from: the loaded table with the column edits applied
    fingerprint: str  # of ``frame``
    notes: tuple[str, ...] = ()  # what reading the file assumed (e.g. its text encoding)
    raw: pd.DataFrame | None = None  # the table as loaded, before column edits (None: ``frame`` itself)

    @property
    def loaded(self) -> pd.DataFrame:
        """The table as it was loaded."""
        return self.frame if self.raw is None else self.raw
