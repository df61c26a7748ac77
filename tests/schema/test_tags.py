"""Tags and the totals (stats), over everything and per tag."""

from __future__ import annotations

from tests.conftest import execute
from tests.rawpages import normalized, raw_pages

STATS = (
    "query($t: String) { stats(tag: $t) { packageCount specCount stackCount "
    "compilerCount targetCount tagCount } }"
)


def test_stats_of_the_seeds(run):
    expected = {
        "packageCount": 4,
        "specCount": 454,
        "stackCount": 11,
        "compilerCount": 3,
        "targetCount": 4,
        "tagCount": 1,
    }
    assert run(STATS) == {"data": {"stats": expected}}
    assert run(STATS, {"t": "develop"}) == {"data": {"stats": expected}}
    assert run(STATS, {"t": "v0.21.0"}) == {"data": {"stats": dict.fromkeys(expected, 0)}}


def test_stats_per_tag_equal_the_pages(data_graph, shared_data):
    pages = raw_pages(shared_data)
    for tag in sorted({p.tag for p in pages}):
        records = {r["hash"]: (p.package, r) for p in pages if p.tag == tag for r in p.records}
        values = list(records.values())
        assert execute(data_graph, STATS, {"t": tag}) == {
            "data": {
                "stats": {
                    "packageCount": len({p for p, _ in values}),
                    "specCount": len(records),
                    "stackCount": len({s for _, r in values for s in r["stacks"]}),
                    "compilerCount": len({normalized(r["compiler"]) for _, r in values} - {None}),
                    "targetCount": len({r["target"] for _, r in values}),
                    "tagCount": 1,
                }
            }
        }, tag


def test_tags_with_their_stacks_and_counts(data_graph):
    result = execute(
        data_graph,
        '{ tags { name } tag(name: "v0.18.0") { name specCount '
        'packageCount stacks { name } } missing: tag(name: "v9") { name } }',
    )
    assert [t["name"] for t in result["data"]["tags"]][:3] == [
        "develop",
        "develop-2023-05-14",
        "develop-2023-06-04",
    ]
    assert len(result["data"]["tags"]) == 21
    assert result["data"]["tag"] == {
        "name": "v0.18.0",
        "specCount": 5,
        "packageCount": 3,
        "stacks": [
            {"name": n}
            for n in ["build_systems", "data-vis-sdk", "e4s", "radiuss", "root", "tutorial"]
        ],
    }
    assert result["data"]["missing"] is None
