"""The dashboard's entrances in a real browser: every page opened by its address as the
first request of a fresh server while both cores are busy, and a reload that brings the
work back (tests/test_browser_reload.py).

Each of the 8 page addresses gets its own fresh server per round; the first request the
server sees (after its health check) is the page's address, from a browser with no
session.  Two processes burning a core each run for the whole test.  The page must show
its own heading, the sidebar must list the product's page titles (not the script files'
names), nothing may read "This app has encountered an error", and a page that needs a
table must say what to do.  One round runs by default (8 fresh servers, about a
minute and a half); ``STRONGTREE_ENTRANCE_ROUNDS=3`` runs the 8 x 3 measurement
reported in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest
from test_browser import CHROMIUM, CHROMIUM_ARGS, DESKTOP, Server, Visit, expect, shoot, sync_playwright

pytestmark = pytest.mark.slow

#: Page address -> (its title in the navigation, a sentence it shows before a table is chosen).
PAGES = {
    "data": ("Data", "Choose a built-in table or upload one to begin"),
    "model": ("Model", "No table yet: choose one on the Data page"),
    "solve": ("Solve", "Choose a table on the Data page first"),
    "tree": ("Tree", "No tree yet: solve one on the Solve page"),
    "fairness": ("Fairness & performance", "No tree yet: solve one on the Solve page"),
    "tradeoffs": ("Trade-offs", "Choose a table with a protected attribute on the Data page first"),
    "runs": ("Runs", "No runs yet"),
    "learn": ("Learn", "No table yet: choose one on the Data page"),
}
TITLES = [title for title, _ in PAGES.values()]
ROUNDS = int(os.environ.get("STRONGTREE_ENTRANCE_ROUNDS", "1"))
ERROR_TEXT = "This app has encountered an error"


@contextmanager
def busy_cores(n: int = 2):
    """``n`` processes that each keep a core busy until the block ends; yields their CPU shares."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
               for _ in range(n)]
    started = time.monotonic()
    shares: list[float] = []
    try:
        yield shares
    finally:
        wall = time.monotonic() - started
        for burner in burners:
            times = psutil.Process(burner.pid).cpu_times()
            shares.append((times.user + times.system) / wall)
            os.killpg(burner.pid, signal.SIGKILL)
            burner.wait(10)


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        expect.set_options(timeout=60_000)
        yield launched
        launched.close()


def sidebar_titles(page) -> list[str]:
    links = page.locator('.st-key-page_list a')
    expect(links.first).to_be_visible()
    # Each link reads "<icon name>\n<title>": the icon is a ligature of the icon font.
    return [text.strip().splitlines()[-1].strip() for text in links.all_inner_texts()]


def open_first(browser, folder: Path, address: str) -> dict:
    """A fresh server whose first page request is ``/<address>``: what the browser saw."""
    folder.mkdir(parents=True, exist_ok=True)
    server = Server(folder)
    visit = Visit(browser, server.url, DESKTOP)
    title, hint = PAGES[address]
    try:
        asked = time.monotonic()
        visit.page.goto(f"{server.url}/{address}")
        page = visit.page
        heading = page.get_by_role("heading", name=title, exact=True).first
        expect(heading).to_be_visible()
        seconds = time.monotonic() - asked
        page.wait_for_timeout(500)  # a late error would replace the page
        try:
            expect(page.get_by_text(hint, exact=False).first).to_be_visible(timeout=15_000)
            says_what_to_do = True
        except AssertionError:
            says_what_to_do = False
        seen = {
            "address": address,
            "seconds": seconds,
            "titles": sidebar_titles(page),
            "errors": page.get_by_text(ERROR_TEXT).count() + page.locator('[data-testid="stException"]').count(),
            "says_what_to_do": says_what_to_do,
            "url": page.url,
            "outside": visit.outside_requests(),  # works offline: every file from this server
        }
        if seen["errors"] or seen["titles"] != TITLES or not says_what_to_do:
            shoot(page, f"failure_entrance_{address}")
        return seen
    finally:
        visit.close()
        server.close()


@pytest.mark.parametrize("address", list(PAGES))
def test_every_page_opens_by_its_address_on_a_fresh_busy_server(address, browser, tmp_path):
    with busy_cores(2) as shares:
        seen = [open_first(browser, tmp_path / f"round{i}", address) for i in range(ROUNDS)]
        load = os.getloadavg()[0]
    for one in seen:
        print(f"/{address}: heading in {one['seconds']:.1f} s, errors {one['errors']}, burners at "
              f"{', '.join(f'{s:.0%}' for s in shares)} of a core, load average {load:.1f}")
        assert one["errors"] == 0, one
        assert one["titles"] == TITLES, one
        assert one["says_what_to_do"], one
        assert one["outside"] == [], one
        assert one["url"].rstrip("/").endswith(f"/{address}") or address == "data", one
    # The burners ran throughout (on a machine shared with other work they get less than a core each;
    # the load average printed above says how busy the two cores were).
    assert all(share > 0.05 for share in shares), shares
