"""The live demo as a speaker sees it: from the click on **Live demo** to the first move of
the numbers, to the proof and to the banner, in a real browser at 1280x720.

Each run starts a fresh server (``streamlit run app.py``, its own process group and run
history), opens the Data page in headless Chromium, waits ``--settle`` seconds (a speaker
does not click in the first instant; the idle solve worker imports the engine meanwhile),
clicks **Live demo**, and records in the page, every 50 ms, from the click:

``numbers``
    the Best tree and Bound cards first show values;
``best moves`` / ``bound moves``
    each first shows a value other than its first one;
``explored``
    the Explored card first counts above 0;
``proof``
    the Gap card reads 0.0 %;
``banner``
    the banner of a certificate is shown (green "Proven optimal", or blue "Optimal over kept
    thresholds" when the thresholds searched are those the encoding kept);
``stored``
    the "Explore the tree" link is shown (the comparison tree without fairness
    constraints solved and the run stored);

and, when the banner shows and when the run is stored, where the progress chart's bottom
edge lies (inside the first 720 px when it is at most 720).
``--fresh-kernels`` gives every server new, empty kernel caches (``STRONGTREE_CACHE_DIR``,
``NUMBA_CACHE_DIR``): the first start on a fresh machine, where the server prepares the
compiled exact search and the demo waits for it; the seconds from ``streamlit run`` to the
click are printed too, so that ``start`` + an event is the time from ``streamlit run``.
``--burners N`` runs N busy loops beside the server (a busy machine).  The load average
before each run is printed: the machine this runs on may be shared.  ``--before PATH``
also runs another checkout of the app (e.g. ``git archive`` of the commit before a
change), one run of each in turn, so that both meet the same load.

    python -m benchmarks.demo_timing --runs 5
    python -m benchmarks.demo_timing --runs 3 --burners 2
    python -m benchmarks.demo_timing --runs 3 --before /tmp/before
    python -m benchmarks.demo_timing --runs 2 --fresh-kernels --burners 2 --timeout 900
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1280, "height": 720}
EVENTS = ("numbers", "best moves", "bound moves", "explored", "proof", "banner", "stored")

#: In the page: a recorder of when each event first happens, counted from the click.
RECORDER = """() => {
  const t0 = performance.now();
  const seen = {};
  const first = {};
  const mark = (name, extra) => { if (!(name in seen)) seen[name] = {t: (performance.now() - t0) / 1000, ...extra}; };
  const card = name => {
    const m = [...document.querySelectorAll('[data-testid="stMetric"]')]
      .find(e => (e.querySelector('[data-testid="stMetricLabel"]') || {}).innerText === name);
    const v = m && m.querySelector('[data-testid="stMetricValue"]');
    return v ? v.innerText.trim() : null;
  };
  const filled = v => v !== null && v !== '' && v !== '–';
  window.__demo = seen;
  window.__demoTimer = setInterval(() => {
    const best = card('Best tree'), bound = card('Bound'), gap = card('Gap'), explored = card('Explored');
    if (filled(best) && filled(bound)) {
      mark('numbers');
      if (!('best' in first)) { first.best = best; first.bound = bound; }
      if (best !== first.best) mark('best moves');
      if (bound !== first.bound) mark('bound moves');
    }
    if (filled(explored) && explored !== '0') mark('explored');
    if (gap === '0.0%') mark('proof');
    const banner = [...document.querySelectorAll('[data-testid="stAlertContentSuccess"], [data-testid="stAlertContentInfo"]')]
      .find(e => e.innerText.includes('Proven optimal') || e.innerText.includes('Optimal over kept thresholds'));
    if (banner) {
      const chart = document.querySelector('[data-testid="stVegaLiteChart"]');
      const r = chart ? chart.getBoundingClientRect() : null;
      mark('banner', {chart_bottom: r ? r.bottom : null, window: innerHeight});
    }
    if ([...document.querySelectorAll('a')].some(a => a.innerText.includes('Explore the tree'))) {
      const chart = document.querySelector('[data-testid="stVegaLiteChart"]');
      const r = chart ? chart.getBoundingClientRect() : null;
      mark('stored', {chart_bottom: r ? r.bottom : null, window: innerHeight});
    }
  }, 50);
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _burn(stop) -> None:  # pragma: no cover - a busy loop in a child process
    while not stop.is_set():
        sum(i * i for i in range(10_000))


class _Server:
    """``streamlit run app.py`` with its own run history, in its own process group."""

    def __init__(self, folder: Path, repo: Path = REPO, fresh_kernels: bool = False) -> None:
        self.port = _free_port()
        self.log = open(folder / "streamlit.log", "wb")
        self.started = time.monotonic()
        env = dict(os.environ, STRONGTREE_RUNS_DB=str(folder / "runs.sqlite3"))
        if fresh_kernels:
            env.update(STRONGTREE_CACHE_DIR=str(folder / "kernels"), NUMBA_CACHE_DIR=str(folder / "numba"))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port",
             str(self.port), "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=repo, stdout=self.log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as response:
                    if response.read().decode().strip() == "ok":
                        return
            except OSError:
                time.sleep(0.3)
        self.close()
        raise RuntimeError("the server did not start")

    def close(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(15)
        except ProcessLookupError:
            pass
        self.log.close()


def one_run(browser, settle: float, timeout: float, repo: Path = REPO, fresh_kernels: bool = False) -> dict:
    """A fresh server, the Data page, a pause, the click, and the events until the run is stored."""
    with tempfile.TemporaryDirectory() as folder:
        server = _Server(Path(folder), repo, fresh_kernels)
        try:
            context = browser.new_context(viewport=VIEWPORT)
            page = context.new_page()
            page.goto(server.url)
            page.get_by_role("heading", name="Data", exact=True).wait_for(timeout=60_000)
            page.wait_for_timeout(settle * 1000)
            load = os.getloadavg()[0]
            button = page.get_by_role("button", name="Live demo")
            button.wait_for(timeout=30_000)
            page.evaluate(RECORDER)
            clicked = time.monotonic() - server.started
            button.click()
            deadline = time.monotonic() + timeout
            seen: dict = {}
            while time.monotonic() < deadline:
                seen = page.evaluate("() => window.__demo || {}")
                if "stored" in seen and "banner" in seen:
                    break
                page.wait_for_timeout(200)
            seen = page.evaluate("() => window.__demo || {}")
            context.close()
            return {"load": load, "start": clicked, **seen}
        finally:
            server.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--settle", type=float, default=3.0, help="seconds between the page showing and the click")
    parser.add_argument("--burners", type=int, default=0, help="busy loops beside the server")
    parser.add_argument("--timeout", type=float, default=180.0)
    parser.add_argument("--before", type=Path, default=None, help="another checkout, run in turn with this one")
    parser.add_argument("--fresh-kernels", action="store_true", help="new, empty kernel caches for every server")
    args = parser.parse_args(argv)
    checkouts = [("this", REPO)] + ([("before", args.before.resolve())] if args.before else [])

    from playwright.sync_api import sync_playwright

    stop = multiprocessing.Event()
    burners = [multiprocessing.Process(target=_burn, args=(stop,), daemon=True) for _ in range(args.burners)]
    for b in burners:
        b.start()
    rows: dict[str, list[dict]] = {name: [] for name, _ in checkouts}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
            for i in range(args.runs):
                for label, repo in checkouts:
                    row = one_run(browser, args.settle, args.timeout, repo, args.fresh_kernels)
                    rows[label].append(row)
                    cells = "  ".join(f"{name} {row[name]['t']:5.1f}" if name in row else f"{name}   —  "
                                      for name in EVENTS)
                    where = []
                    for event in ("banner", "stored"):
                        seen = row.get(event, {})
                        bottom = seen.get("chart_bottom")
                        where.append(f"{event} {'—' if bottom is None else f'{bottom:.0f}'}")
                    print(f"{label:<6} run {i + 1}  load {row['load']:4.1f}  start {row['start']:5.1f}  {cells}  "
                          f"chart's bottom edge (px of "
                          f"{VIEWPORT['height']}) at the {', '.join(where)}", flush=True)
            browser.close()
    finally:
        stop.set()
        for b in burners:
            b.join(5)
    print("\nseconds from the click (median, min-max over the runs)")
    print(f"{'checkout':<9} {'event':<12} {'median':>7} {'min':>6} {'max':>6}  runs")
    for label, _ in checkouts:
        for name in EVENTS:
            values = [r[name]["t"] for r in rows[label] if name in r]
            if values:
                print(f"{label:<9} {name:<12} {statistics.median(values):7.1f} {min(values):6.1f} {max(values):6.1f}"
                      f"  {len(values)}/{len(rows[label])}")


if __name__ == "__main__":
    main()
