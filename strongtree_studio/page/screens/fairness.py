"""Fairness & performance: each group's rates against the bound δ, the gap as a
difference and a ratio, confusion matrices, and the cost of fairness: the fair
tree beside the tree without fairness constraints (and CART)."""

import pandas as pd
import streamlit as st

from strongtree_core.report.cost import cost_of_fairness, points
from strongtree_studio.views.explain import FAIRNESS_NOTIONS
from strongtree_studio.views.fairness_view import (
    FOUR_FIFTHS,
    new_rows_words,
    promise_rounds,
    rate_intervals,
    NOTION_RATES,
    RATE_HELP,
    RATE_NAMES,
    comparison_table,
    cost_chart,
    group_table,
    rate_chart,
    rate_rows,
    verdict,
)
from strongtree_studio.data.choices import SplitConfig
from strongtree_studio.views.markup import md, md_table
from strongtree_studio.jobs.solve_job import BASELINE_TIME_LIMIT
from strongtree_studio.views.report_view import MSG_NO_ROWS, report_file_name, report_html
from strongtree_studio.page.shown import shown, shown_label
from strongtree_studio.page.tree_chart import size_control, tree_chart
from strongtree_studio.views.tree_view import PAIR_MORE_FAIRNESS, SIZE_NOTES, legend_html, paired_fit
from strongtree_core.tree.claim import claim
from strongtree_studio.page.status import PROMISE_ICONS, claim_badges
from strongtree_studio.views.status_words import POINTS_NOTE, count_of, fmt

st.title("Fairness & performance")

result, message = shown()
if result is None:
    st.info(message, icon=":material/info:")
    st.stop()

evaluation = result.entry.evaluation or {}
splits: dict = evaluation.get("splits", {})
fairness_bound = evaluation.get("fairness_bound")
constrained = evaluation.get("notions", [])
measured = evaluation.get("measured", [])
constant = bool(evaluation.get("constant"))
head, badge = st.columns([4, 2.3], vertical_alignment="center")
head.caption(md(result.title))
with badge:
    claim_badges(claim(result.tree.record))
label, stale = shown_label(result)
if label:
    (st.warning if stale else st.info)(label, icon=":material/history:")


def report_data() -> bytes:
    """The report, made when the button is clicked (a few seconds: the reference models are fitted)."""
    return report_html(result.entry.dataset, result.tree, result.baseline, result.roles, result.model,
                       SplitConfig(**result.entry.config["split"]), result.tables)


report_col, report_note = st.columns([1.3, 4], vertical_alignment="center")
report_col.download_button(
    "Report (HTML)", report_data if result.tables is not None else b"", key="fairness.report",
    file_name=report_file_name(result.entry.dataset, result.entry.id), mime="text/html",
    icon=":material/description:", on_click="ignore", type="primary", disabled=result.tables is None,
    width="stretch",
    help="One self-contained page for a review board: the table and its groups, the settings, the certificate, the "
         "tree drawn and in words, each group's rates with intervals, the cost of fairness. It opens offline and "
         "prints to PDF from the browser.")
report_note.caption(MSG_NO_ROWS if result.tables is None else
                    "Everything below in one page to keep or print (opens in any browser, no internet needed).")

SPLIT_NAMES = {"train": "training rows", "test": "test rows"}
group_title = " & ".join(result.roles.protected) or "group"
has_groups = bool(result.roles.protected) and result.roles.pos_label is not None
shown_notions = constrained or measured
bound = fairness_bound if fairness_bound is not None else 0.05

if not result.roles.protected:
    st.info("No protected attribute was chosen for this run, so there are no group gaps to show. "
            "Choose one on the Data page and solve again.", icon=":material/info:")
elif result.roles.pos_label is None:
    st.info("Group gaps compare positive predictions: choose a positive class on the Data page.", icon=":material/info:")
