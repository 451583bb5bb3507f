"""A table whose file name, column names, category values and class labels are
Markdown and HTML that would fetch or link outside URLs if rendered, and a check
for what a Markdown renderer would turn into a link, an image or HTML."""

from __future__ import annotations

import re
import string

import numpy as np
import pandas as pd

#: Host every hostile URL points at (reserved: never resolves).
BEACON = "beacon.example"

FILE_NAME = f"![f](http:{BEACON}) **name** $x$.csv"
FEATURE = f"![x](http://{BEACON}/col.png)"
CATEGORY = "[link](javascript:alert(1))"
GROUP = f"<img src=http://{BEACON}/g.png onerror=alert(1)>"
TARGET = "`target` **y** $z$ :red[t]"
CATEGORY_VALUES = (
    f"<img src=http://{BEACON}/v.png onerror=alert(1)>",
    f"**bold** `tick` www.{BEACON} <u>c</u>",  # the level the fitted trees ask about
    f"$x$ :material/home: a@{BEACON}",
)
GROUP_VALUES = (f"![g](http://{BEACON}/g1.png)", f"[g2](http://{BEACON}/g2) # h <marquee>m</marquee>")
CLASSES = (f"![yes](http://{BEACON}/yes.png) <u>y</u> & 'q'", f"[no](http://{BEACON}/no)")
#: Every hostile string of the table.
STRINGS = (FILE_NAME, FEATURE, CATEGORY, GROUP, TARGET, *CATEGORY_VALUES, *GROUP_VALUES, *CLASSES)


def hostile_table(n_rows: int = 160, seed: int = 0) -> pd.DataFrame:
    """A learnable table: the class follows the numeric column with 15 % noise."""
    rng = np.random.default_rng(seed)
    score = rng.integers(0, 10, n_rows)
    positive = (score >= 5) ^ (rng.random(n_rows) < 0.15)
    return pd.DataFrame(
        {
            FEATURE: score,
            CATEGORY: rng.choice(CATEGORY_VALUES, n_rows),
            GROUP: rng.choice(GROUP_VALUES, n_rows),
            TARGET: np.where(positive, CLASSES[0], CLASSES[1]),
        }
    )


_PUNCTUATION = set(string.punctuation)
# What GitHub-flavoured Markdown links in the shown text itself, escaped or not.
_AUTOLINK = re.compile(r"(?i)(?:https?|ftp)://|www\.|[\w.+-]@[\w-]+\.\w")
# Unescaped syntax that makes an image, a link, a link definition or HTML.
_SYNTAX = re.compile(r"!\[|\]\(|\]\s*:|<[A-Za-z/!?]")


def hazards(markdown: str) -> list[str]:
    """What in ``markdown`` would render as an image, a link or HTML (empty when none)."""
    kept, i = [], 0
    while i < len(markdown):
        if markdown[i] == "\\" and i + 1 < len(markdown) and markdown[i + 1] in _PUNCTUATION:
            kept.append("\x00")  # an escaped character is literal text
            i += 2
            continue
        kept.append(markdown[i])
        i += 1
    shown = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)
    return [m.group(0) for m in _SYNTAX.finditer("".join(kept))] + [m.group(0) for m in _AUTOLINK.finditer(shown)]


# -- values for every widget: quotes, --, ;, line breaks, backslashes, NUL, Markdown and HTML -----------


def widget_values(beacon: str) -> dict:
    """File name, column names, category levels, group values and class labels whose images and
    links point at ``beacon`` (e.g. ``http://127.0.0.1:PORT``, a server the test listens on)."""
    return {
        "name": f'file "q" \'s -- ; ![f]({beacon}/f.png)\n<b>x</b>',
        "level": f'level "q" \'s -- ; \\ ![c]({beacon}/c.png)',
        "group": "group <img src=x onerror=alert(1)>\nline 2",
        "target": 'y; -- "\'\\',
        "levels": (
            f"![n]({beacon}/label.png)",
            "a\nb # heading",
            "quote \" and ' -- ; DROP TABLE x",
            "back\\slash \\*not em\\* \\",
            "nul\x00byte",
            f"<img src={beacon}/v.png onerror=alert(1)>",
            f"[link]({beacon}/l) :red[r] $x$",
        ),
        "groups": ("g\x00one", "**two** `x`"),
        "classes": (f"yes ![y]({beacon}/y.png)", 'no\n"q"'),
    }


def widget_frame(values: dict, n_rows: int = 120, seed: int = 3) -> pd.DataFrame:
    """The category column first (so Types & labels lists its levels); the class follows it with noise."""
    rng = np.random.default_rng(seed)
    levels = values["levels"]
    level = rng.integers(0, len(levels), n_rows)
    positive = (level % 2 == 0) ^ (rng.random(n_rows) < 0.1)
    return pd.DataFrame({
        values["level"]: np.array(levels, dtype=object)[level],
        "score": rng.integers(0, 10, n_rows),
        values["group"]: rng.choice(np.array(values["groups"], dtype=object), n_rows),
        values["target"]: np.where(positive, values["classes"][0], values["classes"][1]),
    })
