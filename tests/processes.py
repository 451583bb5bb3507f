"""Processes as tests see them, through psutil: what a server listens on, what a run left behind."""

from __future__ import annotations

import psutil


def listening_hosts(pid: int) -> set[str]:
    """The addresses that process ``pid`` and its children listen on (TCP)."""
    root = psutil.Process(pid)
    return {c.laddr.ip for proc in [root, *root.children(recursive=True)]
            for c in proc.net_connections(kind="tcp") if c.status == psutil.CONN_LISTEN}