else:
    if constrained:
        st.markdown(f"##### Measured gap against the bound δ = {fmt(fairness_bound, 'points')}")
    else:
        st.markdown("##### Measured gaps")
        st.caption("No fairness constraint was imposed on this tree; the gaps below are measured only.")
    for notion in shown_notions:
        name = FAIRNESS_NOTIONS[notion].name
        cols = st.columns(len(splits))
        for col, (split, metrics) in zip(cols, splits.items()):
            gap_info = metrics.get("gaps", {}).get(notion, {})
            gap = gap_info.get("difference")
            ratio = gap_info.get("ratio")
            span = metrics.get("intervals", {}).get(notion, {})
            interval = (span.get("low"), span.get("high")) if span else None
            with col.container(border=True):
                st.metric(md(f"{name} · {SPLIT_NAMES[split]}"), fmt(gap, "points"), border=False,
                          help="The largest difference of the compared rate between two groups.")
                if interval is not None and interval[0] is not None:
                    st.caption(f"95 % interval {fmt(interval[0], 'points')} to {fmt(interval[1], 'points')} "
                               f"({count_of(span.get('n_differences') or 0, 'difference')}, simultaneous)",
                               help="The gap on the population these rows were drawn from lies in this interval "
                               "with probability at least 95 % (Newcombe's score interval of each difference, "
                               "Bonferroni over the differences).")
                found = verdict(gap, fairness_bound, notion in constrained, split, interval=interval, ratio=ratio,
                                trivial=bool(evaluation.get("trivial")), constant=constant)
                badges = st.columns([3, 2], vertical_alignment="center")
                if found is not None:
                    with badges[0]:
                        st.badge(found.text, icon=found.icon, color=found.colour)
                if ratio is not None:
                    badges[1].caption(f"ratio {fmt(ratio, 'ratio')}",
                                      help="The smallest group's rate divided by the largest's (1 = equal).")
    notes = [POINTS_NOTE]
    if constrained and "test" in splits:
        notes.append(new_rows_words(splits["test"], constrained, fairness_bound, FAIRNESS_NOTIONS, constant))
    st.caption(" ".join(notes))
    said = claim(result.tree.record)
    promise = result.tree.record.promise
    if said.promise:
        # the icon of how the promise is known, as its badge has it (a shield for a proved one only)
        (st.warning if said.promise_state == "constant" else st.info)(
            md(said.promise), icon=PROMISE_ICONS.get(said.promise_state, ":material/warning:"))
        with st.expander("How the promise was checked", icon=":material/info:"):
            st.markdown(md(promise.get("message", "")))
            if promise.get("details"):
                st.caption(md(promise["details"]))
            st.table(md_table(promise_rounds(promise)))
    elif constrained:
        st.caption("The bound is a promise about the training rows only. For a promise about new rows, choose a "
                   "confidence under *Promise on new rows* on the Model page.")
if evaluation.get("trivial"):
    st.warning(md(evaluation["trivial"]), icon=":material/warning:")
if evaluation.get("constant") and has_groups:
    st.caption("This tree predicts one class for every row, so every group's rate is the same on any rows "
               "(0 % or 100 %) and its gap is exactly 0; the intervals below are what the rows alone would say.")

tabs = st.tabs([":material/bar_chart: Groups", ":material/speed: Performance", ":material/grid_on: Confusion matrices",
                ":material/compare: Cost of fairness"])
groups_tab, performance_tab, confusion_tab, cost_tab = tabs

