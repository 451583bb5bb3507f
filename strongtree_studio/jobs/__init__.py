"""Jobs and workers: the registry of solve jobs, the worker process, what they share, the three
kinds of job (a solve, a sweep, a comparison), the Gurobi WLS licence handed to workers, and the
exact search's one-time preparation."""
