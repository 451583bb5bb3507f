#!/usr/bin/env bash
# Set up and run the whole test suite: Python packages from requirements-dev.txt and
# requirements-crosscheck.txt (pystreed, the exact search's independent cross-check), builds the
# compiled kernels once for this installation (about a minute the first time, nothing after), then
# pytest: no test then runs beside a background build of the kernels. Browser tests need Debian's
# chromium (apt-get install chromium); without it they skip and say why.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet -r requirements-dev.txt -r requirements-crosscheck.txt
python -m strongtree_core.accel.prepare
python -m pytest "$@"