with groups_tab:
    if not has_groups:
        st.caption("Per-group rates need a protected attribute and a positive class.")
    else:
        rates = list(dict.fromkeys(r for n in (shown_notions or ["statistical_parity"]) for r in NOTION_RATES[n]
                                   if n != "conditional_statistical_parity"))
        if not rates:
            rates = ["selection_rate"]
        band_words = (f"The shaded band is δ = {fmt(fairness_bound, 'points')} wide, centred between the lowest and the "
                      "highest group: a bar ending inside it is within δ of every other group. The black line on each "
                      "bar is the rate's 95 % interval: a group is within δ when its whole interval is in the band, "
                      "beyond δ when it is wholly outside, undecided when it straddles an edge. On the training rows "
                      "the certificate decides: the bound holds there exactly, so the bars are judged by their rates "
                      "(the intervals still say what the rows tell about the population)." if constrained else
                      f"No constraint was imposed; the shaded band shows δ = {fmt(bound, 'points')} of the settings "
                      "for reference.")
        st.caption(band_words)
        for rate in rates:
            st.markdown(f"**{RATE_NAMES[rate].capitalize()}** ({RATE_HELP[rate]})")
            cols = st.columns(len(splits))
            # on the training rows of a constrained rate the certificate decides, as on the cards above
            bounded = any(rate in NOTION_RATES[n] for n in constrained if n != "conditional_statistical_parity")
            for col, (split, metrics) in zip(cols, splits.items()):
                rows = rate_rows(metrics.get("groups", []), rate, rate_intervals(metrics.get("intervals"), rate))
                spec = rate_chart(rows, rate, bound, bool(constrained), group_title,
                                  certificate=constant or (split == "train" and bounded))
                with col:
                    st.caption(SPLIT_NAMES[split].capitalize())
                    if spec is not None:
                        st.vega_lite_chart(spec=spec, width="stretch")
        if "conditional_statistical_parity" in shown_notions:
            st.markdown(f"**Predicted positive within each level of {md(', '.join(result.roles.legitimate))}**")
            for split, metrics in splits.items():
                by_level = metrics.get("groups_by_level")
                if not by_level:
                    continue
                st.caption(SPLIT_NAMES[split].capitalize())
                levels = list(dict.fromkeys(str(r["legit"]) for r in by_level))
                cols = st.columns(min(len(levels), 3))
                for i, level in enumerate(levels):
                    rows = rate_rows([r for r in by_level if str(r["legit"]) == level], "selection_rate")
                    spec = rate_chart(rows, "selection_rate", bound, "conditional_statistical_parity" in constrained,
                                      group_title, certificate=constant or (
                                          split == "train" and "conditional_statistical_parity" in constrained))
                    with cols[i % len(cols)]:
                        st.markdown(f"*{md(level)}*")
                        if spec is not None:
                            st.vega_lite_chart(spec=spec, width="stretch")
        st.markdown("**Every rate of every group**")
        for split, metrics in splits.items():
            if "groups" not in metrics:
                continue
            st.caption(SPLIT_NAMES[split].capitalize())
            st.table(md_table(group_table(metrics["groups"], group_title)))
        st.caption(f"Rates in percent; gaps in percentage points. A ratio below {fmt(FOUR_FIFTHS, 'ratio')} breaks the "
                   "four-fifths rule of thumb for the share predicted positive. An empty cell means the rate is "
                   "undefined for that group (e.g. no rows of the positive class).")

with performance_tab:
    quality = pd.DataFrame({SPLIT_NAMES[s]: {**m["quality"], "majority-class baseline": m.get("baseline_accuracy")}
                            for s, m in splits.items()})
    quality.index = [i.replace("_", " ") for i in quality.index]
    st.table(md_table(quality.map(lambda v: fmt(v, "percent"))))
    sizes = " · ".join(f"{fmt(m['n'], 'int')} {SPLIT_NAMES[s]}" for s, m in splits.items())
    positive = md(result.roles.pos_label) if result.roles.pos_label is not None else "none"
    st.caption(f"{sizes}. Positive class: {positive}. The majority-class baseline is the accuracy of predicting the "
               "training rows' most frequent class for every row: a tree is only worth its splits above it.")

with confusion_tab:
    for split, metrics in splits.items():
        if "confusion" not in metrics:
            continue
        st.markdown(f"**{SPLIT_NAMES[split].capitalize()}**")
        order = [str(g["group"]) for g in metrics.get("groups", [])]
        matrices = sorted(metrics["confusion"].items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99)
        cols = st.columns(max(1, min(len(matrices), 4)))
        for i, (group, matrix) in enumerate(matrices):
            col = cols[i % len(cols)]
            col.markdown(f"{md(group_title)} = **{md(group)}**")
            col.table(md_table(pd.DataFrame(matrix["data"], index=matrix["index"], columns=matrix["columns"])))
    if not any("confusion" in m for m in splits.values()):
        st.caption("Confusion matrices per group need a protected attribute and a positive class.")

