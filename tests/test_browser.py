"""The dashboard in a real browser, one test per thing a user must get: an upload
solved live and stopped, the live demo closing its gap, trees legible at their
size, nothing cut off at a projector's 1280x720, stale results labelled, coded
columns named, identifiers and dates suggested for ignoring, fairness as charts,
no raw words, nothing fetched from outside, four users solving while a fifth
loads a page, and the Learn page showing Theorem 1 with its defaults.

Needs Debian's Chromium and the playwright package (no browser download);
skipped with the reason otherwise.  Screenshots of every page at 1440x900 and
1280x720 go to ``artifacts/screenshots`` (``STRONGTREE_SCREENSHOTS=docs/screenshots``
writes the README's).
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import hostile
import numpy as np
import pandas as pd
import pytest
from processes import listening_hosts

from strongtree_core.tree.claim import CONSTANT_BOUND
from strongtree_studio.data.demo_tables import make_hiring

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
SHOTS = Path(os.environ.get("STRONGTREE_SCREENSHOTS") or ROOT / "artifacts" / "screenshots")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PROJECTOR = {"width": 1280, "height": 720}
DESKTOP = {"width": 1440, "height": 900}
DELTA_POINTS = 2.0
#: Smallest text a tree may show at a size larger than the panel (px).
MIN_TREE_TEXT = 11.0
#: Smallest text the Tree page's tree shows by default, fitted to its panel (px).
MIN_DEFAULT_TREE_TEXT = 10.0
#: Longest a fifth session may wait for its first page while four solve (s).
PAGE_LOAD_LIMIT = 4.0
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
T0 = time.monotonic()

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None

if sync_playwright is None or not Path(CHROMIUM).exists():
    reason = "playwright is not installed" if sync_playwright is None else f"no Chromium at {CHROMIUM}"
    print(f"test_browser skipped: {reason}")
    pytest.skip(reason, allow_module_level=True)

#: Browser sessions are long (pytest.ini): `-m "not slow"` leaves them out of a quick run.
pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``streamlit run app.py`` in its own process group, output to a log file."""

    def __init__(self, folder: Path, **env: str) -> None:
        self.port = free_port()
        self.log_path = folder / "streamlit.log"
        self._log = open(self.log_path, "wb")
        environment = dict(os.environ, STRONGTREE_RUNS_DB=str(folder / "runs.sqlite3"), **env)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port",
             str(self.port), "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT, env=environment, start_new_session=True,
        )
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as response:
                    if response.read().decode().strip() == "ok":
                        return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError("streamlit did not start:\n" + self.log_path.read_text()[-3000:])
            time.sleep(0.3)

    def cpu_seconds(self) -> float:
        """User and system CPU time of the server process so far."""
        import psutil

        times = psutil.Process(self.process.pid).cpu_times()
        return times.user + times.system

    def state(self) -> str:
        """The server's processes (CPU time, state) and the end of its log: for a failure's message."""
        processes = subprocess.run(["ps", "-o", "pid,ppid,stat,ni,etime,time,rss,args", "-g", str(self.process.pid)],
                                   capture_output=True, text=True).stdout
        return f"processes:\n{processes}\nlog (end):\n{self.log_path.read_text(errors='replace')[-4000:]}"

    def close(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        except ProcessLookupError:
            pass
        self._log.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    started = Server(tmp_path_factory.mktemp("server"))
    yield started
    started.close()


@pytest.fixture(scope="module")
def server(served):
    return served.url


def test_the_dashboard_listens_on_this_machine_only(served):
    """`streamlit run app.py` as the README gives it: loopback only (.streamlit/config.toml's
    server.address), not every interface (Streamlit's default)."""
    hosts = listening_hosts(served.process.pid)
    assert hosts and hosts <= {"127.0.0.1", "::1"}, hosts


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        expect.set_options(timeout=30_000)
        yield browser
        browser.close()


class Visit:
    """A browser session on the app that records every request it makes."""

    def __init__(self, browser, url: str, viewport: dict = DESKTOP) -> None:
        self.context = browser.new_context(viewport=viewport, accept_downloads=True)
        self.requests: list[str] = []
        self.context.on("request", lambda request: self.requests.append(request.url))
        self.page = self.context.new_page()
        self.page.set_default_timeout(30_000)
        self.url = url

    def outside_requests(self) -> list[str]:
        return sorted({u for u in self.requests if urllib.parse.urlsplit(u).hostname not in LOCAL_HOSTS
                       and not u.startswith(("data:", "blob:"))})

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def visit(server, browser, request):
    """A fresh session at 1440x900 (a reload is a new session too); a screenshot when its test fails."""
    session = Visit(browser, server)
    session.page.goto(server)
    expect(session.page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
    yield session
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        shoot(session.page, f"failure_{request.node.name}")
    session.close()


# -- helpers ------------------------------------------------------------------------------------------


def nav(page, title: str) -> None:
    """Go to a page through the sidebar (a reload would start a new session)."""
    page.locator('.st-key-page_list a').filter(has_text=title).first.click()
    expect(page.get_by_role("heading", name=title, exact=True).first).to_be_visible()
    page.wait_for_timeout(600)  # let the page's last rerun paint


def shoot(page, name: str) -> Path:
    """A screenshot of the viewport, stored as a small palette PNG."""
    print(f"{time.monotonic() - T0:6.1f} s  {name}")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(400)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    try:
        from PIL import Image

        with Image.open(path) as image:
            image.convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    except ImportError:  # pragma: no cover - Pillow comes with the app's requirements
        pass
    return path


def settle(page) -> None:
    """Wait until the app has finished its rerun (a widget re-made by a rerun would lose what is typed into it)."""
    page.wait_for_timeout(200)
    expect(page.locator('[data-testid="stStatusWidget"]')).to_have_count(0, timeout=30_000)


def choose(page, label: str, option: str) -> None:
    """Pick ``option`` in the select or multiselect labelled ``label`` with the keyboard
    (a click on a list that a rerun just closed would land on the widget below it); picked
    again if a rerun re-made the widget while it was being typed into, or dropped the choice
    (seen once under load: a protected attribute chosen while the page reran after a codebook)."""
    box = page.get_by_role("combobox", name=label, exact=True)
    item = page.get_by_role("option", name=option, exact=True)
    widget = box.locator("xpath=ancestor::div[@data-testid='stMultiSelect' or @data-testid='stSelectbox'][1]")
    for attempt in range(3):
        settle(page)
        box.click()
        box.fill(option)
        try:
            expect(item).to_be_visible(timeout=10_000)
            _focus(box, item)
        except AssertionError:
            box.press("Escape")
            if attempt == 2:
                raise
            continue
        box.press("Enter")
        box.press("Escape")
        page.wait_for_timeout(300)
        settle(page)
        if _shows(box, widget, option):
            return
        if attempt == 2:
            raise AssertionError(f"{label!r} does not show {option!r} after three picks")


def _focus(box, item, seconds: float = 10.0) -> None:
    """Move the list's keyboard focus onto ``item`` before Enter picks it. The whole list is drawn
    before the typed filter applies (slowly under load), and then its first entry holds the focus
    ("Select all" in a multiselect): an Enter at that moment picked another choice (seen in CI)."""
    deadline = time.monotonic() + seconds
    while item.get_attribute("data-focused") != "true":
        if time.monotonic() > deadline:
            raise AssertionError(f"the list never put its focus on {item}")
        box.press("ArrowDown")
        box.page.wait_for_timeout(250)


def _shows(box, widget, option: str, seconds: float = 10.0) -> bool:
    """Whether the select shows ``option`` within ``seconds``: a multiselect as one of its tags, a
    select as the value of its box."""
    deadline = time.monotonic() + seconds
    while True:
        if option in widget.inner_text() or box.input_value() == option:
            return True
        if time.monotonic() > deadline:
            return False
        widget.page.wait_for_timeout(250)


def slide(page, label: str, target: str, key: str) -> None:
    """Move the slider labelled ``label`` one key press (one rerun) at a time until it reads ``target``."""
    thumb = page.locator('[data-testid="stSlider"]').filter(has_text=label).get_by_role("slider")
    for _ in range(100):
        if thumb.get_attribute("aria-valuetext") == target:
            return
        thumb.focus()
        thumb.press(key)
        page.wait_for_timeout(250)
    raise AssertionError(f"{label} never read {target}")


def metric_value(page, label: str) -> str:
    card = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return card.locator('[data-testid="stMetricValue"]').inner_text().strip()


def metric_help(page, label: str) -> str:
    """The help of the card labelled ``label``, as its tooltip shows it on hover."""
    card = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    card.locator('[data-testid="stTooltipIcon"]').hover()
    tip = page.locator('[data-testid="stTooltipContent"]')
    expect(tip).to_be_visible()
    text = tip.inner_text().strip()
    page.mouse.move(0, 0)
    expect(tip).to_have_count(0)
    return text


def upload(page, name: str, frame: pd.DataFrame) -> None:
    page.get_by_role("tab", name="Upload a file").click()
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        {"name": name, "mimeType": "text/csv", "buffer": frame.to_csv(index=False).encode()})
    expect(page.get_by_role("heading", name=name)).to_be_visible()


def wait_for_banner(page, timeout: float = 90_000):
    """The banner of a solve on the Solve page: it comes as soon as the tree is final."""
    banner = page.locator('[data-testid="stAlertContentSuccess"], [data-testid="stAlertContentInfo"], '
                          '[data-testid="stAlertContentWarning"]').filter(
        has_text="best tree").locator('[data-testid="stMarkdownContainer"]')
    expect(banner.first).to_be_visible(timeout=timeout)
    return banner.first


def wait_for_outcome(page, timeout: float = 90_000):
    """The banner of a finished solve, then the link to the tree (the comparison tree without
    fairness constraints solved after the banner, and the run stored)."""
    banner = wait_for_banner(page, timeout)
    expect(page.get_by_text("Explore the tree").first).to_be_visible(timeout=timeout)
    return banner


def solve_and_wait(page) -> str:
    """Solve on the Solve page and wait for this solve's banner (it names its run, so the banner of
    an earlier solve, still on screen for a moment after the click, is not mistaken for it)."""
    nav(page, "Solve")
    banner = page.locator('[data-testid="stAlertContentSuccess"], [data-testid="stAlertContentInfo"], '
                          '[data-testid="stAlertContentWarning"]').filter(
        has_text="best tree").locator('[data-testid="stMarkdownContainer"]')
    before = banner.first.inner_text() if banner.count() else ""
    page.get_by_role("button", name="Solve", exact=True).click()
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if banner.count() and banner.first.is_visible() and banner.first.inner_text() != before:
            expect(page.get_by_text("Explore the tree").first).to_be_visible(timeout=90_000)  # the run stored
            return banner.first.inner_text()
        page.wait_for_timeout(250)
    raise AssertionError("the solve never finished")


#: Elements whose text is cut with an ellipsis or ends in "…" (inputs and the data grid's canvas aside).
CUT_TEXT = """() => {
  const out = [];
  const skip = e => e.closest('[data-baseweb="select"], input, textarea, [data-testid="stDataFrame"], [data-testid="stGraphVizChart"]');
  for (const el of document.querySelectorAll('[data-testid="stMain"] *, [data-testid="stSidebar"] *')) {
    if (skip(el) || !el.offsetParent) continue;
    const text = (el.innerText || '').trim();
    if (!text) continue;
    if (!el.childElementCount && text.endsWith('…')) out.push('ends in …: ' + text);
    const style = getComputedStyle(el);
    if (style.textOverflow === 'ellipsis' && el.scrollWidth > el.clientWidth + 1) out.push('cut: ' + text);
  }
  return [...new Set(out)];
}"""

#: Every drawn tree (a Graphviz chart in a tree panel, strongtree_studio.page.tree_chart): the panel's size
#: ("fit", "natural" for Presentation, "large"), its smallest text as shown (px: the text's computed
#: size times the drawing's scale on screen), text wider than its box, and the boxes that lie outside
#: the panel's frame (a panel that scrolls says so with its scrollbars; one that fits must show all).
TREE_TEXT = """() => [...document.querySelectorAll('[data-testid="stGraphVizChart"]')]
  .filter(p => p.getBoundingClientRect().width && p.querySelector('svg g.node'))
  .map(panel => {
    const svg = panel.querySelector('svg');
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const texts = [...svg.querySelectorAll('g.node text, g.edge text')];
    const frame = panel.getBoundingClientRect();
    const nodes = [...svg.querySelectorAll('g.node')];
    const overflow = [];
    for (const g of nodes) {
      const box = g.querySelector('path, polygon').getBoundingClientRect();
      for (const t of g.querySelectorAll('text')) {
        const b = t.getBoundingClientRect();
        if (b.left < box.left - 0.5 || b.right > box.right + 0.5) overflow.push(t.textContent);
      }
    }
    const outside = nodes.filter(g => {
      const b = g.getBoundingClientRect();
      return b.left < frame.left - 1 || b.right > frame.right + 1 || b.top < frame.top - 1 || b.bottom > frame.bottom + 1;
    }).length;
    const holder = panel.closest('[class*="st-key-stree-"]');
    const key = holder ? [...holder.classList].find(c => c.startsWith('st-key-stree-')) : '';
    return {size: key.split('-')[3] || '', n: nodes.length, outside, overflow,
            smallest: Math.min(...texts.map(t => parseFloat(getComputedStyle(t).fontSize) * scale)),
            scrolls: panel.scrollWidth > panel.clientWidth + 1 || panel.scrollHeight > panel.clientHeight + 1};
  })"""
#: The first box of a panel's drawing (the root) lies across the panel's frame, left to right.
ROOT_IN_VIEW = """p => { const r = p.querySelector('svg g.node').getBoundingClientRect(), f = p.getBoundingClientRect();
  return r.left >= f.left && r.right <= f.right; }"""
#: A drawn tree on the page, and its boxes.
TREE = '[data-testid="stGraphVizChart"] svg'
TREE_NODE = '[data-testid="stGraphVizChart"] svg g.node'


def tree_size(page, size: str) -> None:
    """Choose a size for the tree panels of the page ("Fit the panel", "Presentation", "Large": one
    choice per page, for all its trees)."""
    page.locator('[data-testid="stMain"]').get_by_text(size, exact=True).first.click()
    settle(page)
    page.wait_for_timeout(800)


def check_trees(page, name: str) -> list[dict]:
    """Every tree on the page: no text wider than its box; a tree fitted to its panel lies wholly
    inside it; a tree at a larger size reads at 11 px or more (the panel scrolls to the rest)."""
    trees = page.evaluate(TREE_TEXT)
    for tree in trees:
        assert tree["overflow"] == [], (name, tree)
        if tree["size"] == "fit":
            assert tree["outside"] == 0, (name, tree)
        else:
            assert tree["smallest"] >= MIN_TREE_TEXT - 1e-6, (name, tree)
    return trees


#: Library words and machine numbers that must not reach the pages.
RAW_WORDS = re.compile(r"\b(time_limit|time_limit_no_tree|interrupted|pystreed|numpy|heuristic|statistical_parity|"
                       r"equalized_odds|balanced_accuracy|None|nan|NaN)\b")
LONG_NUMBER = re.compile(r"\d\.\d{5,}")
#: The number of lines the text of each element takes (distinct tops of its text's boxes).
LINES_OF_TEXT = """els => els.map(e => { const tops = new Set(), walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) { const r = document.createRange(); r.selectNodeContents(n);
    for (const b of r.getClientRects()) tops.add(Math.round(b.top)); }
  return tops.size; })"""


def main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def check_page(page, name: str, viewport: dict) -> None:
    """Nothing cut off, trees legible, no raw word or long number; a screenshot."""
    page.set_viewport_size(viewport)
    page.wait_for_timeout(500)
    size = f"{viewport['width']}x{viewport['height']}"
    shoot(page, f"{name}_{size}")
    assert page.evaluate(CUT_TEXT) == [], (name, size)
    check_trees(page, f"{name} {size}")
    text = main_text(page)
    assert RAW_WORDS.findall(text) == [], (name, RAW_WORDS.findall(text))
    assert LONG_NUMBER.findall(text) == [], (name, LONG_NUMBER.findall(text))


def long_solve_settings(page, limit: str = "300") -> None:
    """FlowOCT forced at depth 4 with statistical parity at 2 pp and a long limit: it runs until Stop."""
    nav(page, "Model")
    choose(page, "Formulation", "FlowOCT")
    slide(page, "Maximum depth", "4", "ArrowRight")
    choose(page, "Fairness notions", "Statistical parity")
    slide(page, "Largest allowed gap δ (percentage points)", f"{DELTA_POINTS:.1f} pp", "ArrowLeft")
    box = page.get_by_role("spinbutton", name="Time limit (seconds)")
    box.fill(limit)
    box.press("Enter")
    expect(page.get_by_text(f"Statistical parity (δ = {DELTA_POINTS:.1f} pp)")).to_be_visible()


def hiring_at_depth(page, depth: int):
    """At 1280x720, the 800-row hiring table loaded and the Model page's depth set (from 2, upwards)."""
    page.set_viewport_size(PROJECTOR)
    page.get_by_role("button", name="Use this table").click()  # the 800-row hiring table
    expect(page.get_by_role("heading", name="Hiring (teaching data with planted bias)")).to_be_visible()
    nav(page, "Model")
    slide(page, "Maximum depth", str(depth), "ArrowRight")
    return page


# -- 1. upload, live solve, Stop, tree, gap, download; nothing fetched from outside ------------------


@pytest.mark.timing
def test_upload_solve_stop_tree_gap_download(visit):
    page = visit.page
    started = time.monotonic()
    upload(page, "hiring.csv", make_hiring(800, seed=3))
    expect(page.get_by_role("combobox", name="Target (what the tree predicts)")).to_have_value("hired")
    choose(page, "Protected attribute(s)", "gender")
    choose(page, "Legitimate factor(s)", "education")
    expect(page.locator('[data-testid="stSidebar"]').get_by_text("protected: gender")).to_be_visible()
    expect(page.get_by_text("600 training rows · 200 test rows")).to_be_visible()
    long_solve_settings(page)

    nav(page, "Solve")
    page.get_by_role("button", name="Solve", exact=True).click()
    expect(page.locator('[data-testid="stVegaLiteChart"]').first).to_be_visible()
    page.get_by_role("tab", name="Best tree").click()
    expect(page.locator(TREE_NODE).first).to_be_visible()  # the best tree so far
    page.get_by_role("tab", name="Progress").click()
    first = metric_value(page, "Elapsed")
    elapsed = page.locator('[data-testid="stMetric"]').filter(has_text="Elapsed").first
    expect(elapsed.locator('[data-testid="stMetricValue"]')).not_to_have_text(first)  # it moves while solving
    expect(page.locator('[data-testid="stTable"]').filter(has_text="step").first).to_be_visible()  # the log
    stop = page.get_by_role("button", name="Stop")
    try:
        stop.click(timeout=5_000)
    except PlaywrightTimeout:  # proven optimal before Stop could be pressed
        expect(stop).to_be_disabled()
    outcome = wait_for_outcome(page, 60_000).inner_text()
    assert outcome.startswith(("Stopped (not proven)", "Proven optimal", "Optimal over kept thresholds")), outcome
    expect(page.get_by_text("Explore the tree")).to_be_visible()

    nav(page, "Tree")
    expect(page.locator(TREE_NODE).first).to_be_visible()
    with page.expect_download() as download:
        page.get_by_role("button", name="JSON").click()
    tree = json.loads(Path(download.value.path()).read_text())
    assert tree["target"] == "hired" and tree["record"]["status"] in ("interrupted", "optimal")

    nav(page, "Fairness & performance")
    value = metric_value(page, "Statistical parity · training rows")
    assert value.endswith(" pp") and float(value.removesuffix(" pp")) <= DELTA_POINTS + 1e-9
    expect(page.get_by_text(f"within δ = {DELTA_POINTS:.1f} pp").first).to_be_visible()
    nav(page, "Runs")
    expect(page.locator('[data-testid="stTable"]').first).to_contain_text("hiring.csv")
    assert visit.outside_requests() == []  # works offline: every file comes from this server
    assert time.monotonic() - started < 150


# -- 2. the live demo closes its gap, and every page at both sizes -----------------------------------


@pytest.mark.timing
def test_the_live_demo_closes_its_gap_and_every_page_reads_at_both_sizes(visit):
    """The demo's solve is watched: the best tree rises and the bound falls in steps to a proof
    within a minute; then every page at 1280x720 and 1440x900: nothing cut, trees legible,
    no raw words, the Runs table without a horizontal scroll."""
    page = visit.page
    page.set_viewport_size(PROJECTOR)
    started = time.monotonic()
    page.get_by_role("button", name="Live demo").click()
    expect(page.get_by_role("heading", name="Solve", exact=True)).to_be_visible()
    expect(page.locator('[data-testid="stVegaLiteChart"]').first).to_be_visible(timeout=60_000)
    outcome = wait_for_banner(page, 120_000).inner_text()
    took = time.monotonic() - started
    # Over its 10 quantile cuts per number: a proof over the thresholds kept, said so (RESULTS.md, section 40).
    assert outcome.startswith("Optimal over kept thresholds"), outcome
    assert "No tree of depth 4 asking only the 27 of the 142 thresholds kept does better" in outcome, outcome
    assert took < 60 + 25  # closes its gap within the minute (plus page loads)
    chart = page.locator('[data-testid="stVegaLiteChart"]').first  # the speaker's chart: in the first screen
    box = chart.bounding_box()
    print(f"live demo certified {took:.1f} s after the click ({outcome.split(' · ')[0]}); the chart's bottom at "
          f"{box['y'] + box['height']:.0f} of {PROJECTOR['height']} px")
    assert chart.bounding_box()["y"] + chart.bounding_box()["height"] <= PROJECTOR["height"], chart.bounding_box()
    expect(page.get_by_text("Explore the tree").first).to_be_visible(timeout=90_000)  # then the comparison tree
    assert chart.bounding_box()["y"] + chart.bounding_box()["height"] <= PROJECTOR["height"], chart.bounding_box()
    logo = page.locator('[data-testid="stSidebar"] img').first  # the product's name over the page list
    expect(logo).to_be_visible()
    assert logo.get_attribute("alt") is not None and logo.bounding_box()["y"] < PROJECTOR["height"]
    log = page.locator('.st-key-solve-log [data-testid="stTable"]').first
    for step in ("tighter bound", "better tree", outcome.split(" · ")[0]):  # the steps that closed the gap, in words
        expect(log).to_contain_text(step)
    lines = log.locator("tbody td:first-child").evaluate_all(LINES_OF_TEXT)  # each time on one line ("18.6 s")
    assert len(lines) > 2 and set(lines) == {1}, lines
    expect(page.locator('[data-testid="stMetric"]').filter(has_text="Gap").first.locator(
        '[data-testid="stMetricValue"]')).to_have_text("0.0%")

    for viewport in (PROJECTOR, DESKTOP):
        for name in ("Data", "Model", "Solve", "Tree", "Fairness & performance", "Runs"):
            nav(page, name)
            slug = {"Fairness & performance": "fairness"}.get(name, name.lower())
            if name == "Tree":
                page.get_by_text("Protected groups in each box").click()  # more text per box: still legible
                expect(page.locator(TREE).first).to_contain_text("groups:")
            check_page(page, slug, viewport)
            if name == "Tree":  # the demo's depth-4 tree: whole in its panel, then legible at presentation size
                trees = check_trees(page, f"Tree fit {viewport}")
                assert trees[0]["size"] == "fit" and trees[0]["outside"] == 0, trees
                tree_size(page, "Presentation")
                trees = check_trees(page, f"Tree presentation {viewport}")
                assert trees[0]["size"] == "natural" and trees[0]["smallest"] >= MIN_TREE_TEXT, trees
                assert trees[0]["scrolls"], trees  # larger than the panel: it scrolls to the rest
                panel = page.locator('[class*="st-key-stree-natural-"] [data-testid="stGraphVizChart"]').first
                assert panel.evaluate(ROOT_IN_VIEW)  # the panel's script opened it on the root
                shoot(page, f"tree_presentation_{viewport['width']}x{viewport['height']}")
                box, before = panel.bounding_box(), panel.evaluate("p => p.scrollLeft")
                page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 40)
                page.mouse.down()
                page.mouse.move(box["x"] + box["width"] / 2 + 150, box["y"] + 40, steps=5)
                page.mouse.up()
                assert panel.evaluate("p => p.scrollLeft") < before  # a drag to the right shows what lies left
                tree_size(page, "Fit the panel")
            if name == "Solve":
                page.get_by_role("tab", name="Best tree").click()
                check_page(page, "solve_tree", viewport)
            if name == "Tree":
                page.get_by_text("Protected groups in each box").click()
            if name == "Runs":  # every column in view: nothing to scroll sideways to
                table = page.locator('[data-testid="stTable"]').first
                expect(table).to_contain_text("accuracy train / test")
                assert table.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), "the runs table scrolls sideways"
    assert visit.outside_requests() == []


