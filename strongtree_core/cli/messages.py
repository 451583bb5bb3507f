"""What the command line says, and its exit codes; tests assert the text."""

from __future__ import annotations

#: Exit codes: done; the solve refused the settings; bad input (nothing solved); a fault of
#: the program; stopped by Ctrl-C (128 + SIGINT, as shells report it).
EXIT_OK, EXIT_SOLVE, EXIT_INPUT, EXIT_FAULT, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

#: The file name that means standard input (data, tree) or standard output (--output).
STDIO = "-"

READ_FAILED = "Could not read {path}: {reason}"
NOT_TEXT = (
    "Could not read {path} as {encoding} text ({reason}). If it is a CSV file in another encoding, name it, "
    "e.g. --file-encoding latin-1, or save the file as UTF-8."
)
NO_TARGET = "The target column {target!r} is not in {path}; its columns are: {columns}."
DUPLICATE_COLUMNS = (
    "{path} has more than one column named {names}: rename them so that every column name is unique "
    "(they would be read as {renamed})."
)
NO_ROWS = "{path} has a header but no data rows."
MISSING_TARGET = (
    "{n} of {total} data rows of {path} have no value in the target column {target!r} (the first is data row {first}): "
    "fill them in, or remove those rows."
)
ROLE_IS_TARGET = "--{option} {column!r} is the target column; name another column."
ROLE_NOT_FOUND = "--{option} {column!r} is not a column of {path}; its columns are: {columns}."
TOO_MANY_GROUPS = (
    "--{option} {column!r} has {n} distinct values; every value is its own group and at most {limit} groups "
    "can be compared. Add a column of explicit buckets to the file (e.g. age bands) and name that column instead."
)
BAD_GIGABYTES = "give the memory limit as a number of GB above 0, e.g. 4 or 0.5 (got {value!r})"
OUTPUT_FORMAT = (
    "{path} ends in {suffix!r}: --output writes CSV (.csv, or a name without an extension), JSON records (.json) "
    "or an Excel workbook (.xlsx). Name the file with one of these; nothing was run."
)
OUTPUT_UNWRITABLE = "Cannot write the tree to {path}: {reason}. Choose another --output; nothing was solved."
OUTPUT_FALLBACK = "Could not write the tree to {path} ({reason}); it was written to {fallback} instead."
INTERNAL_ERROR = "internal error ({kind}): {detail}. Please report it with the command line and the data file."
JSON_AND_STDOUT = (
    "--json and --output - both write to standard output: write the tree to a file (--output tree.json), "
    "or leave out --output (the JSON result holds the tree)."
)
BOTH_FROM_STDIN = "The data and --tree cannot both be read from standard input (-): give one of them as a file."
TREE_UNREADABLE = "Could not read a tree from {path}: {reason}. Give a file written by `strongtree fit --output`."
PREDICT_FAILED = "Cannot predict {path} with the tree {tree}: {reason}"
COLUMN_EXISTS = "{path} already has a column named {column!r}: name the prediction column with --column."
WRITE_FAILED = "Could not write {path}: {reason}."
STOPPING = "Stopping: keeping the best tree found so far (press Ctrl-C again to quit without it)..."
INTERRUPTED_OUTSIDE_SOLVE = "interrupted: stopped before the result was complete; anything not reported above was not written."
QUIT_NOW = "Quit without a tree."
INTERRUPTED = "interrupted: the tree is the best found in {elapsed:.1f}s, not proven optimal."
ACCURACY_AGAINST = "accuracy against the column {target!r}: {accuracy:.4f} ({n} rows)"
SWEEP_NEEDS_PROTECTED = "--fairness compares groups: name the protected column with --protected."
SWEEP_BOUNDS_WITHOUT_FAIRNESS = "--fairness-bound bounds a fairness gap: name the notion(s) with --fairness."
#: An option of an earlier version (argparse prints it after "strongtree <command>: error: ").
RENAMED_FLAG = "{old} is now called {new} (same meaning): use {new}."
SWEEP_FRONTIER_NEEDS_FAIRNESS = "--frontier draws accuracy against a fairness gap: name the notion(s) with --fairness."
SWEEP_STOPPING = (
    "Stopping: running points end with their best tree and every finished point is kept (press Ctrl-C again to "
    "quit without writing them)..."
)
SWEEP_QUIT_NOW = "Quit without writing the points."
SWEEP_LONG = (
    "note: {points:,} points of up to {limit:g} s each on {workers} worker(s): up to {duration} in all. Ctrl-C "
    "stops the sweep and writes the points finished by then."
)
SWEEP_STOPPED = "stopped: {done} of {total} points finished; they are kept."
SWEEP_WRITTEN = "{n} rows written to {path}"
SWEEP_FAILED_POINTS = "{n} of {total} points have no tree (see the status and error columns)."
REPORT_COLUMNS_MISSING = (
    "{path} lacks the column(s) {columns} that the tree {tree} {needs}; give the table the tree learned from."
)
REPORT_WRONG_ROWS = (
    "{path} gives {rows} training rows, but the tree {tree} learned from {expected}: this is not the table (or the "
    "split) it learned from, so the report would measure other rows. Give the table the tree learned from{hint}."
)
REPORT_NO_CONTEXT = (
    "note: {tree} does not say which columns are protected (it was written before version 0.2): the report has no "
    "groups. Refit the tree with this version to have them."
)
REPORT_BASELINE = "solving the same tree without the fairness constraint for comparison (at most {limit:.0f} s)..."
REPORT_BASELINE_FAILED = "note: the tree without the fairness constraint could not be solved ({reason}); the report says so."
REPORT_WRITTEN = "report written to {path}"
REPORT_OUTPUT_STDOUT = "--output must name a file (the report is one HTML page), not standard output."
#: An option's value the command cannot take (argparse prints it after "strongtree <command>: error: argument
#: --option: "; exit code 2): every number option is read by strongtree_core.numbers, in these words.
BAD_DEPTH = "give the depth as a whole number from 0 to {most}, e.g. 3 (got {value!r})"
BAD_SECONDS = "give the time limit in seconds as a number above 0, e.g. 60 (got {value!r})"
BAD_THREADS = "give the solver threads as a whole number of at least 1, e.g. 2 (got {value!r})"
BAD_JOBS = "give a whole number other than 0: a count, -1 for every core, -2 for all but one (got {value!r})"
BAD_LAMBDA = "give λ as a number from 0 up to but not including 1, e.g. 0.01 (got {value!r})"
BAD_COUNT = "give a whole number of at least {least}, e.g. {example} (got {value!r})"
BAD_SHARE = "give a share from 0 to 1, e.g. 0.8 (got {value!r})"
BAD_BOUND = (
    "give the bound δ as a share from 0 to 1 (0.05 is 5 percentage points): 0, or at least {smallest:g} (a smaller "
    "bound a solver does not tell apart from 0) (got {value!r})"
)
BAD_CONFIDENCE = "give the confidence as a number between 0 and 1, both excluded, e.g. 0.9 (got {value!r})"
