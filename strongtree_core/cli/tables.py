"""Tables the command line writes (``predict`` and ``sweep`` with ``--output``): CSV, JSON records or an
Excel workbook, chosen by the file's extension, with cells a spreadsheet would run as formulas made safe.

A cell the user wrote (a value of the input table echoed by ``predict``, a label) that starts with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return is run as a formula by a spreadsheet that opens the CSV
file (OWASP: CSV injection): such cells get a leading single quote, unless ``--raw`` asks for the
cells exactly as read.  In an Excel workbook every text cell is stored as text, so nothing there runs
either (and no quote is added).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from strongtree_core.cli.files import write_text
from strongtree_core.cli.messages import OUTPUT_FORMAT, STDIO, WRITE_FAILED
from strongtree_core.csv_format import spreadsheet_safe

#: File extensions (lower case) and what is written.  Any other name with an extension is refused.
FORMATS = {".csv": "csv", ".txt": "csv", "": "csv", ".json": "json", ".xlsx": "xlsx"}
#: What ``--raw`` does, for the help of the commands that take it.
RAW_HELP = (
    "write every cell exactly as read: by default a text cell that a spreadsheet would run as a formula "
    "(starting with =, +, -, @, a tab or a carriage return) gets a leading ' in CSV output"
)


def output_format(path) -> str:
    """``csv``, ``json`` or ``xlsx`` for the --output path (``-``: CSV on standard output)."""
    if str(path) == STDIO:
        return "csv"
    return FORMATS.get(Path(path).suffix.lower(), "")


def format_problem(path) -> str | None:
    """Why ``path`` names no table format the command writes (None when it does)."""
    if output_format(path):
        return None
    return OUTPUT_FORMAT.format(path=path, suffix=Path(path).suffix)


def _json_records(table: pd.DataFrame, nested: tuple[str, ...]) -> str:
    records = json.loads(table.to_json(orient="records", force_ascii=False))
    for record in records:
        for column in nested:
            if record.get(column):
                record[column] = json.loads(record[column])
    return json.dumps(records, ensure_ascii=False, indent=1)


def _write_xlsx(path: Path, table: pd.DataFrame) -> None:
    """An Excel workbook whose text cells are text: openpyxl stores a string starting with '=' as a
    formula unless told otherwise."""
    import tempfile

    with tempfile.NamedTemporaryFile(prefix=f".{path.name}.", suffix=".xlsx", dir=path.parent, delete=False) as fh:
        temporary = Path(fh.name)
    try:
        with pd.ExcelWriter(temporary, engine="openpyxl") as writer:
            table.to_excel(writer, index=False)
            for sheet in writer.sheets.values():
                for row in sheet.iter_rows():
                    for cell in row:
                        if cell.data_type == "f":
                            cell.data_type = "s"
        temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)


def write_table(path, table: pd.DataFrame, *, raw: bool = False, nested: tuple[str, ...] = ()) -> str | None:
    """Write ``table`` to ``path`` in the format its extension names; the message when that fails.

    ``nested``: columns holding JSON text, written as objects in JSON records.
    """
    kind = output_format(path)
    if kind == "json":
        return write_text(path, _json_records(table, nested))
    if kind == "xlsx":
        try:
            _write_xlsx(Path(path), table)
        except OSError as exc:
            return WRITE_FAILED.format(path=path, reason=exc.strerror or exc)
        return None
    shown = table if raw else spreadsheet_safe(table)
    return write_text(path, shown.to_csv(index=False))


__all__ = ["FORMATS", "RAW_HELP", "format_problem", "output_format", "write_table"]
