"""Hand-written mutants of the code whose claims the tests guard, each run against the tests that
should catch it: the promise (strongtree_core/metrics/promise.py, promise_fit.py), the report's and the
pages' escaping, the browser and run stores (strongtree_studio/stores/browsers.py, restore.py,
runs.py), the exact search's Stop between slices, the looks at the deadline in the later parts of the
counts' search's passes over a front (strongtree_core/accel/fronts.py), and the metrics' careless calls.

    python scripts/mutants.py                  # every mutant; a table of caught / missed
    python scripts/mutants.py --area promise   # one area
    python scripts/mutants.py --list           # the mutants, not run

Each mutant replaces one exact piece of text (found exactly once) in one file, runs its tests
(``pytest -x``, stopping at the first failure) and puts the file back, whatever happens.  In a
module whose kernels are compiled ahead of time (``strongtree_core/accel/treedp.py``: its built
library is keyed on the file's bytes, so an edited file would be rebuilt), the mutant replaces the
text in one function's source instead, rebound by a pytest plugin before the tests run; the file
is not touched.  A mutant
is *caught* when its tests fail (or do not finish within the time allowed: a hang is a failure a
user would see), *missed* when they pass.  Before any mutant, each set of tests is run once on the
code as it is and must pass.  The worktree must have no uncommitted change to a mutated file.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutant:
    name: str
    area: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]
    timeout: float = 600.0
    function: str = ""  # "module:Class.method": mutate that function's source in the tests' process, not the file


PROMISE_TESTS = ("tests/test_promise_rounds.py", "tests/test_promise_fits.py", "tests/test_promise_driver.py",
                 "tests/test_promise.py")
REPORT_TESTS = ("tests/test_report_escaping.py", "tests/test_report.py")
PAGES_TESTS = ("tests/test_studio_views.py", "tests/test_studio_markup.py", "tests/test_app.py::test_the_hazard_check_finds_raw_markup",
               "tests/test_app.py::test_hostile_names_never_become_markup_on_any_page")
STORE_TESTS = ("tests/test_browser_store.py", "tests/test_studio_runs.py", "tests/test_restore.py")
STOP_TESTS = ("tests/test_stop_between_slices.py",)
LOOKS_TESTS = ("tests/test_front_looks.py",)
METRICS_TESTS = ("tests/test_careless_calls.py",)

P, PF = "strongtree_core/metrics/promise.py", "strongtree_core/estimator/promise_fit.py"
RB = "strongtree_core/report/build.py"
BS, RS, RN = "strongtree_studio/stores/browsers.py", "strongtree_studio/page/restore.py", "strongtree_studio/stores/run_history.py"
TD, DP = "strongtree_core/accel/treedp.py", "strongtree_core/accel/dp.py"
FR = "strongtree_core/accel/fronts.py"  # its tests run the kernels' Python source: nothing is compiled

MUTANTS = [
    # -- the promise: its arithmetic ------------------------------------------------------------
    Mutant("standard error: n + 1 for n + 2", "promise", P, "p_a = (self.k_a + 1) / (self.n_a + 2)",
           "p_a = (self.k_a + 1) / (self.n_a + 1)", PROMISE_TESTS),
    Mutant("risk: one tail only", "promise", P,
           "return float(np.sum(norm.sf((delta - d) / se) + norm.sf((delta + d) / se)))",
           "return float(np.sum(norm.sf((delta - d) / se)))", PROMISE_TESTS),
    Mutant("tightened bound: 6 bisection steps", "promise", P,
           "    lo, hi = 0.0, float(delta)\n    for _ in range(60):", "    lo, hi = 0.0, float(delta)\n    for _ in range(6):",
           PROMISE_TESTS),
    Mutant("margin: a negative optimism loosens delta", "promise", P, "target = delta - max(0.0, optimism)",
           "target = delta - optimism", PROMISE_TESTS),
    Mutant("margin: risk judged at delta, not delta - optimism", "promise", P,
           "r = 0.0 if fitted.constant else risk(fitted.diffs, target, v)",
           "r = 0.0 if fitted.constant else risk(fitted.diffs, delta, v)", PROMISE_TESTS),
    Mutant("margin: steps down by delta / 5", "promise", P, "nxt = t - delta / 10", "nxt = t - delta / 5", PROMISE_TESTS),
    Mutant("margin: the optimism's variance left out of the tightening", "promise", P,
           "nxt = tightened_bound(np.sqrt(fitted.diffs.standard_error ** 2 + v), target, alpha)",
           "nxt = tightened_bound(fitted.diffs.standard_error, target, alpha)", PROMISE_TESTS),
    Mutant("margin: no floor at the last round", "promise", P, "if nxt is None or attempt == MARGIN_ROUNDS - 1:",
           "if nxt is None:", PROMISE_TESTS),
    Mutant("margin: smallest promise without the optimism", "promise", P,
           "smallest = None if first.constant else smallest_promise(first.diffs, alpha, v) + optimism",
           "smallest = None if first.constant else smallest_promise(first.diffs, alpha, v)", PROMISE_TESTS),
    Mutant("holdout: the lower bound not tested", "promise", P,
           "return bool(np.all(upper <= delta) and np.all(lower >= -delta))", "return bool(np.all(upper <= delta))",
           PROMISE_TESTS),
    Mutant("holdout: goes on past a failed tree", "promise", P,
           "        if not ok:\n            failed = fitted\n            break\n        best = fitted",
           "        if not ok:\n            failed = fitted\n            continue\n        best = fitted", PROMISE_TESTS),
    Mutant("holdout: a constant tree that passed counts every row", "promise", P,
           'return best, _promise("holdout", confidence, delta, best, today, rounds, smallest, n_fit_rows, why, details,',
           'return best, _promise("holdout", confidence, delta, best, today, rounds, smallest, n_rows, why, details,', PROMISE_TESTS),
    Mutant("crossfit: refits at delta instead of keeping today's tree", "promise", P,
           "fitted = today if t == delta else fit_at(t)", "fitted = fit_at(t)", PROMISE_TESTS),
    Mutant("excess: differences folded", "promise", P,
           "directed = np.where(sign == 0, np.abs(d_out), sign * d_out)", "directed = np.abs(d_out)", PROMISE_TESTS),
    Mutant("optimism: rescaled by the share, not its root", "promise", P, "scale = float(np.sqrt(share))",
           "scale = float(share)", PROMISE_TESTS),
    Mutant("optimism: standard deviation with ddof 0", "promise", P, "arr.std(ddof=1)", "arr.std(ddof=0)",
           PROMISE_TESTS),
    Mutant("promise: the cost measured against the chosen tree", "promise", P,
           "accuracy_at_delta=float(first.accuracy)", "accuracy_at_delta=float(chosen.accuracy)", PROMISE_TESTS),
    Mutant("promise: the training bound of the first tree", "promise", P,
           "training_bound=float(chosen.training_bound)", "training_bound=float(first.training_bound)", PROMISE_TESTS),
    # -- the promise: its driver ------------------------------------------------------------------
    Mutant("driver: rows of weight 0 judged", "promise", PF, "sub = part[keep[part]]", "sub = part", PROMISE_TESTS),
    Mutant("driver: accuracy unweighted", "promise", PF,
           "acc = float(np.average(pred_all[keep] == y_arr[keep], weights=None if weight is None else weight[keep]))",
           "acc = float(np.mean(pred_all[keep] == y_arr[keep]))", PROMISE_TESTS),
    Mutant("driver: excess read backwards", "promise", PF,
           "return excess(diffs_on(pred, fit_part), diffs_on(pred, fresh))",
           "return excess(diffs_on(pred, fresh), diffs_on(pred, fit_part))", PROMISE_TESTS),
    Mutant("driver: one half of each pair", "promise", PF, "return (there + back) / 2", "return there", PROMISE_TESTS),
    Mutant("driver: the halves offered no incumbent", "promise", PF, "(first,))\n        back, _ = fit_excess(b, a",
           "())\n        back, _ = fit_excess(b, a", PROMISE_TESTS),
    Mutant("driver: parts binarized anew on a 0/1 table", "promise", PF,
           "if rows is not None and not (parts and encoded.cut_free):", "if rows is not None:", PROMISE_TESTS),
    Mutant("driver: thresholds chosen on all rows reused on parts", "promise", "strongtree_core/estimator/classifier.py",
           'return all(column.kind in ("binary", "categorical") for column in self.plan.columns)', "return True",
           PROMISE_TESTS),
    Mutant("driver: a part's rows keep every row's weight", "promise", "strongtree_core/estimator/classifier.py",
           "weights=None if self.weights is None else self.weights[rows],", "weights=self.weights,", PROMISE_TESTS),
    Mutant("driver: refits on parts on the caller's thread only", "promise", PF,
           "            if workers == 1 or len(tasks) == 1:", "            if True:", PROMISE_TESTS),
    Mutant("driver: bootstrap without replacement", "promise", PF, "rng.choice(c, size=c.size, replace=True)",
           "rng.choice(c, size=c.size, replace=False)", PROMISE_TESTS),
    Mutant("driver: strata without the class", "promise", PF,
           "strata = group * 2 + y_pos.astype(int)  # group and class", "strata = group * 2  # group and class",
           PROMISE_TESTS),
    Mutant("driver: crossfit's mean difference folded after the mean", "promise", PF,
           "mean_abs = np.mean([np.abs(d.estimate) for d in per_fold], axis=0)",
           "mean_abs = np.abs(np.mean([d.estimate for d in per_fold], axis=0))", PROMISE_TESTS),
    Mutant("driver: holdout judged on the fitting part", "promise", PF, "return judged(model, held_rows, t, fit_part)",
           "return judged(model, fit_part, t, fit_part)", PROMISE_TESTS),
    Mutant("driver: the record without the promise", "promise", PF, "promise=promise.to_dict(), runtime=", "promise=None, runtime=",
           PROMISE_TESTS),
    # -- the report's escaping ----------------------------------------------------------------------
    Mutant("rules unescaped", "report", RB, 'f"<li>{e(r)}</li>" for r in rules', 'f"<li>{r}</li>" for r in rules',
           REPORT_TESTS),
    Mutant("notes unescaped", "report", RB, "f'<p class=\"note\">{e(n)}</p>' for n in inp.notes",
           "f'<p class=\"note\">{n}</p>' for n in inp.notes", REPORT_TESTS),
    Mutant("table cells unescaped", "report", RB, 'cells.append(f"<{tag}{cls}>{e(cell)}</{tag.split()[0]}>")',
           'cells.append(f"<{tag}{cls}>{cell}</{tag.split()[0]}>")', REPORT_TESTS),
    Mutant("table headers unescaped", "report", RB, '>{e(h)}</th>', '>{h}</th>', REPORT_TESTS),
    Mutant("quotes not escaped", "report", RB, "return html.escape(text, quote=True)",
           "return html.escape(text, quote=False)", REPORT_TESTS),
    Mutant("line breaks kept", "report", RB, 'repr(m.group(0))[1:-1], " ".join(str(value).splitlines()))',
           'repr(m.group(0))[1:-1], str(value))', REPORT_TESTS),
    Mutant("control characters kept", "report", RB, "text = _CONTROL.sub(lambda m: repr(m.group(0))[1:-1], ",
           "text = (lambda s: s)(", REPORT_TESTS),
    Mutant("facts unescaped", "report", RB, 'f"<dt>{e(k)}</dt><dd>{e(v)}</dd>"', 'f"<dt>{e(k)}</dt><dd>{v}</dd>"',
           REPORT_TESTS),
    Mutant("title unescaped", "report", RB, 'f"<title>{e(title)}</title>', 'f"<title>{title}</title>', REPORT_TESTS),
    Mutant("the tree in words unescaped", "report", RB, '"".join(f"<li>{e(s)}</li>" for s in summary)',
           '"".join(f"<li>{s}</li>" for s in summary)', REPORT_TESTS),
    Mutant("the positive class unescaped", "report", RB, "rates of predicting {e(inp.pos_label)}",
           "rates of predicting {inp.pos_label}", REPORT_TESTS),
    Mutant("drawing: box text unescaped", "report", "strongtree_core/tree/svg.py",
           "{html_text(line.text)}</text>')", "{line.text}</text>')", REPORT_TESTS),
    Mutant("drawing: < not an entity (dot and SVG)", "report", "strongtree_core/tree/dot.py",
           '_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"', '_ENTITIES = {"&": "&amp;", ">": "&gt;"', REPORT_TESTS),
    # -- the pages' escaping ----------------------------------------------------------------------------
    Mutant("legend: class unescaped", "pages", "strongtree_studio/views/tree_view.py",
           "display:inline-block\"></span>{html_text(c)}</span>'", "display:inline-block\"></span>{c}</span>'",
           PAGES_TESTS),
    Mutant("Markdown: punctuation not escaped", "pages", "strongtree_studio/views/markup.py",
           'return _PUNCTUATION.sub(r"\\\\\\1", text)', "return text", PAGES_TESTS),
    Mutant("Tree page: the tree in words unescaped", "pages", "strongtree_studio/page/screens/tree.py",
           'f"- {md(sentence)}" for sentence in tree_summary(tree)', 'f"- {sentence}" for sentence in tree_summary(tree)',
           PAGES_TESTS),
    Mutant("tables: cells unescaped", "pages", "strongtree_studio/views/markup.py",
           'else md(v))', 'else str(v))', PAGES_TESTS),
    # -- the stores ----------------------------------------------------------------------------------------
    Mutant("load: every browser's entries", "store", BS,
           '"SELECT name, format, value FROM entries WHERE browser = ?"',
           '"SELECT name, format, value FROM entries WHERE browser = ? OR 1"', STORE_TESTS),
    Mutant("save: a too-large entry dropped for every browser", "store", BS,
           'connection.executemany("DELETE FROM entries WHERE browser = ? AND name = ?",\n'
           '                                       [(browser, name) for name in too_large])',
           'connection.executemany("DELETE FROM entries WHERE name = ?", [(name,) for name in too_large])', STORE_TESTS),
    Mutant("load: an unreadable entry dropped for every browser", "store", BS,
           'connection.executemany("DELETE FROM entries WHERE browser = ? AND name = ?",\n'
           '                                       [(browser, name) for name in broken])',
           'connection.executemany("DELETE FROM entries WHERE name = ?", [(name,) for name in broken])', STORE_TESTS),
    Mutant("forget: every browser's entries", "store", BS,
           'connection.execute("DELETE FROM entries WHERE browser = ?", (browser,))',
           'connection.execute("DELETE FROM entries")', STORE_TESTS),
    Mutant("load: an expired browser brought back", "store", BS, "if seen is None or seen[0] < time.time() - self.ttl:",
           "if seen is None:", STORE_TESTS),
    Mutant("load: every browser marked seen", "store", BS,
           'connection.execute("UPDATE browsers SET seen = ? WHERE browser = ?", (time.time(), browser))',
           'connection.execute("UPDATE browsers SET seen = ?", (time.time(),))', STORE_TESTS),
    Mutant("prune: the fresh browsers forgotten", "store", BS, '"SELECT browser FROM browsers WHERE seen < ?"',
           '"SELECT browser FROM browsers WHERE seen > ?"', STORE_TESTS),
    Mutant("restore: nothing changed is ever saved", "store", RS,
           "if saved.get(k.name, _UNSEEN) is not k.get()}", "if saved.get(k.name, _UNSEEN) is k.get()}", STORE_TESTS),
    Mutant("restore: one runs owner for every browser", "store", RS, "SESSION_OWNER.set(owner_of(key))",
           'SESSION_OWNER.set(owner_of(browser_key("")))', STORE_TESTS),
    Mutant("runs: every run visible", "store", RN, 'return f"(shared = 1 OR owner IN ({marks}))", owners',
           'return f"(shared = 1 OR owner IN ({marks}) OR 1)", owners', STORE_TESTS),
    # -- Stop between slices ----------------------------------------------------------------------------------
    Mutant("the stop request not read between slices", "stop", TD,
           "if not stop[0] or (real > 0 and monotonic_ns() >= real) or self._stop_requested():",
           "if not stop[0] or (real > 0 and monotonic_ns() >= real):", STOP_TESTS, 180.0,
           "strongtree_core.accel.treedp:Engine._sliced"),
    Mutant("a slice's end taken for a stop", "stop", TD, "        stop[0] = 0  # only the slice ended\n",
           "        return out\n", STOP_TESTS, 180.0,
           "strongtree_core.accel.treedp:Engine._sliced"),
    Mutant("no slices: one call even with a stop to watch", "stop", TD,
           "        if self._stop_requested is None or threading.current_thread() is not threading.main_thread():",
           "        if True:", STOP_TESTS, 180.0,
           "strongtree_core.accel.treedp:Engine._sliced"),
    Mutant("slices as long as the deadline", "stop", TD,
           "stats[5] = now + SLICE_NS if real <= 0 else min(real, now + SLICE_NS)", "stats[5] = real", STOP_TESTS, 180.0,
           "strongtree_core.accel.treedp:Engine._sliced"),
    Mutant("a stop asked before the search not passed to it", "stop", TD,
           "            stop[0] = 1  # (no thread watches", "            pass  # (no thread watches", STOP_TESTS, 180.0,
           "strongtree_core.accel.treedp:Engine._sliced"),
    Mutant("the search beside the main thread never told to stop", "stop", TD,
           "                if self._stop_requested():\n                    stop[0] = 1",
           "                if self._stop_requested():\n                    pass", STOP_TESTS, 240.0,
           "strongtree_core.accel.treedp:Engine._beside"),
    Mutant("the deadline gives no stop test to the search", "stop", DP,
           "return None if stop is None else stop.is_set", "return None", STOP_TESTS, 180.0),
    # -- the deadline's looks in the later parts of a pass over a front --------------------------------------
    Mutant("the order's merges never look at the deadline", "looks", FR,
           "if work % STRIDE == 0 and _halted(flag, limit):\n                    return a, False",
           "if False:\n                    return a, False", LOOKS_TESTS),
    Mutant("a growth's copy of the entries never looks at the deadline", "looks", FR,
           "        if e % STRIDE == 0 and _halted(flag, limit):\n            break\n        s = np.int64(hs[e] & mask)",
           "        if False:\n            break\n        s = np.int64(hs[e] & mask)", LOOKS_TESTS),
    Mutant("the index's boxes never look at the deadline", "looks", FR,
           "            if (i - s) % STRIDE == 0 and _halted(flag, limit):", "            if False:", LOOKS_TESTS),
    # -- careless calls -----------------------------------------------------------------------------------------
    Mutant("missing values named 'missing' beside a value 'missing'", "metrics", "strongtree_core/encoding/groups.py",
           "    if MISSING_GROUP not in taken:", "    if True:", METRICS_TESTS),
    Mutant("metrics: one-column groups merge missing and 'missing'", "metrics", "strongtree_core/metrics/_inputs.py",
           "missing = missing_group_name(series[present].astype(str).unique())", 'missing = "missing"', METRICS_TESTS),
    Mutant("group summary named per part", "metrics", "strongtree_core/metrics/group_summary.py",
           "everything = group_labels(both, list(protected)).to_numpy()",
           "everything = np.concatenate([group_labels(p, list(protected)).to_numpy() for p in parts.values()])",
           METRICS_TESTS),
    Mutant("a label spelled otherwise not named", "metrics", "strongtree_core/metrics/_inputs.py", "        if match:",
           "        if False:", METRICS_TESTS),
    Mutant("a positive label found nowhere accepted", "metrics", "strongtree_core/metrics/_inputs.py",
           "    if need_positive:\n        _check_positive", "    if False:\n        _check_positive", METRICS_TESTS),
    Mutant("pages' group mix merges missing and 'missing'", "metrics", "strongtree_studio/page/shown.py",
           "groups = group_labels(frame, list(columns)).to_numpy()",
           'groups = frame[columns[0]].astype(object).where(frame[columns[0]].notna(), "missing").astype(str).to_numpy()',
           METRICS_TESTS),
]


PLUGIN = """
import importlib, inspect, textwrap
module_name, qualname = {function!r}.split(":")
module = importlib.import_module(module_name)
*parents, name = qualname.split(".")
owner = module
for part in parents:
    owner = getattr(owner, part)
