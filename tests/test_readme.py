"""The README's library example prints what the README shows."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_the_library_example_prints_what_the_readme_shows() -> None:
    (code,) = [b for b in _blocks("python") if "StrongTreeClassifier" in b]
    (shown,) = [b for b in _blocks("text") if b.startswith("IF ")]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})
    assert out.getvalue() == shown
