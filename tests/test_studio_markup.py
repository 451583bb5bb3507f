"""User text on Markdown surfaces: escaped so it renders as typed, never as markup."""

import re
import string

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from strongtree_studio.views.markup import REPLACEMENT, WORD_JOINER, md, md_table, plain_text

#: Strings that would become an image, a link, HTML, emphasis, code, maths, a heading,
#: a list, a table, an emoji, a colour directive or an automatic link if not escaped.
HOSTILE = (
    "![x](http://beacon.example/col.png)",
    "[link](javascript:alert(1))",
    "<img src=http://beacon.example/h.png onerror=alert(1)>",
    "**bold** _it_ ~~gone~~",
    "$x^2$ and $$y$$",
    "`tick` ``two``",
    ":smile: :material/home: :red[red] :blue-badge[b]",
    "http://beacon.example/auto www.beacon.example mail@beacon.example",
    "<http://beacon.example/angle>",
    "# heading",
    "> quote",
    "- item",
    "1. item",
    "a | b",
    "&lt;b&gt; &amp;",
    "\\[already escaped\\]",
    "[ref]: http://beacon.example/ref",
    "two\nlines ![y](http://beacon.example/y.png)",
)
PUNCTUATION = set(string.punctuation)


def rendered_text(markdown: str) -> str:
    """The text CommonMark shows for a run of plain text with backslash escapes:
    a backslash before ASCII punctuation disappears, the punctuation stays."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


def unescaped_punctuation(markdown: str) -> list[str]:
    """ASCII punctuation characters not protected by a backslash."""
    out, i = [], 0
    while i < len(markdown):
        if markdown[i] == "\\" and i + 1 < len(markdown) and markdown[i + 1] in PUNCTUATION:
            i += 2
            continue
        if markdown[i] in PUNCTUATION:
            out.append(markdown[i])
        i += 1
    return out


def test_hostile_strings_render_as_their_own_text():
    for text in HOSTILE:
        escaped = md(text)
        assert unescaped_punctuation(escaped) == [], text
        assert "\n" not in escaped
        assert rendered_text(escaped).replace(WORD_JOINER, "") == " ".join(text.splitlines())


def test_exact_escapes():
    assert md("![x](http://h/b.png)") == "\\!\\[x\\]\\(http" + WORD_JOINER + "\\:\\/\\/h\\/b\\.png\\)"
    assert md("a_b*c") == "a\\_b\\*c"
    assert md("féminin") == "féminin"  # letters, digits and spaces pass unchanged
    assert md(3.5) == "3\\.5" and md(None) == "None"


def test_no_automatic_link_survives():
    """GitHub-flavoured Markdown links web and e-mail addresses found in the shown
    text itself; a word joiner breaks every such pattern."""
    autolink = re.compile(r"(?i)(https?|ftp)://|www\.|[\w.+-]@[\w-]+\.\w|mailto:|xmpp:")
    for text in ("see http://x.example/a", "WWW.x.example", "a@b.example", "mailto:a@b.example", "HTTPS://x.y"):
        assert autolink.search(text)
        assert not autolink.search(rendered_text(md(text))), text


@given(st.text(max_size=60))
def test_any_text_round_trips(text):
    escaped = md(text)
    assert unescaped_punctuation(escaped) == []
    shown = CONTROL.sub(REPLACEMENT, " ".join(text.replace("\t", " ").splitlines())).replace(WORD_JOINER, "")
    assert rendered_text(escaped).replace(WORD_JOINER, "") == shown
    assert plain_text(text) == shown.replace(WORD_JOINER, "") or WORD_JOINER in text


#: Control characters (line breaks and tabs aside): shown as U+FFFD, never passed to the page.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


@given(st.text(max_size=60))
def test_plain_text_is_one_line_without_control_characters(text):
    out = plain_text(text)
    assert "\n" not in out and "\r" not in out and not CONTROL.search(out)
    assert len(out) <= len(text)  # nothing added: a select box shows it as typed


def test_nul_and_escape_characters_are_shown_not_passed():
    assert md("a\x00b\x1b[31m") == "a" + REPLACEMENT + "b" + REPLACEMENT + "\\[31m"
    assert plain_text("a\x00b\r\nc\td") == "a" + REPLACEMENT + "b c d"


def test_md_table_escapes_cells_index_and_headers():
    frame = pd.DataFrame({"a_b": ["**x**", None], "c": [1.5, np.nan]}, index=pd.Index(["[g](http://h)", "y"], name="g*"))
    out = md_table(frame)
    assert list(out.columns) == ["a\\_b", "c"]
    assert list(out.index) == [md("[g](http://h)"), "y"] and out.index.name == "g\\*"
    assert out.iloc[0].tolist() == ["\\*\\*x\\*\\*", "1\\.5"]
    assert out.iloc[1].tolist() == ["", ""]  # missing stays empty


@pytest.mark.parametrize("text", ["a -- b", "x->y", "<-", "<->", "a <= b", "b >= a", "~=", "--> <--", "== !="])
def test_no_two_signs_meet_so_no_dash_or_arrow_forms(text):
    """Streamlit prints -- as an em dash and -> <- <-> <= >= ~= as signs, escaped or not (measured)."""
    shown = rendered_text(md(text))
    assert shown.replace(WORD_JOINER, "") == text
    assert not re.search(r"[-<>=~][-<>=~]", shown), shown
