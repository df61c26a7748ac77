"""A reload built by a second process answers exactly as a load in this one; when that
process cannot do it, the caller is told so and loads itself."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from cachegraph.graph import load

from cachegraph.aside import load_aside
from cachegraph.sources import default_data, default_mirrors
from tests.conftest import execute

QUERY = """{ stats { packageCount specCount stackCount }
  mirrors { name location layout specCount totalBytes signed errors warnings }
  specs(first: 1000) { totalCount nodes { hash specString size tarball
    stacksByTag { tag { name } stacks { name } } mirrors { name }
    dependencies { hash } dependents(transitive: true) { hash } } } }"""


def test_a_load_aside_is_the_load_here():
    paths, mirrors = [str(default_data())], default_mirrors()
    here, report_here = load(paths, mirrors)
    built = load_aside(paths, mirrors)
    assert built is not None
    aside, report_aside = built
    assert execute(aside, QUERY) == execute(here, QUERY)
    assert report_aside.summary() == report_here.summary()
    assert report_aside.problems == report_here.problems


def test_a_second_process_that_fails_is_said_and_gives_none(monkeypatch, caplog):
    monkeypatch.setattr(sys, "executable", str(Path("/bin/false")))
    caplog.set_level(logging.WARNING, "cachegraph")
    assert load_aside([str(default_data())], default_mirrors()) is None
    assert [r.getMessage() for r in caplog.records] == [
        "the reload's second process failed (exit 1): loading here"
    ]
