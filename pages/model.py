"""Model: depth, formulation, objective, bounds, quality floors, fairness and the solver."""

import streamlit as st

from strongtree_core.solvers.licence import gurobi_licence
from studio.config import FORMULATIONS, OBJECTIVES, SOLVERS, ModelConfig
from studio.explain import FAIRNESS_NOTIONS, FORMULATION_HELP, OBJECTIVE_HELP, REGULARIZATION_HELP
from studio.services import licence_note
from studio.state import bound_kwargs

st.title("Model")
st.caption("Shape the tree, set what it optimizes and which fairness it must guarantee.")

model: ModelConfig = st.session_state["model"]

tree_col, fair_col = st.columns(2, gap="large")
with tree_col:
    st.markdown("##### Tree")
    st.slider("Maximum depth", 1, 5, help="Levels of questions from the root to a leaf.",
              **bound_kwargs("model", "depth"))
    st.selectbox("Formulation", list(FORMULATIONS), format_func=FORMULATIONS.get, help=FORMULATION_HELP,
                 **bound_kwargs("model", "formulation", FORMULATIONS))
    st.selectbox("Objective", list(OBJECTIVES), format_func=OBJECTIVES.get, help=OBJECTIVE_HELP,
                 **bound_kwargs("model", "objective", OBJECTIVES))
    st.number_input("Simplicity weight λ", 0.0, 0.99, step=0.01, format="%.2f", help=REGULARIZATION_HELP,
                    **bound_kwargs("model", "regularization"))
    a, b, c = st.columns(3)
    a.number_input("Max. branching nodes", min_value=1, step=1, placeholder="no limit",
                   help="At most this many questions in the whole tree.", **bound_kwargs("model", "max_branching"))
    b.number_input("Max. features", min_value=1, step=1, placeholder="no limit",
                   help="At most this many distinct binary tests.", **bound_kwargs("model", "max_features"))
    c.number_input("Min. rows per leaf", min_value=0, step=1,
                   help="Every leaf must hold at least this many training rows.", **bound_kwargs("model", "min_leaf"))

    st.markdown("##### Quality floors (positive class)")
    a, b, c = st.columns(3)
    a.number_input("Min. recall", 0.0, 1.0, step=0.05, format="%.2f", placeholder="none",
                   help="Share of positive rows the tree must predict positive.", **bound_kwargs("model", "min_recall"))
    b.number_input("Min. precision", 0.0, 1.0, step=0.05, format="%.2f", placeholder="none",
                   help="Share of positive predictions that must be right.", **bound_kwargs("model", "min_precision"))
    c.number_input("Min. specificity", 0.0, 1.0, step=0.05, format="%.2f", placeholder="none",
                   help="Share of negative rows the tree must predict negative.",
                   **bound_kwargs("model", "min_specificity"))

with fair_col:
    st.markdown("##### Fairness")
    st.multiselect("Fairness notions", list(FAIRNESS_NOTIONS), format_func=lambda k: FAIRNESS_NOTIONS[k].name,
                   placeholder="none: no fairness constraint", **bound_kwargs("model", "fairness", FAIRNESS_NOTIONS))
    st.slider("Largest allowed gap δ", 0.0, 0.5, step=0.01, format="%.2f",
              help="For every pair of groups, the compared rates may differ by at most δ on the training rows.",
              **bound_kwargs("model", "fairness_bound"))
    st.toggle("Allow splits on the protected attribute", help="Off: the tree never asks about the protected columns.",
              **bound_kwargs("model", "allow_protected_splits"))
    model = st.session_state["model"]
    chosen = model.fairness or ()
    for key, notion in FAIRNESS_NOTIONS.items():
        if key in chosen:
            with st.container(border=True):
                st.markdown(f"**{notion.name}** (δ = {model.fairness_bound:.2f}). {notion.definition}")
                st.caption(f"Example at δ = 0.05: {notion.example}")
    with st.expander("What each fairness notion means", icon=":material/help:", expanded=not chosen):
        for notion in FAIRNESS_NOTIONS.values():
            st.markdown(f"**{notion.name}.** {notion.definition}  \n*Example at δ = 0.05:* {notion.example}")

    st.markdown("##### Solver")
    st.selectbox("Backend", list(SOLVERS), format_func=SOLVERS.get,
                 help="Automatic picks the solver that fits the model and says why.",
                 **bound_kwargs("model", "solver", SOLVERS))
    st.number_input("Time limit (seconds)", 1.0, 3600.0, step=5.0, format="%.0f",
                    help="The best tree found so far is kept when time runs out.",
                    **bound_kwargs("model", "time_limit"))
    a, b = st.columns(2)
    a.number_input("Buckets per numeric column", 2, 20, step=1, **bound_kwargs("model", "n_buckets"),
                   help="Numeric columns are cut at quantiles into this many buckets.")
    b.selectbox("Numeric coding", ["thermometer", "onehot_buckets"],
                format_func={"thermometer": "thresholds (x ≤ t)", "onehot_buckets": "one bucket each"}.get,
                **bound_kwargs("model", "encoding", ["thermometer", "onehot_buckets"]))
    licence = gurobi_licence()
    icon = {"full": ":material/verified:", "size_limited": ":material/info:", "none": ":material/block:"}[licence.kind]
    st.caption(f"{icon} {licence.message}")
    note = licence_note()
    if note:
        st.warning(note, icon=":material/warning:")

st.page_link("pages/solve.py", label="Next: solve", icon=":material/arrow_forward:")
