"""The real mirrors of ../shared/mirrors, read here as plainly as possible (not by the loader),
and a v3 copy of a v2 mirror made the way ``spack buildcache migrate`` does."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from cachegraph.graph import MirrorSource, load

from cachegraph.v3mirror import V3Writer

#: stack name -> the mirror folder, all in tag "test"
MIRRORS = {
    "unsigned": "v2_layout/unsigned",
    "signed": "v2_layout/signed",
    "db7": "v2_layout_db7",
    "yaml": "legacy_yaml",
    "v1": "v1_layout",
    "legacy": "legacy_layout",
    "future": "future_layout",
}
#: spec files that are no mirror's: given as data
LONE = ("signed_json", "specfiles")


def shared_sources(shared: Path) -> list[MirrorSource]:
    return [MirrorSource("test", stack, shared / path) for stack, path in MIRRORS.items()]


def load_shared(shared: Path):
    return load([shared / p for p in LONE], shared_sources(shared), processes=1)


def serve_arguments(shared: Path) -> list[str]:
    """The ``cachegraph serve`` arguments that load what ``load_shared`` loads."""
    data = [f"--data={shared / p}" for p in LONE]
    return data + [f"--mirror=test:{stack}={shared / path}" for stack, path in MIRRORS.items()]


def raw_document(path: Path) -> dict:
    """A spec file's document: JSON, the JSON inside a clearsigned message, or YAML."""
    text = path.read_text()
    if path.name.endswith((".yaml", ".yml")):
        return yaml.safe_load(text)
    if text.startswith("-----BEGIN PGP SIGNED MESSAGE-----"):
        text = text[text.index("\n\n") + 2 : text.index("-----BEGIN PGP SIGNATURE-----")]
    return json.loads(text)


def raw_nodes(doc: dict) -> list[dict]:
    spec = doc["spec"]
    if isinstance(spec, list):  # format 1
        return [{"name": name, **body} for entry in spec for name, body in entry.items()]
    return spec["nodes"]


def raw_index(folder: Path) -> dict:
    """hash -> the index record, of a v2 mirror's build_cache/."""
    index = folder / "index.json"
    return json.loads(index.read_text())["database"]["installs"] if index.exists() else {}


def migrate_to_v3(v2: Path, out: Path, tarball_size=lambda hash: 1000) -> Path:
    """A v3 mirror holding what the v2 mirror ``v2`` (its build_cache/) holds.

    As ``spack buildcache migrate``: each spec file becomes a gzipped spec blob
    with a manifest, the index a blob with its manifest. The v2 data has no
    tarballs: each manifest says its tarball has ``tarball_size(hash)`` bytes.
    """
    writer = V3Writer(out)
    for path in sorted(v2.iterdir()):
        if path.name.endswith((".spec.json", ".spec.json.sig")):
            doc = raw_document(path)
            hash = doc["spec"]["nodes"][0]["hash"]
            writer.add_spec(doc, tarball_size(hash))
    writer.add_index(json.loads((v2 / "index.json").read_text()))
    return out
