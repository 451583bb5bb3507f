"""Write docs/hostile-inputs.md, the catalogue of bad and hostile inputs, from the
tests that check them (so the table says exactly what the tests assert).

    python scripts/catalogue.py            # rewrite the file
    python scripts/catalogue.py --check    # exit 1 if the file is out of date

Parametrized cases contribute one row each (their input, surface and the exact
message asserted); every other test in these modules contributes one row from
its name and docstring.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "hostile-inputs.md"
#: Words that mark a dashboard test as one about bad or hostile input.
HOSTILE_WORDS = ("hostile", "broken", "refus", "garbage", "unusable", "cannot", "other session", "encoding", "latin",
                 "utf", "damaged", "repeated", "killed", "crash", "stop", "markup", "fetch", "delet", "lost", "hung",
                 "dies", "bad", "missing", "not stored", "shared", "owner", "reload", "cookie", "opened first",
                 "too large", "malformed", "unreadable", "expire", "forgotten", "cannot be opened",
                 "another browser", "pages folder", "refuses")
#: module -> (surface, what the module covers)
MODULES = {
    "tests/test_hostile_inputs.py": ("library / CLI", "parameters, targets, weights, groups, predict-time changes, exports"),
    "tests/test_studio_data.py": ("dashboard: Data page", "uploads, encodings, repeated and coded columns"),
    "tests/test_app.py": ("dashboard (AppTest)", "hostile names on every page, unusable history, runs of other sessions"),
    "tests/test_studio_runs.py": ("dashboard: run history", "ownership, sharing, broken history files"),
    "tests/test_studio_jobs.py": ("dashboard: solve jobs", "crashed, hung and stopped workers"),
    "tests/test_time_limits.py": ("library, every route", "time limit and Stop as contracts"),
    "tests/test_worker_memory.py": ("dashboard: solve workers", "a solve past the memory cap"),
    "tests/test_page_tradeoffs.py": ("dashboard: Trade-offs page", "bad grids of bounds, notions and λ"),
    "tests/test_entrances.py": ("dashboard: page addresses", "every page opened first, under either of Streamlit's routers"),
    "tests/test_restore.py": ("dashboard: reload", "a reload, another browser, cookies, a broken or full store"),
    "tests/test_browser_store.py": ("dashboard: browser store", "limits, expiry, corruption, unusable files"),
    "tests/test_markup_paths.py": ("dashboard: widgets", "user text in labels, help, options and placeholders"),
    "tests/test_codebook.py": ("dashboard: codebooks", "empty, headless, conflicting, malformed JSON, not text, no column"),
    "tests/test_report_cli.py": ("command line: report", "another table, missing columns, an old tree file, stdout"),
    "tests/test_hostile_sweeps.py": ("library / CLI: sweeps and outputs", "hand-made splits, frontiers, huge grids, "
                                     "output formats, formula cells"),
    "tests/test_interrupts.py": ("command line: Ctrl-C and lost workers", "every sweep backend and fit route"),
    "tests/test_hostile_numbers.py": ("library / CLI / app: numbers and options", "typed numbers, option values, "
                                      "bounds a solver cannot tell from 0, stored text that is not a tree"),
    "tests/test_hostile_text.py": ("library / CLI / dashboard: labels", "long, empty, blank, NUL and control-character "
                                   "names through drawings, rules, reports and pages"),
    "tests/test_hostile_private.py": ("dashboard: private files and sessions", "file modes under any umask, forged "
                                      "and foreign tokens, server paths"),
    "tests/test_hostile_restart.py": ("dashboard: a server killed mid-solve", "the run left behind, the open tab"),
    "tests/test_hostile_files.py": ("library / CLI / dashboard: files and columns", "decimal commas, line endings, "
                                    "Excel first rows, Parquet indexes, infinite values, pandas column types"),
}
HEADER = """# Bad and hostile inputs: the catalogue

What a user can get wrong, or throw at the library, the command line and the
dashboard on purpose, and what happens. Each row is a test in `tests/` that
asserts the outcome (and, for a refusal, the exact message); this file is written
from those tests by `python scripts/catalogue.py` and checked by the test suite.

Outcomes: **refused** (a message that says what is wrong and how to fix it;
exit code 2 on the command line), **handled** (accepted on purpose, with the
behaviour the test asserts). No case gives a silent wrong answer, a traceback or a
hang: a case that did would fail its test.

"""


class _Collector:
    def __init__(self) -> None:
        self.items: list = []

    def pytest_collection_modifyitems(self, items) -> None:
        self.items.extend(items)


def _cell(value) -> str:
    text = " ".join(str(value).split())
    text = text.replace("|", "\\|")
    return text if len(text) <= 240 else text[:237] + "..."


def rows() -> list[tuple[str, str, str, str]]:
    collector = _Collector()
    code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *MODULES], plugins=[collector])
    if code not in (0, 5):
        raise SystemExit(f"collecting the tests failed (pytest exit code {code})")
    out = []
    for item in collector.items:
        module = str(Path(item.path).relative_to(ROOT))
        surface = MODULES[module][0]
        name = item.originalname.removeprefix("test_").replace("_", " ")
        if surface.startswith("dashboard") and not any(w in f"{name} {item.name}" for w in HOSTILE_WORDS):
            continue
        params = getattr(getattr(item, "callspec", None), "params", {})
        doc = (inspect.getdoc(item.function) or "").split("\n\n")[0] or f"`{module}::{item.originalname}`"
        message = next((params[k] for k in ("message", "msg", "expected") if k in params), None)
        label = next((params[k] for k in ("case_id", "case", "name") if isinstance(params.get(k), str)
                      and len(params[k]) < 80), None)
        if isinstance(params.get("surface"), str):
            surface = f"{surface}: {params['surface']}"
        if message is not None and isinstance(message, str):
            outcome = "refused"
            if isinstance(params.get("code"), int):
                outcome = f"refused, exit code {params['code']}"
            what = label or item.name
            out.append((what, surface, outcome, message))
        elif params:
            case = label or (item.callspec.id if len(item.callspec.id) <= 60 else f"case {item.callspec.indices}")
            out.append((f"{name}: {case}", surface, "handled", doc))
        else:
            out.append((name, surface, "handled", doc))
    return out


def render() -> str:
    table = rows()
    refused = sum(outcome.startswith("refused") for _, _, outcome, _ in table)
    coded = sum("exit code" in outcome for _, _, outcome, _ in table)
    summary = (f"{len(table)} cases: {refused} refused ({coded} of them on the command line, with their exit code), "
               f"{len(table) - refused} handled. Each is a test of the suite: a hang, a traceback, a silent wrong "
               "answer, a file or session open to others, or a lost run or point would fail it.\n")
    lines = [HEADER, summary, "| # | input | surface | outcome | message or behaviour |", "|---|---|---|---|---|"]
    for k, (what, surface, outcome, message) in enumerate(table, 1):
        lines.append(f"| {k} | {_cell(what)} | {_cell(surface)} | {outcome} | {_cell(message)} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if docs/hostile-inputs.md is out of date")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        return 0 if current == text else 1
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {text.count(chr(10) + '| ') - 1} cases")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
