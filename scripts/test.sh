#!/usr/bin/env bash
# Set up and run the whole test suite: Python packages from requirements-dev.txt and
# requirements-crosscheck.txt (pystreed, the exact search's independent cross-check), builds the
# compiled kernels once for this installation (about a minute the first time, nothing after), then
# pytest: no test then runs beside a background build of the kernels. Browser tests need Debian's
# chromium (apt-get install chromium); without it they skip and say why. The run ends with the seconds
# each test file took.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet -r requirements-dev.txt -r requirements-crosscheck.txt
python -m strongtree_core.accel.prepare
# Two workers (pytest-xdist), each test file whole on one of them: the suite's processes, servers and
# browsers fill both cores of a 2-core machine. STRONGTREE_TEST_WORKERS=0 runs it in this process alone.
python -m pytest -n "${STRONGTREE_TEST_WORKERS:-2}" --dist loadfile "$@"
