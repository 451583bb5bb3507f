"""Data: choose a table, say what each column is for and how to read it, preview
the encoding and the split."""

import time

import streamlit as st

from strongtree_core.encoding import EncodingError, TableEncoder
from strongtree_core.encoding.features import level_key
from strongtree_core.metrics.group_summary import group_summary
from strongtree_studio.page.navigation import screen
from strongtree_studio.page.actions import load_demo_table, start_demo, use_table
from strongtree_studio.data.codebook import CodebookError, codebook_edits, codebook_template, read_codebook
from strongtree_studio.data.column_types import (
    KINDS,
    ColumnEdit,
    apply_edits,
    detected_kind,
    distinct_values,
    ignore_suggestions,
    many_features_message,
    relabel,
)
from strongtree_studio.data.choices import Roles, check_roles, split_table
from strongtree_studio.data.demo_tables import DEMO, DEMOS
from strongtree_studio.views.explain import MSG_NO_TABLE
from strongtree_studio.data.loading import (
    UPLOAD_HELP,
    UPLOAD_LARGER,
    UPLOAD_LARGER_SERVER,
    UPLOAD_TYPES,
    LoadError,
    check_table,
    column_overview,
    fingerprint,
    load_file,
    table_name,
)
from strongtree_studio.stores.server_tables import LOAD_ROWS, allowed_folders, list_tables, pick
from strongtree_studio.stores.server_tables import load as load_server_table
from strongtree_studio.data.column_types import encoding_table
from strongtree_studio.views.groups_view import group_sentence, group_summary_table, small_note
from strongtree_studio.views.markup import md, md_table, plain_text
from strongtree_studio.data.roles import class_values, default_positive, plain, suggest_roles
from strongtree_studio.page.session import (
    CODEBOOK_REPORT,
    EDIT_NOTES,
    EDITS,
    EDITS_UNDO,
    MODEL,
    ROLES,
    SPLIT,
    TABLE,
    UPLOAD_SEEN,
    GENERATIONS,
    widget_value,
)
from strongtree_studio.page.state import field, set_roles, widget_key
from strongtree_studio.stores.table import LoadedTable
from strongtree_studio.views.status_words import count_of, fmt, page_words

st.title("Data")
st.caption("Pick a table, tell the tree what to predict, which columns describe protected groups, and how to read "
           "coded columns.")

#: The widgets of the column form, renewed when the edits change.
LABELS_SECTION = "data.labels"
#: Column edits kept for "Undo the last change".
UNDO_DEPTH = 20
CODEBOOK_HELP = (
    "A codebook says what each code means, for every coded column at once: CSV with the columns *column*, *code* "
    "and *label* (one row per code), or JSON (`{\"race\": {\"1\": \"African-American\"}}`). Codes it does not "
    "name keep their own; the table as loaded is kept, so this can be undone."
)
POSITIVE_HELP = (
    "The outcome whose rates are compared between groups and whose recall and precision are measured: "
    "for example *hired*, or *re-offended*. It need not be the favourable outcome; statistical parity compares "
    "the share of each group predicted to be in this class."
)


#: The tabs a table comes from: the app's own words (the server's tab where its owner names folders).
SOURCE_TABS = (":material/dataset: Built-in tables", ":material/upload_file: Upload a file")
SOURCE_TABS_WITH_SERVER = (*SOURCE_TABS, ":material/storage: On this server")


def load_demo() -> None:
    load_demo_table(widget_value("data.demo"))


server_folders = allowed_folders()
# the third tab only where the server's owner named folders (STRONGTREE_DATA_DIR)
source_tab, upload_tab, *server_tab = st.tabs(SOURCE_TABS_WITH_SERVER if server_folders else SOURCE_TABS)
with source_tab:
    names = list(DEMOS)
    current = TABLE.get()
    shown = names.index(current.name) if current is not None and current.name in DEMOS else 0
    col_pick, col_button, col_demo = st.columns([3, 1.2, 1.6], vertical_alignment="bottom")
    choice = col_pick.selectbox("Built-in table", names, index=shown, key="data.demo", format_func=plain_text)
    col_button.button("Use this table", key="data.load_demo", on_click=load_demo, icon=":material/download_done:",
                      width="stretch")
    col_demo.button("Live demo", key="data.start_demo", on_click=start_demo, icon=":material/slideshow:",
                    width="stretch", help=DEMO.summary)
    st.markdown(DEMOS[choice].summary)
    if DEMOS[choice].description:
        with st.expander("How this table was generated", icon=":material/science:"):
            st.markdown(DEMOS[choice].description)

