"""What outlives a session: the run history, the sweeps, each browser's work, the table as the
dashboard keeps it, the tables on the server, and the private files they are written to."""
