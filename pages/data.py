"""Data: choose a table, say what each column is for, preview the encoding and the split."""

import streamlit as st

from strongtree_core.encoding import EncodingError, TableEncoder
from studio.config import Roles, check_roles, split_table
from studio.demo_data import DEMOS
from studio.loading import UPLOAD_TYPES, LoadError, column_overview, fingerprint, load_file
from studio.markup import md
from studio.roles import class_values, default_positive, plain, suggest_roles
from studio.state import LoadedTable, field, set_roles, widget_key

st.title("Data")
st.caption("Pick a table, tell the tree what to predict and which columns describe protected groups.")


def use_table(table: LoadedTable, roles: Roles) -> None:
    st.session_state["table"] = table
    set_roles(roles)


def load_demo() -> None:
    demo = DEMOS[st.session_state["data.demo"]]
    frame = demo.load()
    use_table(LoadedTable(demo.name, frame, fingerprint(frame)), suggest_roles(frame, demo))


source_tab, upload_tab = st.tabs([":material/dataset: Built-in tables", ":material/upload_file: Upload a file"])
with source_tab:
    names = list(DEMOS)
    current = st.session_state["table"]
    shown = names.index(current.name) if current is not None and current.name in DEMOS else 0
    col_pick, col_button = st.columns([3, 1], vertical_alignment="bottom")
    choice = col_pick.selectbox("Built-in table", names, index=shown, key="data.demo")
    col_button.button("Use this table", key="data.load_demo", on_click=load_demo, icon=":material/download_done:")
    st.markdown(DEMOS[choice].summary)
    if DEMOS[choice].description:
        with st.expander("How this table was generated", icon=":material/science:"):
            st.markdown(DEMOS[choice].description)

with upload_tab:
    upload = st.file_uploader(
        "CSV, Excel or Parquet file", type=list(UPLOAD_TYPES), key="data.upload",
        help="The first row must hold the column names. Nothing is sent anywhere: the file stays on this server.",
    )
    if upload is not None and st.session_state.get("upload_seen") != upload.file_id:
        try:
            loaded = load_file(upload.name, upload.getvalue())
        except LoadError as err:
            st.error(md(err), icon=":material/error:")
        else:
            st.session_state["upload_seen"] = upload.file_id
            frame = loaded.frame
            use_table(LoadedTable(upload.name, frame, fingerprint(frame), loaded.notes), suggest_roles(frame))
            st.rerun()

table: LoadedTable | None = st.session_state["table"]
if table is None:
    st.info("Choose a built-in table or upload one to begin.", icon=":material/info:")
    st.stop()

frame = table.frame
columns = [str(c) for c in frame.columns]
roles: Roles = st.session_state["roles"]
model = st.session_state["model"]

st.subheader(md(table.name), divider="gray")
st.caption(f"{len(frame):,} rows × {frame.shape[1]} columns")
for note in table.notes:
    st.info(md(note), icon=":material/translate:")


def change_target(target: str) -> None:
    """A new target: positive class back to its default, the target out of the other roles."""
    old: Roles = st.session_state["roles"]
    set_roles(
        Roles(
            target,
            default_positive(frame, target),
            tuple(c for c in old.protected if c != target),
            tuple(c for c in old.legitimate if c != target),
            tuple(c for c in old.ignored if c != target),
        )
    )


st.markdown("##### What each column is for")
left, right = st.columns(2)
with left:
    target = st.selectbox("Target (what the tree predicts)", columns, key=widget_key("roles", "target"),
                          index=columns.index(roles.target) if roles.target in columns else 0)
    if target != roles.target:
        change_target(target)
        st.rerun()
    values = class_values(frame, roles.target)
    positive_options = values if len(values) == 2 else [None, *values]
    field(
        st.selectbox, "Positive class", "roles", "positive", options=positive_options, convert=plain,
        format_func=lambda v: "none (multi-class)" if v is None else str(v),
        help="The outcome that counts as favourable or 'selected' (e.g. hired). Fairness constraints, "
        "recall and precision are measured for this class.",
    )
    others = [c for c in columns if c != roles.target]
    field(st.multiselect, "Ignore these columns", "roles", "ignored", options=others,
          help="Identifiers, free text, or anything the tree must not see.")
with right:
    field(
        st.multiselect, "Protected attribute(s)", "roles", "protected", options=others,
        help="Groups the fairness constraints protect (e.g. gender). Several columns form one group per "
        "combination. The tree does not split on them unless allowed on the Model page.",
    )
    field(
        st.multiselect, "Legitimate factor(s)", "roles", "legitimate", options=others,
        help="Factors that may justify different outcomes (e.g. education); used by conditional statistical parity.",
    )

roles = st.session_state["roles"]
problems = check_roles(frame, roles, model.allow_protected_splits)
for problem in problems:
    st.error(md(problem), icon=":material/error:")

rows_tab, columns_tab, encoding_tab = st.tabs(
    [":material/table_rows: Rows", ":material/view_column: Columns", ":material/data_array: Encoding"]
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
    st.dataframe(overview, hide_index=True)
with encoding_tab:
    st.caption(
        "Each feature column becomes binary tests the tree can split on: a threshold per quantile bucket for "
        f"numbers ({model.n_buckets} buckets, {model.encoding} coding), one test per level for categories."
    )
    features = roles.feature_columns(frame, model.allow_protected_splits)
    if features:
        try:
            plan = TableEncoder(n_buckets=model.n_buckets, continuous=model.encoding).fit(frame[features])
        except EncodingError as err:
            st.error(md(err), icon=":material/error:")
        else:
            summary = plan.summary()
            st.dataframe(summary, hide_index=True)
            st.caption(f"{len(plan.features)} binary features in total.")

st.markdown("##### Training and test rows")
split = st.session_state["split"]
c1, c2, c3 = st.columns(3)
with c1:
    field(st.slider, "Test share", "split", "test_size", 0.0, 0.5, step=0.05, format="%.2f",
          help="Rows held out to measure the tree out of sample. 0 trains on every row.")
with c2:
    field(st.number_input, "Random seed", "split", "seed", min_value=0, max_value=2**31 - 1, step=1)
with c3:
    field(st.checkbox, "Stratify by target", "split", "stratify", help="Keep the class proportions equal in both parts.")
if not problems:
    parts = split_table(frame, roles, st.session_state["split"])
    st.markdown(f"**{len(parts.train):,}** training rows · **{len(parts.test):,}** test rows")
    for note in parts.notes:
        st.caption(md(note))
    st.page_link("pages/model.py", label="Next: choose the model", icon=":material/arrow_forward:")
