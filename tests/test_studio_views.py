"""The dashboard's pure helpers: the number formatter and status words, stale labels,
column edits and suggestions, the drawn tree, the fairness band, the solver's log
and the job's progress points."""

from html.parser import HTMLParser

import hostile
import numpy as np
import pandas as pd
import pytest

from strongtree_core import StrongTreeClassifier
from strongtree_core.encoding import TableEncoder
from strongtree_studio.data.column_types import (
    MANY_FEATURES,
    MSG_MANY_FEATURES,
    NOTE_MERGED,
    NOTE_NOT_NUMBER,
    REASON_DATE,
    REASON_ID,
    REASON_TEXT,
    ColumnEdit,
    apply_edits,
    ignore_suggestions,
    many_features_message,
    relabel,
)
from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig
from strongtree_studio.data.demo_tables import DEMOS, make_hiring
from strongtree_studio.views.fairness_view import band, judged
from strongtree_studio.jobs.job_registry import PhaseState
from strongtree_studio.views.stale import MSG_STALE, changes, settings, stale_message
from strongtree_studio.views.tree_view import MAX_LINE, TEXT_SIZE, edge_words, path_in_words, text_width, tree_svg, wrap
from strongtree_studio.views.ticks import SHORTEST_SPAN
from strongtree_studio.page.status import gap_spec, objective_spec, solver_log, y_domain
from strongtree_studio.views.status_words import SOLVE_STATUS, fmt, objective_value, route_words


@pytest.mark.parametrize(
    ("value", "kind", "text"),
    [
        (0.17188665175242357, "number", "0.172"), (60.57392290400003, "number", "60.57"),
        (3085.5, "number", "3,085.5"), (2682.0, "number", "2,682"), (None, "number", "–"),
        (float("nan"), "percent", "–"), (0.753, "percent", "75.3%"), (0.0004, "percent", "<0.1%"),
        (0.0, "percent", "0.0%"), (0.049, "points", "4.9 pp"), (0.0, "points", "0.0 pp"),
        (0.0004, "points", "<0.1 pp"), (0.8123, "ratio", "0.81"), (12.34, "seconds", "12.3 s"),
        (125.3, "seconds", "2 min 05 s"), (5000, "seconds", "1 h 23 min"), (55562, "int", "55,562"),
    ],
)
def test_one_formatter_for_every_number(value, kind, text):
    assert fmt(value, kind) == text


def test_statuses_and_routes_read_as_words():
    assert {k: w.label for k, w in SOLVE_STATUS.items() if k in ("optimal", "time_limit", "interrupted")} == {
        "optimal": "Proven optimal", "time_limit": "Not proven (time limit)", "interrupted": "Stopped (not proven)"}
    assert SOLVE_STATUS["optimal"].colour == "green" and SOLVE_STATUS["time_limit"].colour == "orange"
    assert route_words("exact", "numpy") == "exact search (built in)"
    assert route_words("flow", "highs") == "FlowOCT on HiGHS"
    assert objective_value(569.0, "accuracy", 0.0, 600) == "569 correct rows (94.8%)"
    assert objective_value(450.6, "balanced_accuracy", 0.0, 600) == "75.1% balanced accuracy"


ROLES = Roles("hired", "yes", ("gender",), ("education",))


