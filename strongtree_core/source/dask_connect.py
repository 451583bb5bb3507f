"""Connecting to a Dask scheduler: an address that is not one is a message within seconds.

Dask's own handshake is tried first, time-boxed, and the client is connected only after it
answered (a closed port, a web server, a worker's address or a silent host each get their own
message).  Read by both users of a cluster: the passes of a table read where it lies
(:mod:`~strongtree_core.source.cluster`) and the sweep's ``dask`` backend
(:mod:`~strongtree_core.sweep.dask_backend`).
"""

from __future__ import annotations

import asyncio
import threading
from strongtree_core.errors import StrongTreeError

#: Environment variable naming a Dask scheduler, e.g. ``tcp://10.0.0.5:8786``.
SCHEDULER_ENV = "STRONGTREE_DASK_SCHEDULER"
#: Seconds to wait for a Dask scheduler to answer (its handshake, then the client's registration).
CONNECT_TIMEOUT = 20.0
#: Seconds an address that did not answer Dask's handshake is given to answer an HTTP request.
HTTP_PROBE = 3.0
#: Seconds a plain TCP connection to a scheduler's address is given before Dask's handshake: a closed
#: port refuses at once (Dask's own connect retried it for its whole timeout, 20 s).
TCP_PROBE = 5.0
NO_DASK = (
    "backend='dask' needs dask.distributed, which is not installed: pip install 'strongtree[dask]' "
    "(or pip install 'dask[distributed]')."
)
BAD_SCHEDULER = (
    "scheduler={value!r} is not a Dask scheduler: give an address such as 'tcp://host:8786', a "
    "dask.distributed.Client, or None to start a local cluster."
)
SCHEDULER_UNREACHABLE = (
    "Could not reach the Dask scheduler at {address} ({reason}). Check the address ({env} or --scheduler) and "
    "that the scheduler is running."
)
SCHEDULER_SILENT = (
    "{address} accepted the connection but did not answer as a Dask scheduler within {timeout:g} s. Check the "
    "address ({env} or --scheduler): a scheduler usually listens on port 8786 (8787 is its dashboard); a "
    "scheduler this slow to answer is overloaded."
)
SCHEDULER_SPEAKS_OTHER = (
    "{address} answered, but not as a Dask scheduler (it speaks another protocol, e.g. a web server's). Check the "
    "address ({env} or --scheduler): a scheduler usually listens on tcp://host:8786 (8787 is its dashboard)."
)
SCHEDULER_IS_WEB_SERVER = (
    "{address} is a web server (it answered an HTTP request), not a Dask scheduler. Give the scheduler's address "
    "({env} or --scheduler), usually tcp://host:8786: port 8787 is the scheduler's dashboard, a web page."
)
REGISTRATION_HUNG = (
    "{address} answered Dask's handshake but did not accept this client within {timeout:g} s: it is not a "
    "scheduler (a worker's address?) or it is overloaded. Check the address ({env} or --scheduler)."
)


def _distributed():
    try:
        from dask import distributed
    except ImportError:
        raise StrongTreeError(NO_DASK) from None
    return distributed