# -- 3. legible trees at depth 3 and stale results -----------------------------------------------------


def test_depth_3_trees_are_legible_and_a_stale_result_is_labelled(visit):
    page = hiring_at_depth(visit.page, 3)
    choose(page, "Fairness notions", "Statistical parity")
    solve_and_wait(page)
    for name in ("Solve", "Tree"):
        nav(page, name)
        if name == "Solve":
            page.get_by_role("tab", name="Best tree").click()
        trees = check_trees(page, name)  # fitted to the panel: every box inside it
        assert trees and all(t["size"] == "fit" and t["outside"] == 0 for t in trees), (name, trees)
        tree_size(page, "Presentation")
        trees = check_trees(page, name)  # at presentation size: every text 11 px or more
        assert trees and all(t["size"] == "natural" for t in trees), (name, trees)
    page.get_by_text("Protected groups in each box").click()
    expect(page.locator(TREE).first).to_contain_text("groups:")
    assert check_trees(page, "Tree with groups")[0]["smallest"] >= MIN_TREE_TEXT
    tree_size(page, "Fit the panel")
    assert page.locator('[data-testid="stMain"]').get_by_text("From earlier settings").count() == 0

    nav(page, "Model")
    slide(page, "Maximum depth", "2", "ArrowLeft")
    for name in ("Solve", "Tree", "Fairness & performance"):
        nav(page, name)
        label = page.locator('[data-testid="stAlertContentWarning"]').filter(has_text="From earlier settings")
        expect(label.first).to_contain_text("depth 3 → 2")
    shoot(page, "stale_label_1280x720")


