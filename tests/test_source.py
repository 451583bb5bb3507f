"""Tables read where they lie (strongtree_core/source): the passes give what the table in memory gives.

The independent truth is the in-memory route on the same rows: ``TableEncoder`` for the plan,
``EncodingPlan.transform`` and ``collapse_patterns`` for the patterns, and the metrics recomputed
from the fitted tree's predictions on the raw table.  Batches are made small here (``BATCH_ROWS``)
so that every summary is merged across many batches and threads.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pandas as pd
import pytest

from strongtree_core.tree.claim import claim

from strongtree_core import StrongTreeClassifier
from strongtree_core.encoding import TableEncoder, collapse_patterns
from strongtree_core.encoding.groups import encode_groups
from strongtree_core.engine.routes import solve_tree
from strongtree_core.errors import StrongTreeError
from strongtree_core.metrics import check_constraints
from strongtree_core.source import bins, codes, paths, reader, scan
from strongtree_core.estimator import table_fit as fit
from strongtree_core.source.climb import read_patterns
from strongtree_core.source.reader import LocalReader, Watch

NOTIONS = ("statistical_parity", "conditional_statistical_parity", "predictive_equality", "equal_opportunity",
           "equalized_odds")


def table(n: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Every kind of column, missing values in each kind that can have them, weights 0 to 2."""
    rng = np.random.default_rng(seed)
    flag_missing = (rng.random(n) < 0.3).astype(float)
    flag_missing[rng.random(n) < 0.05] = np.nan
    number = rng.normal(50, 10, n).round(1)
    number[rng.random(n) < 0.04] = np.nan
    number[:3] = np.inf
    amount = np.exp(rng.normal(8, 1, n))
    amount[rng.random(n) < 0.03] = np.nan
    category = rng.choice(np.array(["north", "south", "east"], dtype=object), n)
    category[rng.random(n) < 0.05] = None
    df = pd.DataFrame({
        "f0": (rng.random(n) < 0.2).astype(np.int8), "f1": rng.random(n) < 0.5, "f2": flag_missing,
        "region": category, "urban": rng.choice(["yes town", "no town"], n), "level": rng.integers(1, 6, n),
        "rooms": rng.integers(1, 11, n),  # ten values: ordinal, the most an ordinal column may have
        "score": number, "amount": amount,
        "g": rng.choice(["A", "B", "C"], n), "lvl": rng.choice(["low", "high"], n),
        "w": rng.choice([0.0, 0.5, 1.0, 2.0], n, p=[0.1, 0.3, 0.4, 0.2]),
    })
    logit = -0.5 + 0.8 * df["f0"] + 0.03 * (np.nan_to_num(number, posinf=50) - 50) + 0.5 * (df["g"] == "B")
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.int64)
    return df


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(reader, "BATCH_ROWS", 997)
    monkeypatch.setattr(reader, "MERGE_PATTERNS", 1_500)  # the patterns so far merged several times


def write(df: pd.DataFrame, folder, parts: int = 3):
    folder.mkdir(exist_ok=True)
    for k, piece in enumerate(np.array_split(np.arange(len(df)), parts)):
        df.iloc[piece].to_parquet(folder / f"part-{k}.parquet", index=False)
    return folder


ROLES = {None: ((), ()), "statistical_parity": (("g",), ()), "conditional_statistical_parity": (("g",), ("lvl",)),
         "predictive_equality": (("g",), ()), "equal_opportunity": (("g",), ()), "equalized_odds": (("g",), ())}


def prepared(folder, notion, weight, threads=2, max_thresholds=16):
    protected, legitimate = ROLES[notion]
    files = paths.resolve(folder)
    return fit.prepare(LocalReader(files, threads), files, target="y", sample_weight=weight, protected=protected,
                       legitimate=legitimate, fairness=() if notion is None else (notion,),
                       max_thresholds=max_thresholds)


def in_memory(df: pd.DataFrame, ready, weight):
    """The plan TableEncoder fits and the patterns collapse_patterns makes, on the rows of positive weight."""
    w = None if weight is None else df[weight].to_numpy(dtype=float)
    keep = slice(None) if w is None else w > 0
    rows = df[keep].reset_index(drop=True)
    y_idx = np.searchsorted(ready.classes, rows["y"].to_numpy())
    features = rows[list(ready.features)]
    plan = TableEncoder(max_thresholds=16).fit(features, target=y_idx, sample_weight=None if w is None else w[keep])
    protected, legitimate = ready.roles["protected"], ready.roles["legitimate"]
    group = encode_groups(rows[list(protected)]) if protected else None
    legit = encode_groups(rows[list(legitimate)], role="legitimate") if legitimate else None
    data = collapse_patterns(ready.plan.transform(features), y_idx, ready.classes.size,
                             sample_weight=None if w is None else w[keep],
                             group=None if group is None else group.codes, legit=None if legit is None else legit.codes)
    return plan, data, group, legit


