"""Tables read where they lie: Parquet files, folders and globs of them, CSV files, read in
passes of batches (on this machine with pyarrow, or on a Dask cluster's workers) and summed into
the weighted patterns the search takes, without holding the rows in memory.

``StrongTreeClassifier.fit_table`` is the way in; :mod:`~strongtree_core.estimator.table_fit` its steps.
"""

from strongtree_core.source.paths import TableFiles, resolve

__all__ = ["TableFiles", "resolve"]