#: The tags of the Tree page's collapsed subtrees: each one's question, whether its text is cut, whether it lies
#: inside the box (Streamlit's box keeps one line that scrolls sideways behind a fade), and its line's top.
COLLAPSED_TAGS = """() => [...document.querySelectorAll('.st-key-tree-collapsed [data-tag]')].map(t => {
  const c = t.closest('[data-testid="stMultiSelectTagsContainer"]').getBoundingClientRect(), b = t.getBoundingClientRect(),
        s = t.querySelector('span');
  return {text: s.innerText, cut: s.scrollWidth > s.clientWidth + 1, top: Math.round(b.top),
          inside: b.left >= c.left - 1 && b.right <= c.right + 1 && b.top >= c.top - 1 && b.bottom <= c.bottom + 1}; })"""


def whole_tags(page, name: str) -> list[dict]:
    """The collapsed subtrees' tags, each whole and in view (at 1280x720 the second read "test_score" behind the
    fade, the others out of the box)."""
    tags = page.evaluate(COLLAPSED_TAGS)
    assert tags and [t["text"] for t in tags if t["cut"] or not t["inside"]] == [], (name, tags)
    return tags


def test_a_depth_4_tree_reads_at_10_px_at_1280x720_by_default_and_opens_whole_on_request(visit):
    """The Tree page fits a deep tree to its panel with the levels that keep every text at 10 px or
    more (the rest collapsed into grey boxes), says so, and opens every level on a click; the list of
    collapsed subtrees shows every question whole, the four of them on one line."""
    page = hiring_at_depth(visit.page, 4)
    solve_and_wait(page)
    nav(page, "Tree")
    expect(page.locator(TREE_NODE).first).to_be_visible()
    for viewport in (PROJECTOR, DESKTOP):
        page.set_viewport_size(viewport)
        page.wait_for_timeout(800)
        tree = check_trees(page, f"Tree default {viewport}")[0]
        assert tree["size"] == "fit" and tree["outside"] == 0, tree  # every box in the panel
        assert tree["smallest"] >= MIN_DEFAULT_TREE_TEXT, tree
        tags = whole_tags(page, f"Tree default {viewport}")
        assert len(tags) == 4 and len({t["top"] for t in tags}) == 1, tags  # one line: the tree stays high
    assert tree["n"] < 29, tree  # some subtrees are collapsed into one box each
    expect(page.get_by_text("of 4 levels of questions open").first).to_be_visible()
    shoot(page, "tree_deep_1440x900")
    page.get_by_role("button", name="Open all levels").click()
    settle(page)
    expect(page.get_by_role("button", name="Open all levels")).to_have_count(0)
    opened = check_trees(page, "Tree opened")[0]
    for _ in range(20):  # the opened drawing replaces the collapsed one after the button has gone
        if opened["n"] > tree["n"]:
            break
        page.wait_for_timeout(500)
        opened = check_trees(page, "Tree opened")[0]
    assert opened["n"] > tree["n"], (opened, tree)
    slider = page.locator('[data-testid="stSlider"]').filter(has_text="Levels of questions open").get_by_role("slider")
    assert slider.get_attribute("aria-valuetext") == "4"
    slide(page, "Levels of questions open", "3", "ArrowLeft")  # the subtrees below level 3: more than a line holds
    settle(page)
    for viewport in (PROJECTOR, DESKTOP):
        page.set_viewport_size(viewport)
        page.wait_for_timeout(800)
        tags = whole_tags(page, f"Tree three levels {viewport}")
        assert len({t["top"] for t in tags}) > 1, tags  # on two lines or more
    shoot(page, "tree_collapsed_subtrees_1440x900")



