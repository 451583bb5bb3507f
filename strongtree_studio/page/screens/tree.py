"""Tree: the learned tree in the user's terms at a legible size, a row's path through
it in words, the rules and downloads."""

import streamlit as st

from strongtree_core.tree.summary import tree_summary
from strongtree_core.words import Shortened
from strongtree_studio.views.explain import MSG_NAMES_CUT
from strongtree_studio.views.downloads import EXPORTS, IMAGE_MIME, IMAGES_UNAVAILABLE, export_bytes, image_bytes, images_available
from strongtree_studio.views.markup import md
from strongtree_studio.page.shown import group_mix, shown, shown_label
from strongtree_core.tree.claim import bound_and_gap, claim
from strongtree_studio.page.tree_chart import (
    collapse_controls,
    legibility_note,
    open_all_levels,
    size_control,
    tree_chart,
)
from strongtree_studio.views.tree_view import legend_html, path_in_words, readable_levels
from strongtree_studio.page.status import claim_badges
from strongtree_studio.views.status_words import fmt, objective_value, route_words

st.title("Tree")


@st.cache_data(show_spinner=False, max_entries=16)
def rendered(dot: str, fmt_: str) -> bytes:
    return image_bytes(dot, fmt_)


result, message = shown()
if result is None:
    st.info(message, icon=":material/info:")
    st.stop()

tree, record = result.tree, result.tree.record
said = claim(record)
head, badge = st.columns([4, 2.3], vertical_alignment="center")
head.caption(md(result.title))
with badge:
    claim_badges(said)
label, stale = shown_label(result)
if label:
    (st.warning if stale else st.info)(label, icon=":material/history:")

tables = result.tables
short = Shortened.of_tree(tree, result.roles.protected)  # names past the label limit are shown cut
highlight: list[int] = []
mix = None
row = None
controls = st.columns([1, 1, 1.6], vertical_alignment="bottom")
# The drawing's own controls in a row of their own, so the three sizes are never cut at 1280 px; the collapsed
# subtrees under them across the page, every question whole: outside a column Streamlit's multiselect wraps its
# tags onto more lines (in a column it keeps one line that scrolls behind a fade: "test_score…" at 1280x720).
levels_col, size_col = st.columns([1.6, 1.9], vertical_alignment="bottom")
collapsed_col = st.container()
if tables is None:
    st.caption("Load the table this run was learned on (Data page) to follow rows through the tree.")
else:
    splits = {"train": tables.train, "test": tables.test} if len(tables.test) else {"train": tables.train}
    part = controls[0].selectbox("Rows from", list(splits), key="tree.split",
                                 format_func={"train": "training set", "test": "test set"}.get)
    rows = splits[part]
    index = controls[1].number_input(f"Row (0–{fmt(len(rows) - 1, 'int')})", 0, len(rows) - 1, step=1, key="tree.row",
                                     help="Its path through the tree is drawn with a heavy outline.")
    show_mix = controls[2].toggle("Protected groups in each box", key="tree.mix",
                                  disabled=not result.roles.protected,
                                  help="The protected groups of the training rows reaching each box.")
    row = rows.iloc[[int(index)]]
    highlight = tree.decision_path(row)
    if show_mix and result.roles.protected:
        mix = group_mix(tree, tables.train, result.roles.protected)
size = size_control(size_col, "tree.size")
# Fitted to the panel, a deep tree opens as many levels as read at 10 px or more at 1280x720.
readable = readable_levels(tree, group_mix=mix) if size == "fit" else None
collapsed = collapse_controls(tree, "tree", levels_col, collapsed_col, readable=readable)
closed = legibility_note(tree, "tree")
if closed:
    note, expand = st.columns([4.2, 1], vertical_alignment="center")
    note.caption(closed)
    expand.button("Open all levels", key="tree.expand", icon=":material/unfold_more:", on_click=open_all_levels,
                  args=(tree, "tree"), width="stretch")
tree_chart(tree, "tree", size=size, highlight=highlight, group_mix=mix, collapsed=collapsed, note=not closed)
st.markdown(legend_html(tree, highlight=bool(highlight), groups=mix is not None, collapsed=bool(collapsed),
                        answers=True), unsafe_allow_html=True)

st.markdown("##### The tree in words")
st.markdown("\n".join(f"- {md(short.text(sentence))}" for sentence in tree_summary(tree)))

if row is not None:
    words, values = st.columns([3, 2], gap="large")
    with words:
        prediction = tree.predict(row)[0]
        truth = row[result.roles.target].iloc[0]
        verdict = "right" if str(prediction) == str(truth) else "wrong"
        st.markdown(f"##### The path of row {int(index)}")
        sentences = path_in_words(tree, row)
        st.markdown("\n".join([f"{i}. {md(short.text(s))}" for i, s in enumerate(sentences[:-1], start=1)])
                    + "\n\n" + md(short.text(sentences[-1])))
        st.markdown(f"**Prediction:** {md(short.name(prediction))} · **actual:** {md(short.name(truth))} ({verdict})")
    with values:
        st.markdown("##### Its values")
        st.dataframe(row.T.rename(columns=lambda _: "value").astype(str), height=260)

st.markdown("##### How it was solved")
model_words = (result.model.objective, result.model.regularization, record.n_rows)
st.markdown(
    f"Best tree {objective_value(record.objective, *model_words)}"
    f" · bound {' · '.join(bound_and_gap(record, *model_words))}"
    f" · {fmt(record.runtime, 'seconds')} · {route_words(record.method, record.backend)}  \n{md(short.text(said.words))}"
)

st.markdown("##### Rules")
st.code(short.text(tree.to_text()), language=None, wrap_lines=True)
if short.full:
    with st.expander("Names shown cut"):
        st.caption(MSG_NAMES_CUT)
        for whole in short.full.values():
            st.code(whole, language=None, wrap_lines=True)

st.markdown("##### Download")
cols = st.columns(len(EXPORTS) + 2)
for col, (kind, export) in zip(cols, EXPORTS.items()):
    col.download_button(md(export.label), export_bytes(tree, kind), file_name=export.file_name, mime=export.mime,
                        key=f"tree.download.{kind}", icon=":material/download:", on_click="ignore", width="stretch")
if images_available():
    dot = tree.to_dot()
    for col, fmt_ in zip(cols[len(EXPORTS):], IMAGE_MIME):
        col.download_button(md(fmt_.upper()), rendered(dot, fmt_), file_name=f"tree.{fmt_}", mime=IMAGE_MIME[fmt_],
                            key=f"tree.download.{fmt_}", icon=":material/image:", on_click="ignore", width="stretch")
else:
    st.caption(IMAGES_UNAVAILABLE)
