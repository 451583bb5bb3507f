"""Model: depth, formulation, objective, bounds, quality floors, fairness and the solver."""

import streamlit as st

from strongtree_core.solvers.licence import gurobi_licence
from strongtree_studio.page.navigation import screen
from strongtree_studio.data.choices import ENCODINGS, FORMULATIONS, OBJECTIVES, SOLVERS
from strongtree_studio.views.explain import (
    MSG_CSP_NEEDS_LEGIT,
    FAIRNESS_NOTIONS,
    FORMULATION_HELP,
    OBJECTIVE_HELP,
    REGULARIZATION_HELP,
    example_for,
    example_words,
)
from strongtree_core.vocabulary import SETTING_NAMES
from strongtree_studio.views.fairness_view import PROMISE_HELP, PROMISE_LEVELS, promise_cost_words, promise_words
from strongtree_studio.views.markup import md, plain_text
from strongtree_studio.page.services import licence_note
from strongtree_studio.page.session import MODEL, ROLES, SPLIT, TABLE, widget_value
from strongtree_studio.page.state import field, keep, widget_key
from strongtree_studio.views.status_words import fmt

st.title("Model")
st.caption("Shape the tree, set what it optimizes and which fairness it must guarantee.")

CODING_HELP = (
    "Quantile thresholds: each numeric column is cut at quantiles into equal-sized buckets (the paper's rule; "
    "few questions, quick solves). Thresholds from the data: every cut between two neighbouring values when a "
    "column has few of them; else the cuts of CART (a greedy tree of the same depth), always kept, and cuts where "
    "the class changes, spread over the rows, so that the tree found is never worse than CART's on the training "
    "rows. One question per bucket: is the value in this quantile bucket."
)

tree_col, fair_col = st.columns(2, gap="large")
with tree_col:
    st.markdown("##### Tree")
    field(st.slider, SETTING_NAMES["depth"], MODEL, "depth", 1, 5, help="Levels of questions from the root to a leaf.")
    field(st.selectbox, SETTING_NAMES["formulation"], MODEL, "formulation", options=FORMULATIONS, format_func=FORMULATIONS.get,
          help=FORMULATION_HELP)
    field(st.selectbox, SETTING_NAMES["objective"], MODEL, "objective", options=OBJECTIVES, format_func=OBJECTIVES.get,
          help=OBJECTIVE_HELP)
    field(st.number_input, SETTING_NAMES["regularization"], MODEL, "regularization", 0.0, 0.99, step=0.01, format="%.2f",
          help=REGULARIZATION_HELP)
    # two a row: three side by side wrap their names at a projector's 1280 px
    a, b = st.columns(2)
    c, _ = st.columns(2)
    with a:
        field(st.number_input, SETTING_NAMES["max_branching"], MODEL, "max_branching", min_value=1, step=1,
              placeholder="no limit", help="At most this many branching nodes (questions) in the whole tree.")
    with b:
        field(st.number_input, SETTING_NAMES["max_features_used"], MODEL, "max_features_used", min_value=1, step=1,
              placeholder="no limit", help="At most this many distinct features (binary questions such as "
              "age ≤ 35.5) used in the whole tree; a feature asked twice counts once.")
    with c:
        field(st.number_input, SETTING_NAMES["min_leaf"], MODEL, "min_leaf", min_value=0, step=1,
              help="Every leaf must hold at least this many training rows.")

    st.markdown("##### Quality floors (positive class)")
    floors = (
        (SETTING_NAMES["min_recall"], "min_recall", "Share of positive rows the tree must predict positive."),
        (SETTING_NAMES["min_precision"], "min_precision", "Share of positive predictions that must be right."),
        (SETTING_NAMES["min_specificity"], "min_specificity", "Share of negative rows the tree must predict negative."),
    )
    for column, (label, name, help_text) in zip(st.columns(3), floors):
        with column:
            field(st.number_input, md(label), MODEL, name, 0.0, 1.0, step=0.05, format="%.2f", placeholder="none",
                  help=md(help_text))

