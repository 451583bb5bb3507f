"""User text on Markdown surfaces, shown as typed and never as markup.

Column names, category values, class labels, group names, file names, run and
workspace names come from the user.  Streamlit reads Markdown in
``st.markdown``, captions, alerts, headings, metric labels and ``st.table``
cells, so a column called ``![x](http://host/beacon.png)`` would make every
viewer's browser fetch that URL.  Every such string goes through :func:`md`
(or :func:`md_table` for a table) before it reaches one of those surfaces;
``st.dataframe``, widget options and the drawn tree do not read Markdown.
HTML the app writes itself (the tree's SVG, its legend) takes user text through
:func:`html_text` instead.
"""

from __future__ import annotations

import html
import re
from typing import Any

import pandas as pd

#: Invisible character that keeps a web address or an e-mail address in the data
#: from becoming a link (GitHub-flavoured Markdown links them even when escaped).
WORD_JOINER = "\u2060"

# Every ASCII punctuation character: CommonMark shows a backslash-escaped one literally.
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
# Where GitHub-flavoured Markdown would start a link of its own: a scheme before
# ":", "www" before ".", and the "@" of an e-mail address.
_AUTOLINK = re.compile(r"(?i)\b(?:https?|ftp|mailto|xmpp)(?=:)|\bwww(?=\.)|(?=@)")


def md(value: Any) -> str:
    """``value`` as Markdown that renders as its own text on one line.

    Line breaks become spaces (a new line could start a heading or a list),
    every ASCII punctuation character is backslash-escaped (no emphasis, code,
    link, image, HTML, maths, table, emoji or colour directive can form), and a
    word joiner goes after a web scheme or ``www`` and before ``@``.
    """
    text = " ".join(str(value).splitlines())
    text = _AUTOLINK.sub(lambda m: m.group(0) + WORD_JOINER, text)
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
    character (``& < > " '``) as an entity, so it can only ever be text."""
    return html.escape(" ".join(str(value).splitlines()), quote=True)