with cost_tab:
    comparison = evaluation.get("comparison", [])
    names = {k: n.name for k, n in FAIRNESS_NOTIONS.items()}
    compared = [n for n in (constrained or measured[:1])]
    cost = cost_of_fairness(comparison, compared[0] if compared else None,
                            names[compared[0]] if compared else None, bool(constrained))
    if cost is not None:
        figures = st.columns(3)
        figures[0].metric("Cost of fairness", "–" if cost.fairness is None else points(cost.fairness),
                          help="Accuracy of the tree without the fairness constraint minus this tree's, on the "
                               f"{SPLIT_NAMES[cost.split]}.")
        figures[1].metric("Cost of readability", "–" if cost.readability is None else points(cost.readability),
                          help="Accuracy of a logistic regression (not a tree) minus the tree without the "
                               f"constraint's, on the {SPLIT_NAMES[cost.split]}.")
        figures[2].metric("Above the majority class", "–" if cost.majority is None else points(cost.this - cost.majority),
                          help="This tree's accuracy minus that of predicting the most frequent class for every row.")
        st.markdown("  \n".join(md(s) for s in cost.sentences()))
    if comparison:
        claimed = {"StrongTree": claim(result.tree.record).short}
        if result.baseline is not None:
            claimed["StrongTree without fairness constraints"] = claim(result.baseline.record).short
        st.table(md_table(comparison_table(comparison, compared, names, claimed)))
        if compared:
            cols = st.columns(len(splits))
            for col, split in zip(cols, splits):
                spec = cost_chart(comparison, compared[0], fairness_bound if constrained else None, split)
                with col:
                    st.caption(f"Accuracy against the {names[compared[0]].lower()} gap, {SPLIT_NAMES[split]}"
                               + (" (dashed: δ)" if constrained else ""))
                    if spec is not None:
                        st.vega_lite_chart(spec=spec, width="stretch", height=230)
    st.caption("CART is scikit-learn's greedy tree of the same depth on the same binary features; the logistic "
               "regression (not a tree) uses the same columns; the majority class predicts the most frequent training "
               "class for every row. The tree without "
               f"fairness constraints has the same settings, solved by the fastest exact route within "
               f"{fmt(BASELINE_TIME_LIMIT, 'seconds')}; its status says whether it was proven optimal.")
    if result.baseline is not None:
        heading, sizes = st.columns([3, 2], vertical_alignment="bottom")
        heading.markdown("##### The two trees side by side")
        size = size_control(sizes, "fairness.tree_size")
        titles = ("With the fairness constraint", "Without fairness constraints")
        # Fitted to the panels, the trees open the levels that read at 10 px or more, one above the other when
        # side by side they would not.
        side_by_side, collapsed, words = (paired_fit([result.tree, result.baseline], titles, PAIR_MORE_FAIRNESS)
                                          if size == "fit" else (True, [[], []], SIZE_NOTES[size]))
        st.caption(words)  # once, above both panels, so the two drawings start level
        fair_col, free_col = st.columns(2, gap="medium") if side_by_side else (st.container(), st.container())
        rows = {c["model"]: c for c in comparison}
        for col, tree, title, key, closed in (
            (fair_col, result.tree, titles[0], "StrongTree", collapsed[0]),
            (free_col, result.baseline, titles[1], "StrongTree without fairness constraints", collapsed[1]),
        ):
            row = rows.get(key, {})
            gap = row.get(f"train_{compared[0]}") if compared else None
            with col:
                st.markdown(f"**{title}**")
                st.caption(f"{md(claim(tree.record).short)} · training accuracy "
                           f"{fmt(row.get('train_accuracy'), 'percent')}"
                           + (f" · gap {fmt(gap, 'points')}" if compared else ""))
                tree_chart(tree, f"fairness-{'fair' if tree is result.tree else 'free'}", size=size,
                           collapsed=closed, compact=True, note=False)
        st.markdown(legend_html(result.tree, answers=True, collapsed=any(collapsed)), unsafe_allow_html=True)
    elif constrained:
        st.caption("The tree without fairness constraints is missing: its solve did not finish.")