def as_dict(data) -> dict:
    """Pattern -> (weight, rows), whatever the order of the patterns."""
    out = {}
    for i in range(data.n_patterns):
        key = (data.X[i].tobytes(), int(data.y[i]), None if data.group is None else int(data.group[i]),
               None if data.legit is None else int(data.legit[i]))
        assert key not in out
        out[key] = (float(data.weight[i]), int(data.count[i]))
    return out


@pytest.mark.parametrize("weight", [None, "w"])
@pytest.mark.parametrize("notion", [None, *NOTIONS])
def test_the_passes_give_the_plan_and_the_patterns_of_the_table_in_memory(tmp_path, small_batches, notion, weight):
    df = table()
    ready = prepared(write(df, tmp_path / "t"), notion, weight)
    plan, data, group, legit = in_memory(df, ready, weight)
    assert ready.plan.columns == plan.columns  # kinds, levels, thresholds, missing counts
    assert {c.kind for c in plan.columns} == {"binary", "categorical", "ordinal", "continuous"}
    assert any(c.n_missing for c in plan.columns if c.kind == "continuous")
    if group is not None:
        assert ready.groups.levels == group.levels
    if legit is not None:
        assert ready.legit.levels == legit.levels
    out = read_patterns(LocalReader(paths.resolve(tmp_path / "t"), 2), ready.plan, Watch(), **ready.roles)
    assert out.row_to_pattern is None and out.chains == ready.plan.chains
    assert as_dict(out) == as_dict(data)
    assert out.n_rows == int((df["w"] > 0).sum() if weight else len(df))


def test_columns_past_the_distinct_cap_are_cut_between_bins_and_summed_alike(tmp_path, small_batches, monkeypatch):
    monkeypatch.setattr(scan, "DISTINCT_CAP", 40)  # score and amount now go through 24-bit bins
    df = table(4_000, seed=3)
    ready = prepared(write(df, tmp_path / "t"), "statistical_parity", "w")
    for column in ready.plan.columns:
        if column.kind != "continuous":
            continue
        values = np.unique(df.loc[df["w"] > 0, column.name].dropna())
        values = values[np.isfinite(values)]
        assert len(column.cuts) == 16
        for cut in column.cuts:  # a real split of the rows, never through a value
            assert cut not in values and values.min() < cut < values.max()
    _, data, _, _ = in_memory(df, ready, "w")
    out = read_patterns(LocalReader(paths.resolve(tmp_path / "t"), 1), ready.plan, Watch(), **ready.roles)
    assert as_dict(out) == as_dict(data)


def test_bins_follow_the_numbers_order_in_any_batches():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.normal(0, 1, 3_000), -np.exp(rng.normal(0, 3, 500)), [0.0, -0.0, 5e-324]])
    y = rng.integers(0, 2, x.size)
    whole = bins._bins(x, y, None, 2, bins.BIN_SHIFT)
    halves = [bins._bins(x[part], y[part], None, 2, bins.BIN_SHIFT) for part in np.array_split(rng.permutation(x.size), 2)]
    merged = bins.merge_histograms({"x": halves[0]}, {"x": halves[1]})["x"]
    for field in ("keys", "per_class", "low", "high"):
        np.testing.assert_array_equal(getattr(merged, field), getattr(whole, field))
    assert (whole.low[1:] > whole.high[:-1]).all()  # bins in the numbers' order, apart
    assert whole.per_class.sum() == x.size


def test_keys_too_wide_for_one_word_are_packed_in_several(tmp_path, small_batches):
    rng = np.random.default_rng(2)
    df = pd.DataFrame((rng.random((3_000, 70)) < 0.1).astype(np.int8), columns=[f"c{j}" for j in range(70)])
    df["y"] = rng.integers(0, 2, len(df))
    ready = prepared(write(df, tmp_path / "t"), None, None)
    spec = codes.code_spec(ready.plan, target="y", classes=tuple(ready.classes.tolist()))
    assert len(spec.words) == 2
    _, data, _, _ = in_memory(df, ready, None)
    out = read_patterns(LocalReader(paths.resolve(tmp_path / "t"), 2), ready.plan, Watch(), **ready.roles)
    assert as_dict(out) == as_dict(data)


