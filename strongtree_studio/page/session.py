"""Every entry of the dashboard's session state, declared once, and the one way to reach it.

A :class:`Key` names an entry, says what type its value has, how its first value
is made and whether it is *durable*: a durable entry is one of the user's
choices or results (the table, the column roles, the model settings, the jobs
started) and is brought back after a browser reload (see
:mod:`strongtree_studio.page.restore`); the others are flags and notices that live
for a run or two.  Pages and helpers read and write entries only through
``KEY.get()`` / ``KEY.set(value)`` / ``KEY.pop()``, and a widget's own value
(whose key is made at run time, e.g. ``data.label.<column>.<i>``) only through
:func:`widget_value` and :func:`set_widget_value`.  ``tests/test_session_keys.py``
refuses ``st.session_state`` anywhere else.

Values are replaced, never changed in place (``KEY.set(new)``, not
``KEY.get()[k] = v``): a durable entry is stored for a reload when its value is a
new object.  The same test refuses the in-place forms it can see.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Generic, TypeVar

import streamlit as st

from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig
from strongtree_studio.learn.comparison_view import LearnChoice
from strongtree_studio.sweeps.sweep_grid import SweepChoice
from strongtree_studio.stores.table import LoadedTable

T = TypeVar("T")
NoneType = type(None)


@dataclass(frozen=True)
class Key(Generic[T]):
    """One session-state entry.

    Parameters
    ----------
    name : str
        The entry's name in ``st.session_state`` (unique; see :data:`KEYS`).
    types : tuple of type
        The types its value may have; :meth:`set` refuses others.
    default : callable
        Makes the first value (called once per session, and again by :meth:`pop`).
    durable : bool
        Whether the entry is one of the user's choices or results, brought back
        after a browser reload.
    doc : str
        What the entry holds.
    """

    name: str
    types: tuple[type, ...]
    default: Callable[[], T] = field(repr=False)
    durable: bool = False
    doc: str = ""

    def get(self) -> T:
        """The entry's value (its default when the session has none yet)."""
        state = st.session_state
        if self.name not in state:
            state[self.name] = self.default()
        return state[self.name]

    def set(self, value: T) -> None:
        """Make ``value`` the entry's value.

        Raises
        ------
        TypeError
            If ``value`` is not of one of the entry's :attr:`types`.
        """
        if not isinstance(value, self.types):
            raise TypeError(f"Session entry {self.name!r} takes {self.types}, not {type(value).__name__}.")
        st.session_state[self.name] = value

    def pop(self) -> T:
        """The entry's value, which is then removed (read once: notices and page changes)."""
        return st.session_state.pop(self.name, self.default())

    def accepts(self, value: Any) -> bool:
        """Whether ``value`` may be this entry's value."""
        return isinstance(value, self.types)


def _none() -> None:
    return None


def _false() -> bool:
    return False


def _empty() -> str:
    return ""


# -- the user's work: brought back after a reload -------------------------------------------------------------

TABLE: Key[LoadedTable | None] = Key("table", (LoadedTable, NoneType), _none, True, "the table in use")
ROLES: Key[Roles | None] = Key("roles", (Roles, NoneType), _none, True, "what each column is for")
EDITS: Key[dict] = Key("edits", (dict,), dict, True,
                       "column -> strongtree_studio.data.column_types.ColumnEdit: types and value labels chosen on the Data page")
EDITS_UNDO: Key[list] = Key("edits_undo", (list,), list, True,
                            "earlier values of EDITS, the most recent last (Undo the last change)")
EDIT_NOTES: Key[tuple] = Key("edit_notes", (tuple, list), tuple, True, "what applying the column edits changed")
SPLIT: Key[SplitConfig] = Key("split", (SplitConfig,), SplitConfig, True, "training and test rows")
MODEL: Key[ModelConfig] = Key("model", (ModelConfig,), ModelConfig, True, "the Model page's settings")
JOB_ID: Key[str | None] = Key("job_id", (str, NoneType), _none, True, "the solve this session started last")
JOB_SETTINGS: Key[dict | None] = Key("job_settings", (dict, NoneType), _none, True,
                                     "the settings the last solve was started with (strongtree_studio.views.stale)")
VIEW_RUN: Key[int | None] = Key("view_run", (int, NoneType), _none, True, "run shown on the Tree and Fairness pages")
WORKSPACE: Key[str] = Key("workspace", (str,), _empty, True, "a workspace name typed on the Runs page ('' for none)")
SWEEP: Key[SweepChoice] = Key("sweep", (SweepChoice,), SweepChoice, True, "the Trade-offs page's grid")
SWEEP_JOB: Key[str | None] = Key("sweep_job_id", (str, NoneType), _none, True, "the sweep this session started last")
SWEEP_STARTED: Key[dict | None] = Key("sweep_started", (dict, NoneType), _none, True,
                                      "what that sweep was started with: dataset, fingerprint, config")
