"""Learn: OCT, BinOCT, FlowOCT, BendersOCT, the exact search and the local search on
one small table, side by side, with the paper's reasons why the strong formulation wins."""

from dataclasses import asdict, replace

import streamlit as st

from strongtree_studio.jobs.comparison_job import MAX_ROWS, CompareSpec, ComparisonResult
from strongtree_studio.data.demo_tables import DEMO, DEMOS
from strongtree_studio.learn.presets import PRESETS, LearnPreset, preset_of
from strongtree_studio.learn.comparison_view import (
    CHART_CAPTION,
    EXPLANATION,
    LOADED,
    MSG_NO_LP,
    MSG_NO_ROLES,
    NODES_NOTE,
    RUN_SOURCES,
    STALE,
    LearnChoice,
    Sample,
    builtin_sample,
    cap_note,
    comparison_latex,
    comparison_table,
    export_frame,
    is_stale,
    kept_note,
    local_search_sentence,
    lp_chart,
    nodes_sentence,
    not_run,
    optimum_of,
    optimum_words,
    progress_table,
    run_name,
    run_progress,
    sample_table,
    settings_words,
    theorem_check,
)
from strongtree_studio.learn import root_lp_view as root_view
from strongtree_studio.views.markup import md, md_table, plain_text
from strongtree_studio.page.services import job_registry
from strongtree_studio.page.session import LEARN, LEARN_JOB, LEARN_STARTED, MODEL, ROLES, TABLE
from strongtree_studio.page.state import field, renew_widgets
from strongtree_studio.page.status import job_ending, job_state_badge, queue_message
from strongtree_studio.views.status_words import COMPARISON_STEP, fmt

#: Seconds between refreshes of the live progress.
POLL = 1.0
#: Built-in tables offered (the live demo's 10,000 rows are the 800-row hiring table's generator again).
TABLES = [name for name in DEMOS if name != DEMO.table]
TIME_LIMITS = (5.0, 10.0, 20.0, 30.0)
PENALTIES = (0.0, 0.01, 0.05, 0.1)
MSG_STOPPED = "Stopped: the run that was going kept its best tree; the runs after it did not start."

registry = job_registry()


def current_sample(choice: LearnChoice) -> Sample:
    """The rows the chosen table gives (ValueError with a message when it cannot)."""
    if choice.table == LOADED:
        table, roles = TABLE.get(), ROLES.get()
        if table is None or roles is None:
            raise ValueError(MSG_NO_ROLES)
        model = MODEL.get()
        features = roles.feature_columns(table.frame, model.allow_protected_splits)
        return sample_table(table.name, table.frame, roles.target, features, choice.rows)
    return builtin_sample(choice.table, choice.rows)


def start_comparison() -> None:
    """Submit the comparison; it is this session's from now on."""
    choice = LEARN.get()
    sample = current_sample(choice)
    spec = CompareSpec(sample.X, sample.y, depth=choice.depth, time_limit=choice.time_limit,
                       regularization=choice.regularization)
    LEARN_JOB.set(registry.submit(spec))
    LEARN_STARTED.set({**asdict(choice), "name": sample.name, "n_rows": len(sample.y), "of_rows": sample.of_rows,
                       "formulations": list(spec.formulations)})


def stop_comparison() -> None:
    registry.stop(LEARN_JOB.get())


def apply_preset(preset: LearnPreset) -> None:
    """The preset's settings, shown at once by the widgets (they start afresh from them)."""
    LEARN.set(preset.choice)
    renew_widgets(LEARN)


st.title("Learn")
st.caption("Why strong formulations win: the paper's formulations and its baselines solve the same small table, "
           "side by side.")

chosen = preset_of(LEARN.get())
presets = st.columns(len(PRESETS))
for column, preset in zip(presets, PRESETS):
    column.button(md(preset.label), key=f"learn.preset.{preset.key}", on_click=apply_preset, args=(preset,),
                  icon=":material/check_circle:" if preset is chosen else None, width="stretch",
                  help=md(f"{preset.title}. {preset.shows} About {preset.seconds:.0f} s in all on a busy machine."))
