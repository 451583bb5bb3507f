"""Processes as tests see them, through psutil: what a server listens on, what a run left behind."""

from __future__ import annotations

import psutil


def listening_hosts(pid: int) -> set[str]:
    """The addresses that process ``pid`` and its children listen on (TCP)."""
    root = psutil.Process(pid)
    return {c.laddr.ip for proc in [root, *root.children(recursive=True)]
            for c in proc.net_connections(kind="tcp") if c.status == psutil.CONN_LISTEN}


#: Set in the test run's environment (tests/conftest.py): every process a test starts inherits it,
#: also one whose parent has ended since (an orphan is no longer anybody's child).
RUN_MARK = "STRONGTREE_TEST_RUN"


def started_by_this_run(mark: str) -> list[psutil.Process]:
    """Live processes this run started: this process's descendants, and any process whose
    environment carries the run's mark.  Zombies are not counted (they hold no resource
    but a process-table entry; this process's own are reaped here)."""
    me = psutil.Process()
    found = {p.pid: p for p in me.children(recursive=True)}
    for process in psutil.process_iter():
        if process.pid == me.pid or process.pid in found:
            continue
        try:
            if process.environ().get(RUN_MARK) == mark:
                found[process.pid] = process
        except psutil.Error:  # gone, or not ours to read
            continue
    alive = []
    for process in found.values():
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                if process.ppid() == me.pid:
                    import os

                    os.waitpid(process.pid, os.WNOHANG)
                continue
            alive.append(process)
        except (psutil.Error, ChildProcessError):
            continue
    return alive


def described(processes: list[psutil.Process]) -> list[str]:
    """``pid (parent pid, age in s): command line`` of each process still there."""
    import time

    out = []
    for process in processes:
        try:
            command = " ".join(process.cmdline())[:200]
            out.append(f"{process.pid} (parent {process.ppid()}, {time.time() - process.create_time():.0f} s old): "
                       f"{command}")
        except psutil.Error:
            continue
    return out
