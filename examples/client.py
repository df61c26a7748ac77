"""A small Spack Cache Graph client, standard library only.

    python examples/client.py [URL] [HASH]

Prints the server's counts, then which stacks and tags hold one spec.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request


def graphql(url: str, query: str, variables: dict | None = None) -> dict:
    """The ``data`` of a query; raises RuntimeError with the server's messages on errors."""
    request = urllib.request.Request(
        url,
        data=json.dumps({"query": query, "variables": variables or {}}).encode(),
        headers={"content-type": "application/json", "accept": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            body = json.load(response)
    except urllib.error.HTTPError as exc:
        body = json.load(exc)
    if body.get("errors"):
        raise RuntimeError("; ".join(e["message"] for e in body["errors"]))
    return body["data"]


def counted(n: int, noun: str) -> str:
    """``n`` and its noun: "1 tag", "2 tags"."""
    return f"{n:,} {noun if n == 1 else noun + 's'}"


def main() -> int:
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000/graphql"
    spec_hash = sys.argv[2] if len(sys.argv) > 2 else "22xqlom"
    stats = graphql(url, "{ stats { packageCount specCount stackCount tagCount } }")["stats"]
    specs, packages = counted(stats["specCount"], "spec"), counted(stats["packageCount"], "package")
    stacks, tags = counted(stats["stackCount"], "stack"), counted(stats["tagCount"], "tag")
    print(f"{specs} of {packages} in {stacks} and {tags}")
    spec = graphql(
        url,
        "query($h: String!) { spec(hash: $h) { specString stacks { name } tags { name } } }",
        {"h": spec_hash},
    )["spec"]
    if spec is None:
        print(f"no spec {spec_hash}")
        return 1
    print(spec["specString"])
    print("  stacks: " + ", ".join(s["name"] for s in spec["stacks"]))
    print("  tags:   " + ", ".join(t["name"] for t in spec["tags"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