def test_a_depth_5_tree_reads_on_the_solve_fairness_and_runs_pages_at_both_sizes(visit):
    """The deepest tree the Model page allows, stopped by its time limit or proven: on Solve its tree fitted in
    the panel with the levels open that read at 10 px or more; on Solve, Fairness and Runs nothing is cut (a long
    verdict badge wraps), no raw word, the runs table without a sideways scroll."""
    page = hiring_at_depth(visit.page, 5)
    box = page.get_by_role("spinbutton", name="Time limit (seconds)")
    box.fill("15")
    box.press("Enter")
    settle(page)
    solve_and_wait(page)
    expect(page.get_by_text("Depth 5", exact=False).first).to_be_visible()
    for viewport in (PROJECTOR, DESKTOP):
        nav(page, "Solve")
        page.get_by_role("tab", name="Best tree").click()
        check_page(page, "solve_tree_depth5", viewport)
        trees = check_trees(page, f"Solve depth 5 {viewport}")
        assert trees and trees[0]["size"] == "fit" and trees[0]["outside"] == 0, trees
        assert trees[0]["smallest"] >= MIN_DEFAULT_TREE_TEXT, trees  # the levels that read open, the rest grey boxes
        expect(page.get_by_text("of 5 levels of questions open").first).to_be_visible()
        nav(page, "Fairness & performance")
        check_page(page, "fairness_depth5", viewport)
        nav(page, "Runs")
        check_page(page, "runs_depth5", viewport)
        table = page.locator('[data-testid="stTable"]').first
        expect(table).to_contain_text("accuracy train / test")
        assert table.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), "the runs table scrolls sideways"

