"""Take the README's screenshots of the web explorer: each view at 1280x800, in headless
Chromium, on the bundled data (``cachegraph serve`` with no flags: seeds/).

    python -m bench.screenshots            # into docs/screenshots/
"""

from __future__ import annotations

import sys
from pathlib import Path

from cachegraph.sources import default_lockfile
from tests.browser import chromium, serving

ROOT = Path(__file__).resolve().parents[1]

OUT = ROOT / "docs" / "screenshots"
#: each view, at an address that shows its parts on the bundled data
SHOWN = {
    "home": "/?tag=develop",
    "search": "/ui/search?q=keras%20ubuntu24.04",
    "packages": "/ui/packages",
    "package": "/ui/package/py-keras",
    "spec": "/ui/spec/3uebtou",
    "diff": "/ui/diff?from=test&to=develop",
    "coverage": "/ui/coverage",
    "status": "/ui/status",
}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with serving() as origin, chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        for name, path in SHOWN.items():
            page.goto(origin + path)
            page.locator("html[data-painted]").wait_for(timeout=30_000)
            if name == "coverage":
                page.get_by_label("spack.lock file").set_input_files(str(default_lockfile()))
                page.get_by_test_id("coverage-summary").wait_for(timeout=30_000)
            page.wait_for_timeout(1500)  # charts, lookalikes, neighbours
            page.screenshot(path=str(OUT / f"{name}.png"))
            print(OUT / f"{name}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
