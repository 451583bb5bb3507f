"""The separator of CSV text, guessed from a sample the way the dashboard reads uploads."""

from __future__ import annotations

import csv

#: Separators recognised in CSV text: comma, semicolon, tab and pipe.
CSV_SEPARATORS = ",;\t|"
#: Characters of a file read to guess its separator.
SNIFF_CHARS = 65536


def sniff_separator(sample: str) -> str:
    """The separator among :data:`CSV_SEPARATORS` that splits every line of ``sample``
    into the same number of fields (``csv.Sniffer``); a comma when none does."""
    try:
        return csv.Sniffer().sniff(sample[:SNIFF_CHARS], delimiters=CSV_SEPARATORS).delimiter
    except csv.Error:
        return ","