#: The drawn height (px) of the shortest text of each tree panel in view (its glyphs' box on screen).
TEXT_HEIGHTS = """() => [...document.querySelectorAll('[class*="st-key-stree-"] [data-testid="stGraphVizChart"] svg')]
  .filter(s => s.getBoundingClientRect().width)
  .map(s => Math.min(...[...s.querySelectorAll('g.node text, g.edge text')].map(t => t.getBoundingClientRect().height)))"""
#: Smallest drawn height of a tree's text (px): the glyph box of 10 px text is about 13 px high.
MIN_TEXT_HEIGHT = 9.0


def test_two_depth_4_trees_compared_on_runs_and_fairness_read_at_both_sizes(visit):
    """Runs → Compare and the Fairness page's two trees, fitted to their panels: every text at 10 px or more
    (side by side each drew 31 boxes at 2 px), the levels open said, and no control offered that the page lacks."""
    page = hiring_at_depth(visit.page, 4)
    solve_and_wait(page)
    nav(page, "Model")
    choose(page, "Fairness notions", "Statistical parity")
    solve_and_wait(page)
    nav(page, "Runs")
    box = page.get_by_role("combobox", name="Select one run to open, two to compare, or runs to share or delete",
                           exact=True)
    for _ in range(2):
        box.click()
        box.press("ArrowDown")
        box.press("Enter")
        box.press("Escape")
        settle(page)
    page.get_by_role("button", name="Compare", exact=True).click()
    settle(page)
    for name in ("Runs", "Fairness & performance"):
        if name != "Runs":
            nav(page, name)
            page.get_by_role("tab", name="Cost of fairness").click()
            settle(page)
        expect(page.locator(TREE_NODE).first).to_be_visible()
        caption = page.locator('[data-testid="stCaptionContainer"]').filter(has_text="levels of questions open")
        expect(caption).to_contain_text("2 of 4 levels of questions open")
        assert "collapse subtrees" not in main_text(page)
        for viewport in (PROJECTOR, DESKTOP):
            page.set_viewport_size(viewport)
            page.wait_for_timeout(800)
            page.locator(TREE).last.scroll_into_view_if_needed()
            trees = [t for t in check_trees(page, f"{name} {viewport}") if t["n"]]
            assert len(trees) == 2 and all(t["size"] == "fit" for t in trees), (name, viewport, trees)
            assert min(t["smallest"] for t in trees) >= MIN_DEFAULT_TREE_TEXT, (name, viewport, trees)
            heights = page.evaluate(TEXT_HEIGHTS)
            assert len(heights) == 2 and min(heights) >= MIN_TEXT_HEIGHT, (name, viewport, heights)
            shoot(page, f"compare_depth4_{name[:4].lower()}_{viewport['width']}x{viewport['height']}")


# -- 4. coded columns named, identifiers and dates suggested for ignoring ------------------------------


def coded_table(n_rows: int = 600, seed: int = 4) -> pd.DataFrame:
    """A COMPAS-like coded table: race 1-4 and age_cat 0-2 as integers, the target 0/1,
    plus an identifier, a date and free text."""
    rng = np.random.default_rng(seed)
    race = rng.integers(1, 5, n_rows)
    age_cat = rng.integers(0, 3, n_rows)
    priors = rng.poisson(2.0, n_rows)
    risk = 0.25 + 0.12 * (priors > 2) + 0.15 * (age_cat == 0) + 0.05 * (race == 2)
    words = np.array(["stable", "job", "housing", "support", "family", "prior", "program", "court", "review"])
    return pd.DataFrame({
        "case_id": np.arange(1001, 1001 + n_rows),
        "screened_on": (pd.Timestamp("2013-01-01") + pd.to_timedelta(rng.integers(0, 700, n_rows), "D"))
        .strftime("%Y-%m-%d"),
        "officer_notes": [" ".join(rng.choice(words, 6)) + f" case {i}" for i in range(n_rows)],
        "race": race,
        "age_cat": age_cat,
        "priors_count": priors,
        "two_year_recid": (rng.random(n_rows) < risk).astype(int),
    })


def test_identifiers_dates_and_text_are_suggested_and_codes_can_be_named(visit):
    page = visit.page
    page.set_viewport_size(PROJECTOR)
    upload(page, "compas_like.csv", coded_table())
    suggestion = page.locator('[data-testid="stMain"]').get_by_text("Columns the tree should probably not see")
    expect(suggestion).to_be_visible()
    for column, why in (("case_id", "an identifier"), ("screened_on", "dates"), ("officer_notes", "free text")):
        expect(page.get_by_text(f"{column}: {why}")).to_be_visible()
    expect(page.get_by_text("binary features, most from").first).to_be_visible()  # the features explode
    shoot(page, "suggestions_1280x720")
    page.get_by_role("button", name="Ignore these columns", exact=True).click()
    expect(suggestion).to_have_count(0)
    expect(page.get_by_text("binary features, most from")).to_have_count(0)
    ignored = page.get_by_role("combobox", name="Ignore these columns")
    for column in ("case_id", "screened_on", "officer_notes"):
        expect(page.locator('[data-testid="stMultiSelect"]').filter(has=ignored).get_by_text(column)).to_be_visible()

    page.get_by_role("tab", name="Types & labels").click()
    choose(page, "Column", "race")
    page.get_by_text("category (no order: one test per value)").first.click()  # a rerun can show it twice a moment
    for code, name in (("1", "White"), ("2", "Black"), ("3", "Hispanic"), ("4", "Other")):
        page.get_by_role("textbox", name=code, exact=True).fill(name)
    page.get_by_role("button", name="Apply to the table").click()
    expect(page.get_by_text("Edited columns:")).to_be_visible()
    choose(page, "Column", "two_year_recid")
    for code, name in (("0", "no"), ("1", "reoffended")):
        page.get_by_role("textbox", name=code, exact=True).fill(name)
    page.get_by_role("button", name="Apply to the table").click()
    expect(page.get_by_role("combobox", name="Positive class")).to_have_value("reoffended")  # follows its name
    choose(page, "Protected attribute(s)", "race")
    expect(page.locator('[data-testid="stSidebar"]').get_by_text("protected: race")).to_be_visible()
    solve_and_wait(page)
    nav(page, "Fairness & performance")
    expect(page.locator('[data-testid="stMain"]').get_by_text("Hispanic").first).to_be_visible()  # groups by name
    nav(page, "Tree")
    tree_text = page.locator(TREE).first.text_content()
    assert "reoffended" in tree_text and not re.search(r"race [≤>=] ?\d", tree_text), tree_text


# -- 5. fairness as charts, the cost of fairness side by side ------------------------------------------


def test_fairness_is_drawn_per_group_with_band_ratio_and_both_trees(visit):
    page = visit.page
    page.get_by_role("button", name="Use this table").click()
    expect(page.get_by_role("heading", name="Hiring (teaching data with planted bias)")).to_be_visible()
    nav(page, "Model")
    slide(page, "Maximum depth", "3", "ArrowRight")
    choose(page, "Fairness notions", "Equalized odds")
    slide(page, "Largest allowed gap δ (percentage points)", "3.0 pp", "ArrowLeft")
    solve_and_wait(page)
    nav(page, "Fairness & performance")
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_text("Equalized odds · training rows")).to_be_visible()
    expect(main.get_by_text("ratio").first).to_be_visible()
    charts = main.locator('[data-testid="stVegaLiteChart"]')
    expect(charts.first).to_be_visible()
    assert charts.count() >= 4  # true- and false-positive rates, training and test rows
    expect(main.get_by_text("within δ").first).to_be_visible()  # the pass/fail legend
    table = main.locator('[data-testid="stTable"]').filter(has_text="ratio to highest").first
    expect(table).to_contain_text("gender")  # the group column is named
    page.get_by_role("tab", name="Confusion matrices").click()
    headings = main.get_by_text(re.compile(r"^gender = ")).all_inner_texts()
    assert headings[:2] == headings[2:4] == ["gender = female", "gender = male"], headings  # one order
    page.get_by_role("tab", name="Cost of fairness").click()
    expect(main.get_by_text("The two trees side by side")).to_be_visible()
    assert main.locator(TREE).count() == 2
    shoot(page, "cost_of_fairness_1440x900")


