"""The user's table and choices: loading, the codebook, column types and roles, the demo tables,
the choices as plain values, whether a result is stale, and a run measured on its rows."""
