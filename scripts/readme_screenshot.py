"""The README's picture of the Solve page, taken again from the app as it is now.

    python scripts/readme_screenshot.py

starts ``streamlit run app.py`` on a free port, clicks *Live demo*, waits for the banner of its
proof and for the run to end, opens the *Best tree* tab and saves the window at 1440x900 to
docs/screenshots/solve_tree_1440x900.png (a palette PNG, as the browser tests store theirs).
The words in the picture are the app's: whatever the banner says is what the README shows.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots" / "solve_tree_1440x900.png"
BANNER = ('[data-testid="stAlertContentSuccess"], [data-testid="stAlertContentInfo"], '
          '[data-testid="stAlertContentWarning"]')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(url: str, process: subprocess.Popen, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().decode().strip() == "ok":
                    return
        except OSError:
            time.sleep(0.3)
    raise SystemExit("the app did not start")


def main() -> None:
    from playwright.sync_api import expect, sync_playwright

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, STRONGTREE_RUNS_DB=str(Path(folder) / "runs.sqlite3"))
        server = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            _wait_healthy(url, server)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
                page = browser.new_page(viewport={"width": 1440, "height": 900})
                page.goto(url)
                expect(page.get_by_role("heading", name="Data", exact=True)).to_be_visible(timeout=60_000)
                page.get_by_role("button", name="Live demo").click()
                banner = page.locator(BANNER).filter(has_text="best tree").first
                expect(banner).to_be_visible(timeout=180_000)
                # then the comparison tree without the constraints, and the run stored: the Solve button is back
                expect(page.get_by_text("Explore the tree").first).to_be_visible(timeout=180_000)
                expect(page.get_by_role("button", name="Solve", exact=True)).to_be_enabled(timeout=60_000)
                page.get_by_role("tab", name="Best tree").click()
                page.wait_for_timeout(1500)
                page.mouse.move(0, 0)
                OUT.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(OUT))
                print(f"{OUT.relative_to(ROOT)}: {page.locator(BANNER).first.inner_text()[:200]!r}")
                browser.close()
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
    from PIL import Image

    with Image.open(OUT) as image:
        image.convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(OUT, optimize=True)


if __name__ == "__main__":
    main()