def test_the_library_s_lists_of_settings_read_as_the_model_page_names_them_and_a_column_keeps_its_name():
    """A column and its groups named like settings ("min_recall", "statistical_parity"): where the library lists
    the settings in force (a skipped part of a constraint, the constraints no tree meets) they read as the Model
    page names them; the column and group names in the same text stay as the user wrote them (they read
    "Min. recall" when every occurrence of the parameter's name was renamed)."""
    from strongtree_core import StrongTreeError
    from strongtree_studio.views.status_words import page_words

    n = 80
    group = np.where((np.arange(n) % 2 == 0) & (np.arange(n) < 60), "min_recall", "statistical_parity")
    X = pd.DataFrame({"min_recall": group, "level": np.where(np.arange(n) < 60, "lo", "hi"),
                      "score": np.random.default_rng(0).integers(0, 4, n)})
    y = (X["score"] + np.random.default_rng(1).random(n) > 2).astype(int)
    fitted = StrongTreeClassifier(depth=1, fairness="conditional_statistical_parity", fairness_bound=0.5,
                                  allow_protected_splits=True, pos_label=1, time_limit=20).fit(
        X, y, sensitive_features="min_recall", legitimate_features="level")
    skipped = ("skipped conditional statistical parity: group 'min_recall' has no rows among rows of legitimate level "
               "'hi', so its share predicted positive is undefined there and it is left out of that comparison ")
    alone = ("skipped conditional statistical parity: only one group has rows among rows of legitimate level 'hi', so "
             "there is nothing to compare there")
    assert fitted.record_.message == ("The tree may split on the protected attribute(s) min_recall (allowed). "
                                      f"conditional_statistical_parity: {skipped}conditional_statistical_parity: {alone}")
    assert page_words(fitted.record_.message) == ("The tree may split on the protected attribute(s) min_recall "
                                                  f"(allowed). Conditional statistical parity: {skipped}"
                                                  f"Conditional statistical parity: {alone}")
    with pytest.raises(StrongTreeError) as missing:
        StrongTreeClassifier(depth=1).fit(X, y, sensitive_features="statistical_parity")
    assert "statistical_parity" in str(missing.value) and page_words(str(missing.value)) == str(missing.value)
    with pytest.raises(StrongTreeError) as refused:
        StrongTreeClassifier(depth=1, min_recall=1.0, min_specificity=1.0, pos_label=1, time_limit=20).fit(
            X.assign(score=0), y)
    assert "(min_recall, min_specificity)" in str(refused.value)
    assert "(Min. recall, Min. specificity)" in page_words(str(refused.value))
    for formulation, listed in (("benders", "enforce {names}: "), ("oct", "take {names}. "), ("binoct", "take {names} (")):
        with pytest.raises(StrongTreeError) as refused:  # refused before any solve
            StrongTreeClassifier(depth=1, formulation=formulation, min_recall=0.5, fairness="statistical_parity",
                                 pos_label=1).fit(X, y, sensitive_features="min_recall")
        assert listed.format(names="statistical_parity, min_recall") in str(refused.value), formulation
        assert listed.format(names="Statistical parity, Min. recall") in page_words(str(refused.value)), formulation


def test_a_result_is_stale_exactly_when_its_settings_differ():
    then = settings("fp", ROLES, SplitConfig(), ModelConfig())
    assert changes(then, then) == [] and stale_message(then, then) == ""
    assert stale_message(then, None) == ""
    assert changes(then, settings("other", ROLES, SplitConfig(), ModelConfig())) == ["the table"]
    now = settings("fp", ROLES, SplitConfig(seed=3), ModelConfig(depth=3, fairness=("statistical_parity",),
                                                                 fairness_bound=0.02))
    # each setting by its one name (the Model page's, the report's: strongtree_core.vocabulary.SETTING_NAMES)
    assert changes(then, now) == ["maximum depth 2 → 3", "fairness notions none → Statistical parity",
                                  "largest allowed gap δ 5.0 pp → 2.0 pp", "random seed 0 → 3"]
    assert stale_message(then, now) == MSG_STALE.format(
        changes="maximum depth 2 → 3, fairness notions none → Statistical parity, largest allowed gap δ 5\\.0 pp → "
                "2\\.0 pp and 1 more setting")
    # δ bounds nothing without a fairness notion: changing it alone changes no result
    assert changes(then, settings("fp", ROLES, SplitConfig(), ModelConfig(fairness_bound=0.1))) == []
    moved = settings("fp", Roles("hired", "no", ("gender",)), SplitConfig(), ModelConfig())
    assert changes(then, moved) == ["positive class yes → no", "legitimate factor education → none"]


