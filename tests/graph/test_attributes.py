from dataclasses import fields
from pathlib import Path

import pytest
from cachegraph.graph.attributes import (
    ATTRIBUTES,
    node_attributes,
    own_key,
    page_attributes,
    spec_string,
)
from cachegraph.graph.errors import BadRecord
from cachegraph.graph.store.records import SpecRecord

from tests.rawpages import raw_pages, spec_file_nodes


def record(**given) -> SpecRecord:
    return SpecRecord(**{"hash": "a" * 32, "versions": (given["version"],), **given})


ROCBLAS = record(
    package="rocblas",
    version="6.1.2",
    compiler="gcc@13.2.0",
    variants=("amdgpu_target=gfx90a", "~asan", "build_system=cmake", "~ipo", "+tensile"),
    platform="linux",
    os="ubuntu24.04",
    target="x86_64_v3",
)


@pytest.mark.parametrize(
    ("spec", "text"),
    [
        (
            ROCBLAS,
            "rocblas@6.1.2%gcc@13.2.0~asan~ipo+tensile amdgpu_target=gfx90a build_system=cmake "
            "arch=linux-ubuntu24.04-x86_64_v3",
        ),
        (
            record(
                package="py-x",
                version="1.0",
                compiler=None,
                variants=(),
                platform="darwin",
                os="sequoia",
                target="aarch64",
            ),
            "py-x@1.0 arch=darwin-sequoia-aarch64",
        ),
    ],
)
def test_the_spec_string_is_the_contracts(spec, text):
    assert spec_string(spec) == text


def test_each_attribute_is_a_record_field():
    declared = [f.name for f in fields(SpecRecord)]
    assert [a.name for a in ATTRIBUTES if a.name not in declared] == []


def test_the_lookalike_key_is_every_attribute_but_the_package_variants_in_any_order():
    shuffled = record(**{a.name: getattr(ROCBLAS, a.name) for a in ATTRIBUTES}, hash="b" * 32)
    shuffled.variants = tuple(reversed(ROCBLAS.variants))
    assert (
        own_key(shuffled)
        == own_key(ROCBLAS)
        == (
            "6.1.2",
            "gcc@13.2.0",
            ("+tensile", "amdgpu_target=gfx90a", "build_system=cmake", "~asan", "~ipo"),
            "linux",
            "ubuntu24.04",
            "x86_64_v3",
        )
    )


def test_a_page_row_and_a_spec_node_of_one_spec_give_the_same_attributes(shared_data: Path):
    # xz olptpbs is in develop/adiak/spec-0.json and on the v0.18.0 xz page.
    hash = "olptpbsse74hpreilbfo4qmlqexihzye"
    [node] = [n for n in spec_file_nodes(shared_data / "develop" / "adiak") if n["hash"] == hash]
    [(page, row)] = [
        (p, r) for p in raw_pages(shared_data / "v0.18.0") for r in p.records if r["hash"] == hash
    ]
    from_page = page_attributes(row, page.package)
    assert node_attributes(node) == from_page
    assert from_page == {
        "package": "xz",
        "version": row["versions"][0],
        "compiler": "gcc@7.5.0",
        "variants": tuple(row["variants"]),
        "platform": row["platform"],
        "os": row["os"],
        "target": row["target"],
    }


@pytest.mark.parametrize(
    ("node", "message"),
    [
        (
            {"name": "x", "version": "1", "arch": "linux"},
            "'arch' must be a mapping, not str 'linux'",
        ),
        ({"name": "x", "version": True}, "'version' must be a string, not bool True"),
        ({"name": "", "version": "1"}, "'name' must be a non-empty string, not str ''"),
        ({"name": "x", "version": "1", "parameters": [1]}, "'parameters' must be a mapping"),
    ],
)
def test_a_broken_node_says_what_is_wrong(node, message):
    with pytest.raises(BadRecord, match=message.replace("(", r"\(")):
        node_attributes(node)
