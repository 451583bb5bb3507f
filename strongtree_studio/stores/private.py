"""The server's own files, private by construction: folders 0700, files 0600, whatever the umask.

The run history and each browser's work hold every visitor's tables, settings, per-group results and
trees; on a shared machine a file made 0644 in a folder made 0755 (the usual umask 022) let every
local account read them.  :func:`private_file` makes a file 0600 before anything is written to it
(created with ``O_EXCL`` and set again with ``fchmod``, so the umask cannot widen it) in folders
made 0700 (:func:`private_folder`); SQLite gives its journal the database's mode.  A file or the
app's own data folder found wider than that, and owned by this account, is narrowed; a folder
someone else made (``/tmp``, a shared folder named by ``STRONGTREE_RUNS_DB``) is left as it is.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: Modes of the server's folders and files.
FOLDER_MODE = 0o700
FILE_MODE = 0o600
_POSIX = os.name == "posix"


def _narrow(path: Path, mode: int) -> None:
    """Set ``path`` to ``mode`` when it is ours and others may read or enter it."""
    if not _POSIX:
        return
    info = path.stat()
    if info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, mode)


def private_folder(folder: Path, own: bool = False) -> None:
    """Make ``folder`` and the folders above it that are missing, each 0700.

    ``own``: the folder is the app's own (its data folder), narrowed to 0700 when found wider."""
    folder = Path(folder)
    missing = []
    walk = folder
    while not walk.exists() and walk != walk.parent:
        missing.append(walk)
        walk = walk.parent
    for made in reversed(missing):
        try:
            made.mkdir(mode=FOLDER_MODE)
        except FileExistsError:  # made meanwhile by another process: left as it is
            continue
        if _POSIX:
            os.chmod(made, FOLDER_MODE)  # mkdir's mode passes through the umask
    if own and folder.is_dir():
        _narrow(folder, FOLDER_MODE)


def private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 unless it exists; an existing one of this account is narrowed to 0600."""
    path = Path(path)
    try:
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        if path.is_file():
            _narrow(path, FILE_MODE)
        return
    try:
        if _POSIX:
            os.fchmod(handle, FILE_MODE)
    finally:
        os.close(handle)