def test_a_fitted_tree_re_measures_on_the_raw_rows_and_is_optimal_over_the_thresholds_kept(tmp_path, small_batches):
    df = table(6_000, seed=4)
    folder = write(df, tmp_path / "t")
    clf = StrongTreeClassifier(depth=2, fairness="statistical_parity", fairness_bound=0.02, pos_label=1,
                               time_limit=120, n_jobs=2)
    clf.fit_table(str(folder), target="y", sensitive_features="g", sample_weight="w")
    assert clf.record_.certified
    rows = df[df["w"] > 0].reset_index(drop=True)
    X = rows.drop(columns=["y", "w", "g"])
    pred = clf.predict(X)
    w = rows["w"].to_numpy()
    assert clf.reading_["training_accuracy"] == pytest.approx(float(w[pred == rows["y"]].sum() / w.sum()))
    assert clf.record_.objective == pytest.approx(float(w[pred == rows["y"]].sum()))
    y_idx = np.searchsorted(clf.classes_, rows["y"])
    (check,) = check_constraints(_sp(0.02), y_idx, np.searchsorted(clf.classes_, pred),
                                 group=encode_groups(rows["g"]).codes, positive=1)
    assert check.satisfied and check.measured == pytest.approx(clf.constraint_checks_[0]["measured"])
    # no tree over the encoding kept does better: the exact search on the raw rows under that encoding
    data = collapse_patterns(clf.encoding_.transform(X), y_idx, 2, sample_weight=w, group=encode_groups(rows["g"]).codes)
    from strongtree_core.formulation.spec import TreeSpec

    best = solve_tree(data, TreeSpec(depth=2, pos_label=1, side_constraints=tuple(_sp(0.02))), time_limit=120)
    assert best.record.certified and best.record.objective == pytest.approx(clf.record_.objective)
    assert f"{clf.reading_['thresholds_kept']} of the {clf.reading_['thresholds_total']} kept" in clf.record_.choice
    assert clf.reading_["thresholds_kept"] == sum(len(c.cuts) for c in clf.encoding_.columns if c.kind == "continuous")
    assert clf.reading_["features_kept"] == clf.encoding_.n_binary
    # the certificate's scope counts every numeric column's distinct cuts among the rows read, as the
    # in-memory encoding of the same rows does, and the claim says over how many of them it holds
    in_memory = {c.name: c.n_gaps for c in TableEncoder().fit(X).columns}
    numeric = [c.name for c in clf.encoding_.columns if c.kind in ("ordinal", "continuous")]
    gaps = [in_memory[name] for name in numeric]
    scope = clf.record_.scope
    assert numeric and scope.distinct_thresholds == sum(gaps) and scope.widest_column == max(gaps)
    assert scope.encoded_questions >= scope.questions == clf.encoding_.n_binary
    assert f"of the {sum(gaps):,} thresholds" in claim(clf.record_).sentence


def _sp(bound):
    from strongtree_core.formulation.fairness_constraints import FAIRNESS_NOTIONS

    return [FAIRNESS_NOTIONS["statistical_parity"](bound, 1, group_levels=("A", "B", "C"))]


def test_a_dask_cluster_of_two_workers_finds_the_tree_this_machine_finds(tmp_path):
    distributed = pytest.importorskip("distributed")
    df = table(3_000, seed=5)
    folder = write(df, tmp_path / "t", parts=4)
    settings = dict(depth=2, fairness="conditional_statistical_parity", fairness_bound=0.05, pos_label=1, time_limit=120)
    roles = dict(target="y", sensitive_features="g", legitimate_features="lvl", sample_weight="w")
    here = StrongTreeClassifier(**settings).fit_table(str(folder), **roles)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as lc:
        there = StrongTreeClassifier(**settings).fit_table(str(folder), scheduler=lc.scheduler_address, **roles)
        stop = threading.Event()
        stop.set()
        with pytest.raises(StrongTreeError) as err:  # a Stop ends the cluster's pass too, in words
            StrongTreeClassifier(**settings).fit_table(str(folder), scheduler=lc.scheduler_address, stop=stop, **roles)
        assert str(err.value) == fit.STOPPED_WHILE_READING.format(path=str(folder))
    assert there.reading_["where"] == "a Dask cluster"
    assert there.tree_.to_dict()["structure"] == here.tree_.to_dict()["structure"]
    assert there.tree_.node_counts.tolist() == here.tree_.node_counts.tolist()
    assert there.encoding_ == here.encoding_
    assert [r["patterns"] for r in there.reading_["rungs"]] == [r["patterns"] for r in here.reading_["rungs"]]
    assert there.record_.objective == here.record_.objective and there.record_.certified


