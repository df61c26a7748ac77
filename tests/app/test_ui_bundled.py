"""The explorer in real headless Chromium on the bundled data, as `cachegraph serve` with no
flags serves it (seeds/: pages, mirrors with DAGs, a spack.lock), and on pages made hostile:
the install commands, search, the status view and coverage (issue 29)."""

from __future__ import annotations

import shlex

import pytest

from cachegraph.sources import bundled
from tests.app.test_ui import Watched
from tests.browser import ask, chromium, serving
from tests.conftest import SEEDS

pytestmark = pytest.mark.slow

SIGNED = bundled() / "mirrors" / "spack-test" / "signed"
UNSIGNED = bundled() / "mirrors" / "spack-test" / "unsigned"


@pytest.fixture(scope="module")
def origin():
    with serving() as origin:
        yield origin


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


def commands(page) -> list[str]:
    page.locator(".commands .command code").first.wait_for(timeout=10_000)
    return page.locator(".commands .command code").all_inner_texts()


def test_a_spec_offers_only_its_mirrors_by_root_url_with_keys_or_unsigned(browser, origin):
    watched = Watched(browser, origin)
    watched.open("/ui/spec/u5uz3dcch5if4eve4sef67o2rf2lbfgh")
    watched.page.get_by_text("Use this spec").click()
    assert commands(watched.page) == [
        f"spack mirror add --unsigned spack-test {UNSIGNED.as_uri()}",
        f"spack mirror add spack-test-signed {SIGNED.as_uri()}",
        "spack buildcache keys --install --trust",
        "spack install --use-buildcache only /u5uz3dcch5if4eve4sef67o2rf2lbfgh",
        "spack buildcache install /u5uz3dcch5if4eve4sef67o2rf2lbfgh",
    ]
    # mpich is held by one mirror of the three, unsigned: no keys step.
    watched.open("/ui/package/mpich")
    watched.page.get_by_text("Use a cached mpich").click()
    mpigdb = (bundled() / "mirrors" / "mpigdb").as_uri()
    assert commands(watched.page) == [
        f"spack mirror add --unsigned mpigdb {mpigdb}",
        "spack install --use-buildcache only mpich",
    ]
    watched.check_and_close()


def test_a_hostile_tag_is_one_quoted_word_in_the_copy_box(browser, tmp_path):
    tag = "develop;touch x"
    page_text = (SEEDS / "000_32877e6a9739e9c6.txt").read_text()
    hostile = page_text.replace("categories: [package, develop]", f'categories: [package, "{tag}"]')
    assert hostile != page_text
    (tmp_path / "py-keras.md").write_text(hostile)
    with serving("--data", str(tmp_path)) as origin:
        hash = ask(origin, "{ specs(first: 1) { nodes { hash } } }")["specs"]["nodes"][0]["hash"]
        watched = Watched(browser, origin)
        watched.open(f"/ui/spec/{hash}")
        watched.page.get_by_text("Use this spec").click()
        shown = commands(watched.page)
        assert shown[0] == (
            "spack mirror add 'develop;touch x' 'https://binaries.spack.io/develop;touch x'"
        )
        # As a shell splits it: the tag is one argument, and nothing else runs.
        assert shlex.split(shown[0]) == [
            "spack", "mirror", "add", tag, f"https://binaries.spack.io/{tag}"
        ]  # fmt: skip
        assert shown[1] == "spack buildcache keys --install --trust"
        watched.check_and_close()