with upload_tab:
    upload = st.file_uploader(
        "CSV, Excel or Parquet file", type=list(UPLOAD_TYPES), key="data.upload",
        help=md(UPLOAD_HELP.format(limit=st.get_option("server.maxUploadSize"),
                                   larger=UPLOAD_LARGER_SERVER if server_folders else UPLOAD_LARGER)),
    )
    if upload is not None and UPLOAD_SEEN.get() != upload.file_id:
        try:
            loaded = load_file(table_name(upload.name), upload.getvalue())
        except LoadError as err:
            st.error(md(err), icon=":material/error:")
        else:
            UPLOAD_SEEN.set(upload.file_id)
            frame = loaded.frame
            use_table(LoadedTable(table_name(upload.name), frame, fingerprint(frame), loaded.notes, raw=frame),
                      suggest_roles(frame))
            st.rerun()

for tab in server_tab:
    with tab:
        listed = list_tables(server_folders)
        if not listed:
            st.info("The folders this server offers hold no Parquet or CSV table.", icon=":material/info:")
        else:
            col_table, col_use = st.columns([4, 1.2], vertical_alignment="bottom")
            # a file's name is text from the server's folders: listed as typed, on one line (plain text)
            label = col_table.selectbox("Table on this server", [t.label for t in listed], key="data.server_table",
                                        format_func=plain_text,
                                        help="Tables too large to upload, in the folders the server's owner allows. "
                                             f"At most {LOAD_ROWS:,} rows are loaded: a larger table is sampled "
                                             "evenly, and the note says how to fit all of it.")
            if col_use.button("Use this table", key="data.load_server", icon=":material/download_done:",
                              width="stretch"):
                try:
                    entry = pick(label, server_folders)
                    with st.spinner(f"Reading {md(entry.label)} ..."):
                        frame, server_notes = load_server_table(entry)
                        frame = check_table(entry.label, frame)
                except (ValueError, LoadError) as err:
                    st.error(md(err), icon=":material/error:")
                else:
                    use_table(LoadedTable(entry.label, frame, fingerprint(frame), server_notes, raw=frame),
                              suggest_roles(frame))
                    st.rerun()

table: LoadedTable | None = TABLE.get()
if table is None:
    st.info(MSG_NO_TABLE, icon=":material/info:")
    st.stop()

frame = table.frame
columns = [str(c) for c in frame.columns]
roles: Roles = ROLES.get()
model = MODEL.get()

st.subheader(md(table.name), divider="gray")
st.caption(f"{count_of(len(frame), 'row')} × {count_of(frame.shape[1], 'column')}")
for note in table.notes:
    st.info(md(note), icon=":material/translate:")


def change_target(target: str) -> None:
    """A new target: positive class back to its default, the target out of the other roles."""
    old: Roles = ROLES.get()
    set_roles(
        Roles(
            target,
            default_positive(frame, target),
            tuple(c for c in old.protected if c != target),
            tuple(c for c in old.legitimate if c != target),
            tuple(c for c in old.ignored if c != target),
        )
    )


def ignore_columns(names: list[str]) -> None:
    old: Roles = ROLES.get()
    set_roles(Roles(old.target, old.pos_label, tuple(c for c in old.protected if c not in names),
                    tuple(c for c in old.legitimate if c not in names), tuple(dict.fromkeys([*old.ignored, *names]))))


suggested = {c: why for c, why in ignore_suggestions(frame, roles.target).items()
             if c not in roles.ignored and c not in roles.protected and c not in roles.legitimate}
if suggested:
    with st.container(border=True):
        st.markdown(":material/lightbulb: **Columns the tree should probably not see**  \n"
                    + "  \n".join(f"**{md(c)}**: {why}" for c, why in suggested.items()))
        st.button("Ignore these columns", key="data.ignore_suggested", icon=":material/visibility_off:",
                  on_click=ignore_columns, args=(list(suggested),))

