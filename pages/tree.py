"""Tree: the learned tree in the user's terms, a row's path through it, and downloads."""

import streamlit as st

from studio.exports import EXPORTS, IMAGE_MIME, IMAGES_UNAVAILABLE, export_bytes, image_bytes, images_available
from studio.markup import md
from studio.shown import group_mix, shown
from studio.views import STATUS_WORDS, fmt

st.title("Tree")


@st.cache_data(show_spinner=False, max_entries=16)
def rendered(dot: str, fmt_: str) -> bytes:
    return image_bytes(dot, fmt_)


result, message = shown()
if result is None:
    st.info(message, icon=":material/info:")
    st.stop()

tree, record = result.tree, result.tree.record
st.caption(f"{md(result.title)} · {STATUS_WORDS.get(record.status, record.status)}")

tables = result.tables
highlight: list[int] = []
mix = None
row_panel = None
if tables is None:
    st.caption("Load the table this run was learned on (Data page) to follow rows through the tree.")
else:
    a, b, c = st.columns([1, 1, 2], vertical_alignment="bottom")
    splits = {"train": tables.train, "test": tables.test} if len(tables.test) else {"train": tables.train}
    part = a.selectbox("Rows from", list(splits), key="tree.split",
                       format_func={"train": "training set", "test": "test set"}.get)
    rows = splits[part]
    index = b.number_input(f"Row (0–{len(rows) - 1})", 0, len(rows) - 1, step=1, key="tree.row",
                           help="Its path through the tree is drawn in bold.")
    show_mix = c.toggle("Show protected groups in each node", key="tree.mix",
                        disabled=not result.roles.protected,
                        help="Training rows of each protected group reaching the node.")
    row = rows.iloc[[int(index)]]
    highlight = tree.decision_path(row)
    if show_mix and result.roles.protected:
        mix = group_mix(tree, tables.train, result.roles.protected)
    row_panel = row

chart, side = st.columns([3, 1], gap="large")
with chart:
    st.graphviz_chart(tree.to_dot(highlight=highlight, group_mix=mix))
    st.caption("Each box shows its test (or prediction), the training rows reaching it and their class mix; "
               "leaves are coloured by the class they predict. “yes” means the test holds.")
with side:
    if row_panel is not None:
        prediction = tree.predict(row_panel)[0]
        truth = row_panel[result.roles.target].iloc[0]
        st.markdown(f"**Prediction:** {md(prediction)}  \n**Actual:** {md(truth)}")
        st.dataframe(row_panel.T.rename(columns=lambda _: "value").astype(str))
    st.markdown("**Solve**")
    st.markdown(f"objective {fmt(record.objective)} · bound {fmt(record.bound)} · gap {fmt(record.gap, 'percent')}  \n"
                f"{fmt(record.runtime, 'seconds')} · {md(record.backend)} · {md(record.formulation)}")

st.markdown("##### Rules")
st.code(tree.to_text(), language=None, wrap_lines=True)

st.markdown("##### Download")
cols = st.columns(len(EXPORTS) + 2)
for col, (kind, export) in zip(cols, EXPORTS.items()):
    col.download_button(export.label, export_bytes(tree, kind), file_name=export.file_name, mime=export.mime,
                        key=f"tree.download.{kind}", icon=":material/download:", on_click="ignore", width="stretch")
if images_available():
    dot = tree.to_dot()
    for col, fmt_ in zip(cols[len(EXPORTS):], IMAGE_MIME):
        col.download_button(fmt_.upper(), rendered(dot, fmt_), file_name=f"tree.{fmt_}", mime=IMAGE_MIME[fmt_],
                            key=f"tree.download.{fmt_}", icon=":material/image:", on_click="ignore", width="stretch")
else:
    st.caption(IMAGES_UNAVAILABLE)
