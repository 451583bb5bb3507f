"""Data: choose a table, say what each column is for, preview the encoding and the split."""

import streamlit as st

from strongtree_core.encoding import EncodingError, TableEncoder
from studio.config import Roles, check_roles, split_table
from studio.demo_data import DEMOS
from studio.loading import UPLOAD_TYPES, LoadError, column_overview, fingerprint, read_table
from studio.roles import class_values, default_positive, plain, suggest_roles
from studio.state import LoadedTable, bind, bound_kwargs, set_roles

st.title("Data")
st.caption("Pick a table, tell the tree what to predict and which columns describe protected groups.")


def use_table(table: LoadedTable, roles: Roles) -> None:
    st.session_state["table"] = table
    set_roles(roles)


def load_demo() -> None:
    demo = DEMOS[st.session_state["data.demo"]]
    frame = demo.load()
    use_table(LoadedTable(demo.name, frame, fingerprint(frame), demo.description), suggest_roles(frame, demo))


source_tab, upload_tab = st.tabs([":material/dataset: Built-in tables", ":material/upload_file: Upload a file"])
with source_tab:
    names = list(DEMOS)
    current = st.session_state["table"]
    if "data.demo" not in st.session_state:
        st.session_state["data.demo"] = current.name if current is not None and current.name in DEMOS else names[0]
    col_pick, col_button = st.columns([3, 1], vertical_alignment="bottom")
    choice = col_pick.selectbox("Built-in table", names, key="data.demo")
    col_button.button("Use this table", key="data.load_demo", on_click=load_demo, icon=":material/download_done:")
    st.markdown(DEMOS[choice].description)

with upload_tab:
    upload = st.file_uploader(
        "CSV, Excel or Parquet file", type=list(UPLOAD_TYPES), key="data.upload",
        help="The first row must hold the column names. Nothing is sent anywhere: the file stays on this server.",
    )
    if upload is not None and st.session_state.get("upload_seen") != upload.file_id:
        try:
            frame = read_table(upload.name, upload.getvalue())
        except LoadError as err:
            st.error(str(err), icon=":material/error:")
        else:
            st.session_state["upload_seen"] = upload.file_id
            use_table(LoadedTable(upload.name, frame, fingerprint(frame)), suggest_roles(frame))
            st.rerun()

table: LoadedTable | None = st.session_state["table"]
if table is None:
    st.info("Choose a built-in table or upload one to begin.", icon=":material/info:")
    st.stop()

frame = table.frame
columns = [str(c) for c in frame.columns]
roles: Roles = st.session_state["roles"]
model = st.session_state["model"]

st.subheader(f"{table.name}", divider="gray")
st.caption(f"{len(frame):,} rows × {frame.shape[1]} columns")


def change_target() -> None:
    target = st.session_state["roles.target"]
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
    st.selectbox(
        "Target (what the tree predicts)", columns, key=bind("roles", "target", columns), on_change=change_target
    )
    values = class_values(frame, roles.target)
    positive_options = values if len(values) == 2 else [None, *values]
    st.selectbox(
        "Positive class", positive_options,
        format_func=lambda v: "none (multi-class)" if v is None else str(v),
        help="The outcome that counts as favourable or 'selected' (e.g. hired). Fairness constraints, "
        "recall and precision are measured for this class.",
        **bound_kwargs("roles", "positive", positive_options, convert=plain),
    )
    others = [c for c in columns if c != roles.target]
    st.multiselect(
        "Ignore these columns", others, help="Identifiers, free text, or anything the tree must not see.",
        **bound_kwargs("roles", "ignored", others),
    )
with right:
    st.multiselect(
        "Protected attribute(s)", others,
        help="Groups the fairness constraints protect (e.g. gender). Several columns form one group per "
        "combination. The tree does not split on them unless allowed on the Model page.",
        **bound_kwargs("roles", "protected", others),
    )
    st.multiselect(
        "Legitimate factor(s)", others,
        help="Factors that may justify different outcomes (e.g. education); used by conditional statistical parity.",
        **bound_kwargs("roles", "legitimate", others),
    )

roles = st.session_state["roles"]
problems = check_roles(frame, roles, model.allow_protected_splits)
for problem in problems:
    st.error(problem, icon=":material/error:")

rows_tab, columns_tab, encoding_tab = st.tabs(
    [":material/table_rows: Rows", ":material/view_column: Columns", ":material/binary: Encoding"]
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
            st.error(str(err), icon=":material/error:")
        else:
            summary = plan.summary()
            st.dataframe(summary, hide_index=True)
            st.caption(f"{len(plan.features)} binary features in total.")

st.markdown("##### Training and test rows")
split = st.session_state["split"]
c1, c2, c3 = st.columns(3)
c1.slider("Test share", 0.0, 0.5, step=0.05, format="%.2f", **bound_kwargs("split", "test_size"),
          help="Rows held out to measure the tree out of sample. 0 trains on every row.")
c2.number_input("Random seed", min_value=0, max_value=2**31 - 1, step=1, **bound_kwargs("split", "seed"))
c3.checkbox("Stratify by target", **bound_kwargs("split", "stratify"),
            help="Keep the class proportions equal in both parts.")
if not problems:
    parts = split_table(frame, roles, st.session_state["split"])
    st.markdown(f"**{len(parts.train):,}** training rows · **{len(parts.test):,}** test rows")
    for note in parts.notes:
        st.caption(note)
    st.page_link("pages/model.py", label="Next: choose the model", icon=":material/arrow_forward:")
