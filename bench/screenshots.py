"""Take the README's screenshots of the web explorer: each view at 1280x800, in headless
Chromium, on the seeds, ../shared/data's pages and ../shared/mirrors' build caches.

    python bench/screenshots.py            # into docs/screenshots/
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.app.test_ui import a_lockfile, views  # noqa: E402
from tests.browser import chromium, serving  # noqa: E402
from tests.conftest import SEEDS, SHARED_DATA, SHARED_MIRRORS  # noqa: E402
from tests.mirrors import serve_arguments  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
#: what each view shows in its picture: a constraint with facets, a diff beside the DAG...
SHOWN = {
    "search": "/ui/search?q=hipblas%20%25gcc",
    "diff": "/ui/diff?from=v0.21.0&to=develop",
}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    data = ["--data", str(SEEDS), "--data", str(SHARED_DATA), *serve_arguments(SHARED_MIRRORS)]
    with serving(*data) as origin, chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        for name, (path, _) in views(origin).items():
            page.goto(origin + SHOWN.get(name, path))
            page.locator("html[data-painted]").wait_for(timeout=30_000)
            if name == "coverage":
                lockfile = Path(tempfile.mkdtemp()) / "spack.lock"
                lockfile.write_text(json.dumps(a_lockfile(SHARED_MIRRORS)))
                page.get_by_label("spack.lock file").set_input_files(str(lockfile))
                page.get_by_test_id("coverage-summary").wait_for(timeout=30_000)
            page.wait_for_timeout(1500)  # charts, lookalikes, neighbours
            page.screenshot(path=str(OUT / f"{name}.png"))
            print(OUT / f"{name}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
