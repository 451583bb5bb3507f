"""Fairness & performance: measured gaps against δ, per-group rates, confusion
matrices, and the comparison with CART and with the tree without fairness constraints."""

import pandas as pd
import streamlit as st

from studio.explain import FAIRNESS_NOTIONS
from studio.markup import md, md_table
from studio.outcome import BASELINE_TIME_LIMIT
from studio.shown import shown
from studio.views import fmt

st.title("Fairness & performance")

result, message = shown()
if result is None:
    st.info(message, icon=":material/info:")
    st.stop()

evaluation = result.entry.evaluation or {}
splits: dict = evaluation.get("splits", {})
delta = evaluation.get("delta")
constrained = evaluation.get("notions", [])
measured = evaluation.get("measured", [])
st.caption(md(result.title))

SPLIT_NAMES = {"train": "training rows", "test": "test rows"}

if not result.roles.protected:
    st.info("No protected attribute was chosen for this run, so there are no group gaps to show. "
            "Choose one on the Data page and solve again.", icon=":material/info:")
elif result.roles.positive is None:
    st.info("Group gaps compare positive predictions: choose a positive class on the Data page.", icon=":material/info:")
else:
    shown_notions = constrained or measured
    if constrained:
        st.markdown(f"##### Measured gap against the bound δ = {delta:.2f}")
    else:
        st.markdown("##### Measured gaps")
        st.caption("No fairness constraint was imposed on this tree; the gaps below are measured only.")
    for notion in shown_notions:
        name = FAIRNESS_NOTIONS[notion].name
        cols = st.columns(len(splits))
        for col, (split, metrics) in zip(cols, splits.items()):
            gap = metrics.get("gaps", {}).get(notion, {}).get("difference")
            with col.container(border=True):
                st.metric(f"{name} · {SPLIT_NAMES[split]}", fmt(gap, "gap"), border=False)
                if notion in constrained and gap is not None:
                    if gap <= delta + 1e-9:
                        st.badge(f"within δ = {delta:.2f}", icon=":material/check:", color="green")
                    elif split == "train":
                        st.badge(f"above δ = {delta:.2f}", icon=":material/close:", color="red")
                    else:
                        st.badge(f"above δ = {delta:.2f} out of sample", icon=":material/warning:", color="orange")
    if constrained and "test" in splits:
        st.caption("The bound is enforced on the training rows; on new rows the gap can exceed it a little.")

    gap_rows = []
    for notion in measured:
        row = {"notion": FAIRNESS_NOTIONS[notion].name, "constrained": "yes" if notion in constrained else "no"}
        for split, metrics in splits.items():
            row[SPLIT_NAMES[split]] = fmt(metrics.get("gaps", {}).get(notion, {}).get("difference"), "gap")
        gap_rows.append(row)
    with st.expander("Every fairness gap", icon=":material/balance:", expanded=not constrained):
        st.table(md_table(pd.DataFrame(gap_rows).set_index("notion")))

performance, groups_tab, confusion_tab, comparison_tab = st.tabs(
    [":material/speed: Performance", ":material/groups: Groups", ":material/grid_on: Confusion matrices",
     ":material/compare: Comparison"]
)

with performance:
    quality = pd.DataFrame({SPLIT_NAMES[s]: m["quality"] for s, m in splits.items()})
    quality.index = [i.replace("_", " ") for i in quality.index]
    st.table(md_table(quality.map(lambda v: fmt(v, "percent"))))
    sizes = " · ".join(f"{m['n']:,} {SPLIT_NAMES[s]}" for s, m in splits.items())
    positive = md(result.roles.positive) if result.roles.positive is not None else "none"
    st.caption(f"{sizes}. Positive class: {positive}.")

RATE_COLUMNS = {
    "count": "rows", "selection_rate": "predicted positive", "tpr": "true positive rate",
    "fpr": "false positive rate", "fnr": "false negative rate", "precision": "precision", "accuracy": "accuracy",
}

with groups_tab:
    if not any("groups" in m for m in splits.values()):
        st.caption("Per-group rates need a protected attribute and a positive class.")
    for split, metrics in splits.items():
        if "groups" not in metrics:
            continue
        st.markdown(f"**{SPLIT_NAMES[split].capitalize()}**")
        table = pd.DataFrame(metrics["groups"]).set_index("group")
        rates = table.drop(columns="count")
        spread = (rates.max() - rates.min()).rename("largest gap")
        shown_table = pd.concat([rates, spread.to_frame().T]).map(lambda v: fmt(v, "percent"))
        shown_table.insert(0, "count", [fmt(v, "int") for v in table["count"]] + [""])
        st.table(md_table(shown_table.rename(columns=RATE_COLUMNS)))
    st.caption("“Largest gap” is the difference between the highest and lowest group; an empty cell means the "
               "rate is undefined for that group (e.g. no positive rows).")

with confusion_tab:
    for split, metrics in splits.items():
        if "confusion" not in metrics:
            continue
        st.markdown(f"**{SPLIT_NAMES[split].capitalize()}**")
        cols = st.columns(len(metrics["confusion"]))
        for col, (group, matrix) in zip(cols, metrics["confusion"].items()):
            col.markdown(f"Group **{md(group)}**")
            col.table(md_table(pd.DataFrame(matrix["data"], index=matrix["index"], columns=matrix["columns"])))
    if not any("confusion" in m for m in splits.values()):
        st.caption("Confusion matrices per group need a protected attribute and a positive class.")

with comparison_tab:
    comparison = pd.DataFrame(evaluation.get("comparison", []))
    if not comparison.empty:
        comparison = comparison.set_index("model")
        for column in comparison.columns:
            if column.endswith("accuracy"):
                comparison[column] = comparison[column].map(lambda v: fmt(v, "percent"))
            elif column not in ("status", "leaves"):
                comparison[column] = comparison[column].map(lambda v: fmt(v, "gap"))
        comparison.columns = [c.replace("train_", "train · ").replace("test_", "test · ").replace("_", " ")
                              for c in comparison.columns]
        st.table(md_table(comparison))
    st.caption("CART is scikit-learn's greedy tree of the same depth on the same binary features. The tree without "
               f"fairness constraints has the same settings, solved by the fastest exact route within "
               f"{BASELINE_TIME_LIMIT:.0f} s; its status says whether it was proven optimal.")
    if result.baseline is None and constrained:
        st.caption("The tree without fairness constraints is missing: its solve did not finish.")