source = inspect.getsource(owner.__dict__[name])
assert source.count({old!r}) == 1, "the mutant's text is not in the function once"
namespace = {{}}
exec(compile(textwrap.dedent(source.replace({old!r}, {new!r})), module.__file__, "exec"), module.__dict__, namespace)
setattr(owner, name, namespace[name])
open({marker}, "w").close()  # the mutant is in place
"""


def run_tests(tests: tuple[str, ...], timeout: float, plugin: str = "") -> tuple[str, float]:
    """'pass', 'fail' or 'timeout', and the seconds taken; ``plugin``: the source of a pytest plugin to load first."""
    started = time.perf_counter()
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not soak", *tests]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    with tempfile.TemporaryDirectory() as folder:
        marker = Path(folder) / "applied"
        if plugin:
            (Path(folder) / "strongtree_mutant.py").write_text(plugin.replace("{marker}", repr(str(marker))),
                                                               encoding="utf-8")
            cmd[3:3] = ["-p", "strongtree_mutant"]
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [folder, env.get("PYTHONPATH", "")]))
        try:
            done = subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return "timeout", time.perf_counter() - started
        if plugin and not marker.exists():  # the plugin failed: the tests never met the mutant
            return "broken", time.perf_counter() - started
    return ("pass" if done.returncode == 0 else "fail"), time.perf_counter() - started


def apply(m: Mutant) -> str:
    """The file's text before the mutant (the mutant is written in its place; a function mutant leaves it)."""
    path = ROOT / m.path
    if m.function:
        return path.read_text(encoding="utf-8")
    text = path.read_text(encoding="utf-8")
    found = text.count(m.old)
    if found != 1:
        raise SystemExit(f"mutant {m.name!r}: its text occurs {found} times in {m.path} (must be once)")
    path.write_text(text.replace(m.old, m.new), encoding="utf-8")
    return text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--area", action="append", help="only these areas (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--no-baseline", action="store_true", help="skip the run of each test set on the code as it is")
    args = ap.parse_args()
    chosen = [m for m in MUTANTS if not args.area or m.area in args.area]
    if args.list:
        for i, m in enumerate(chosen, 1):
            print(f"{i:3d}  {m.area:8s} {m.path}: {m.name}")
        return 0
    for m in chosen:  # every text is there once before anything runs
        count = (ROOT / m.path).read_text(encoding="utf-8").count(m.old)
        if count != 1:
            raise SystemExit(f"mutant {m.name!r}: its text occurs {count} times in {m.path} (must be once)")
    if not args.no_baseline:
        for tests in dict.fromkeys(m.tests for m in chosen):
            outcome, seconds = run_tests(tests, 1200.0)
            print(f"baseline {' '.join(tests)}: {outcome} ({seconds:.0f} s)", flush=True)
            if outcome != "pass":
                raise SystemExit("the tests fail on the code as it is: fix that first")
    rows = []
    for i, m in enumerate(chosen, 1):
        before = apply(m)
        plugin = PLUGIN.format(function=m.function, old=m.old, new=m.new, marker="{marker}") if m.function else ""
        if not m.function:
            try:
                compile((ROOT / m.path).read_text(encoding="utf-8"), m.path, "exec")
            except SyntaxError:
                (ROOT / m.path).write_text(before, encoding="utf-8")
                raise SystemExit(f"mutant {m.name!r} does not compile: fix its text")
        try:
            outcome, seconds = run_tests(m.tests, m.timeout, plugin)
        finally:
            if (ROOT / m.path).read_text(encoding="utf-8") != before:
                (ROOT / m.path).write_text(before, encoding="utf-8")
        if outcome == "broken":
            raise SystemExit(f"mutant {m.name!r}: the plugin could not put it in place")
        verdict = "missed" if outcome == "pass" else ("caught (timeout)" if outcome == "timeout" else "caught")
        rows.append((i, m.area, m.name, verdict, seconds))
        print(f"{i:3d} {m.area:8s} {verdict:16s} {seconds:6.1f} s  {m.name}", flush=True)
    print()
    print("| # | area | mutant | verdict | seconds |")
    print("|---|---|---|---|---|")
    for i, area, name, verdict, seconds in rows:
        print(f"| {i} | {area} | {name} | {verdict} | {seconds:.0f} |")
    by_area: dict[str, list[int]] = {}
    for _, area, _, verdict, _ in rows:
        by_area.setdefault(area, [0, 0])
        by_area[area][0] += verdict.startswith("caught")
        by_area[area][1] += 1
    print()
    print("| area | caught | of |")
    print("|---|---|---|")
    for area, (caught, total) in by_area.items():
        print(f"| {area} | {caught} | {total} |")
    caught = sum(c for c, _ in by_area.values())
    print(f"| all | {caught} | {len(rows)} |")
    return 0 if caught == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
