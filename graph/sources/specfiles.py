"""Spack spec files in every form a build cache holds: the JSON document and its nodes.

A spec file is ``*.spec.json``, ``*.spec.json.sig`` (the JSON clearsigned with
OpenPGP: the signed text is read, the signature is not verified), the older
``*.spec.yaml`` (spec format 1), a gzipped blob of a v3 mirror, or a
``spec-N.json`` beside an old-form page. ``spec_nodes`` gives every form's
nodes in one shape: a list of mappings with ``name`` (format 1 keys each node
by its name).
"""

from __future__ import annotations

import json
import zlib
from typing import Any

import orjson

from ..attributes import shown
from ..errors import BadRecord
from .frontmatter import MAX_NESTING, check_nesting, decode_text, load_yaml

_SIGNED = "-----BEGIN PGP SIGNED MESSAGE-----"
_SIGNATURE = "-----BEGIN PGP SIGNATURE-----"
#: What a spec file may grow to once decompressed; real ones are a few hundred KB.
MAX_SPEC_BYTES = 64 << 20

#: The ``buildcache_layout_version`` values of spec files Spack reads (v3 blobs say 2 too).
LAYOUT_VERSIONS = {1, 2}
SPEC_SUFFIXES = (".spec.json", ".spec.json.sig", ".spec.yaml", ".spec.yml")


def is_spec_file(name: str) -> bool:
    """Whether a file name is one a build cache gives its spec files.

    >>> is_spec_file("linux-x-y-zlib-1.2-abc.spec.json.sig"), is_spec_file("index.json")
    (True, False)
    """
    return name.endswith(SPEC_SUFFIXES)


def clearsigned_text(text: str) -> str:
    """The text an OpenPGP clearsigned message signs (RFC 4880, 7.1), dash-escapes undone.

    >>> clearsigned_text(_SIGNED + "\\nHash: SHA512\\n\\n{}\\n- -x\\n" + _SIGNATURE + "\\nAB\\n")
    '{}\\n-x'
    """
    _head, found, body = text.partition(_SIGNED)
    if not found:
        return text
    _headers, blank, body = body.lstrip("\r\n").partition("\n\n")
    if not blank:
        raise BadRecord("clearsigned file without the blank line after its headers")
    signed, found, _ = body.partition(_SIGNATURE)
    if not found:
        raise BadRecord("clearsigned file without its signature block")
    lines = [line[2:] if line.startswith("- ") else line for line in signed.split("\n")]
    return "\n".join(lines).rstrip("\n")


def spec_document(data: bytes, name: str = "") -> dict:
    """The mapping a spec file holds, whichever of its forms ``data`` is.

    >>> spec_document(b'{"spec": {"nodes": []}}')
    {'spec': {'nodes': []}}
    """
    if data[:2] == b"\x1f\x8b":
        data = gunzipped(data)
    text = clearsigned_text(decode_text(data))
    yaml = name.endswith((".yaml", ".yml"))
    doc = load_yaml(text, "spec file") if yaml else load_json(text)
    if not isinstance(doc, dict) or not isinstance(doc.get("spec"), dict | list):
        raise BadRecord("not a spec file: no 'spec' at the top level")
    layout = doc.get("buildcache_layout_version")
    if isinstance(layout, str) and layout.isdigit():
        layout = int(layout)
    if layout is not None and layout not in LAYOUT_VERSIONS:
        raise BadRecord(
            f"unknown buildcache_layout_version {shown(layout)}; this reads "
            f"{', '.join(map(str, sorted(LAYOUT_VERSIONS)))}, as Spack does; spec not loaded"
        )
    return doc


def gunzipped(data: bytes, limit: int = MAX_SPEC_BYTES) -> bytes:
    """``data`` decompressed, refusing what would grow past ``limit`` bytes (a gzip bomb).

    gzip ends with the inflated size (modulo 4 GiB): what ``gzip`` wrote is refused on it
    before a byte is inflated; a trailer that lies is caught at the limit while inflating.

    >>> import gzip
    >>> bomb = gzip.compress(bytes(100_000))
    >>> gunzipped(bomb, 1000)
    Traceback (most recent call last):
    ...
    cachegraph.graph.errors.BadRecord: decompresses to 100000 bytes, more than 1000; not read
    >>> gunzipped(bomb[:-4] + (10).to_bytes(4, "little"), 1000)  # a lying trailer
    Traceback (most recent call last):
    ...
    cachegraph.graph.errors.BadRecord: decompresses to more than 1000 bytes; not read
    """
    stated = int.from_bytes(data[-4:], "little") if len(data) >= 18 else 0
    if stated > limit:
        raise BadRecord(f"decompresses to {stated} bytes, more than {limit}; not read")
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as exc:
        raise BadRecord(f"not valid gzip: {exc}") from None
    if len(out) > limit or inflater.unconsumed_tail:
        raise BadRecord(f"decompresses to more than {limit} bytes; not read")
    return out


