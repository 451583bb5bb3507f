"""A Gurobi Web License Service (WLS) licence from the app's secrets.

``.streamlit/secrets.toml`` may hold a ``[gurobi]`` table with ``WLSACCESSID``,
``WLSSECRET`` and ``LICENSEID``.  They are put into the server's environment,
where the engine reads them (``strongtree_core.solvers.licence``) and where the
solver processes, which inherit the environment, find them too.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

WLS_KEYS = ("WLSACCESSID", "WLSSECRET", "LICENSEID")

ERR_PARTIAL = (
    "The [gurobi] table in .streamlit/secrets.toml lacks {missing}; a WLS licence needs "
    "WLSACCESSID, WLSSECRET and LICENSEID. Gurobi uses whatever other licence it finds meanwhile."
)


def install_wls_licence(secrets: Mapping[str, Any]) -> str:
    """Export the WLS keys in ``secrets`` (if complete); returns a note for the user.

    Keys already in the environment are left alone.  The note is empty when
    there is nothing to say.
    """
    section = secrets.get("gurobi")
    if not section:
        return ""
    missing = [k for k in WLS_KEYS if not section.get(k)]
    if missing:
        return ERR_PARTIAL.format(missing=", ".join(missing))
    for key in WLS_KEYS:
        os.environ.setdefault(key, str(section[key]))
    return ""