def test_fairness_page_draws_intervals_three_states_the_baseline_and_the_promise(visit):
    """Statistical parity 5 pp: every group bar carries its interval, gap cards give their 95 %
    intervals and a state against δ, the fixed sentence is gone, the majority-class baseline is
    shown; then a 90 % promise on new rows, whose result the page states."""
    page = visit.page
    page.get_by_role("button", name="Use this table").click()
    expect(page.get_by_role("heading", name="Hiring (teaching data with planted bias)")).to_be_visible()
    nav(page, "Model")
    choose(page, "Fairness notions", "Statistical parity")
    solve_and_wait(page)
    nav(page, "Fairness & performance")
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_text("Statistical parity · test rows")).to_be_visible()
    expect(main.get_by_text(re.compile(r"95 % interval -?\d+\.\d pp to \d+\.\d pp")).first).to_be_visible()
    assert main.get_by_text("can exceed it a little").count() == 0
    expect(main.get_by_text(re.compile(r"Statistical parity on the test rows: \d")).first).to_be_visible()
    charts = main.locator('[data-testid="stVegaLiteChart"]')
    expect(charts.first).to_be_visible()
    for viewport, size in ((PROJECTOR, "1280x720"), (DESKTOP, "1440x900")):
        page.set_viewport_size(viewport)
        page.wait_for_timeout(500)
        main.get_by_text("Statistical parity · training rows").scroll_into_view_if_needed()
        shoot(page, f"fairness_gaps_{size}")
        charts.first.scroll_into_view_if_needed()
        shoot(page, f"fairness_intervals_{size}")
    page.get_by_role("tab", name="Performance").click()
    expect(main.locator('[data-testid="stTable"]').filter(has_text="majority-class baseline").first).to_be_visible()

    nav(page, "Model")
    choose(page, "Promise on new rows", "90 % confidence on new rows (estimated)")
    solve_and_wait(page)
    nav(page, "Fairness & performance")
    promise = main.get_by_text(re.compile(r"Its gap on new rows of the same population is estimated|"
                                          r"Only a constant tree keeps the promise"))
    expect(promise.first).to_be_visible()
    promise.first.scroll_into_view_if_needed()
    page.set_viewport_size(PROJECTOR)
    shoot(page, "fairness_promise_1280x720")


def test_the_outcome_says_what_was_proved_on_every_page(visit):
    """At 1280x720: a certificate over the quantile cuts reads "Optimal over kept thresholds" (blue, never
    the green "Proven optimal") on Solve, Tree and Runs; a promise only a constant tree keeps reads "Constant
    tree (promise)" in a warning with the smallest gap a tree that splits could promise, on Solve, Tree,
    Fairness and Runs; the Model page says what a promise costs before the click."""
    page = visit.page
    page.set_viewport_size(PROJECTOR)
    page.get_by_role("button", name="Use this table").click()
    expect(page.get_by_role("heading", name="Hiring (teaching data with planted bias)")).to_be_visible()
    main = page.locator('[data-testid="stMain"]')
    outcome = solve_and_wait(page)
    assert outcome.startswith("Optimal over kept thresholds"), outcome
    assert "asking only the" in outcome and "a tree asking another threshold may do better" in outcome, outcome
    assert main.locator('[data-testid="stAlertContentSuccess"]').filter(has_text="best tree").count() == 0
    # the cards and the chart say over which trees the bound holds (they said "No tree of this depth can do better
    # than this (proven)", "0 means proven optimal", "The gap reaches 0 when the best tree is proven optimal")
    assert metric_help(page, "Bound").startswith("No tree of depth 2 asking only the "), metric_help(page, "Bound")
    assert "thresholds kept does better." in metric_help(page, "Gap"), metric_help(page, "Gap")
    expect(main.get_by_text("The gap reaches 0 when no tree the search can build does better (the outcome says "
                            "which trees those are).", exact=False)).to_be_visible()
    assert main.get_by_text("proven optimal", exact=False).count() == 0
    shoot(page, "solve_kept_thresholds_1280x720")
    nav(page, "Tree")
    expect(main.get_by_text("Optimal over kept thresholds").first).to_be_visible()
    expect(main.get_by_text("asking only the", exact=False).first).to_be_attached()  # How it was solved
    assert main.get_by_text(re.compile("Proven optimal")).count() == 0
    nav(page, "Runs")
    expect(main.locator('[data-testid="stTable"]').get_by_text("Optimal over kept thresholds").first).to_be_visible()

    nav(page, "Model")
    choose(page, "Fairness notions", "Statistical parity")
    cost = main.get_by_text("What this promise costs:", exact=False)
    for attempt in range(3):  # the choice taken by the server before the slider moves (a rerun may drop a key)
        choose(page, "Promise on new rows", "95 % confidence on new rows (estimated)")
        try:  # a rerun of the Model page took over 10 s with both cores busy (load 16)
            expect(cost).to_be_visible(timeout=25_000)
            break
        except AssertionError:
            if attempt == 2:
                raise
    slide(page, "Largest allowed gap δ (percentage points)", "1.0 pp", "ArrowLeft")
    expect(cost).to_contain_text("against δ = 1.0 pp: a constant tree is likely")
    page.get_by_role("heading", name="Model", exact=True).click()  # the keyboard's focus off the last widget
    page.wait_for_timeout(500)
    cost.scroll_into_view_if_needed()
    shoot(page, "model_promise_cost_1280x720")
    outcome = solve_and_wait(page)
    assert outcome.startswith("Constant tree (promise)"), outcome
    assert "the smallest gap a tree that splits could promise here is estimated at" in outcome, outcome
    warning = main.locator('[data-testid="stAlertContentWarning"]').filter(has_text="best tree")
    expect(warning.first).to_be_visible()
    assert main.get_by_text(re.compile("Proven optimal")).count() == 0  # (the captions' "proven optimal" explain)
    assert metric_value(page, "Elapsed") != "0.0 s"
    # its depth-0 solve's bound is no bound on the trees of depth 2 (the cards read "334" and "0.0%")
    assert (metric_value(page, "Bound"), metric_value(page, "Gap")) == ("–", "–")
    assert metric_help(page, "Bound") == f"Only a constant tree keeps the promise; its bound: {CONSTANT_BOUND}."
    shoot(page, "solve_constant_promise_1280x720")
    nav(page, "Tree")
    expect(main.get_by_text("Constant tree (promise)").first).to_be_visible()
    expect(main.get_by_text(f"bound {CONSTANT_BOUND} · no gap (no bound on a tree that splits)", exact=False)).to_be_visible()
    assert main.get_by_text(re.compile("Proven optimal")).count() == 0
    nav(page, "Fairness & performance")
    expect(main.get_by_text("Only a constant tree keeps the promise on new rows", exact=False).first).to_be_visible()
    # its box's icon is a warning, not the shield of a proved promise (it had "verified_user" beside an estimate)
    box = main.locator('[data-testid="stAlert"]').filter(has_text="Only a constant tree keeps the promise").first
    assert box.inner_text().startswith("warning\n") and "verified_user" not in box.inner_text(), box.inner_text()
    expect(main.get_by_text("How the promise was checked")).to_be_visible()
    nav(page, "Runs")
    expect(main.locator('[data-testid="stTable"]').get_by_text("Constant tree (promise)").first).to_be_visible()


