"""Where user text could reach a widget's Markdown or plain-text surface without going
through strongtree_studio.views.markup (used by tests/test_markup_paths.py): labels, help,
captions, placeholders, options and their ``format_func``, tab, expander and page-link
labels.  (Markdown bodies, ``st.markdown``, captions and alerts, are checked on the
rendered pages by tests/test_app.py's ``scan`` and tests/test_markup_paths.py.)

An argument is *safe* when it is built only from: string literals; names in capitals (the
app's own words, e.g. ``POSITIVE_HELP``, ``DEMO.summary``, ``KINDS[k]``); calls of the
escaping functions (:data:`strongtree_studio.views.markup.MARKDOWN_ESCAPES` on Markdown surfaces,
:data:`strongtree_studio.views.markup.PLAIN_ESCAPES` on plain ones); calls of the number
formatters (:data:`strongtree_studio.views.markup.NUMBER_FORMATS`, whose output is digits and
units only); and f-strings, ``+``, ``a if c else b`` and ``"sep".join(...)`` of safe parts.
Anything else (a variable, a call of another function) is refused: wrap it in ``md()`` or
``plain_text()``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from strongtree_studio.views.markup import MARKDOWN_ESCAPES, NUMBER_FORMATS, PLAIN_ESCAPES

#: Widgets and containers whose first argument (or ``label=``) is a Markdown label.
LABELLED = {
    "button", "download_button", "form_submit_button", "link_button", "checkbox", "toggle", "radio", "selectbox",
    "multiselect", "select_slider", "slider", "number_input", "text_input", "text_area", "date_input", "time_input",
    "datetime_input", "file_uploader", "color_picker", "segmented_control", "pills", "metric", "expander",
    "popover", "camera_input", "audio_input", "feedback",
}
#: Widgets whose options are shown as Markdown, and those whose options are plain text.
MARKDOWN_OPTIONS = {"radio", "segmented_control", "pills", "select_slider"}
PLAIN_OPTIONS = {"selectbox", "multiselect"}
#: Keyword arguments read as Markdown, and as plain text.
MARKDOWN_KEYWORDS = {"label", "help", "captions"}
PLAIN_KEYWORDS = {"placeholder"}
#: Widgets that take their options second.
OPTION_POSITION = 1
#: The binding helper ``field(widget, label, section, name, *args, options=..., **kwargs)``.
FIELD = "field"


@dataclass(frozen=True)
class Finding:
    line: int
    call: str
    argument: str
    source: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.call}(... {self.argument}={self.source})"


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_constant_name(node: ast.AST) -> bool:
    """A name in capitals, or an attribute, item or ``.get`` of one (the app's own words)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return isinstance(node, ast.Name) and node.id.isupper()


def safe(node: ast.AST | None, escapes: tuple[str, ...]) -> bool:
    """Whether ``node`` is built only from safe parts (see the module docstring)."""
    if node is None:
        return True
    if isinstance(node, ast.Constant):
        return node.value is None or isinstance(node.value, (str, int, float, bool))
    if _is_constant_name(node):
        return True
    if isinstance(node, ast.JoinedStr):
        return all(safe(v, escapes) for v in node.values)
    if isinstance(node, ast.FormattedValue):
        return safe(node.value, escapes)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return safe(node.left, escapes) and safe(node.right, escapes)
    if isinstance(node, ast.IfExp):
        return safe(node.body, escapes) and safe(node.orelse, escapes)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(safe(e, escapes) for e in node.elts)
    if isinstance(node, ast.Call):
        name = _name(node.func)
        if name in escapes or name in NUMBER_FORMATS:
            return True
        if name == "count_of":  # a number and the app's own word
            return all(safe(a, escapes) for a in node.args[1:])
        if (name == "join" and isinstance(node.func, ast.Attribute) and safe(node.func.value, escapes)
                and len(node.args) == 1):
            arg = node.args[0]
            if isinstance(arg, (ast.GeneratorExp, ast.ListComp)):
                return safe(arg.elt, escapes)
            return safe(arg, escapes)
        if name in ("capitalize", "lower", "upper", "strip") and isinstance(node.func, ast.Attribute):
            return safe(node.func.value, escapes)
    return False


def safe_formatter(node: ast.AST | None, escapes: tuple[str, ...]) -> bool:
    """A ``format_func``: an escaping function, a constant table's ``.get``, or a lambda returning safe text."""
    if node is None:
        return False
    if _name(node) in escapes or _name(node) in NUMBER_FORMATS:
        return True
    if isinstance(node, ast.Attribute) and node.attr == "get":  # a table of the app's own words
        table = node.value
        return _is_constant_name(table) or (isinstance(table, ast.Dict) and all(
            isinstance(v, ast.Constant) for v in table.values))
    return isinstance(node, ast.Lambda) and safe(node.body, escapes)


def _constant_options(node: ast.AST | None) -> bool:
    """Options that are the app's own: literals, a name in capitals, or ``list(...)`` / ``tuple(...)`` of one."""
    if node is None:
        return True
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(isinstance(e, ast.Constant) for e in node.elts)
    if _is_constant_name(node):
        return True
    return (isinstance(node, ast.Call) and _name(node.func) in ("list", "tuple") and len(node.args) == 1
            and _constant_options(node.args[0]))


def findings(source: str) -> list[Finding]:
    """Every Streamlit call of ``source`` with an argument that could carry unescaped user text."""
    out: list[Finding] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        args = list(node.args)
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        widget = name
        options = keywords.get("options")
        if name == FIELD and len(args) >= 2:  # field(st.selectbox, "Label", SECTION, "name", ..., options=...)
            widget = _name(args[0])
            args = args[1:2]
        elif name not in LABELLED and name not in ("tabs", "page_link"):
            continue

        def check(argument: str, value: ast.AST | None, escapes: tuple[str, ...]) -> None:
            if value is not None and not safe(value, escapes):
                out.append(Finding(node.lineno, widget or "?", argument, ast.unparse(value)))

        if name == "tabs":
            check("tabs", args[0] if args else keywords.get("tabs"), MARKDOWN_ESCAPES)
            continue
        if name == "page_link":
            check("label", keywords.get("label"), MARKDOWN_ESCAPES)
            check("help", keywords.get("help"), MARKDOWN_ESCAPES)
            continue
        check("label", args[0] if args else None, MARKDOWN_ESCAPES)
        for key, value in keywords.items():
            if key in MARKDOWN_KEYWORDS:
                check(key, value, MARKDOWN_ESCAPES)
            elif key in PLAIN_KEYWORDS:
                check(key, value, PLAIN_ESCAPES)
        if widget in MARKDOWN_OPTIONS | PLAIN_OPTIONS:
            escapes = MARKDOWN_ESCAPES if widget in MARKDOWN_OPTIONS else PLAIN_ESCAPES
            if options is None and len(args) > OPTION_POSITION:
                options = args[OPTION_POSITION]
            formatter = keywords.get("format_func")
            if formatter is not None:
                if not safe_formatter(formatter, escapes):
                    out.append(Finding(node.lineno, widget, "format_func", ast.unparse(formatter)))
            elif not _constant_options(options):
                out.append(Finding(node.lineno, widget, "options", ast.unparse(options)))
    return out