st.markdown("##### What each column is for")
left, right = st.columns(2)
with left:
    target = st.selectbox("Target (what the tree predicts)", columns, key=widget_key(ROLES, "target"),
                          index=columns.index(roles.target) if roles.target in columns else 0, format_func=plain_text)
    if target != roles.target:
        change_target(target)
        st.rerun()
    values = class_values(frame, roles.target)
    positive_options = values if len(values) == 2 else [None, *values]
    field(
        st.selectbox, "Positive class", ROLES, "pos_label", options=positive_options, convert=plain,
        format_func=lambda v: "none (multi-class)" if v is None else plain_text(v), help=POSITIVE_HELP,
    )
    others = [c for c in columns if c != roles.target]
    field(st.multiselect, "Ignore these columns", ROLES, "ignored", options=others, format_func=plain_text,
          help="Identifiers, dates, free text, or anything the tree must not see.")
with right:
    field(
        st.multiselect, "Protected attribute(s)", ROLES, "protected", options=others, format_func=plain_text,
        help="Groups the fairness constraints protect (e.g. gender). Several columns form one group per "
        "combination. The tree does not split on them unless allowed on the Model page.",
    )
    field(
        st.multiselect, "Legitimate factor(s)", ROLES, "legitimate", options=others, format_func=plain_text,
        help="Factors that may justify different outcomes (e.g. education); used by conditional statistical parity.",
    )

roles = ROLES.get()
if roles.pos_label is not None:
    st.caption(f"Rates compared between groups are rates of predicting **{md(roles.pos_label)}**. "
               "Name coded classes under *Types & labels*.")
problems = check_roles(frame, roles, model.allow_protected_splits)
for problem in problems:
    st.error(md(problem), icon=":material/error:")


#: Seconds a preview of thresholds from the data may take until its CART is grown on a sample of the
#: rows (CART gets a quarter of them, as in a fit).
PREVIEW_SECONDS = 4.0


@st.cache_data(show_spinner=False, max_entries=8)
def encoding_summary(key: tuple, _frame, features: tuple, coding: str, amount: int, depth: int, _target=None):
    """The encoding plan's summary (cached per table content, split and settings; ``key`` stands for
    ``_frame`` and ``_target``).

    Thresholds from the data are chosen as a solve chooses them: from the training rows and their
    target, CART of the model's ``depth`` included (on a sample of the rows when CART would be slow).
    ``amount``: the thresholds' budget, else the number of buckets."""
    rows = _frame[list(features)]
    if coding == "data":
        plan, _ = TableEncoder(max_thresholds=amount).fit_with_reference(
            rows, target=_target, reference_depth=depth, deadline=time.perf_counter() + PREVIEW_SECONDS)
        return plan.summary()
    return TableEncoder(n_buckets=amount, continuous=coding).fit(rows).summary()


features = roles.feature_columns(frame, model.allow_protected_splits)
parts = None if problems else split_table(frame, roles, SPLIT.get())
summary = None
encoding_error = ""
if features and (model.encoding != "data" or parts is not None):
    # thresholds from the data depend on the target and the depth; quantile buckets on neither
    data = model.encoding == "data"
    try:
        if data:
            summary = encoding_summary((table.fingerprint, SPLIT.get(), roles.target), parts.train, tuple(features),
                                       "data", model.max_thresholds, model.depth, parts.train[roles.target].to_numpy())
        else:
            summary = encoding_summary((table.fingerprint,), frame, tuple(features), model.encoding, model.n_buckets, 0)
    except EncodingError as err:
        encoding_error = page_words(str(err))
if summary is not None:
    warning = many_features_message(summary)
    if warning:
        st.warning(md(warning), icon=":material/warning:")


def apply_column_edit(column: str, values: list[str] | None) -> None:
    """Store the edit of ``column`` from the form's widgets and rebuild the table from the loaded one."""
    kind = widget_value(edit_key(f"kind.{column}"))
    labels = tuple((v, widget_value(edit_key(f"label.{column}.{i}"), "").strip()) for i, v in enumerate(values or []))
    edits = dict(EDITS.get())
    edits[column] = ColumnEdit(kind, labels)
    rebuild({c: e for c, e in edits.items() if not e.empty})


def edit_key(name: str) -> str:
    """Key of a widget of the column form; new keys after every change of the edits (a codebook, an undo), so
    the boxes show the labels the edits now hold instead of what the browser kept."""
    generation = GENERATIONS.get().get(LABELS_SECTION, 0)
    return f"data.{name}" + (f".{generation}" if generation else "")


