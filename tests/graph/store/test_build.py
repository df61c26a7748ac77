"""The builder's byte gathering: what it makes is what slicing the bytes makes."""

from __future__ import annotations

import numpy as np
import pytest
from cachegraph.graph.store import build


@pytest.mark.parametrize("row_bytes", [0, 3, 1024])  # by byte; rows and bytes mixed; rows
def test_strings_gathered_are_the_slices_in_order(monkeypatch, row_bytes):
    """Strings anywhere in the data (at its very end, empty, longer than a row), in any
    order, come out as ``data[first:first + length]`` one after another."""
    monkeypatch.setattr(build, "_ROW_BYTES", row_bytes)
    rng = np.random.default_rng(7)
    for _ in range(300):
        size = int(rng.integers(0, 50))
        data = rng.integers(0, 256, size).astype(np.uint8)
        first = rng.integers(0, size + 1, int(rng.integers(0, 20)))
        lengths = np.array([int(rng.integers(0, size - f + 1)) for f in first], np.int64)
        blob, offsets = build._gathered(data, first, lengths)
        raw = data.tobytes()
        slices = [raw[f : f + n] for f, n in zip(first, lengths, strict=True)]
        assert blob.tobytes() == b"".join(slices)
        assert offsets.tolist() == [0, *np.cumsum(lengths).tolist()]
