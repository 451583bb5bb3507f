"""User text on the page, shown as typed and never as markup: the one escaping path.

Column names, category values, class labels, group names, file names, run and
workspace names come from the user.  Streamlit reads Markdown in ``st.markdown``,
captions, alerts, headings, ``st.table`` cells, and in every widget's label and
help, the options of radio buttons, pills, segmented controls and select sliders,
tabs, expanders, buttons and metric labels (measured in Chromium: a label
``![i](http://host/x.png)`` fetches the address), so a category value
``![n](http://host/beacon.png)`` would make every viewer's browser fetch that URL.

* Markdown surfaces take user text through :func:`md` (:func:`md_table` for a
  table): :data:`MARKDOWN_ESCAPES`.
* Plain-text surfaces (the options of select boxes and multiselects, which
  Streamlit shows as text, and placeholders) take it through :func:`plain_text`,
  which keeps it on one line and makes control characters visible:
  :data:`PLAIN_ESCAPES`.
* HTML the app writes itself (the tree's SVG, its legend) takes it through
  :func:`html_text`.

``tests/test_markup_paths.py`` reads every page script and Streamlit-bound module
and refuses a label, help, caption, placeholder, option or Markdown body built
from anything but literals, the app's own constants, these functions and the
number formatters (:data:`NUMBER_FORMATS`); it also renders every page with
hostile values.
"""

from __future__ import annotations

import html
import re
from typing import Any

import pandas as pd

from strongtree_core.words import cut_text

#: Invisible character that keeps a web address or an e-mail address in the data
#: from becoming a link (GitHub-flavoured Markdown links them even when escaped).
WORD_JOINER = "\u2060"

# Every ASCII punctuation character: CommonMark shows a backslash-escaped one literally.
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
# Where GitHub-flavoured Markdown would start a link of its own: a scheme before
# ":", "www" before ".", and the "@" of an e-mail address.
_AUTOLINK = re.compile(r"(?i)\b(?:https?|ftp|mailto|xmpp)(?=:)|\bwww(?=\.)|(?=@)")
# Where Streamlit's Markdown would print a typographic sign instead of the characters, escaped or
# not (measured: -- as an em dash, -> <- <-> as arrows, <= >= ~= as maths signs).
_TYPOGRAPHY = re.compile(r"(?<=[-<>=~])(?=[-<>=~])")


#: Functions that make user text safe on a Markdown surface, and on a plain-text one.
MARKDOWN_ESCAPES = ("md", "md_table")
PLAIN_ESCAPES = ("plain_text",)
#: Formatters whose output is digits, separators and units only (they read their value as a number).
NUMBER_FORMATS = ("fmt",)

# C0 and C1 control characters and DEL, line breaks aside.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
#: Shown in place of a control character (a NUL byte, an escape, ...).
REPLACEMENT = "\ufffd"


#: A run of this many characters with no space is no word a page can show (a 20,000-character column name or
#: group): it is cut to the label limit before the page lays it out (the downloads keep it whole).
LONG_WORD = 200
_LONG_WORD = re.compile(r"\S{%d,}" % (LONG_WORD + 1))


def one_line(value: Any) -> str:
    """``str(value)`` on one line (line breaks and tabs as spaces), control characters as U+FFFD, and a run of
    more than :data:`LONG_WORD` characters without a space cut to :data:`~strongtree_core.words.LABEL_LIMIT`."""
    text = _CONTROL.sub(REPLACEMENT, " ".join(str(value).replace("\t", " ").splitlines()))
    return _LONG_WORD.sub(lambda m: cut_text(m.group(0)), text) if len(text) > LONG_WORD else text


def plain_text(value: Any) -> str:
    """``value`` for a plain-text surface (a select box's option, a placeholder): one line,
    control characters visible as U+FFFD; nothing else changes (such surfaces show text as is)."""
    return one_line(value)


def md(value: Any) -> str:
    """``value`` as Markdown that renders as its own text on one line.

    Line breaks become spaces (a new line could start a heading or a list),
    control characters U+FFFD, every ASCII punctuation character is backslash-escaped (no emphasis, code,
    link, image, HTML, maths, table, emoji or colour directive can form), and a
    word joiner goes after a web scheme or ``www``, before ``@``, and between two of
    ``- < > = ~`` (so ``--`` stays two hyphens, not a dash, and ``->`` no arrow).
    """
    text = one_line(value)
    text = _AUTOLINK.sub(lambda m: m.group(0) + WORD_JOINER, text)
    text = _TYPOGRAPHY.sub(WORD_JOINER, text)
    return _PUNCTUATION.sub(r"\\\1", text)


def md_table(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` for ``st.table`` (whose cells, index and headers are
    Markdown): every label and cell through :func:`md`; missing cells stay empty."""
    out = frame.map(lambda v: "" if v is None or (isinstance(v, float) and v != v) else md(v))
    name = frame.index.name
    out.index = pd.Index([md(i) for i in frame.index], name=None if name is None else md(name))
    out.columns = [md(c) for c in frame.columns]
    return out


def html_text(value: Any) -> str:
    """``value`` as the text of an HTML or SVG element: on one line, every markup
    character (``& < > " '``) as an entity, so it can only ever be text; control characters and long runs as
    :func:`one_line` gives them."""
    return html.escape(one_line(value), quote=True)