def test_the_read_reports_rows_patterns_and_memory(tmp_path, small_batches, monkeypatch):
    monkeypatch.setattr(reader, "REPORT_EVERY", 0.0)
    folder = write(table(5_000), tmp_path / "t")
    events = []
    StrongTreeClassifier(depth=1, time_limit=60).fit_table(str(folder), target="y", progress=events.append)
    reads = [e.reading for e in events if e.reading is not None]
    assert {r.stage for r in reads} == {"scan", "thresholds", "patterns"}
    scans = [r.rows_read for r in reads if r.stage == "scan"]
    assert scans == sorted(scans) and scans[-1] == 5_000 and len(set(scans)) > 3
    assert all(r.rows_total == 5_000 and r.memory > 0 for r in reads)
    assert max(r.patterns for r in reads if r.stage == "patterns") > 0
    elapsed = [e.elapsed for e in events]
    assert elapsed == sorted(elapsed)  # one clock from the first read to the last search


def test_stop_during_the_read_ends_it_in_words(tmp_path, small_batches):
    folder = write(table(5_000), tmp_path / "t")
    stop = threading.Event()

    def progress(ev):
        if ev.reading is not None and ev.reading.rows_read >= 2_000:
            stop.set()
    with pytest.raises(StrongTreeError) as err:
        StrongTreeClassifier(depth=2, time_limit=60).fit_table(str(folder), target="y", progress=progress, stop=stop)
    assert str(err.value) == fit.STOPPED_WHILE_READING.format(path=str(folder))


@pytest.mark.timing
def test_a_read_past_the_time_limit_says_how_far_it_got(tmp_path, small_batches, monkeypatch):
    folder = write(table(5_000), tmp_path / "t")
    slow = fit.scan_batch

    def scan_slowly(spec, df):
        time.sleep(0.1)
        return slow(spec, df)
    monkeypatch.setattr(fit, "scan_batch", scan_slowly)
    with pytest.raises(StrongTreeError) as err:
        StrongTreeClassifier(depth=2, time_limit=0.25).fit_table(str(folder), target="y")
    text = str(err.value)
    assert text.startswith(f"The table {folder} was not read within the time limit of 0.25 s (scan: ")
    read = int(text.split("(scan: ")[1].split(" rows read")[0].replace(",", ""))
    assert 0 < read < 5_000 and "a pass over 5,000 rows" in text


def test_the_memory_cap_stops_the_rung_that_would_pass_it(tmp_path, small_batches):
    from benchmarks.outofcore_data import make_part

    folder = write(make_part(8_000, 6).to_pandas().rename(columns={"approved": "y"}), tmp_path / "t")
    clf = StrongTreeClassifier(depth=2, time_limit=120).fit_table(str(folder), target="y")
    rungs = clf.reading_["rungs"]
    assert len(rungs) >= 2
    per = 24 * rungs[1]["features"] + 24 * 2 * 1 + fit.PATTERN_OVERHEAD  # the cap's bytes per pattern, rung 1
    capped = StrongTreeClassifier(depth=2, time_limit=120, memory_limit=per * (rungs[1]["patterns"] - 1))
    capped.fit_table(str(folder), target="y")
    assert capped.reading_["ended"] == "memory" and len(capped.reading_["rungs"]) == 1
    assert capped.reading_["rungs"][0]["patterns"] == rungs[0]["patterns"]
    assert "more than memory_limit allows" in capped.record_.message
    # the certificate holds over the coarser rung's questions only, and its words say so
    scope = capped.record_.scope
    assert scope.questions == capped.encoding_.n_binary < scope.encoded_questions and scope.ladder_thinned
    assert capped.record_.certified and claim(capped.record_).state == "kept_thresholds"
    with pytest.raises(StrongTreeError, match="Even the coarsest patterns"):
        StrongTreeClassifier(depth=2, time_limit=120, memory_limit=per * 10).fit_table(str(folder), target="y")