def load_json(text: str) -> Any:
    """``text`` parsed as JSON; BadRecord says where it is not, or that it nests too deeply.

    >>> load_json("[" * 5000 + "]" * 5000)
    Traceback (most recent call last):
    ...
    cachegraph.graph.errors.BadRecord: JSON nests more deeply than any real file (over 64 ...
    """
    check_nesting(text)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass  # the standard parser says where, or nests too deeply to say
    try:
        return json.loads(text)  # accepts what orjson does not (NaN), or says where it fails
    except RecursionError:
        raise BadRecord(
            f"JSON nests more deeply than any real file (over {MAX_NESTING} levels); not read"
        ) from None
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        raise BadRecord(f"not valid JSON: {getattr(exc, 'msg', exc)}", line) from None


#: The spec formats Spack labels the edges of when it reads a spec file: ``Spec.from_dict``
#: reads them with ``SpecfileV1.load`` and ``SpecfileV2.load`` (``V3`` is ``V2``), which call
#: ``reconstruct_virtuals_on_edges``; ``SpecfileV4.load`` and ``V5`` keep the recorded virtuals.
RECONSTRUCTED_FORMATS = frozenset({1, 2, 3})


def spec_format(doc: dict) -> int | None:
    """The spec format of a spec file's document, as ``Spec.from_dict`` tells it: 1 for a
    list of nodes, else ``spec._meta.version``; None when it states none.

    >>> spec_format({"spec": [{"zlib": {}}]}), spec_format({"spec": {"_meta": {"version": 3}}})
    (1, 3)
    >>> spec_format({"spec": {"nodes": []}}) is None
    True
    """
    spec = doc.get("spec")
    if isinstance(spec, list):
        return 1
    meta = spec.get("_meta") if isinstance(spec, dict) else None
    version = meta.get("version") if isinstance(meta, dict) else None
    if isinstance(version, str) and version.isdigit():
        version = int(version)
    return version if type(version) is int else None


def spec_nodes(doc: dict) -> list[dict]:
    """The nodes of a spec file's ``spec``, each a mapping with its ``name``.

    >>> spec_nodes({"spec": [{"zlib": {"version": "1.2"}}]})
    [{'name': 'zlib', 'version': '1.2'}]
    >>> spec_nodes({"spec": {"_meta": {"version": 5}, "nodes": [{"name": "a"}]}})
    [{'name': 'a'}]
    """
    spec = doc.get("spec")
    if isinstance(spec, list):  # format 1: a list of {name: node}
        nodes = []
        for entry in spec:
            if not (isinstance(entry, dict) and len(entry) == 1):
                raise BadRecord("a format-1 spec entry must be one 'name: node' mapping")
            ((name, body),) = entry.items()
            nodes.append({"name": name, **(body if isinstance(body, dict) else {})})
        return _linked_by_name(nodes)
    nodes = spec.get("nodes") if isinstance(spec, dict) else None
    if not isinstance(nodes, list) or not nodes:
        raise BadRecord("spec file has no 'nodes' list")
    return nodes


def _linked_by_name(nodes: list[dict]) -> list[dict]:
    """Format-1 nodes whose dependencies name the node of the same file with that name.

    Spack's ``SpecfileV1.load`` (``lib/spack/spack/spec.py``) links a dependency to the
    file's node of its name, never by the hash it states: in 2021 spec files that hash
    is the child's ``full_hash``, which no node is keyed by. A name no node of the file
    has keeps the hash it states.

    >>> [node] = _linked_by_name([{"name": "a", "hash": "h-a", "dependencies":
    ...     {"b": {"hash": "full-b", "type": ["link"]}}}, {"name": "b", "hash": "h-b"}])[:1]
    >>> node["dependencies"]
    {'b': {'hash': 'h-b', 'type': ['link']}}
    """
    hash_of = {node["name"]: node.get("hash") for node in nodes}
    for node in nodes:
        deps = node.get("dependencies")
        if not isinstance(deps, dict):
            continue
        linked = {}
        for name, body in deps.items():
            hash = hash_of.get(name)
            if isinstance(body, dict) and isinstance(hash, str):
                body = {**body, "hash": hash}
            linked[name] = body
        node["dependencies"] = linked
    return nodes
