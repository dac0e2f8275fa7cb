"""Screenshot a rendered report in headless Chromium, offline: REPORT_DIR [OUT.png].

Usage: ``.venv/bin/python scripts/screenshot_report.py reports/sample`` writes
``reports/sample/screenshot.png`` (the top of index.html, 1200 px wide). Uses Debian's
``/usr/bin/chromium`` (scripts/install-chromium.sh) through Playwright's ``executable_path``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--headless",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
]


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    report = Path(argv[0]).resolve()
    out = Path(argv[1]) if len(argv) > 1 else report / "screenshot.png"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 1600})
        page.route(
            "**/*",
            lambda r: r.continue_() if r.request.url.startswith(("file:", "data:")) else r.abort(),
        )
        page.goto((report / "index.html").as_uri(), wait_until="load")
        page.screenshot(path=str(out), full_page=False)
        browser.close()
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