def rebuild(edits: dict, undoable: bool = True) -> None:
    """The table as loaded with ``edits`` applied; the positive class keeps its meaning under its new name.
    The edits before are kept for :func:`undo_edits` (unless this is the undo)."""
    current: LoadedTable = TABLE.get()
    old_edits = EDITS.get()
    if undoable and edits != old_edits:
        EDITS_UNDO.set([*EDITS_UNDO.get(), old_edits][-UNDO_DEPTH:])
    generations = GENERATIONS.get()  # new keys: the label boxes start again from the edits
    GENERATIONS.set({**generations, LABELS_SECTION: generations.get(LABELS_SECTION, 0) + 1})
    edited, notes = apply_edits(current.loaded, edits)
    EDITS.set(edits)
    EDIT_NOTES.set(tuple(notes))
    TABLE.set(LoadedTable(current.name, edited, fingerprint(edited), current.notes, raw=current.loaded))
    old: Roles = ROLES.get()
    positive = old.pos_label
    if positive is not None:
        before = old_edits.get(old.target)
        raw_key = {label: key for key, label in (before.label_map if before else {}).items()}.get(
            str(positive), level_key(positive))
        wanted = level_key(relabel(raw_key, edits.get(old.target)))
        classes = class_values(edited, old.target)
        positive = next((v for v in classes if level_key(v) == wanted), None)
        if positive is None:
            positive = default_positive(edited, old.target)
    set_roles(Roles(old.target, plain(positive), old.protected, old.legitimate, old.ignored))


def reset_edits() -> None:
    rebuild({})


def undo_edits() -> None:
    """Back to the column edits before the last change (a codebook, a column's form, a reset)."""
    history = list(EDITS_UNDO.get())
    if history:
        EDITS_UNDO.set(history[:-1])
        rebuild(history[-1], undoable=False)
        CODEBOOK_REPORT.set(None)


def apply_codebook() -> None:
    """Read the uploaded or pasted codebook and name the codes of every column it covers."""
    upload = widget_value("data.codebook_file")
    data = upload.getvalue() if upload is not None else widget_value("data.codebook_text", "")
    current: LoadedTable = TABLE.get()
    try:
        result = codebook_edits(read_codebook(data), current.loaded, EDITS.get())
    except CodebookError as err:
        CODEBOOK_REPORT.set(("error", (str(err),)))
        return
    rebuild(result.edits)
    CODEBOOK_REPORT.set(("done", tuple(result.sentences())))


rows_tab, columns_tab, labels_tab, encoding_tab = st.tabs(
    [":material/table_rows: Rows", ":material/view_column: Columns", ":material/label: Types & labels",
     ":material/data_array: Encoding"]
)
with rows_tab:
    st.dataframe(frame.head(200), hide_index=True, height=300)
with columns_tab:
    overview = column_overview(frame)
    overview["role"] = [
        "target" if c == roles.target else "protected" if c in roles.protected
        else "legitimate" if c in roles.legitimate else "ignored" if c in roles.ignored else "feature"
        for c in columns
    ]
    overview["read as"] = [detected_kind(frame[c]) for c in frame.columns]
    st.dataframe(overview, hide_index=True)
