#!/usr/bin/env bash
# Set up and run the whole test suite: Python packages from requirements-dev.txt and
# requirements-crosscheck.txt (pystreed, the exact search's independent cross-check), then
# pytest. Browser tests need Debian's chromium (apt-get install chromium); without it they
# skip and say why.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet -r requirements-dev.txt -r requirements-crosscheck.txt
python -m pytest "$@"
