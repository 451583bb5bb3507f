"""App-side helpers of StrongTree Studio: data loading, demo tables, the solve
job runner, the run store and small view helpers.  No solver logic lives here:
every tree comes from :mod:`strongtree_core`."""
