"""``StrongTreeClassifier.fit_table``: a tree from a table read where it lies.

The steps, each a pass over the rows or a step on what the passes kept (never the rows):

1. the first pass (:mod:`~strongtree_core.source.scan`): column kinds, classes, groups, weights;
2. the thresholds pass (:mod:`~strongtree_core.source.bins`): class weights of the continuous
   columns' values (or bins), from which each column's thresholds are chosen
   (:mod:`~strongtree_core.source.plan`);
3. the climb (:mod:`~strongtree_core.source.climb`): one pattern pass per rung, each rung
   solved by the engine, refined where the best tree splits;
4. the record, the checks of the constraints and the fitted attributes, as ``fit`` sets them
   (counted on the patterns, each weighted by its rows).

The passes run on this machine (:class:`~strongtree_core.source.reader.LocalReader`) or, with a
Dask scheduler, on the cluster's workers (:class:`~strongtree_core.source.cluster.ClusterReader`):
the same functions on the same rows give the same summaries, hence the same tree.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from strongtree_core.encoding.groups import GroupCoding
from strongtree_core.errors import StrongTreeError
from strongtree_core.estimator.training import (
    FINISH_SECONDS_PER_ROW, MAX_WEIGHT_RATIO, MIN_SOLVE_SECONDS, NEEDS_LEGITIMATE, NEEDS_SENSITIVE, ONE_CLASS,
    WEIGHTS_ALL_ZERO, WEIGHTS_INFINITE, WEIGHTS_MISSING, WEIGHTS_NEGATIVE, WEIGHTS_NOT_NUMBERS, WEIGHTS_SPREAD,
    WEIGHTS_TOO_LARGE, Encoded, Training, check_comparable, classes_of, to_certified_thresholds,
)
from strongtree_core.engine.limits import cores_for, default_memory_limit, human_bytes
from strongtree_core.formulation.spec import TreeSpec
from strongtree_core.progress import Progress
from strongtree_core.source.bins import HistogramSpec, histogram_batch, merge_histograms
from strongtree_core.source.climb import climb, read_patterns
from strongtree_core.source.paths import TableError, TableFiles, resolve
from strongtree_core.source.plan import (
    bin_shift,
    continuous_column,
    fixed_column,
    group_coding,
    kind_of,
    make_plan,
)
from strongtree_core.source.reader import LocalReader, ReadStopped, TooManyPatterns, Watch
from strongtree_core.source.scan import CATEGORY_CAP, Scan, ScanSpec, merge_scans, scan_batch
from strongtree_core.tree import FittedTree, SolveRecord

NO_TARGET = "The table {path} has no column {target!r} to predict. Its columns are: {columns}."
NO_COLUMN = "The table {path} has no {what} column {names}. Its columns are: {columns}."
NO_FEATURE = "The table {path} has no column left to split on once the target and the roles are taken out."
NOT_READ_IN_TIME = ("The table {path} was not read within the time limit of {limit:g} s ({stage}: {rows:,} rows read). "
                    "Raise the time limit: a pass over {total} rows takes about as long as the pass so far, "
                    "times the rows left.")
STOPPED_WHILE_READING = "Stopped while reading {path}, before any tree was found."
ROWS_NOT_IN_MEMORY = ("{option} is not available for a table read where it lies: {why}")
NO_ROWS_IN_TABLE = "The table {path} has no rows."
TOO_MANY_LABELS = ("The target {target!r} has more than {cap:,} distinct labels: pick a column of classes, or bin "
                   "the numbers into classes.")
TARGET_MISSING = ("The target {target!r} is missing in {n:,} of {total:,} rows: a tree learns only from labelled rows. "
                  "Leave those rows out of the table (or give them their label).")
FIRST_RUNG_TOO_LARGE = ("Even the coarsest patterns of {path} (each continuous column cut once) passed {patterns:,}, more "
                        "than the search may hold within memory_limit ({limit}); the read was stopped there. Raise "
                        "memory_limit (--memory-limit-gb), or leave out columns with many categories.")

#: Bytes per pattern of the search besides 24 per feature and 24 per class and constraint row (limits.exact_search_bytes).
PATTERN_OVERHEAD = 96


def _names(value) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def make_reader(table, scheduler, threads: int = 1):
    """The reader of the passes: on this machine (``threads`` summing batches), or on a Dask cluster."""
    if scheduler is None:
        return LocalReader(table, threads)
    from strongtree_core.source.cluster import ClusterReader

    return ClusterReader(table, scheduler)


@dataclass(frozen=True)
class Prepared:
    """What the first two passes learned: the encoding at every threshold of the budget, each
    continuous column's thresholds in ladder order, the classes, the groups, and the roles of the
    pattern passes (:func:`~strongtree_core.source.climb.read_patterns`)."""

    table: TableFiles
    features: tuple[str, ...]
    scan: object
    classes: np.ndarray
    groups: GroupCoding | None
    legit: GroupCoding | None
    plan: object
    ordered: dict
    roles: dict


def prepare(reader, table: TableFiles, *, target: str, sample_weight: str | None = None, protected: tuple = (),
            legitimate: tuple = (), fairness: tuple = (), max_thresholds: int = 16, allow_protected_splits: bool = False,
            watch: Watch | None = None, limit: float = float("inf")) -> Prepared:
    """The first two passes over ``table`` (the scan, the thresholds) and what they decide."""
    watch = Watch() if watch is None else watch
    features = _roles(allow_protected_splits, reader, table, target, sample_weight, protected, legitimate)
    conditional = "conditional_statistical_parity" in fairness
    spec = ScanSpec(features, target, sample_weight, protected if fairness else (), legitimate if conditional else ())
    scan = _pass(reader, "scan", spec.columns, partial(scan_batch, spec), merge_scans, watch, table, limit)
    if scan is None or scan.rows_read == 0:
        raise TableError(NO_ROWS_IN_TABLE.format(path=table.name))
    if sample_weight is not None:
        check_weights(scan)
    classes = target_classes(scan, target)
    if classes.size < 2:
        raise StrongTreeError(ONE_CLASS.format(label=classes[0].item() if hasattr(classes[0], "item") else classes[0]))
    if fairness and not protected:
        raise StrongTreeError(NEEDS_SENSITIVE.format(fairness=list(fairness)))
    if conditional and not legitimate:
        raise StrongTreeError(NEEDS_LEGITIMATE)
    groups, group_of = group_coding(scan, "protected", protected) if fairness else (None, None)
    legit, level_of = group_coding(scan, "legitimate", legitimate) if conditional else (None, None)
    plan, ordered = _plan(max_thresholds, reader, scan, features, target, classes, sample_weight, watch, table, limit)
    roles = dict(target=target, classes=tuple(classes.tolist()), weight=sample_weight, protected=spec.protected,
                 groups=group_of, legitimate=spec.legitimate, levels=level_of)
    return Prepared(table, features, scan, classes, groups, legit, plan, ordered, roles)


def fit_table(clf, source, *, target: str, sample_weight: str | None = None, sensitive_features=None,
              legitimate_features=None, scheduler=None, progress=None, stop=None):
    """See :meth:`StrongTreeClassifier.fit_table <strongtree_core.estimator.classifier.StrongTreeClassifier.fit_table>`."""
    from strongtree_core.encoding.thresholds import DEFAULT_MAX_THRESHOLDS
    from strongtree_core.engine.routes import solve_tree

    started = time.perf_counter()
    fairness = clf._validate_parameters()
    _refuse_in_memory_options(clf)
    table = resolve(source)
    reader = make_reader(table, scheduler, cores_for(clf.n_jobs))
    try:
        watch = Watch(t0=started, deadline=started + float(clf.time_limit), stop=stop, progress=progress)
        ready = prepare(reader, table, target=target, sample_weight=sample_weight,
                        protected=_names(sensitive_features), legitimate=_names(legitimate_features),
                        fairness=tuple(fairness), allow_protected_splits=bool(clf.allow_protected_splits),
                        max_thresholds=DEFAULT_MAX_THRESHOLDS if clf.max_thresholds is None else int(clf.max_thresholds),
                        watch=watch, limit=float(clf.time_limit))
        features, scan, classes = ready.features, ready.scan, ready.classes
        groups, legit, plan, ordered, roles = ready.groups, ready.legit, ready.plan, ready.ordered, ready.roles
        clf.classes_ = classes
        positive = _positive(clf, classes, fairness)
        spec_protected, spec_legitimate = roles["protected"], roles["legitimate"]
        constraints = clf._side_constraints(fairness, positive, groups, legit)
        tree_spec = TreeSpec(
            depth=int(clf.depth), lambda_=float(clf.regularization), max_branching=clf.max_branching,
            max_features_used=clf.max_features_used, min_leaf=int(clf.min_leaf), objective=clf.objective,
            pos_label=positive, side_constraints=tuple(constraints))
        memory_limit = default_memory_limit() if clf.memory_limit is None else int(clf.memory_limit)
        rows_per_constraint = 1 + sum(1 if getattr(c, "notion", None) is None else
                                      2 * max(1, legit.n_levels if legit else 1) * (groups.n_levels if groups else 1) ** 2
                                      for c in constraints)
        current: dict = {}

        def max_patterns(n_features: int) -> int:
            """The most patterns a search over ``n_features`` may hold within the limit (limits.exact_search_bytes,
            every feature counted as a one)."""
            per = 24 * n_features + 24 * classes.size * rows_per_constraint + PATTERN_OVERHEAD
            kernel = 20 * 8 * min(n_features * n_features, 1 << 20)
            return max(1, int((memory_limit - kernel) // per))

        def read(plan_k, w):
            data = read_patterns(reader, plan_k, w, **roles)
            if not current:
                check_comparable(constraints, data.y, _coding(groups, data.group),
                                      _coding(legit, data.legit), positive, count=data.count)
            current.update(plan=plan_k, data=data)
            return data

        def relay(ev: Progress) -> None:
            ev = replace(ev, elapsed=time.perf_counter() - started)  # one clock for the reads and the searches
            if ev.tree is not None and "plan" in current:
                record = SolveRecord.in_progress(ev.elapsed, ev.objective, ev.bound, ev.gap)
                ev = replace(ev, tree=FittedTree.from_patterns(
                    ev.tree, current["plan"], tuple(classes.tolist()), target, current["data"], record,
                    feature_names=features, weighted=sample_weight is not None))
            progress(ev)

        def solve(data, starts):
            left = watch.deadline - time.perf_counter() - FINISH_SECONDS_PER_ROW * data.n_patterns
            return solve_tree(
                data, tree_spec, formulation=clf.formulation, solver=clf.solver,
                time_limit=max(MIN_SOLVE_SECONDS, left), threads=int(clf.threads), n_jobs=cores_for(clf.n_jobs),
                exact_search=clf.exact_search, heuristic_start=clf.heuristic_start, memory_limit=memory_limit,
                starts=starts, stated_limit=float(clf.time_limit), progress=relay if progress is not None else None,
                stop=stop)

        try:
            climbed = climb(plan, ordered, read, solve, watch, max_patterns)
        except TooManyPatterns as over:
            raise StrongTreeError(FIRST_RUNG_TOO_LARGE.format(path=table.name, patterns=over.patterns,
                                                              limit=human_bytes(memory_limit))) from None
        except ReadStopped:
            _not_read(watch, table, float(clf.time_limit), "patterns", reader)
        answer = climbed.answer
        solved, data = answer.solved, answer.data
        encoded = Encoded(plan=answer.plan, X_binary=data.X, feature_names=features, cart_tree=None)
        if solved.features is not None:
            solved, encoded, data = to_certified_thresholds(solved, encoded, data)
        train = Training(
            table=None, array=None, y_index=data.y, classes=classes, target=target,
            weights=None if sample_weight is None else data.weight, positive=positive,
            groups=_coding(groups, data.group), legit=_coding(legit, data.legit), protected_in_x=(),
            protected=spec_protected, legitimate=spec_legitimate, columns_in=features, fitted_on_frame=True)
        notes = list(climbed.notes)
        kept = sum(len(c.cuts) for c in encoded.plan.columns if c.kind == "continuous")  # after the engine's thinning
        solved = replace(solved, record=replace(solved.record, n_rows=int(scan.rows), choice=_choice(solved, climbed, kept),
                                                message=" ".join([solved.record.message] + notes).strip()))
        clf._record(solved, tree_spec, data, train, encoded, encoded_questions=plan.n_binary)
        clf.constraint_checks_ = clf._verify(tree_spec.side_constraints, solved.structure, train, data)
        clf._judge_against_the_majority(solved, train, data)
        clf.reading_ = _reading(table, scheduler, scan, climbed, kept, data.n_features, time.perf_counter() - started)
        pred = solved.structure.predict(data.X)
        clf.reading_["training_accuracy"] = float(data.weight[pred == data.y].sum() / data.weight.sum())
        clf._warn_if_not_proven()
        return clf
    finally:
        close = getattr(reader, "close", None)
        if close is not None:
            close()


def _positive(clf, classes: np.ndarray, fairness) -> int | None:
    """The index of ``pos_label`` among the classes; a label given as text (the command line's) names the
    class that reads as it (``"1"`` names the class 1 of a column of numbers)."""
    label = clf.pos_label
    if isinstance(label, str) and not (classes == label).any():
        named = [i for i, c in enumerate(classes.tolist()) if str(c) == label]
        if named:
            return _index_with(clf, classes, fairness, classes[named[0]])
    return clf._positive_index(classes, fairness)


def _index_with(clf, classes, fairness, label) -> int | None:
    given = clf.pos_label
    clf.pos_label = label.item() if hasattr(label, "item") else label
    try:
        return clf._positive_index(classes, fairness)
    finally:
        clf.pos_label = given


def _refuse_in_memory_options(clf) -> None:
    if clf.fairness_confidence is not None:
        raise StrongTreeError(ROWS_NOT_IN_MEMORY.format(
            option="fairness_confidence", why="its promise refits on samples of the rows, which are not in memory; "
                                              "fit a sample of the table with fit()."))
    if clf.n_buckets is not None or clf.encoding == "onehot_buckets":
        raise StrongTreeError(ROWS_NOT_IN_MEMORY.format(
            option="n_buckets / onehot_buckets", why="the thresholds are chosen from the data (max_thresholds); "
                                                     "leave n_buckets and encoding at their defaults."))


def _roles(allow_protected_splits, reader, table, target, weight, protected, legitimate) -> tuple[str, ...]:
    columns = list(reader.columns)
    shown = ", ".join(columns[:30]) + (", ..." if len(columns) > 30 else "")
    if target not in columns:
        raise TableError(NO_TARGET.format(path=table.name, target=target, columns=shown))
    for what, names in (("weight", (weight,) if weight else ()), ("protected", protected),
                        ("legitimate", legitimate)):
        missing = [n for n in names if n not in columns]
        if missing:
            raise TableError(NO_COLUMN.format(path=table.name, what=what, names=", ".join(map(repr, missing)),
                                                   columns=shown))
    drop = {target} | ({weight} if weight else set())
    if not allow_protected_splits:
        drop |= set(protected)
    features = tuple(c for c in columns if c not in drop)
    if not features:
        raise TableError(NO_FEATURE.format(path=table.name))
    return features


def _pass(reader, stage, columns, summarize, merge, watch, table, limit):
    try:
        return reader.run(stage, columns, summarize, merge, watch)
    except ReadStopped:
        _not_read(watch, table, limit, stage, reader)


def _not_read(watch, table, limit, stage, reader) -> None:
    if watch.stop is not None and watch.stop.is_set():
        raise StrongTreeError(STOPPED_WHILE_READING.format(path=table.name))
    total = f"{reader.rows_total:,}" if reader.rows_total else "all the"
    raise StrongTreeError(NOT_READ_IN_TIME.format(path=table.name, limit=limit, stage=stage,
                                                  rows=getattr(reader, "rows_seen", 0), total=total))


def _plan(budget, reader, scan, features, target, classes, weight, watch, table, limit):
    """The encoding at every threshold of the budget, and each continuous column's thresholds in ladder order."""
    kinds = {name: kind_of(name, scan.columns[name], 10) for name in features}
    continuous = [name for name in features if kinds[name] == "continuous"]
    fitted = {name: fixed_column(name, scan.columns[name], kinds[name]) for name in features if name not in continuous}
    ordered: dict = {}
    if continuous:
        spec = HistogramSpec(tuple((name, bin_shift(scan.columns[name])) for name in continuous), target,
                             tuple(classes.tolist()), weight)
        hists = _pass(reader, "thresholds", (*continuous, target, *((weight,) if weight else ())),
                      partial(histogram_batch, spec), merge_histograms, watch, table, limit)
        for name in continuous:
            fitted[name], ordered[name] = continuous_column(name, scan.columns[name], hists[name], budget)
    plan = make_plan([fitted[name] for name in features], (), budget, 10)
    return plan, ordered


def _coding(coding: GroupCoding | None, codes) -> GroupCoding | None:
    return None if coding is None or codes is None else GroupCoding(coding.name, np.asarray(codes), coding.levels)


def _choice(solved, climbed, kept: int) -> str:
    total = climbed.thresholds_total
    where = (f"the table read where it lies, in {len(climbed.rungs)} pass(es) of patterns; thresholds of the "
             f"continuous columns: {kept} of the {total} kept, refined where the best tree splits")
    inner = solved.record.choice.replace("climbed a ladder of thresholds to all of them",
                                         "climbed to every threshold of the last rung")
    return f"{inner}; {where}"


def _reading(table, scheduler, scan, climbed, kept: int, features: int, seconds: float) -> dict:
    """What reading the table did: the record of how the patterns were made."""
    return {
        "table": table.name, "files": len(table.files), "format": table.format,
        "where": "this machine" if scheduler is None else "a Dask cluster",
        "rows": int(scan.rows), "rows_read": int(scan.rows_read),
        "thresholds_kept": kept, "thresholds_total": climbed.thresholds_total,
        "features_kept": features, "features_total": climbed.features_total,
        "rungs": [dict(zip(("thresholds", "patterns", "features", "certified", "read_seconds", "solve_seconds"), r))
                  for r in climbed.rungs],
        "ended": climbed.ended, "seconds": seconds,
    }


def target_classes(scan: Scan, target: str) -> np.ndarray:
    """The classes of the target, checked as ``fit`` checks ``y`` (its distinct labels are enough)."""
    if scan.labels is None:
        raise StrongTreeError(TOO_MANY_LABELS.format(target=target, cap=CATEGORY_CAP))
    if scan.target_missing:
        raise StrongTreeError(TARGET_MISSING.format(target=target, n=scan.target_missing, total=scan.rows_read))
    labels = list(scan.labels.values())
    values = np.asarray(labels, dtype=object)
    if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in labels):
        values = np.asarray(labels)
    elif all(isinstance(v, (bool, np.bool_)) for v in labels):
        values = np.asarray(labels, dtype=bool)
    classes, _ = classes_of(values, len(values))
    return classes


def check_weights(scan: Scan) -> None:
    """Refuse the weights ``fit`` refuses (missing, infinite, negative, none positive, too spread)."""
    missing, infinite, negative, text = scan.weight_problems
    total = scan.rows_read
    if text:
        raise StrongTreeError(WEIGHTS_NOT_NUMBERS.format(examples="text"))
    if missing:
        raise StrongTreeError(WEIGHTS_MISSING.format(n=missing, total=total))
    if infinite:
        raise StrongTreeError(WEIGHTS_INFINITE.format(n=infinite, total=total))
    if negative:
        raise StrongTreeError(WEIGHTS_NEGATIVE.format(n=negative, total=total, low=scan.weight_min))
    if scan.rows == 0:
        raise StrongTreeError(WEIGHTS_ALL_ZERO)
    if not np.isfinite(scan.weight_total):
        raise StrongTreeError(WEIGHTS_TOO_LARGE)
    if scan.weight_high > MAX_WEIGHT_RATIO * scan.weight_low:
        raise StrongTreeError(WEIGHTS_SPREAD.format(low=scan.weight_low, high=scan.weight_high,
                                                      limit=MAX_WEIGHT_RATIO))