def test_paths_name_one_table_or_say_what_is_wrong(tmp_path):
    folder = write(table(300), tmp_path / "t", parts=2)
    assert paths.resolve(folder).files == tuple(sorted(str(p) for p in folder.glob("*.parquet")))
    assert paths.resolve(str(folder / "part-*.parquet")).format == "parquet"
    (folder / "extra.csv").write_text("a,b\n1,2\n")
    with pytest.raises(StrongTreeError) as err:
        paths.resolve(folder)
    assert str(err.value) == paths.MIXED_FORMATS.format(path=str(folder), parquet=str(folder / "part-0.parquet"),
                                                        csv=str(folder / "extra.csv"),
                                                        glob=str(folder / "**" / "*.parquet"))
    with pytest.raises(StrongTreeError) as err:
        paths.resolve(str(tmp_path / "none" / "*.parquet"))
    assert str(err.value) == paths.NO_MATCH.format(pattern=str(tmp_path / "none" / "*.parquet"))
    with pytest.raises(StrongTreeError) as err:
        paths.resolve(tmp_path / "absent.parquet")
    assert str(err.value) == paths.NO_SUCH_TABLE.format(path=str(tmp_path / "absent.parquet"))
    (tmp_path / "data.xlsx").write_bytes(b"x")
    with pytest.raises(StrongTreeError) as err:
        paths.resolve(tmp_path / "data.xlsx")
    assert str(err.value) == paths.UNKNOWN_FORMAT.format(path=str(tmp_path / "data.xlsx"))


def test_a_csv_file_read_where_it_lies_gives_the_patterns_of_its_parquet_twin(tmp_path, small_batches):
    df = table(2_000, seed=7).drop(columns=["region"])  # pyarrow reads a text with gaps as text, pandas alike
    df.to_csv(tmp_path / "t.csv", index=False)
    folder = write(df, tmp_path / "p")
    from_csv, from_parquet = prepared(tmp_path / "t.csv", "statistical_parity", "w"), prepared(folder, "statistical_parity", "w")
    assert from_csv.plan.columns == from_parquet.plan.columns
    read = [read_patterns(LocalReader(paths.resolve(src), 2), r.plan, Watch(), **r.roles)
            for src, r in ((tmp_path / "t.csv", from_csv), (folder, from_parquet))]
    assert as_dict(read[0]) == as_dict(read[1])


def test_the_command_line_fits_a_folder_of_parquet_files(tmp_path, capsys):
    from strongtree_core.cli import main

    folder = write(table(3_000), tmp_path / "t")
    code = main(["fit", str(folder), "--target", "y", "--protected", "g", "--fairness", "statistical_parity",
                 "--pos-label", "1", "--depth", "2", "--sample-weight", "w", "--json"])
    assert code == 0
    import json

    out = json.loads(capsys.readouterr().out)
    assert out["certified"] and out["reading"]["rows"] == int((table(3_000)["w"] > 0).sum())
    assert out["constraint_checks"][0]["satisfied"]
    code = main(["fit", str(folder), "--target", "nope"])
    assert code == 2
    assert "has no column 'nope' to predict" in capsys.readouterr().err


def test_files_of_different_columns_and_unlabelled_rows_are_refused_in_words(tmp_path):
    folder = tmp_path / "t"
    folder.mkdir()
    pd.DataFrame({"x": [1.0, 2.0], "y": [0, 1]}).to_parquet(folder / "a.parquet", index=False)
    pd.DataFrame({"z": [1.0, 2.0], "y": [0, 1]}).to_parquet(folder / "b.parquet", index=False)
    with pytest.raises(StrongTreeError) as err:  # pyarrow alone would read x as missing in b's rows
        StrongTreeClassifier(depth=1).fit_table(str(folder), target="y")
    assert str(err.value) == reader.COLUMNS_DIFFER.format(path=str(folder / "b.parquet"), missing="'x'", extra="'z'",
                                                         first=str(folder / "a.parquet"))
    (folder / "b.parquet").unlink()
    pd.DataFrame({"x": [3.0, 4.0], "y": [None, 1.0]}).to_parquet(folder / "b.parquet", index=False)
    with pytest.raises(StrongTreeError) as err:
        StrongTreeClassifier(depth=1).fit_table(str(folder), target="y")
    from strongtree_core.estimator.table_fit import TARGET_MISSING

    assert str(err.value) == TARGET_MISSING.format(target="y", n=1, total=4)