SWEEP_SHOWN: Key[int | None] = Key("sweep_shown", (int, NoneType), _none, True,
                                   "a stored sweep shown instead of this session's (None: its own)")
LEARN: Key[LearnChoice] = Key("learn", (LearnChoice,), LearnChoice, True, "the Learn page's choices")
LEARN_JOB: Key[str | None] = Key("learn_job_id", (str, NoneType), _none, True,
                                 "the comparison this session started last")
LEARN_STARTED: Key[dict | None] = Key("learn_job_choice", (dict, NoneType), _none, True,
                                      "the choices that comparison was started with")
MIO_LIVE_JOB: Key[str | None] = Key("mio_live_job_id", (str, NoneType), _none, True,
                                    "the Solve page's live MIO (FlowOCT and BendersOCT alone) this session started last")

# -- the session's own bookkeeping: not brought back ---------------------------------------------------------------

SESSION_OWNER: Key[str] = Key("session_owner", (str,), _empty, False,
                              "owner of the runs this browser solves (strongtree_studio.page.restore.owner_of)")
TOKEN: Key[str] = Key("_browser_token", (str,), _empty, False, "this browser's token (strongtree_studio.page.restore)")
BROWSER: Key[str] = Key("_browser_key", (str,), _empty, False, "what the browser store knows this browser by")
READY: Key[bool] = Key("_studio_ready", (bool,), _false, False, "the durable entries are set up")
SAVED: Key[dict] = Key("_saved_entries", (dict,), dict, False, "the durable values last stored, by name")
STORE_NOTICE: Key[str] = Key("_store_notice", (str,), _empty, False, "why this session's work is not kept")
GENERATIONS: Key[dict] = Key("_widget_generations", (dict,), dict, False, "section -> generation of its widgets")
UPLOAD_SEEN: Key[str | None] = Key("upload_seen", (str, NoneType), _none, False, "the upload already read")
GOTO_SOLVE: Key[bool] = Key("_goto_solve", (bool,), _false, False, "the next run goes to the Solve page")
DEMO_WAITING: Key[bool] = Key("_demo_waiting", (bool,), _false, False,
                              "the live demo waits for the exact search's compiled code (strongtree_studio.jobs.preparing)")
GOTO_TREE: Key[bool] = Key("_sweep_goto_tree", (bool,), _false, False, "the next run goes to the Tree page")
SIDEBAR_ACTIVE: Key[bool] = Key("_sidebar_solve_active", (bool,), _false, False,
                                "whether the sidebar last showed this session's solve as running")
SIDEBAR_STATE: Key[str | None] = Key("_sidebar_solve_state", (str, NoneType), _none, False,
                                     "the solve state the sidebar last showed")
SWEEP_NOTICE: Key[str | None] = Key("_sweep_notice", (str, NoneType), _none, False, "a note for the next run")
FRONTIER_SEEN: Key[tuple | None] = Key("_tradeoffs_frontier_seen", (tuple, NoneType), _none, False,
                                       "the (sweep, point) whose click was last acted on")
CODEBOOK_REPORT: Key[tuple | None] = Key("codebook_report", (tuple, NoneType), _none, False,
                                         "(\"done\" | \"error\", sentences) of the last codebook applied")
RUNS_NOTICE: Key[str | None] = Key("runs.notice", (str, NoneType), _none, False, "a note for the Runs page")

#: Every entry, by name.
KEYS: dict[str, Key[Any]] = {}
for _key in [value for value in list(globals().values()) if isinstance(value, Key)]:
    if _key.name in KEYS:
        raise RuntimeError(f"Two session entries are called {_key.name!r}.")
    KEYS[_key.name] = _key
del _key

#: The entries brought back after a reload.
DURABLE: tuple[Key[Any], ...] = tuple(k for k in KEYS.values() if k.durable)


def widget_value(key: str, default: Any = None) -> Any:
    """The value of the widget with key ``key`` (``default`` when it has none)."""
    return st.session_state.get(key, default)


def set_widget_value(key: str, value: Any) -> None:
    """Set the widget with key ``key`` to ``value`` (in a callback, before the widget is drawn)."""
    st.session_state[key] = value


def init_entries(values: dict[str, Any] | None = None) -> None:
    """Create every entry of a new session, from ``values`` (name -> value) where
    they hold a value of the right type, else from its default."""
    values = values or {}
    state = st.session_state
    for key in KEYS.values():
        if key.name in state:
            continue
        value = values.get(key.name)
        state[key.name] = value if key.name in values and key.accepts(value) else key.default()


def durable_values() -> dict[str, Any]:
    """The durable entries' values, by name."""
    return {key.name: key.get() for key in DURABLE}
