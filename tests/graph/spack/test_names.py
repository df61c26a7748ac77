import pytest
from cachegraph.graph.spack.names import compiler_parts, normalize_compiler, version_key


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("gcc@=11.4.0", "gcc@11.4.0"),
        ("gcc@12.4.0", "gcc@12.4.0"),
        ("apple-clang@=15.0.0", "apple-clang@15.0.0"),
        ("cce@=15.0.1", "cce@15.0.1"),
        ("oneapi@=2024.2.1", "oneapi@2024.2.1"),
        ("clang@=7.0.0", "clang@7.0.0"),
        (" gcc@=7.3.1 ", "gcc@7.3.1"),
        ("none", None),
        ("", None),
    ],
)
def test_normalize_compiler(raw, normalized):
    assert normalize_compiler(raw) == normalized


def test_compiler_parts():
    assert compiler_parts("apple-clang@16.0.0") == ("apple-clang", "16.0.0")


@pytest.mark.parametrize(
    "ordered",
    [
        ["0.3.1", "0.4.0", "0.10.0"],
        ["1.9", "1.9a", "1.10"],
        ["2.3.1", "2.3.5", "2025.08.20"],
        ["9.9.9", "stable", "master", "main", "develop"],
        ["1.0rc1", "1.0"],
    ],
)
def test_versions_sort_as_spack_sorts_them(ordered):
    assert sorted(reversed(ordered), key=version_key) == ordered
