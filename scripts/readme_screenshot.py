"""The README's picture of the Solve page, taken again from the app as it is now.

    python scripts/readme_screenshot.py

starts ``streamlit run app.py`` on a free port, clicks *Live demo*, waits for the banner of its
proof and for the run to end, opens the *Best tree* tab and saves the window at 1440x900 to
docs/screenshots/solve_tree_1440x900.png (a palette PNG, as the browser tests store theirs).
The words in the picture are the app's: whatever the banner says is what the README shows.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.demo_timing import _Server  # noqa: E402  (a fresh server with its own run history)

OUT = ROOT / "docs" / "screenshots" / "solve_tree_1440x900.png"
BANNER = ('[data-testid="stAlertContentSuccess"], [data-testid="stAlertContentInfo"], '
          '[data-testid="stAlertContentWarning"]')


def main() -> None:
    from playwright.sync_api import expect, sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        server = _Server(Path(folder))
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
                page = browser.new_page(viewport={"width": 1440, "height": 900})
                page.goto(server.url)
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
            server.close()
    from PIL import Image

    with Image.open(OUT) as image:
        image.convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(OUT, optimize=True)


if __name__ == "__main__":
    main()