if chosen is not None:
    st.caption(f"**Preset: {md(chosen.title)}.** {md(chosen.shows)} About {chosen.seconds:.0f} s in all on a "
               "busy machine.")

loaded = TABLE.get()
options = TABLES + ([LOADED] if loaded is not None else [])
if LEARN.get().table not in options:
    LEARN.set(replace(LEARN.get(), table=options[0]))

snapshot = registry.snapshot(LEARN_JOB.get())
active = snapshot is not None and snapshot.active

cols = st.columns([3, 1.2, 1.4, 1.2, 1.3])
with cols[0]:
    field(st.selectbox, "Table", LEARN, "table", options=options,
          format_func=lambda name: (f"The loaded table: {plain_text(loaded.name)}" if name == LOADED
                                    else plain_text(name)))
with cols[1]:
    field(st.number_input, "Rows", LEARN, "rows", min_value=10, max_value=MAX_ROWS, step=10,
          help="A random sample (seed 0) when the table has more rows.")
with cols[2]:
    field(st.radio, "Depth", LEARN, "depth", options=(1, 2, 3), horizontal=True)
with cols[3]:
    field(st.selectbox, "Time per run", LEARN, "time_limit", options=TIME_LIMITS,
          format_func=lambda s: fmt(s, "seconds"), help="Each of the six runs stops at this limit.")
with cols[4]:
    field(st.selectbox, "Simplicity weight λ", LEARN, "regularization", options=PENALTIES,
          format_func=fmt, help="A penalty per split. BinOCT cannot take it; with it, the LP bounds differ.")
choice = LEARN.get()

problem = ""
try:
    sample = current_sample(choice)
except ValueError as err:
    problem = str(err)
    st.error(md(problem), icon=":material/error:")
else:
    taken = fmt(len(sample.y), "int")
    whole = f"a sample of {taken} of its {fmt(sample.of_rows, 'int')} rows" if sample.of_rows > len(sample.y) \
        else f"all {taken} rows"
    st.caption(f"**{md(sample.name)}**: {whole}, {fmt(sample.X.shape[1], 'int')} columns to split on. " + cap_note())

buttons = st.columns([1, 1, 4])
buttons[0].button("Compare", key="learn.start", type="primary", icon=":material/play_arrow:",
                  on_click=start_comparison, disabled=bool(problem) or active, width="stretch")
buttons[1].button("Stop", key="learn.stop", icon=":material/stop:", on_click=stop_comparison,
                  disabled=not active or snapshot.stop_requested, width="stretch",
                  help="Ends the run that is going (its best tree is kept) and skips the rest.")


def render_live() -> None:
    """Which run is going, with its best tree and bound as they change; reruns the page when the job ends."""
    snap = registry.snapshot(LEARN_JOB.get())
    if snap is None:
        return
    started = LEARN_STARTED.get() or {}
    formulations = started.get("formulations", [])
    runs = run_progress(snap.main.history, formulations, snap.active)
    head, info = st.columns([1, 4], vertical_alignment="center")
    with head:
        job_state_badge(snap)
    if snap.state == "queued":
        info.markdown(queue_message(snap, registry.max_running))
    else:
        going = next((r for r in runs if r.step == "running"), None)
        if going is not None:
            info.caption(f"{COMPARISON_STEP['running'].label} {run_name(going.word)}: its best tree rises and its "
                         "bound falls until they meet or the time per run is up.")
    if snap.active or snap.main.result is None:
        st.table(md_table(progress_table(runs)), hide_index=True)
    if active and not snap.active:
        st.rerun()  # the whole page: the buttons and the results follow


