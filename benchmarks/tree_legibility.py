"""How a deep tree reads on the Tree page: the smallest text on screen and the boxes in view, for
trees of depth 3, 4 and 5, at a projector's 1280x720 and a laptop's 1440x900, in a real browser.

For each table and depth the script starts nothing but the dashboard (``streamlit run app.py``,
a fresh server with its own run history), opens it in headless Chromium, loads the table (the
built-in hiring table, or a CSV of the shared data uploaded), sets the depth on the Model page,
solves on the Solve page and opens the Tree page.  There it measures, at each window size,
the tree as the page first shows it (``default``), then as the user may set it: every level
open at each size the page offers (``fit``, ``presentation``), and each number of levels open.

The columns:

``text px``
    the smallest text of the drawing as shown: each text's computed font size times the
    drawing's scale on screen (the measure of ``tests/test_browser.py``);
``boxes``
    the boxes drawn (a collapsed subtree is one box) and, after the slash, the boxes of the
    whole tree;
``in panel``
    boxes wholly inside the panel's frame (the rest lie beyond the panel's scroll);
``on screen``
    boxes wholly inside the window with the page scrolled so that the panel's top is at the
    window's top (what the user sees once the tree is reached; 0 when none is);
``first screen``
    boxes wholly inside the window as the page opens, before any scroll.

``--before PATH`` measures another checkout the same way (e.g. ``git archive`` of the commit
before a change, unpacked in a folder), one after the other, so both meet the same machine.

    python -m benchmarks.tree_legibility
    python -m benchmarks.tree_legibility --depths 4 --before /tmp/before
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from benchmarks.demo_timing import _Server  # a fresh server with its own run history

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "datasets"
CHROMIUM = "/usr/bin/chromium"
WINDOWS = {"1280x720": {"width": 1280, "height": 720}, "1440x900": {"width": 1440, "height": 900}}
#: Tables: (name, CSV under the shared data or None for the built-in hiring table, target, time limit in s).
TABLES = {
    "hiring": (None, "hired", 60),
    "german": ("fairness/german/german.csv", "target", 30),
}
SIZE_WORDS = {"fit": "Fit the panel", "presentation": "Presentation"}

#: In the page: the first tree panel's drawing, measured (see the module's description).
MEASURE = """() => {
  const panel = [...document.querySelectorAll('[data-testid="stGraphVizChart"]')]
    .find(p => p.getBoundingClientRect().width && p.querySelector('svg g.node'));
  if (!panel) return null;
  const svg = panel.querySelector('svg');
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const texts = [...svg.querySelectorAll('g.node text, g.edge text')];
  const nodes = [...svg.querySelectorAll('g.node')];
  const inside = (b, f) => b.left >= f.left - 1 && b.right <= f.right + 1 && b.top >= f.top - 1 && b.bottom <= f.bottom + 1;
  const win = {left: 0, top: 0, right: innerWidth, bottom: innerHeight};
  const count = f => { const frame = panel.getBoundingClientRect();
    return nodes.filter(g => inside(g.getBoundingClientRect(), frame) && (!f || inside(g.getBoundingClientRect(), f))).length; };
  const firstScreen = count(win);
  const inPanel = count(null);
  panel.scrollIntoView({block: 'start', behavior: 'instant'});
  const onScreen = count(win);
  const collapsed = nodes.filter(g => g.textContent.includes('collapsed')).length;
  const panelBox = panel.getBoundingClientRect();
  return {smallest: Math.min(...texts.map(t => parseFloat(getComputedStyle(t).fontSize) * scale)),
          boxes: nodes.length, inPanel, onScreen, firstScreen, collapsed,
          panel: [Math.round(panelBox.width), Math.round(panelBox.height)],
          drawing: [Math.round(svg.getBoundingClientRect().width), Math.round(svg.getBoundingClientRect().height)]};
}"""


#: Scroll the page back to its top (the title in view).
TOP = "() => { const h = document.querySelector('h1'); if (h) h.scrollIntoView({block: 'end', behavior: 'instant'}); }"


def _settle(page) -> None:
    page.wait_for_timeout(300)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=60_000)
    page.wait_for_timeout(700)


def _nav(page, title: str) -> None:
    page.locator('.st-key-page_list a').filter(has_text=title).first.click()
    page.get_by_role("heading", name=title, exact=True).first.wait_for(timeout=60_000)
    _settle(page)


def _slide(page, label: str, target: str) -> None:
    """Move the slider labelled ``label`` one key press at a time until it reads ``target``."""
    thumb = page.locator('[data-testid="stSlider"]').filter(has_text=label).get_by_role("slider").first
    for _ in range(40):
        now = thumb.get_attribute("aria-valuetext")
        if now == target:
            _settle(page)
            return
        thumb.focus()
        thumb.press("ArrowRight" if float(now) < float(target) else "ArrowLeft")
        page.wait_for_timeout(300)
    raise RuntimeError(f"{label} never read {target}")


def _load(page, table: str) -> None:
    csv, target, limit = TABLES[table]
    if csv is None:
        page.get_by_role("button", name="Use this table").click()
        page.get_by_role("heading", name="Hiring (teaching data with planted bias)").wait_for(timeout=60_000)
    else:
        page.get_by_role("tab", name="Upload a file").click()
        page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(DATA / csv))
        page.get_by_role("heading", name=Path(csv).name).wait_for(timeout=60_000)
        box = page.get_by_role("combobox", name="Target (what the tree predicts)")
        if box.input_value() != target:
            raise RuntimeError(f"the target of {table} is not {target}")
    _settle(page)


def _solve(page, depth: int, limit: int) -> None:
    _nav(page, "Model")
    _slide(page, "Maximum depth", str(depth))
    box = page.get_by_role("spinbutton", name="Time limit (seconds)")
    box.fill(str(limit))
    box.press("Enter")
    _settle(page)
    _nav(page, "Solve")
    page.get_by_role("button", name="Solve", exact=True).click()
    page.get_by_text("Explore the tree").first.wait_for(timeout=(limit + 120) * 1000)
    _nav(page, "Tree")


def _measure(page, window: str) -> dict:
    page.set_viewport_size(WINDOWS[window])
    page.evaluate(TOP)
    page.wait_for_timeout(900)
    found = page.evaluate(MEASURE)
    page.evaluate(TOP)
    if found is None:
        raise RuntimeError("no tree on the Tree page")
    return found


def _levels_open(page) -> str:
    slider = page.locator('[data-testid="stSlider"]').filter(has_text="Levels of questions open").get_by_role("slider")
    return slider.first.get_attribute("aria-valuetext") if slider.count() else "—"


def _size(page, size: str) -> None:
    page.locator('[data-testid="stMain"]').get_by_text(SIZE_WORDS[size], exact=True).first.click()
    _settle(page)


def one_tree(browser, repo: Path, table: str, depth: int) -> list[dict]:
    """A fresh server, the table solved at ``depth``, and the Tree page measured in every view."""
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as folder:
        server = _Server(Path(folder), repo)
        try:
            context = browser.new_context(viewport=WINDOWS["1280x720"])
            page = context.new_page()
            page.set_default_timeout(60_000)
            page.goto(server.url)
            page.get_by_role("heading", name="Data", exact=True).wait_for()
            _load(page, table)
            _solve(page, depth, TABLES[table][2])

            def record(view: str, levels: str) -> None:
                for window in WINDOWS:
                    rows.append({"table": table, "depth": depth, "window": window, "view": view, "levels": levels,
                                 **_measure(page, window)})
                page.set_viewport_size(WINDOWS["1280x720"])
                _settle(page)

            record("default", _levels_open(page))
            for levels in range(1, depth + 1):
                _slide(page, "Levels of questions open", str(levels))
                for size in ("fit", "presentation"):
                    _size(page, size)
                    record(size, str(levels))
                _size(page, "fit")
            context.close()
        finally:
            server.close()
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depths", type=int, nargs="+", default=[3, 4, 5])
    parser.add_argument("--tables", nargs="+", default=list(TABLES), choices=list(TABLES))
    parser.add_argument("--before", type=Path, default=None, help="another checkout, measured the same way")
    args = parser.parse_args(argv)
    checkouts = [("this", REPO)] + ([("before", args.before.resolve())] if args.before else [])

    from playwright.sync_api import sync_playwright

    print(f"{'checkout':<8} {'table':<7} {'depth':>5} {'window':<9} {'view':<13} {'levels':>6} {'text px':>7} "
          f"{'boxes':>5} {'in panel':>8} {'on screen':>9} {'first screen':>12}  panel / drawing (px)", flush=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        for table in args.tables:
            for depth in args.depths:
                for label, repo in checkouts:
                    for row in one_tree(browser, repo, table, depth):
                        print(f"{label:<8} {table:<7} {depth:>5} {row['window']:<9} {row['view']:<13} "
                              f"{row['levels']:>6} {row['smallest']:7.1f} {row['boxes']:>5} {row['inPanel']:>8} "
                              f"{row['onScreen']:>9} {row['firstScreen']:>12}  {row['panel'][0]}x{row['panel'][1]} / "
                              f"{row['drawing'][0]}x{row['drawing'][1]}", flush=True)
        browser.close()


if __name__ == "__main__":
    main()