def test_the_numeric_coding_reaches_the_estimator_and_the_stale_label_names_only_what_it_uses():
    data = ModelConfig(encoding="data", max_thresholds=7)
    params = data.estimator_params(ROLES)
    assert (params["encoding"], params["n_buckets"], params["max_thresholds"]) == ("thermometer", None, 7)
    for coding in ("thermometer", "onehot_buckets"):
        params = ModelConfig(encoding=coding, n_buckets=4).estimator_params(ROLES)
        assert (params["encoding"], params["n_buckets"], params["max_thresholds"]) == (coding, 4, None)
    frame = make_hiring(200, seed=1)
    fitted = StrongTreeClassifier(**{**data.estimator_params(ROLES), "fairness": None}).fit(
        frame.drop(columns=["hired", "gender"]), frame["hired"])
    assert fitted.tree_.encoding.max_thresholds == 7  # the estimator takes the mapped parameters as they are
    assert [data.coding_words(), ModelConfig().coding_words(), ModelConfig(encoding="onehot_buckets").coding_words()] == [
        "up to 7 cuts per number from the data", "5 quantile cuts per number", "5 buckets per number"]

    def stale(a, b):
        return changes(settings("fp", ROLES, SplitConfig(), a), settings("fp", ROLES, SplitConfig(), b))
    assert stale(ModelConfig(), data) == ["numeric coding x ≤ t at quantiles → x ≤ t from the data",
                                          "thresholds per numeric column 16 → 7"]
    assert stale(data, ModelConfig(encoding="data", max_thresholds=7, n_buckets=9)) == []  # buckets unused
    assert stale(ModelConfig(), ModelConfig(max_thresholds=3)) == []  # thresholds unused by quantile cuts
    older = settings("fp", ROLES, SplitConfig(), ModelConfig())
    del older["config"]["model"]["max_thresholds"]  # a run stored before the coding existed
    assert changes(older, settings("fp", ROLES, SplitConfig(), ModelConfig())) == []


def test_column_edits_name_codes_and_change_how_a_column_is_read():
    frame = pd.DataFrame({"race": [1, 2, 3, 4, 2, 1] * 5, "age": ["21", "x", "40", "33", "61", "25"] * 5,
                          "y": [0, 1, 0, 1, 1, 0] * 5})
    edits = {"race": ColumnEdit("category", (("1", "White"), ("2", "Black"), ("3", "Hispanic"), ("4", ""))),
             "age": ColumnEdit("number"), "y": ColumnEdit("auto", (("0", "no"), ("1", "reoffended")))}
    edited, notes = apply_edits(frame, edits)
    assert list(edited["race"][:4]) == ["White", "Black", "Hispanic", "4"]  # an empty label keeps the value
    assert isinstance(edited["race"].dtype, pd.CategoricalDtype) and not edited["race"].cat.ordered
    assert edited["age"].isna().sum() == 5 and edited["age"].dtype.kind == "f"
    assert notes == [NOTE_NOT_NUMBER.format(n=5, column="age")]
    assert set(edited["y"]) == {"no", "reoffended"}
    assert frame["race"].tolist()[:2] == [1, 2]  # the loaded table is left as it was
    plan = TableEncoder().fit(edited[["race"]])
    assert sorted(f.label for f in plan.features) == ["race = 4", "race = Black", "race = Hispanic", "race = White"]
    assert relabel(1, edits["y"]) == "reoffended" and relabel(1, None) == 1
    merged, notes = apply_edits(frame, {"race": ColumnEdit("category", (("1", "A"), ("2", "A")))})
    assert notes == [NOTE_MERGED.format(values="1, 2", column="race", label="A")]
    assert set(merged["race"]) == {"A", "3", "4"}


def messy_table(n: int = 400, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    words = np.array(["strong", "candidate", "fit", "team", "remote", "senior", "junior", "python"])
    return pd.DataFrame({
        "applicant_id": np.arange(500, 500 + n),
        "ticket": [f"T{rng.integers(10**6, 10**7)}" for _ in range(n)],
        "applied_on": (pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 600, n), "D")).strftime("%d/%m/%Y"),
        "notes": [" ".join(rng.choice(words, 4)) + f" {i}" for i in range(n)],
        "income": rng.normal(50_000, 9_000, n),  # all different, but a measurement
        "age": rng.integers(18, 70, n),
        "city": rng.choice(["Lyon", "Nice", "Paris"], n),
        "hired": rng.choice(["yes", "no"], n),
    })


def test_identifiers_dates_and_free_text_are_suggested_and_measurements_are_not():
    found = ignore_suggestions(messy_table(), target="hired")
    assert found == {"applicant_id": REASON_ID, "ticket": REASON_ID, "applied_on": REASON_DATE, "notes": REASON_TEXT}
    for demo in DEMOS.values():  # nothing to suggest in the built-in tables
        assert ignore_suggestions(demo.load(), demo.target) == {}
    dates = messy_table().assign(applied_on=lambda f: pd.to_datetime(f["applied_on"], format="%d/%m/%Y"))
    assert ignore_suggestions(dates, "hired")["applied_on"] == REASON_DATE


