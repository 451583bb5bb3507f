"""docs/hostile-inputs.md is the catalogue the tests make: ``scripts/catalogue.py --check`` agrees."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_catalogue_of_hostile_inputs_is_up_to_date():
    out = subprocess.run([sys.executable, "scripts/catalogue.py", "--check"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, ("docs/hostile-inputs.md is out of date: run python scripts/catalogue.py\n"
                                 + out.stderr[-2000:])