def floor(page, label: str, value: str) -> None:
    """Type ``value`` into the number box labelled ``label`` (a quality floor on the Model page)."""
    box = page.locator('[data-testid="stNumberInput"]').filter(has_text=label).locator("input")
    box.fill(value)
    box.press("Enter")
    settle(page)


def test_the_solve_pages_settings_write_the_names_of_formulations_and_solvers_as_they_are(visit):
    """The line of settings above the Solve button read "flowoct route, highs solver"."""
    page = visit.page
    page.set_viewport_size(PROJECTOR)
    page.get_by_role("button", name="Use this table").click()
    expect(page.get_by_role("heading", name="Hiring (teaching data with planted bias)")).to_be_visible()
    main = page.locator('[data-testid="stMain"]')
    nav(page, "Solve")
    expect(main.get_by_text("automatic route, automatic solver", exact=False)).to_be_visible()
    nav(page, "Model")
    choose(page, "Formulation", "FlowOCT")
    choose(page, "Solver", "HiGHS")
    nav(page, "Solve")
    line = main.get_by_text("route,", exact=False).first  # (get_by_text ignores case: the line's text is read)
    expect(line).to_contain_text("FlowOCT route, HiGHS solver")


def test_floors_no_tree_meets_are_named_as_the_model_page_names_them_on_every_page(visit):
    """Depth 1 with recall, precision and specificity floors of 95 %: no tree fits. The error on the Solve page and
    the notice on the Tree and Fairness pages name the floors as the Model page does (the Tree page read "The
    constraints: min_recall, min_precision, min_specificity" and "max_thresholds=64 keeps every one"), and the hint
    speaks of the floors alone (it read "Try to loosen the fairness bound" with no fairness constraint)."""
    page = visit.page
    page.set_viewport_size(PROJECTOR)
    page.get_by_role("button", name="Use this table").click()
    expect(page.get_by_role("heading", name="Hiring (teaching data with planted bias)")).to_be_visible()
    nav(page, "Model")
    slide(page, "Maximum depth", "1", "ArrowLeft")
    for label in ("Min. recall", "Min. precision", "Min. specificity"):
        floor(page, label, "0.95")
    nav(page, "Solve")
    page.get_by_role("button", name="Solve", exact=True).click()
    main = page.locator('[data-testid="stMain"]')
    error = main.locator('[data-testid="stAlertContentError"]').filter(has_text="No tree of depth 1")
    expect(error).to_be_visible(timeout=90_000)
    said = ("The constraints: Min. recall, Min. precision, Min. specificity. Try to lower the "
            "recall/precision/specificity floors, or allow a deeper tree. Keeping more thresholds may let a tree fit: "
            "64 thresholds per numeric column (numeric coding “x ≤ t from the data”) keeps every one.")
    assert said in error.inner_text(), error.inner_text()
    # The proof is the solve's result: the badge on the page and in the sidebar names it as claim() does (both read
    # "Failed", red, beside the proof).
    sidebar = page.locator('[data-testid="stSidebar"]')
    for where in (main, sidebar):
        expect(where.locator('[data-testid="stBadge"], .stBadge, span').filter(
            has_text="No tree fits (kept thresholds)").first).to_be_visible()
        assert "Failed" not in where.inner_text(), where.inner_text()
    shoot(page, "solve_no_tree_fits_1280x720")
    for title in ("Tree", "Fairness & performance"):
        nav(page, title)
        notice = main.locator('[data-testid="stAlertContentInfo"]').filter(has_text="The last solve has no tree")
        expect(notice).to_be_visible()
        assert said in notice.inner_text(), (title, notice.inner_text())
        assert RAW_WORDS.findall(main_text(page)) == [] and "min_recall" not in main_text(page), title


# -- 6. hostile names fetch nothing ---------------------------------------------------------------------


def outside_references(page) -> list[str]:
    """Images, links and sources on the page that point to another host."""
    urls = page.evaluate(
        "Array.from(document.querySelectorAll('img[src], a[href], [srcset], image, use, iframe[src]'))"
        ".map(e => e.getAttribute('src') || e.getAttribute('href') || e.getAttribute('srcset')"
        " || e.getAttribute('xlink:href') || '')"
    )
    return [u for u in urls if u and urllib.parse.urlsplit(urllib.parse.urljoin(page.url, u)).hostname
            not in LOCAL_HOSTS and not u.startswith(("data:", "blob:", "#"))]


def test_hostile_names_fetch_nothing_from_outside(visit):
    """A table whose names and values are Markdown and HTML pointing at an outside host:
    every page is visited (two solves, their tree, fairness and comparison) and no request
    leaves the server's host; no image or link points outside."""
    page = visit.page
    page.get_by_role("tab", name="Upload a file").click()
    data = hostile.hostile_table().to_csv(index=False).encode()
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        {"name": hostile.FILE_NAME, "mimeType": "text/csv", "buffer": data})
    expect(page.get_by_text("160 rows × 4 columns").first).to_be_visible()
    choose(page, "Protected attribute(s)", hostile.GROUP)
    for tab in ("Columns", "Types & labels", "Encoding", "Rows"):
        page.get_by_role("tab", name=tab).click()
        assert outside_references(page) == []
    nav(page, "Model")
    choose(page, "Fairness notions", "Statistical parity")
    assert outside_references(page) == []
    for depth in (2, 1):
        if depth == 1:
            nav(page, "Model")
            slide(page, "Maximum depth", "1", "ArrowLeft")
        solve_and_wait(page)
        assert outside_references(page) == []
    nav(page, "Tree")
    page.get_by_text("Protected groups in each box").click()
    expect(page.locator(TREE_NODE).first).to_be_visible()
    assert outside_references(page) == []
    nav(page, "Fairness & performance")
    for tab in ("Performance", "Confusion matrices", "Cost of fairness", "Groups"):
        page.get_by_role("tab", name=tab).click()
        assert outside_references(page) == []
    nav(page, "Runs")
    box = page.get_by_role("combobox", name="Select one run to open, two to compare, or runs to share or delete")
    for _ in range(2):
        box.click()
        box.press("ArrowDown")
        box.press("Enter")
        box.press("Escape")
    page.get_by_text("Only what differs").click()
    expect(page.locator(TREE_NODE).nth(1)).to_be_visible()
    assert outside_references(page) == []
    assert visit.outside_requests() == []
    assert any(u.startswith(visit.url) for u in visit.requests)  # the recorder saw the page's own traffic


# -- 7. four users solving, a fifth loads a page ---------------------------------------------------------


@pytest.fixture(scope="module")
def busy_server(tmp_path_factory):
    """A server that runs four solves at once (STRONGTREE_MAX_SOLVES=4) on this machine's cores."""
    started = Server(tmp_path_factory.mktemp("busy"), STRONGTREE_MAX_SOLVES="4")
    yield started
    started.close()


#: The scheduling priority of the four solving users' browser (Unix ``nice``), as the solve workers'.
OTHER_USERS_NICENESS = 19


class OthersBrowser:
    """A second Chromium for the four users who solve, which can be put at low priority.

    Their browsers would run on their own machines; here they share two cores with the server and
    with the browser being measured, and redrawing four live charts took that browser's CPU (its
    scripts parsed in 2.8 s instead of 1.0 s). Chromium sets its processes' priorities itself, so
    :meth:`lower` sets every thread's once the pages are open. They still poll the server at their
    pace, so the server's load is the same, but the measured page is parsed first.
    """

    def __init__(self, browser, folder: Path) -> None:
        launcher, self._pid_file = folder / "chromium", folder / "pid"
        launcher.write_text(f'#!/bin/sh\necho $$ > {self._pid_file}\nexec {CHROMIUM} "$@"\n')
        launcher.chmod(0o755)
        self.browser = browser.browser_type.launch(executable_path=str(launcher), args=CHROMIUM_ARGS)

    def lower(self) -> int:
        """Put every thread of this browser at :data:`OTHER_USERS_NICENESS`; return how many."""
        import psutil

        root = psutil.Process(int(self._pid_file.read_text()))
        lowered = 0
        for process in [root, *root.children(recursive=True)]:
            for thread in process.threads():
                try:
                    os.setpriority(os.PRIO_PROCESS, thread.id, OTHER_USERS_NICENESS)
                    lowered += 1
                except ProcessLookupError:  # a thread that ended meanwhile
                    pass
        return lowered