def test_too_many_features_are_named_with_their_columns():
    table = messy_table()
    summary = TableEncoder().fit(table.drop(columns="hired")).summary()
    total = int(summary["n_binary"].sum())
    assert total > MANY_FEATURES
    big = summary.set_index("column")["n_binary"]
    detail = "most from " + ", ".join(f"{c} {int(big[c]):,}" for c in ("ticket", "notes", "applied_on"))
    assert many_features_message(summary) == MSG_MANY_FEATURES.format(n=f"{total:,}", detail=detail)
    small = TableEncoder().fit(table.drop(columns=["hired", "ticket", "notes", "applied_on", "applicant_id"]))
    assert many_features_message(small.summary()) == ""


@pytest.fixture(scope="module")
def fitted():
    frame = make_hiring(800, seed=7)
    model = StrongTreeClassifier(depth=3, fairness="statistical_parity", fairness_bound=0.02, pos_label="yes",
                                 time_limit=30).fit(frame.drop(columns="hired"), frame["hired"],
                                                    sensitive_features="gender")
    return model.tree_, frame


class Boxes(HTMLParser):
    """The node rectangles, text sizes and tags of a drawn tree."""

    def __init__(self):
        super().__init__()
        self.rects, self.sizes, self.tags, self.in_node, self.heavy = [], [], set(), 0, 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.add(tag)
        if tag == "g" and attrs.get("class") == "node":
            self.in_node = 1
        elif tag == "rect" and self.in_node == 1:
            self.rects.append(tuple(float(attrs[k]) for k in ("x", "y", "width", "height")))
            self.in_node = 2
        if tag == "text":
            self.sizes.append(float(attrs["font-size"]))
        if attrs.get("stroke-width") == "3":
            self.heavy += 1


@pytest.mark.parametrize("orientation", ["down", "right"])
def test_the_drawn_tree_has_every_node_legible_apart_and_escaped(fitted, orientation):
    tree, frame = fitted
    path = tree.decision_path(frame.iloc[[5]])
    parsed = Boxes()
    parsed.feed(tree_svg(tree, highlight=path, orientation=orientation))
    reachable = int((tree.structure.feature >= 0).sum()) * 2 + 1  # a full binary tree of its branching nodes
    assert len(parsed.rects) == reachable
    assert min(parsed.sizes) >= 11
    assert parsed.heavy == 2 * len(path) - 1  # the path's boxes and the edges between them
    assert parsed.tags <= {"svg", "g", "rect", "text", "path"}
    for i, a in enumerate(parsed.rects):  # no two boxes overlap
        for b in parsed.rects[i + 1:]:
            apart = a[0] + a[2] <= b[0] or b[0] + b[2] <= a[0] or a[1] + a[3] <= b[1] or b[1] + b[3] <= a[1]
            assert apart, (a, b)


def test_hostile_labels_stay_text_in_the_drawing():
    table = hostile.hostile_table()
    model = StrongTreeClassifier(depth=2, pos_label=hostile.CLASSES[0]).fit(
        table.drop(columns=hostile.TARGET), table[hostile.TARGET])
    mix = {1: {hostile.GROUP: 3, hostile.GROUP_VALUES[0]: 2}}
    svg = tree_svg(model.tree_, group_mix=mix)
    parsed = Boxes()
    parsed.feed(svg)
    assert parsed.tags <= {"svg", "g", "rect", "text", "path"}
    assert "<img" not in svg and "&lt;img" in svg  # markup in a name is text
    assert hostile.CLASSES[1] in svg  # Markdown means nothing in SVG text: shown as typed


def test_hostile_labels_stay_text_in_the_legend_and_the_screen_drawing():
    """The legend (classes) and the screen's DOT (questions, levels, classes, groups) of a tree that asks about
    the hostile column and level: markup in a label is entities, never a tag."""
    from strongtree_studio.views.tree_view import legend_html, screen_dot

    table = hostile.hostile_table(80, seed=2)  # rows on which the tree asks about the hostile level
    tree = StrongTreeClassifier(depth=2, pos_label=hostile.CLASSES[0]).fit(
        table.drop(columns=[hostile.TARGET, hostile.GROUP]), table[hostile.TARGET]).tree_
    rules = tree.to_text()
    assert hostile.FEATURE in rules and hostile.CATEGORY_VALUES[1] in rules  # it asks about both
    legend = legend_html(tree, groups=True)
    parsed = Boxes()
    parsed.feed(legend)
    assert parsed.tags <= {"div", "span", "b"}, parsed.tags
    assert "&lt;u&gt;y&lt;/u&gt; &amp; &#x27;q&#x27;" in legend and "<u>" not in legend
    mix = {1: {hostile.GROUP_VALUES[1]: 3, hostile.GROUP_VALUES[0]: 2}}
    dot = screen_dot(tree, group_mix=mix)
    assert "<u>" not in dot and "<marquee>" not in dot and "<img" not in dot
    assert "&lt;u&gt;c&lt;/u&gt;" in dot  # the level, in a question
    assert "&lt;u&gt;y&lt;/u&gt; &amp; &#39;q&#39;" in dot  # a class, in a leaf
    assert "&lt;marquee&gt;m&lt;/marquee&gt;" in dot  # a group, in the mix