with fair_col:
    st.markdown("##### Fairness")
    roles_now = ROLES.get()
    has_legit = bool(roles_now and roles_now.legitimate)
    # Conditional statistical parity compares groups within each level of a legitimate factor: offered with one.
    offered = [k for k in FAIRNESS_NOTIONS if k != "conditional_statistical_parity" or has_legit]
    field(st.multiselect, SETTING_NAMES["fairness"], MODEL, "fairness", options=offered,
          format_func=lambda k: FAIRNESS_NOTIONS[k].name, placeholder="none: no fairness constraint")
    if not has_legit:
        st.caption(MSG_CSP_NEEDS_LEGIT)
    fairness_bound_key = widget_key(MODEL, "fairness_bound")

    def store_fairness_bound() -> None:
        keep(MODEL, "fairness_bound", round(widget_value(fairness_bound_key) / 100.0, 4))

    points = st.slider(f"{SETTING_NAMES['fairness_bound']} (percentage points)", 0.0, 50.0,
                       value=round(100.0 * MODEL.get().fairness_bound, 1), step=0.5, format="%.1f pp",
                       key=fairness_bound_key, on_change=store_fairness_bound,
                       help="For every pair of groups, the compared rates may differ by at most δ on the training "
                       "rows: at δ = 5 pp, rates of 40% and 45% are within the bound, 40% and 46% are not.")
    keep(MODEL, "fairness_bound", round(points / 100.0, 4))
    level = field(st.selectbox, SETTING_NAMES["fairness_confidence"], MODEL, "fairness_confidence",
                  options=PROMISE_LEVELS, format_func=lambda level: plain_text(promise_words(level)), help=PROMISE_HELP)
    if level is not None and MODEL.get().fairness:
        st.caption(md(promise_cost_words(TABLE.get(), ROLES.get(), MODEL.get(), SPLIT.get())))
    field(st.toggle, SETTING_NAMES["allow_protected_splits"], MODEL, "allow_protected_splits",
          help="Off: the tree never asks about the protected columns.")
    model = MODEL.get()
    chosen = model.fairness or ()
    table, roles = TABLE.get(), ROLES.get()
    words = example_words(table.frame if table is not None else None, roles.protected if roles else (),
                          roles.legitimate if roles else (), roles.pos_label if roles else None)
    for key, notion in FAIRNESS_NOTIONS.items():
        if key in chosen and key in offered:
            with st.container(border=True):
                st.markdown(f"**{notion.name}** (δ = {fmt(model.fairness_bound, 'points')}). {notion.definition}")
                st.caption(f"Example at δ = 5 pp: {md(example_for(notion, words))}")
    with st.expander("What each fairness notion means", icon=":material/help:", expanded=not chosen):
        for notion in FAIRNESS_NOTIONS.values():
            st.markdown(f"**{notion.name}.** {notion.definition}  \n*Example at δ = 5 pp:* "
                        f"{md(example_for(notion, words))}")

    st.markdown("##### Solver")
    field(st.selectbox, SETTING_NAMES["solver"], MODEL, "solver", options=SOLVERS, format_func=SOLVERS.get,
          help="Automatic picks the solver that fits the model and says why.")
    field(st.number_input, f"{SETTING_NAMES['time_limit']} (seconds)", MODEL, "time_limit", 1.0, 3600.0, step=5.0,
          format="%.0f",
          help="The best tree found so far is kept when time runs out.")
    a, b = st.columns(2)
    with a:
        coding = field(st.selectbox, SETTING_NAMES["encoding"], MODEL, "encoding", options=ENCODINGS,
                       format_func=ENCODINGS.get, help=CODING_HELP)
    with b:
        if coding == "data":
            field(st.number_input, SETTING_NAMES["max_thresholds"], MODEL, "max_thresholds", 1, 256, step=1,
                  help="At most this many cuts per column; CART's cuts are always among them, even past "
                  "this number. More: better trees and a longer search.")
        else:
            field(st.number_input, SETTING_NAMES["n_buckets"], MODEL, "n_buckets", 2, 20, step=1,
                  help="Numeric columns are cut at quantiles into this many buckets.")
    licence = gurobi_licence()
    icon = {"full": ":material/verified:", "size_limited": ":material/info:", "none": ":material/block:"}[licence.kind]
    st.caption(f"{icon} {md(licence.message)}")  # the solver's own words (paths, error text)
    note = licence_note()
    if note:
        st.warning(md(note), icon=":material/warning:")

st.page_link(screen("solve"), label="Next: solve", icon=":material/arrow_forward:")