@pytest.fixture(scope="module")
def others_browser(browser, tmp_path_factory):
    others = OthersBrowser(browser, tmp_path_factory.mktemp("others"))
    yield others
    others.browser.close()


def first_page_seconds(browser, url: str) -> tuple[float, "Visit"]:
    """Seconds from asking for the app to its first page being usable, in a new session."""
    session = Visit(browser, url)
    asked = time.monotonic()
    session.page.goto(url)
    expect(session.page.get_by_role("button", name="Use this table")).to_be_visible(timeout=60_000)
    took = time.monotonic() - asked
    timing = session.page.evaluate("(() => { const t = performance.getEntriesByType('navigation')[0]; "
                                   "return [t.responseEnd, t.domContentLoadedEventEnd, t.loadEventEnd]; })()")
    print(f"  first page: HTML {timing[0] / 1000:.2f} s, scripts parsed {timing[1] / 1000:.2f} s, "
          f"loaded {timing[2] / 1000:.2f} s, usable {took:.2f} s")
    return took, session


@pytest.mark.timing
@pytest.mark.soak  # a minute of four solves at once: a load test (python -m pytest -m soak)
def test_four_users_solving_while_a_fifth_loads_a_page(busy_server, browser, others_browser):
    for _ in range(2):  # the first visit imports the app's modules into the server: not measured
        idle, first = first_page_seconds(browser, busy_server.url)  # then, for comparison: nobody solving
        first.close()
    solvers = [Visit(others_browser.browser, busy_server.url) for _ in range(4)]
    newcomer = None
    try:
        for session in solvers:  # each: the hiring table, FlowOCT at depth 4 for up to 300 s
            page = session.page
            page.goto(busy_server.url)
            page.get_by_role("button", name="Use this table").click()
            expect(page.get_by_role("heading", name="Hiring (teaching data with planted bias)")).to_be_visible()
            long_solve_settings(page)
            nav(page, "Solve")
            page.get_by_role("button", name="Solve", exact=True).click()
            expect(page.get_by_role("button", name="Stop")).to_be_enabled()
        for session in solvers:  # every worker has started (their imports share the cores) and solves
            expect(session.page.locator('[data-testid="stSidebar"]').get_by_text("Solving")).to_be_visible(
                timeout=120_000)
        lowered = others_browser.lower()
        cpu_before, wall_before = busy_server.cpu_seconds(), time.monotonic()
        time.sleep(5.0)  # four sessions polling their solves
        server_share = (busy_server.cpu_seconds() - cpu_before) / (time.monotonic() - wall_before)

        load, newcomer = first_page_seconds(browser, busy_server.url)
        asked = time.monotonic()
        nav(newcomer.page, "Runs")
        second = time.monotonic() - asked
        print(f"4 solving: server CPU {server_share:.0%} of a core while polling; a fifth session's first page "
              f"in {load:.2f} s (nobody solving: {idle:.2f} s), its next page in {second:.2f} s; "
              f"{lowered} threads of their browser at nice {OTHER_USERS_NICENESS}")
        assert lowered > 0
        for session in solvers:  # still solving while the fifth loaded: the load was measured under load
            assert session.page.get_by_role("button", name="Stop").is_enabled()
        assert load < PAGE_LOAD_LIMIT
        stopped = time.monotonic()
        for number, session in enumerate(solvers, 1):
            stop = session.page.get_by_role("button", name="Stop")
            stop.click()
            # Taken by the server: the button is off until the stopped tree's banner (then the comparison
            # solve, a phase of its own, may be stopped in turn).
            banner = session.page.locator('[data-testid="stAlertContentSuccess"], [data-testid="stAlertContentInfo"], '
                                          '[data-testid="stAlertContentWarning"]').filter(has_text="best tree")
            taken = time.monotonic() + 30

            def stop_taken() -> bool:  # off, or gone with the banner that replaced it
                if banner.count() > 0:
                    return True
                try:
                    return stop.is_disabled(timeout=1_000)
                except PlaywrightTimeout:  # not on the page in this second
                    return banner.count() > 0

            while not stop_taken() and time.monotonic() < taken:
                session.page.wait_for_timeout(100)
            assert stop_taken(), f"solve {number}: Stop not taken in 30 s\n{busy_server.state()}"
        print(f"  Stop taken for the four sessions in {time.monotonic() - stopped:.1f} s")
        for number, session in enumerate(solvers, 1):
            # Four stopped solves then finish their comparison trees and are measured and stored
            # together on two cores: seen once in ten runs to take longer than 60 s.
            try:
                outcome = wait_for_outcome(session.page, 120_000).inner_text()
            except AssertionError as err:  # say what the server and its workers were doing
                raise AssertionError(f"solve {number} had no outcome 120 s after Stop\n{busy_server.state()}") from err
            print(f"  solve {number}: outcome {time.monotonic() - stopped:.1f} s after Stop")
            assert outcome.startswith(("Stopped (not proven)", "Proven optimal", "Optimal over kept thresholds")), outcome
    finally:
        for session in solvers + ([newcomer] if newcomer else []):
            session.close()


# -- 8. the Learn page: Theorem 1 with the defaults, the root LP drawn ---------------------------------------


#: The least difference, in % of the rows, the default preset must show between the LP bounds.
VISIBLY_TIGHTER = 2.0


def test_compare_with_the_defaults_shows_theorem_1_and_its_table_reads_at_both_sizes(visit):
    page = visit.page
    nav(page, "Learn")
    expect(page.get_by_text("Preset: FlowOCT's relaxation is tighter.", exact=False)).to_be_visible()
    page.get_by_role("button", name="Compare", exact=True).click()
    # Live: the run that is going, then the table of every formulation side by side.
    expect(page.get_by_text("Solving", exact=True).first).to_be_visible(timeout=30_000)
    table = page.locator('[data-testid="stTable"]').filter(has_text="LP bound")
    expect(table).to_be_visible(timeout=60_000)
    for name in ("OCT", "BinOCT", "FlowOCT", "BendersOCT", "Exact search", "Local search"):
        expect(table.get_by_role("cell", name=name, exact=True)).to_be_visible()
    expect(table.get_by_role("cell", name="Proven optimal", exact=True).first).to_be_visible()
    expect(table.get_by_role("cell", name="Heuristic (no proof)", exact=True)).to_be_visible()
    theorem = page.get_by_text("Theorem 1 on this table", exact=False)
    expect(theorem).to_be_visible()
    sentence = theorem.inner_text()
    for name in ("OCT", "BinOCT"):
        found = re.search(rf"tighter than {name}'s \(([\d.,]+)\) by ([\d.,]+) \(([\d.]+) ?% of the 200 rows\)", sentence)
        assert found, sentence
        assert float(found.group(3)) >= VISIBLY_TIGHTER, sentence
    # The root LP drawn: the split values side by side, one row's flow, OCT's big-M rows, in words.
    expect(page.get_by_text("The root LP, drawn", exact=True)).to_be_visible()
    expect(page.get_by_text("FlowOCT: the row's flow, source to sink", exact=True)).to_be_visible()
    expect(page.get_by_text("That is Theorem 1 at work", exact=False)).to_be_visible()
    expect(page.get_by_role("button", name="Table as CSV")).to_be_visible()
    expect(page.get_by_role("button", name="Table as LaTeX")).to_be_visible()
    settle(page)
    for viewport in (DESKTOP, PROJECTOR):
        check_page(page, "learn", viewport)
    assert visit.outside_requests() == []