def test_wrapped_lines_fit_and_branches_read_as_answers():
    text = "groups: " + " · ".join(f"group number {i}: 12%" for i in range(6))
    lines = wrap(text, TEXT_SIZE)
    assert len(lines) > 1 and all(text_width(line, TEXT_SIZE) <= MAX_LINE for line in lines)
    assert " ".join(lines).split() == text.split()  # nothing lost or added
    assert wrap("x" * 80, TEXT_SIZE)[0] == "x" * len(wrap("x" * 80, TEXT_SIZE)[0])
    assert edge_words("test_score ≤ 70.5", "test_score > 70.5", "test_score") == ("≤ 70.5", "> 70.5")
    assert edge_words("referral = yes", "referral ≠ yes", "referral") == ("= yes", "≠ yes")
    assert edge_words("30 < age ≤ 40", "not 30 < age ≤ 40", "age") == ("30 < age ≤ 40", "not 30 < age ≤ 40")


def test_the_path_in_words_answers_each_question_as_the_row_does(fitted):
    tree, frame = fitted
    features = tree.encoding.features
    for i in range(0, 800, 97):
        row = frame.iloc[[i]]
        sentences = path_in_words(tree, row)
        nodes = tree.decision_path(row)
        assert len(sentences) == len(nodes)
        for sentence, node in zip(sentences[:-1], nodes[:-1]):  # the questions; the last sentence is the leaf
            f = features[int(tree.structure.feature[node - 1])]
            value = row[f.source].iloc[0]
            truth = value <= f.threshold if f.kind == "at_most" else str(value) == str(f.level)  # from the raw value
            assert sentence.startswith(f.label + "?") and sentence.endswith("so yes." if truth else "so no.")
        assert sentences[-1].startswith(f"The leaf predicts {tree.predict(row)[0]}")


def test_the_delta_band_passes_every_group_exactly_when_every_pair_is_within_delta():
    rng = np.random.default_rng(3)
    for _ in range(300):
        rates = rng.uniform(0, 1, rng.integers(2, 6))
        fairness_bound = float(rng.choice([0.01, 0.05, 0.1, 0.3]))
        rows = [{"group": str(i), "rate": float(r), "rows": 10} for i, r in enumerate(rates)]
        low, high = band(rows, fairness_bound)
        assert high - low <= fairness_bound + 1e-12
        statuses = [r["status"] for r in judged(rows, fairness_bound, constrained=True)]
        assert (all(s == "within δ" for s in statuses)) == (rates.max() - rates.min() <= fairness_bound + 1e-9)
    rows = [{"group": "a", "rate": 0.40, "rows": 5}, {"group": "b", "rate": 0.50, "rows": 5}]
    table = judged(rows, 0.05, constrained=False)
    assert [r["status"] for r in table] == ["beyond δ (not enforced)"] * 2
    assert [round(r["ratio"], 2) for r in table] == [0.8, 1.0]


def test_groups_with_intervals_are_within_beyond_or_undecided():
    # band of 5 pp centred at 0.45: [0.425, 0.475]
    rows = [{"group": "a", "rate": 0.43, "rows": 900, "low": 0.426, "high": 0.434},
            {"group": "b", "rate": 0.47, "rows": 40, "low": 0.33, "high": 0.61}]
    assert [r["status"] for r in judged(rows, 0.05, constrained=True)] == ["within δ", "undecided"]
    rows = [{"group": "a", "rate": 0.20, "rows": 900, "low": 0.18, "high": 0.22},
            {"group": "b", "rate": 0.40, "rows": 900, "low": 0.37, "high": 0.43}]
    assert [r["status"] for r in judged(rows, 0.05, constrained=True)] == ["beyond δ", "beyond δ"]


