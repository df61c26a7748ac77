"""The committed schema.graphql is the schema the code builds, and keeps the contract."""

from __future__ import annotations

import subprocess
import sys

import pytest
from cachegraph.schema import schema

from tests.conftest import ROOT, SHARED

COMMITTED = ROOT / "schema.graphql"


def test_the_committed_schema_is_the_exported_one():
    assert COMMITTED.read_text() == schema.as_str() + "\n", (
        "schema.graphql drifted from the code: run `cachegraph export-schema > schema.graphql`"
    )


@pytest.mark.parametrize("parts", [(), ("mirrors",)], ids=["schema", "mirrors"])
def test_the_schema_keeps_the_contract(parts):
    check = SHARED / "tools" / "contract-check"
    if not check.exists():
        pytest.skip(f"{check} is absent: the API contract is not on this machine")
    result = subprocess.run(
        [sys.executable, str(check), str(COMMITTED), *parts],
        capture_output=True,
        text=True,
        check=False,
    )
    # The last line names the parts checked, e.g. "... against the contract (schema)".
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("contract-check: 0 breaking change(s) against the contract"), last
    assert result.returncode == 0