# ------------------------------------------------------------------ connecting
def handshake_problem(address: str, timeout: float) -> str | None:
    """Why ``address`` is not a Dask scheduler that answers (None when it is), found within about ``timeout`` s.

    Dask's own connect, which exchanges its handshake, in a fresh event loop on a thread of
    its own, cut off at ``timeout``.  A server that sends something else makes Dask read a
    frame length out of its text (an HTTP reply's "HTTP/1.1" reads as 3 EiB, hence a
    MemoryError), caught here; a server that stays silent (a web server waits for a request
    it can read) is cut off and then asked an HTTP request, so that a web server (the
    scheduler's dashboard, say) is named as one.
    """
    from distributed.comm import connect

    refused = tcp_problem(address, min(timeout, TCP_PROBE))
    if refused is not None:
        return SCHEDULER_UNREACHABLE.format(address=address, reason=refused, env=SCHEDULER_ENV)
    outcome: list[str | None] = []

    async def attempt() -> None:
        comm = await asyncio.wait_for(connect(address, timeout=timeout), timeout)
        await comm.close()

    def run() -> None:
        try:
            asyncio.run(attempt())
            outcome.append(None)
        except (asyncio.TimeoutError, TimeoutError) as exc:
            # Dask's connect says "Timed out trying to connect" when no connection was accepted
            outcome.append(SCHEDULER_UNREACHABLE.format(address=address, reason=exc, env=SCHEDULER_ENV)
                           if "trying to connect" in str(exc) else "silent")
        except OSError as exc:
            outcome.append(SCHEDULER_UNREACHABLE.format(address=address, reason=exc, env=SCHEDULER_ENV))
        except (Exception, MemoryError):  # noqa: BLE001 - garbage where a handshake should be
            outcome.append(SCHEDULER_SPEAKS_OTHER.format(address=address, env=SCHEDULER_ENV))

    thread = threading.Thread(target=run, name="strongtree-dask-probe", daemon=True)
    thread.start()
    thread.join(timeout + 5.0)
    found = outcome[0] if outcome else "silent"
    if found != "silent":
        return found
    if speaks_http(address, min(timeout, HTTP_PROBE)):
        return SCHEDULER_IS_WEB_SERVER.format(address=address, env=SCHEDULER_ENV)
    return SCHEDULER_SILENT.format(address=address, timeout=timeout, env=SCHEDULER_ENV)


def _host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a ``tcp://`` or ``tls://`` address, None for another kind or one that does not parse."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        if scheme not in ("tcp", "tls"):
            return None
        host, port = parse_host_port(location)
        return host, int(port)
    except (ValueError, TypeError):
        return None


def tcp_problem(address: str, timeout: float) -> str | None:
    """Why no TCP connection reaches ``address`` (a closed port, an unknown host, no answer within ``timeout`` s),
    or None when one does (or the address is not TCP: Dask's own connect then says)."""
    import socket

    where = _host_port(address)
    if where is None:
        return None
    try:
        with socket.create_connection(where, timeout=timeout):
            return None
    except socket.timeout:
        return f"no answer within {timeout:g} s"
    except OSError as exc:
        return exc.strerror or type(exc).__name__


def speaks_http(address: str, timeout: float) -> bool:
    """Whether the server at a ``tcp://host:port`` address answers an HTTP request (within ``timeout`` s)."""
    import socket

    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        if scheme != "tcp":
            return False
        host, port = parse_host_port(location)
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            sock.sendall(b"HEAD / HTTP/1.0\r\nHost: " + str(host).encode("ascii", "replace") + b"\r\n\r\n")
            return sock.recv(5) == b"HTTP/"
    except (OSError, ValueError):
        return False


def connect_client(address: str, timeout: float):
    """A ``Client`` of the scheduler at ``address``, or StrongTreeError with what is wrong, within about ``timeout`` s."""
    distributed = _distributed()
    problem = handshake_problem(address, timeout)
    if problem is not None:
        raise StrongTreeError(problem)
    made: list = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            made.append(distributed.Client(address, timeout=timeout))
        except BaseException as exc:  # noqa: BLE001 - reported below as a message
            failed.append(exc)

    thread = threading.Thread(target=run, name="strongtree-dask-connect", daemon=True)
    thread.start()
    thread.join(timeout + 5.0)
    if made:
        return made[0]
    if failed and isinstance(failed[0], (OSError, TimeoutError)):
        raise StrongTreeError(SCHEDULER_UNREACHABLE.format(address=address, reason=failed[0], env=SCHEDULER_ENV))
    if failed:
        raise StrongTreeError(SCHEDULER_SPEAKS_OTHER.format(address=address, env=SCHEDULER_ENV))
    raise StrongTreeError(REGISTRATION_HUNG.format(address=address, timeout=timeout, env=SCHEDULER_ENV))
