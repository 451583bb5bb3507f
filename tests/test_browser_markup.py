"""Hostile values in every widget, in a real browser: nothing is fetched, nothing is markup.

A Parquet file (it can carry NUL bytes and line breaks) whose file name, column names,
category levels, group values and class labels hold quotes, ``--``, ``;``, line
breaks, backslashes, NUL, Markdown images and links and HTML whose addresses point at
a server this test runs on 127.0.0.1 (the server's own host, which the other browser
tests' outside-request check would let pass).  Every page is visited, Types & labels
with the hostile column open (its levels are the text boxes' labels), a solve runs:
the beacon must receive no request, no image or link may point at it, and a level
shows as typed.
"""

from __future__ import annotations

import http.server
import io
import threading

import hostile
import pytest
from test_browser import (  # it skips this module where there is no browser
    CHROMIUM,
    CHROMIUM_ARGS,
    DESKTOP,
    Server,
    Visit,
    expect,
    nav,
    settle,
    shoot,
    solve_and_wait,
    sync_playwright,
)

pytestmark = pytest.mark.slow


class Beacon:
    """An HTTP server on 127.0.0.1 that records every request it gets."""

    def __init__(self) -> None:
        hits = self.hits = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the standard library's name
                hits.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def beacon():
    started = Beacon()
    yield started
    started.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    started = Server(tmp_path_factory.mktemp("markup_server"))
    yield started.url
    started.close()


def pointing_at(page, url: str) -> list[str]:
    """Images, links, sources and styles in the page that point at ``url``."""
    return page.evaluate(
        """(url) => [...document.querySelectorAll('[src], [href], [srcset], [style], [poster], [data]')]
            .flatMap(e => ['src', 'href', 'srcset', 'style', 'poster', 'data']
              .map(a => e.getAttribute(a)).filter(v => v && v.includes(url))
              .map(v => e.tagName + ' ' + v.slice(0, 120)))""", url)


def test_hostile_values_in_every_widget_fetch_nothing(server, beacon):
    values = hostile.widget_values(beacon.url)
    frame = hostile.widget_frame(values)
    data = io.BytesIO()
    frame.to_parquet(data)
    name = values["name"].replace("\n", " ") + ".parquet"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        expect.set_options(timeout=30_000)
        visit = Visit(browser, server, DESKTOP)
        page = visit.page
        try:
            page.goto(server)
            page.get_by_role("tab", name="Upload a file").click()
            page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
                {"name": name, "mimeType": "application/octet-stream", "buffer": data.getvalue()})
            expect(page.get_by_text("120 rows").first).to_be_visible()
            page.get_by_role("tab", name="Types & labels").click()
            settle(page)
            # The first column's levels label the text boxes, shown as typed (a line break as a space,
            # NUL as U+FFFD; word joiners keep "--" two hyphens and "http:" no link).
            expect(page.locator('[data-testid="stTextInput"]').first).to_be_visible()
            wanted = [" ".join(level.splitlines()).replace("\x00", "\ufffd") for level in values["levels"]]
            for _ in range(40):  # a rerun may still be drawing the boxes (seen once on a busy machine)
                labels = [t.replace("\u2060", "").strip() for t in
                          page.locator('[data-testid="stTextInput"] [data-testid="stWidgetLabel"]').all_inner_texts()]
                if all(w in labels for w in wanted):
                    break
                page.wait_for_timeout(250)
            for level in values["levels"]:
                assert " ".join(level.splitlines()).replace("\x00", "\ufffd") in labels, (level, labels)
            shoot(page, "hostile_labels_1440x900")
            assert pointing_at(page, beacon.url) == []
            protected = page.get_by_role("combobox", name="Protected attribute(s)")
            protected.click()
            page.get_by_role("option").filter(has_text="group").first.click()
            page.keyboard.press("Escape")
            settle(page)
            nav(page, "Model")
            page.get_by_role("combobox", name="Fairness notions").click()
            page.get_by_role("option", name="Statistical parity", exact=True).click()
            page.keyboard.press("Escape")
            solve_and_wait(page)
            for title in ("Tree", "Fairness & performance", "Trade-offs", "Learn", "Runs"):
                nav(page, title)
                assert pointing_at(page, beacon.url) == [], title
            box = page.get_by_role("combobox", name="Select one run to open, two to compare, or runs to share or delete")
            box.click()
            page.get_by_role("option").first.click()
            page.keyboard.press("Escape")
            settle(page)
            nav(page, "Learn")
            page.get_by_role("combobox", name="Table").click()
            page.get_by_role("option").filter(has_text="The loaded table").click()
            settle(page)
            page.wait_for_timeout(1000)  # anything fetched late would arrive now
            assert pointing_at(page, beacon.url) == []
            assert beacon.hits == []
            assert not [u for u in visit.requests if u.startswith(beacon.url)]
        except Exception:
            shoot(page, "failure_hostile_widgets")
            raise
        finally:
            visit.close()
            browser.close()
