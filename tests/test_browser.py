"""The dashboard in a real browser: upload, roles, fairness bound, a live solve,
Stop, the drawn tree, the measured gap, a download; a screenshot of every page.

Needs Debian's Chromium and the playwright package (no browser download);
skipped with the reason otherwise.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import hostile
import pytest

from studio.demo_data import make_hiring

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DELTA = 0.02
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``streamlit run app.py`` in its own process group, output to a log file."""
    folder = tmp_path_factory.mktemp("server")
    port = free_port()
    log = open(folder / "streamlit.log", "wb")
    env = dict(os.environ, STRONGTREE_RUNS_DB=str(folder / "runs.sqlite3"))
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
         "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.read().decode().strip() == "ok":
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("streamlit did not start:\n" + (folder / "streamlit.log").read_text()[-3000:])
            time.sleep(0.3)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
        log.close()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        expect.set_options(timeout=30_000)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def page(server, browser):
    context = browser.new_context(viewport={"width": 1440, "height": 900}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(server)
    yield page
    context.close()


def nav(page, title: str) -> None:
    """Go to a page through the sidebar (a reload would start a new session)."""
    page.locator('[data-testid="stSidebarNav"] a').filter(has_text=title).first.click()
    expect(page.get_by_role("heading", name=title, exact=True).first).to_be_visible()


def shoot(page, name: str) -> None:
    print(f"{time.monotonic() - T0:6.1f} s  {name}")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(400)  # let the last rerun paint
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def choose(page, label: str, option: str) -> None:
    """Pick ``option`` in the select or multiselect labelled ``label`` with the keyboard
    (a click on a list that a rerun just closed would land on the widget below it)."""
    box = page.get_by_role("combobox", name=label, exact=True)
    box.fill(option)
    expect(page.get_by_role("option", name=option, exact=True)).to_be_visible()
    box.press("ArrowDown")
    box.press("Enter")
    box.press("Escape")


def metric_value(page, label: str) -> str:
    card = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return card.locator('[data-testid="stMetricValue"]').inner_text().strip()


def test_upload_solve_stop_tree_gap_download(page, tmp_path):
    global T0
    started = T0 = time.monotonic()
    try:
        scenario(page, tmp_path)
    except BaseException:
        shoot(page, "failure")  # to see what the page showed
        raise
    assert time.monotonic() - started < 120


def scenario(page, tmp_path) -> None:
    csv_path = tmp_path / "hiring.csv"
    make_hiring(800, seed=3).to_csv(csv_path, index=False)

    # Data: upload, target and protected column.
    expect(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
    page.get_by_role("tab", name="Upload a file").click()
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(csv_path))
    expect(page.get_by_role("heading", name="hiring.csv")).to_be_visible()
    expect(page.get_by_role("combobox", name="Target (what the tree predicts)")).to_have_value("hired")
    choose(page, "Protected attribute(s)", "gender")
    choose(page, "Legitimate factor(s)", "education")
    expect(page.locator('[data-testid="stSidebar"]').get_by_text("protected: gender")).to_be_visible()
    expect(page.get_by_text("600 training rows · 200 test rows")).to_be_visible()
    page.get_by_role("tab", name="Encoding").click()
    shoot(page, "1_data")

    # Model: FlowOCT at depth 4 with statistical parity at a tight delta (its proof takes longer
    # than the test watches it), a long limit.
    nav(page, "Model")
    choose(page, "Formulation", "FlowOCT")
    depth = page.locator('[data-testid="stSlider"]').filter(has_text="Maximum depth").get_by_role("slider")
    for level in (3, 4):
        depth.focus()
        depth.press("ArrowRight")
        expect(depth).to_have_attribute("aria-valuetext", str(level))
        page.wait_for_timeout(300)
    choose(page, "Fairness notions", "Statistical parity")
    thumb = page.locator('[data-testid="stSlider"]').filter(has_text="Largest allowed gap").get_by_role("slider")
    value = 0.05
    while round(value, 2) != DELTA:  # one step at a time: each step is a rerun
        up = DELTA > value
        value += 0.01 if up else -0.01
        thumb.focus()
        thumb.press("ArrowRight" if up else "ArrowLeft")
        expect(thumb).to_have_attribute("aria-valuetext", f"{value:.2f}")
        page.wait_for_timeout(300)
    limit = page.get_by_role("spinbutton", name="Time limit (seconds)")
    limit.fill("300")
    limit.press("Enter")
    expect(page.get_by_text(f"Statistical parity (δ = {DELTA:.2f})")).to_be_visible()
    shoot(page, "2_model")

    # Solve: the first tree and the live chart appear, the chart moves, Stop.
    nav(page, "Solve")
    expect(page.get_by_text("600 training rows · 200 test rows")).to_be_visible()
    page.get_by_role("button", name="Solve").click()
    expect(page.locator('[data-testid="stGraphVizChart"] svg g.node').first).to_be_visible()
    expect(page.locator(".js-plotly-plot .scatterlayer .point").first).to_be_attached()
    chart_end = "(() => { const p = document.querySelector('.js-plotly-plot'); " \
        "return p && p._fullLayout ? p._fullLayout.xaxis.range[1] : null; })()"
    page.wait_for_function(f"{chart_end} !== null")
    first_end = page.evaluate(chart_end) or 0
    first_elapsed = metric_value(page, "Elapsed")
    page.wait_for_function(f"{chart_end} > {first_end}")  # the chart moves on while solving
    elapsed = page.locator('[data-testid="stMetric"]').filter(has_text="Elapsed").first
    expect(elapsed.locator('[data-testid="stMetricValue"]')).not_to_have_text(first_elapsed)
    shoot(page, "3_solve_running")
    stop = page.get_by_role("button", name="Stop")
    try:
        stop.click(timeout=5_000)
    except PlaywrightTimeout:  # the solve was proven optimal before Stop could be pressed
        expect(stop).to_be_disabled()
    expect(page.locator('[data-testid="stAlertContentSuccess"]').first).to_contain_text("Tree", timeout=60_000)
    expect(page.get_by_text("Explore the tree")).to_be_visible()
    shoot(page, "4_solve_done")

    # Tree: drawn as SVG by the browser; the JSON download is the tree.
    nav(page, "Tree")
    nodes = page.locator('[data-testid="stGraphVizChart"] svg g.node')
    expect(nodes.first).to_be_visible()
    assert nodes.count() >= 1
    shoot(page, "5_tree")
    with page.expect_download() as download:
        page.get_by_role("button", name="JSON").click()
    tree = json.loads(Path(download.value.path()).read_text())
    assert tree["target"] == "hired" and tree["record"]["status"] in ("interrupted", "optimal")

    # Fairness: the measured training gap is within delta.
    nav(page, "Fairness & performance")
    value = metric_value(page, "Statistical parity · training rows")
    assert float(value) <= DELTA + 1e-9
    expect(page.get_by_text(f"within δ = {DELTA:.2f}").first).to_be_visible()
    shoot(page, "6_fairness")

    nav(page, "Runs")
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()
    shoot(page, "7_runs")


def test_hostile_names_fetch_nothing_from_outside(server, browser):
    """A table whose names and values are Markdown and HTML pointing at an outside
    host: every page is visited (two solves, their tree, fairness and comparison) and
    no request leaves the server's host; no image or link points outside."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        hostile_pages(page, server)
    except BaseException:
        shoot(page, "hostile_failure")
        raise
    finally:
        context.close()
    outside = sorted({u for u in requests if urllib.parse.urlsplit(u).hostname not in LOCAL_HOSTS
                      and not u.startswith(("data:", "blob:"))})
    assert outside == []
    assert any(u.startswith(server) for u in requests)  # the recorder saw the page's own traffic


LOCAL_HOSTS = {"127.0.0.1", "localhost"}


def outside_references(page) -> list[str]:
    """Images, links and sources on the page that point to another host."""
    urls = page.evaluate(
        "Array.from(document.querySelectorAll('img[src], a[href], [srcset], image, use, iframe[src]'))"
        ".map(e => e.getAttribute('src') || e.getAttribute('href') || e.getAttribute('srcset')"
        " || e.getAttribute('xlink:href') || '')"
    )
    return [u for u in urls if u and urllib.parse.urlsplit(urllib.parse.urljoin(page.url, u)).hostname
            not in LOCAL_HOSTS and not u.startswith(("data:", "blob:", "#"))]


def hostile_pages(page, server: str) -> None:
    page.goto(server)
    expect(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
    page.get_by_role("tab", name="Upload a file").click()
    data = hostile.hostile_table().to_csv(index=False).encode()
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        {"name": hostile.FILE_NAME, "mimeType": "text/csv", "buffer": data})
    expect(page.get_by_text("160 rows × 4 columns").first).to_be_visible()
    choose(page, "Protected attribute(s)", hostile.GROUP)
    for tab in ("Columns", "Encoding", "Rows"):
        page.get_by_role("tab", name=tab).click()
        assert outside_references(page) == []
    shoot(page, "hostile_1_data")

    nav(page, "Model")
    choose(page, "Fairness notions", "Statistical parity")
    assert outside_references(page) == []
    for depth, name in ((2, "hostile_3_solve"), (1, None)):
        if depth == 1:
            nav(page, "Model")
            thumb = page.locator('[data-testid="stSlider"]').filter(has_text="Maximum depth").get_by_role("slider")
            thumb.focus()
            thumb.press("ArrowLeft")
            expect(thumb).to_have_attribute("aria-valuetext", "1")
            page.wait_for_timeout(300)
        nav(page, "Solve")
        button = page.get_by_role("button", name="Solve")
        button.click()
        expect(button).to_be_disabled()  # this solve runs (the last one's outcome is gone) ...
        expect(button).to_be_enabled(timeout=90_000)  # ... and has ended
        expect(page.get_by_text("Explore the tree")).to_be_visible()
        assert outside_references(page) == []
        if name:
            shoot(page, name)

    nav(page, "Tree")
    page.get_by_text("Show protected groups in each node").click()
    expect(page.locator('[data-testid="stGraphVizChart"] svg g.node').first).to_be_visible()
    assert outside_references(page) == []
    shoot(page, "hostile_4_tree")

    nav(page, "Fairness & performance")
    for tab in ("Groups", "Confusion matrices", "Comparison", "Performance"):
        page.get_by_role("tab", name=tab).click()
        assert outside_references(page) == []
    page.get_by_role("tab", name="Groups").click()
    shoot(page, "hostile_5_fairness")

    nav(page, "Runs")
    box = page.get_by_role("combobox", name="Select one run to open, two to compare, or runs to share or delete")
    for _ in range(2):
        box.click()
        box.press("ArrowDown")
        box.press("Enter")
        box.press("Escape")
    page.get_by_text("Only what differs").click()
    expect(page.locator('[data-testid="stTable"]').first).to_be_visible()
    expect(page.locator('[data-testid="stGraphVizChart"] svg g.node').nth(1)).to_be_visible()
    assert outside_references(page) == []
    shoot(page, "hostile_6_runs")
