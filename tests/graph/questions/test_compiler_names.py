"""One name per compiler (issue 41): the shared pages record ``oneapi@=...``, which Spack 1.1
reads as the package ``intel-oneapi-compilers`` (``spack.aliases.LEGACY_COMPILER_TO_BUILTIN``,
applied to ``%`` edges by ``spack.spec_parser.SpecParser``). Facets, the compiler list and
``Spec.compiler`` give the current name; a filter or a search by either name finds them."""

from __future__ import annotations

from tests.conftest import SHARED_DATA, execute
from tests.rawpages import raw_pages

SPECS = (
    "query($c: String) { specs(filter: {compiler: $c}, first: 1000) "
    "{ nodes { hash compiler { name } } } }"
)
COMPILER = "query($c: String!) { compiler(name: $c) { name specCount } }"


def _oneapi() -> dict[str, set[str]]:
    """Current compiler name -> hashes of the records naming it by its old name."""
    found: dict[str, set[str]] = {}
    for page in raw_pages(SHARED_DATA):
        for r in page.records:
            if r["compiler"].startswith("oneapi@"):
                name = (
                    r["compiler"].replace("@=", "@").replace("oneapi@", "intel-oneapi-compilers@")
                )
                found.setdefault(name, set()).add(r["hash"])
    return found


def test_compilers_facets_and_specs_say_the_current_name_and_either_name_finds_them(data_graph):
    oneapi = _oneapi()
    assert oneapi
    answer = execute(data_graph, "{ compilers { name } facets { compilers { value count } } }")
    names = [c["name"] for c in answer["data"]["compilers"]]
    facet = {v["value"]: v["count"] for v in answer["data"]["facets"]["compilers"]}
    assert not [n for n in names + list(facet) if n.startswith("oneapi@")]
    for name, hashes in oneapi.items():
        assert name in names and facet[name] == len(hashes)
        old = name.replace("intel-oneapi-compilers@", "oneapi@")
        for given in (name, old):
            found = execute(data_graph, SPECS, {"c": given})
            nodes = found["data"]["specs"]["nodes"]
            assert {n["hash"] for n in nodes} == hashes
            assert {n["compiler"]["name"] for n in nodes} == {name}
        compiler = execute(data_graph, COMPILER, {"c": old})["data"]["compiler"]
        assert compiler == {"name": name, "specCount": len(hashes)}