with labels_tab:
    st.caption("Coded columns stay coded unless you say what the codes mean: give values names, and say whether a "
               "column of numbers is ordered (thresholds such as *age ≤ 35*) or a set of names with no order "
               "(one test per value, such as *race = 2*).")
    with st.expander("Codebook: name the codes of every column at once", icon=":material/menu_book:",
                     expanded=CODEBOOK_REPORT.get() is not None):
        st.caption(CODEBOOK_HELP)
        book_file, book_text = st.columns([1, 1.4])
        book_file.file_uploader("Codebook file (CSV or JSON)", type=["csv", "json", "txt", "tsv"],
                                key="data.codebook_file")
        book_text.text_area("Or paste it here", key="data.codebook_text", height=120,
                            placeholder="column,code,label\nrace,1,African-American\nrace,2,Caucasian")
        buttons = st.columns([1.2, 1.6, 3], vertical_alignment="center")
        buttons[0].button("Apply codebook", key="data.apply_codebook", on_click=apply_codebook,
                          icon=":material/done_all:", type="primary")
        buttons[1].download_button("Template of this table", codebook_template(table.loaded),
                                   file_name="codebook.csv", mime="text/csv", key="data.codebook_template",
                                   icon=":material/download:", on_click="ignore",
                                   help="Every column with up to 20 values, one row per value; fill in the labels.")
        report = CODEBOOK_REPORT.get()
        if report is not None:
            kind, sentences = report
            (st.error if kind == "error" else st.success)(
                "  \n".join(md(s) for s in sentences), icon=":material/error:" if kind == "error" else ":material/check:")
    column = st.selectbox("Column", columns, key="data.edit_column", format_func=plain_text)
    raw_values = table.loaded[column]
    edit = EDITS.get().get(column, ColumnEdit())
    st.caption(f"Read now as: {md(detected_kind(frame[column]))}.")
    choices = distinct_values(raw_values)
    with st.form(f"data.edit_form.{column}", border=True):
        kinds = list(KINDS)
        st.radio("Read this column as", kinds, index=kinds.index(edit.kind), format_func=KINDS.get,
                 key=edit_key(f"kind.{column}"), horizontal=True)
        if choices is None:
            st.caption(f"More than {len(raw_values.dropna().unique()):,} distinct values: too many to name one by "
                       "one.")
        else:
            st.markdown("**Value labels** (leave empty to keep a value as it is)")
            grid = st.columns(4)
            current_labels = edit.label_map
            for i, value in enumerate(choices):
                grid[i % 4].text_input(md(value), value=current_labels.get(value, ""),
                                       key=edit_key(f"label.{column}.{i}"), placeholder=plain_text(value), max_chars=60)
        st.form_submit_button("Apply to the table", icon=":material/check:", on_click=apply_column_edit,
                              args=(column, choices))
    edits = EDITS.get()
    if edits:
        st.markdown("**Edited columns:** " + ", ".join(
            f"{md(c)} ({KINDS[e.kind].split(' (')[0]}" + (f", {count_of(len(e.label_map), 'label')})" if e.label_map else ")")
            for c, e in edits.items()))
    undo, reset = st.columns([1, 1.2])
    undo.button("Undo the last change", key="data.undo_edits", on_click=undo_edits, icon=":material/undo:",
                disabled=not EDITS_UNDO.get(), width="stretch",
                help="Back to the labels and kinds before the last codebook, column form or reset.")
    if edits:
        reset.button("Undo all column edits", key="data.reset_edits", on_click=reset_edits,
                     icon=":material/layers_clear:", width="stretch")
    for note in EDIT_NOTES.get():
        st.caption(md(note))
with encoding_tab:
    st.caption(md(
        "Each column the tree may ask about becomes yes/no questions: for numbers, "
        + {"thermometer": f"a threshold test (x ≤ t) at each of {model.n_buckets} quantile buckets",
           "onehot_buckets": f"one question per quantile bucket ({model.n_buckets} buckets)",
           "data": f"a threshold test (x ≤ t) at up to {model.max_thresholds} cuts chosen from the training "
                   f"rows, always including those of CART at depth {model.depth}"}[model.encoding]
        + "; for categories, one question per value. The numeric coding is chosen on the Model page."
    ))
    if model.encoding == "data" and parts is None:
        st.info("Thresholds from the data are chosen with the target on the training rows: "
                "fix the problems above to see them.", icon=":material/info:")
    if encoding_error:
        st.error(md(encoding_error), icon=":material/error:")
    elif summary is not None:
        st.dataframe(encoding_table(summary), hide_index=True)
        st.caption(f"{count_of(int(summary['n_binary'].sum()), 'question')} in total.")

st.markdown("##### Training and test rows")
c1, c2, c3 = st.columns(3)
with c1:
    field(st.slider, "Test share", SPLIT, "test_size", 0.0, 0.5, step=0.05, format="%.2f",
          help="Rows held out to measure the tree out of sample. 0 trains on every row.")
with c2:
    field(st.number_input, "Random seed", SPLIT, "seed", min_value=0, max_value=2**31 - 1, step=1)
with c3:
    field(st.checkbox, "Stratify by target", SPLIT, "stratify", help="Keep the class proportions equal in both parts.")
if parts is not None:
    st.markdown(f"**{fmt(len(parts.train), 'int')}** training rows · **{fmt(len(parts.test), 'int')}** test rows")
    for note in parts.notes:
        st.caption(md(note))
    if roles.protected:
        st.markdown("##### Protected groups")
        groups = group_summary(parts.train, parts.test, target=roles.target, protected=roles.protected,
                               pos_label=roles.pos_label)
        st.markdown(md(group_sentence(groups, roles.pos_label)))
        st.table(md_table(group_summary_table(groups, " & ".join(roles.protected), roles.pos_label)))
        st.caption(md(small_note()) + (" Base rates need a positive class (choose one above)."
                                       if roles.pos_label is None else ""))
    st.page_link(screen("model"), label="Next: choose the model", icon=":material/arrow_forward:")
