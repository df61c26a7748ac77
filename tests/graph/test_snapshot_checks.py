"""A snapshot is checked whole before it is served: a flipped byte in any part, or a file
cut short or grown, is refused saying which check failed, and the data loads in full."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest
import xxhash
from cachegraph.graph import load, snapshot

from cachegraph.state import DataSources, load_sources, save_snapshot

from ..conftest import SEEDS, execute

#: touches every column and string table an answer about specs reads
QUESTION = """{ stats { specCount packageCount tagCount stackCount }
  specs(first: 500) { edges { node { hash package { name } version compiler { name version }
    os platform target { name } variants size
    stacksByTag { tag { name } stacks { name } } } } } }"""


def xxh3(data: bytes) -> str:  # the checksum, worked out here on its own
    return xxhash.xxh3_128(data).hexdigest()


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> tuple[Path, bytes, dict, int]:
    """A snapshot of the seeds: (its path, its bytes, its description, where the arrays start)."""
    folder = tmp_path_factory.mktemp("snap")
    seeds = Path(shutil.copytree(SEEDS, folder / "seeds"))
    graph, report = load([seeds])
    path = folder / "snap"
    snapshot.save(path, graph, report, snapshot.fingerprint([seeds]))
    raw = path.read_bytes()
    line = raw.index(b"\n") + 1
    length = int.from_bytes(raw[line : line + 8], "little")
    meta = json.loads(raw[line + 24 : line + 24 + length])
    start = -(-(line + 24 + length) // 64) * 64
    return seeds, raw, meta, start


def flipped(raw: bytes, at: int) -> bytes:
    return raw[:at] + bytes([raw[at] ^ 0xFF]) + raw[at + 1 :]


def test_a_written_snapshot_records_each_parts_size_and_checksum(written):
    seeds, raw, meta, start = written
    assert meta["size"] == len(raw)
    for name, _, _, at, nbytes, stated in meta["arrays"]:
        assert xxh3(raw[start + at : start + at + nbytes]) == stated, name
    restored = snapshot.read(seeds.parent / "snap", snapshot.fingerprint([seeds]))
    assert not isinstance(restored, snapshot.Refused)


def test_a_flipped_byte_in_any_array_is_refused_naming_it(written, tmp_path):
    seeds, raw, meta, start = written
    key = snapshot.fingerprint([seeds])
    damaged = [d for d in meta["arrays"] if d[4]]  # an empty array has no byte to flip
    assert {"code.package", "strings.package.blob", "strings.version.offsets", "hashes"} <= {
        d[0] for d in damaged
    }
    for name, _, _, at, nbytes, stated in damaged:
        bad = flipped(raw, start + at + nbytes // 2)
        (tmp_path / "snap").write_bytes(bad)
        found = xxh3(bad[start + at : start + at + nbytes])
        assert snapshot.read(tmp_path / "snap", key) == snapshot.Refused(
            f"array {name!r}: checksum {found} where the header says {stated}"
        )


def test_a_flipped_byte_in_the_header_is_refused_saying_so(written, tmp_path):
    seeds, raw, _, start = written
    key = snapshot.fingerprint([seeds])
    line = raw.index(b"\n") + 1
    text = raw[line + 24 : start].rstrip(b"\0")

    def refusal(at: int) -> snapshot.Refused:
        (tmp_path / "snap").write_bytes(flipped(raw, at))
        return snapshot.read(tmp_path / "snap", key)

    assert refusal(3) == snapshot.Refused(
        "not a snapshot: it does not begin with the snapshot header line"
    )
    assert refusal(line + 7) == snapshot.Refused(
        f"truncated or damaged: its header says its description is "
        f"{len(text) + (0xFF << 56):,} bytes, more than the file's {len(raw):,}"
    )
    stated = xxh3(text)
    bad_digest = bytes.fromhex(stated)
    bad_digest = (bad_digest[:3] + bytes([bad_digest[3] ^ 0xFF]) + bad_digest[4:]).hex()
    assert refusal(line + 8 + 3) == snapshot.Refused(
        f"header: checksum {stated} where the header says {bad_digest}"
    )
    middle = line + 24 + len(text) // 2
    assert refusal(middle) == snapshot.Refused(
        f"header: checksum {xxh3(flipped(raw, middle)[line + 24 : line + 24 + len(text)])} "
        f"where the header says {stated}"
    )


@pytest.mark.parametrize(
    "cut", ["empty", "in the header line", "in the frame", "in the description", "at 4096",
            "in the arrays", "the last byte", "a byte added"],
)  # fmt: skip
def test_a_truncated_or_grown_snapshot_is_refused_saying_so(written, tmp_path, cut):
    seeds, raw, _, start = written
    line = raw.index(b"\n") + 1
    length = int.from_bytes(raw[line : line + 8], "little")
    at = {"empty": 0, "in the header line": 10, "in the frame": line + 4,
          "in the description": line + 24 + length // 2, "at 4096": 4096,
          "in the arrays": (start + len(raw)) // 2,
          "the last byte": len(raw) - 1}.get(cut)  # fmt: skip
    (tmp_path / "snap").write_bytes(raw[:at] if at is not None else raw + b"\0")
    size = len(raw) + 1 if at is None else at
    expected = (
        "not a snapshot: it does not begin with the snapshot header line"
        if size < line
        else "truncated within its header"
        if size < line + 24
        else f"truncated or damaged: its header says its description is {length:,} bytes, "
        f"more than the file's {size:,}"
        if size < line + 24 + length
        else f"truncated or grown: {size:,} bytes where the header says {len(raw):,}"
    )
    assert snapshot.read(tmp_path / "snap", snapshot.fingerprint([seeds])) == snapshot.Refused(
        expected
    )


@pytest.mark.parametrize("part", ["header", "code.package", "strings.package.blob", "truncated"])
def test_a_start_on_a_damaged_snapshot_says_why_loads_in_full_and_writes_a_new_one(
    written, tmp_path, caplog, part
):
    seeds, raw, meta, start = written
    path = tmp_path / "snap"
    if part == "truncated":
        path.write_bytes(raw[: (start + len(raw)) // 2])
        why = f"truncated or grown: {(start + len(raw)) // 2:,} bytes where the header says"
    elif part == "header":
        path.write_bytes(flipped(raw, start - 200))
        why = "header: checksum "
    else:
        _, _, _, at, nbytes, _ = next(d for d in meta["arrays"] if d[0] == part)
        path.write_bytes(flipped(raw, start + at + nbytes // 2))
        why = f"array {part!r}: checksum "
    sources = DataSources([str(seeds)], [], str(path))
    with caplog.at_level(logging.INFO, logger="cachegraph"):
        graph, report, key = load_sources(sources)
    said = [r for r in caplog.records if r.getMessage().startswith(f"snapshot {path} not used")]
    assert len(said) == 1 and said[0].levelno == logging.WARNING
    assert why in said[0].getMessage()
    assert (
        said[0]
        .getMessage()
        .endswith(
            "loading the data in full instead (a full load, not a restart from the snapshot), "
            "then writing a new snapshot"
        )
    )
    fresh, _ = load([seeds])
    answer = execute(graph, QUESTION)
    assert answer == execute(fresh, QUESTION) and "errors" not in answer
    assert len(answer["data"]["specs"]["edges"]) == 454  # seeds/README.md
    status = "{ loadStatus { fromSnapshot } }"
    assert execute(graph, status) == {"data": {"loadStatus": {"fromSnapshot": False}}}
    assert key == snapshot.fingerprint([seeds])
    save_snapshot(sources, graph, report, key)  # what the server does once it serves
    restarted, _, again = load_sources(DataSources([str(seeds)], [], str(path)))
    assert again == ""  # read from the snapshot: nothing to write
    assert execute(restarted, QUESTION) == answer
    assert execute(restarted, status) == {"data": {"loadStatus": {"fromSnapshot": True}}}