def render_result() -> None:
    started = LEARN_STARTED.get() or {}
    if job_ending(snapshot):
        return
    if snapshot.main.result is None:
        return
    result = ComparisonResult.from_json(snapshot.main.result)
    stale = is_stale(started, choice, None if problem else sample.name)
    st.markdown(f"#### {'Earlier settings · ' if stale else ''}{md(settings_words({**started, 'n_rows': result.n_rows}))}")
    if stale:
        st.warning(md(STALE.format(settings=settings_words({**started, 'n_rows': result.n_rows}))),
                   icon=":material/history:")
    if len(result.rows) < len(result.formulations):
        st.info(MSG_STOPPED, icon=":material/stop_circle:")
    st.table(md_table(comparison_table(result)), hide_index=True)
    for line in not_run(result):
        st.warning(md(line), icon=":material/block:")
    optimum = optimum_of(result.rows)
    kept = kept_note(result)
    if kept:
        st.caption(md(kept))
    st.caption(RUN_SOURCES + f" Gap to optimum: how far a tree's value is below {optimum_words(result.rows)} "
               f"({fmt(optimum)}). Non-zeros: of the constraint matrix the solver was given (BendersOCT's before "
               "its cuts). LP bound: the formulation's root LP relaxation, solved once before the runs. "
               + NODES_NOTE)
    caption = settings_words({**started, "n_rows": result.n_rows})
    downloads = st.columns([1.4, 1.4, 3.2])
    downloads[0].download_button("Table as CSV", export_frame(result).to_csv(index=False).encode(),
                                 file_name="comparison.csv", mime="text/csv", key="learn.csv",
                                 icon=":material/download:", width="stretch")
    downloads[1].download_button("Table as LaTeX", comparison_latex(result, caption).encode(),
                                 file_name="comparison.tex", mime="text/x-tex", key="learn.latex",
                                 icon=":material/download:", width="stretch")
    chart, words = st.columns([3, 2], gap="large")
    with chart:
        st.markdown("**LP bounds against the optimum**")
        spec = lp_chart(result, float(started.get("regularization") or 0.0))
        if spec is None:
            st.caption(MSG_NO_LP)
        else:
            st.vega_lite_chart(spec=spec, width="stretch", height=60 + 40 * len(spec["layer"][0]["encoding"]["y"]
                                                                                ["sort"]))
            note = "" if optimum is not None else " No run proved an optimum: the bars start at the best tree found."
            st.caption(CHART_CAPTION + note)
    with words:
        for sentence in (theorem_check(result), nodes_sentence(result), local_search_sentence(result)):
            if sentence:
                st.markdown(sentence)
    render_root(result)


def render_root(result: ComparisonResult) -> None:
    """The root LP drawn: fractional splits side by side, one row's flow, OCT's big-M rows, in words."""
    st.markdown("#### The root LP, drawn")
    root = root_view.root_of(result.root)
    if not root_view.drawable(root):
        st.caption(root_view.MSG_NOT_DRAWN)
        return
    features = root_view.used_features(root)
    for column, (word, title) in zip(st.columns(len(root_view.DRAWN), gap="medium"), root_view.DRAWN):
        with column:
            lp = root_view.relaxation(root, word)
            st.markdown(f"**{title}**")
            st.caption(f"LP bound {fmt(None if lp is None else lp.value)} · "
                       f"{fmt(None if lp is None else lp.fractional_splits, 'int')} fractional split values")
            spec = root_view.splits_chart(root, word, features)
            if spec is not None:
                st.vega_lite_chart(spec=spec, width="stretch", height=30 + 21 * len(features))
    st.caption(root_view.SPLITS_CAPTION)
    drawing, table = st.columns([2, 3], gap="large")
    with drawing:
        st.markdown("**FlowOCT: the row's flow, source to sink**")
        st.vega_lite_chart(spec=root_view.flow_chart(root), width="stretch", height=360)
    with table:
        st.markdown("**OCT: the same row, and its big-M rows**")
        frame = root_view.oct_table(root)
        if frame is not None:
            st.table(md_table(frame), hide_index=True)
    for sentence in root_view.root_words(root, result.n_rows):
        st.markdown(sentence)


if snapshot is not None:
    st.fragment(run_every=POLL if active else None)(render_live)()
    if not active:
        render_result()
else:
    st.caption("The comparison runs in its own process: you can visit other pages meanwhile; it keeps going.")

st.divider()
st.markdown("### Flows, cuts and tight relaxations")
st.markdown(EXPLANATION)
