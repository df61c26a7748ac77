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


def test_tags_newest_first(data_graph, shared_data):
    tags = execute(data_graph, "{ tags(order: NEWEST_FIRST) { name } }")["data"]["tags"]
    # The tags of ../shared/data's pages: develop, its dated snapshots from the latest,
    # then releases from the highest (pages carry no dates: a release counts as older).
    dated = sorted((t for t in {p.tag for p in raw_pages(shared_data)} if t.startswith("develop-")),
                   reverse=True)  # fmt: skip
    releases = ["v0.23.0", "v0.22.1", "v0.22.0", "v0.21.2", "v0.21.0", "v0.20.3", "v0.20.1",
                "v0.20.0", "v0.18.1", "v0.18.0"]  # fmt: skip
    assert [t["name"] for t in tags] == ["develop", *dated, *releases]
    by_name = execute(data_graph, "{ tags { name } }")["data"]["tags"]
    assert [t["name"] for t in by_name] == sorted(t["name"] for t in tags)