def test_no_green_check_alone_beside_a_trivial_tree_or_a_ratio_below_four_fifths():
    from strongtree_studio.views.fairness_view import verdict

    assert verdict(0.009, 0.01, True, "train").colour == "green"
    low_ratio = verdict(0.009, 0.01, True, "train", ratio=0.0)
    assert low_ratio.colour == "orange" and low_ratio.text.endswith("but ratio 0.00 is below 0.80")
    trivial = verdict(0.0, 0.05, True, "train", trivial=True)
    assert trivial.colour == "orange" and "does no better than the majority class" in trivial.text
    undecided = verdict(0.03, 0.05, True, "test", interval=(0.0, 0.09))
    assert undecided.colour == "orange" and undecided.text == "undecided against δ = 5.0 pp"
    assert verdict(0.03, 0.05, True, "test", interval=(0.01, 0.045)).colour == "green"
    assert verdict(0.09, 0.05, True, "test", interval=(0.06, 0.12)).colour == "red"


def test_the_solver_log_lists_each_step_in_words():
    history = [
        {"elapsed": 0.1, "objective": 500.0, "bound": None, "gap": None, "nodes": 0, "message": "new incumbent"},
        {"elapsed": 0.4, "objective": 500.0, "bound": 560.0, "gap": 0.12, "nodes": 18, "message": "bound"},
        {"elapsed": 0.9, "objective": 500.0, "bound": 560.0, "gap": 0.12, "nodes": 40, "message": "searching"},
        {"elapsed": 1.2, "objective": 550.0, "bound": 552.0, "gap": 0.0036, "nodes": 60, "message": ""},
        {"elapsed": 1.4, "objective": 552.0, "bound": 552.0, "gap": 0.0, "nodes": 61, "message": "certified optimal"},
    ]
    log = solver_log(history)
    assert list(log["step"]) == ["proven optimal", "better tree, tighter bound", "tighter bound", "better tree"]
    assert list(log["time"]) == ["1.4 s", "1.2 s", "0.4 s", "0.1 s"] and log["gap"].iloc[1] == "0.4%"
    rows = [{"series": "best tree", "value": v} for v in (1617, 2148, 2210)] + [
        {"series": "bound", "value": v} for v in (3000, 2214, 2210)]
    low, high = y_domain(rows)
    assert low < 1617 and 2214 < high < 3000  # the uninformative first bound stays above the chart


def test_quiet_progress_is_merged_and_snapshots_are_shared():
    phase = PhaseState()
    for i in range(50):
        phase.add_point({"elapsed": i / 10, "objective": 5.0, "bound": 9.0, "gap": 0.8, "nodes": i,
                         "message": "searching"})
    assert [p["nodes"] for p in phase.history] == [0, 49]  # where the quiet stretch began and where it is now
    phase.add_point({"elapsed": 5.0, "objective": 6.0, "bound": 9.0, "gap": 0.5, "nodes": 50, "message": "bound"})
    assert len(phase.history) == 3


@pytest.mark.parametrize("last", [0.0, 0.0004, 0.6])
def test_a_solve_within_a_second_gets_a_time_axis_a_second_wide(last):
    """A solve done within a millisecond has every point at 0 s; a zero-width axis labelled
    its one tick "0.000000 s". The axis then runs from 0 to a second."""
    points = [{"elapsed": 0.0, "objective": 10.0, "bound": 12.0, "gap": 0.2},
              {"elapsed": last, "objective": 12.0, "bound": 12.0, "gap": 0.0}]
    for spec in (objective_spec(points), gap_spec(points)):
        assert spec["encoding"]["x"]["scale"] == {"zero": True, "domain": [0.0, SHORTEST_SPAN]}


def test_a_longer_solve_keeps_the_axis_it_needs():
    points = [{"elapsed": 0.0, "objective": 10.0, "bound": 12.0, "gap": 0.2},
              {"elapsed": 7.5, "objective": 12.0, "bound": 12.0, "gap": 0.0}]
    for spec in (objective_spec(points, now=9.0), gap_spec(points)):
        assert spec["encoding"]["x"]["scale"] == {"zero": True}
        assert spec["encoding"]["x"]["axis"]["labelExpr"] == "datum.label + ' s'"
