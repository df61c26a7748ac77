"""The peer a user would otherwise pick: the same records in PostgreSQL, served as GraphQL
by PostGraphile with its connection-filter plugin, set up from scratch in a work folder.

Needs PostgreSQL's server programs (Debian's ``postgresql``) and Node with npm;
``missing()`` says what is absent. Run as root, the server runs as ``postgres``.
"""

from __future__ import annotations

import csv
import glob
import os
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterable, Iterator
from pathlib import Path

import orjson
from cachegraph.graph.spack.names import normalize_compiler

HERE = Path(__file__).resolve().parent

SCHEMA = """
create table spec (
  hash text primary key,
  package text not null,
  version text not null,
  compiler text,
  os text not null,
  platform text not null,
  target text not null,
  variants text[] not null,
  short_hash text generated always as (left(hash, 7)) stored
);
create table spec_stack (
  hash text not null references spec (hash),
  tag text not null,
  stack text not null,
  primary key (hash, tag, stack)
);
"""

# What a careful user adds: the contract's order, hash prefixes, the filters
# the questions use, stack membership both ways, and precomputed overlaps.
INDICES = """
create index spec_order on spec (package, version, hash);
create index spec_prefix on spec (hash text_pattern_ops);
create index spec_compiler on spec (compiler);
create index spec_stack_by_stack on spec_stack (stack, hash);
create materialized view stack_overlap as
  with member as (select distinct hash, stack from spec_stack),
  size as (select stack, count(*) as n from member group by stack)
  select a.stack as a, b.stack as b, count(*) as shared,
         count(*)::float8 / (sa.n + sb.n - count(*)) as jaccard
  from member a join member b on a.hash = b.hash and a.stack < b.stack
  join size sa on sa.stack = a.stack join size sb on sb.stack = b.stack
  group by a.stack, b.stack, sa.n, sb.n;
create index stack_overlap_shared on stack_overlap (shared desc);
create view package_summary as
  select s.package, count(*) as spec_count,
         array_agg(distinct s.version) as versions,
         array_agg(distinct s.compiler) filter (where s.compiler is not null) as compilers,
         array_agg(distinct s.target) as targets,
         array_agg(distinct s.os) as oss,
         array_agg(distinct s.platform) as platforms,
         (select jsonb_object_agg(stack, n) from (
            select ss.stack, count(distinct ss.hash) as n from spec_stack ss
            join spec p on p.hash = ss.hash where p.package = s.package group by ss.stack) c
         ) as stack_counts,
         (select array_agg(distinct ss.tag) from spec_stack ss
            join spec p on p.hash = ss.hash where p.package = s.package) as tags
  from spec s group by s.package;
analyze;
"""


def _program(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def missing() -> str | None:
    """Why the peer cannot be set up here, or None when it can."""
    absent = [p for p in ("initdb", "pg_ctl", "psql") if _program(p) is None]
    absent += [p for p in ("node", "npm") if shutil.which(p) is None]
    if absent:
        return f"not installed: {', '.join(absent)} (Debian: postgresql, nodejs, npm)"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser to start PostgreSQL as another user"
    return None


def page_rows(pages: Iterable[Path]) -> Iterator[tuple[str, str, dict]]:
    """(package, tag, row) for each spec_details row of these synthetic pages."""
    for page in pages:
        package = tag = None
        for line in page.read_bytes().split(b"\n"):
            if line.startswith(b"title:"):
                package = orjson.loads(line[6:])
            elif line.startswith(b"categories:"):
                tag = line.split(b",")[1].strip(b" ]").decode()
            elif line.startswith(b"spec_details:"):
                for row in orjson.loads(line[13:]):
                    yield package, tag, row


class Peer:
    def __init__(self, work: Path) -> None:
        self.work = work
        self.data = work / "pgdata"
        self.pg_port = self.gql_port = 0
        self.node: subprocess.Popen | None = None

    def _as_postgres(self, *command: str) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else [*command]

    def start(self, pg_port: int) -> None:
        self.pg_port = pg_port
        if self.data.exists():
            shutil.rmtree(self.data)
        self.data.mkdir(parents=True)
        if os.geteuid() == 0:
            shutil.chown(self.data, "postgres", "postgres")
            for parent in self.data.parents:  # postgres must reach its folder
                if parent == Path("/"):
                    break
                parent.chmod(parent.stat().st_mode | 0o005)
        run = lambda *c: subprocess.run(self._as_postgres(*c), check=True, capture_output=True)  # noqa: E731
        run(_program("initdb"), "-D", str(self.data), "--auth=trust", "-U", "postgres")
        options = (
            f"-p {pg_port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' "
            "-c shared_buffers=1GB -c work_mem=64MB -c effective_cache_size=8GB "
            "-c max_connections=50 -c fsync=off -c synchronous_commit=off"
        )
        run(_program("pg_ctl"), "-D", str(self.data), "-o", options, "-w", "-l",
            str(self.data / "log"), "start")  # fmt: skip

    def psql(self, sql: str, db: str = "postgres") -> str:
        result = subprocess.run(
            [_program("psql"), "-h", "127.0.0.1", "-p", str(self.pg_port), "-U", "postgres",
             "-d", db, "-v", "ON_ERROR_STOP=1", "-q", "-At", "-c", sql],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        return result.stdout

    def load(self, tree: Path, db: str) -> float:
        """Create database ``db`` holding the specs of ``tree``; return the seconds it took."""
        started = time.perf_counter()
        self.psql(f"drop database if exists {db}")
        self.psql(f"create database {db}")
        self.psql(SCHEMA, db)
        specs, members = self.work / "spec.csv", self.work / "spec_stack.csv"
        seen: set[str] = set()
        with specs.open("w", newline="") as s, members.open("w", newline="") as m:
            spec_out, member_out = csv.writer(s), csv.writer(m)
            for package, tag, row in page_rows(sorted(tree.rglob("*.md"))):
                h = row["hash"]
                if h not in seen:
                    seen.add(h)
                    variants = "{" + ",".join(_quoted(v) for v in row["variants"]) + "}"
                    spec_out.writerow(
                        [h, package, row["versions"][0], normalize_compiler(row["compiler"]) or "",
                         row["os"], row["platform"], row["target"], variants]
                    )  # fmt: skip
                member_out.writerows([h, tag, stack] for stack in dict.fromkeys(row["stacks"]))
        copy = "\\copy {} from '{}' with (format csv, null '')"
        columns = "spec (hash, package, version, compiler, os, platform, target, variants)"
        self.psql(copy.format(columns, specs), db)
        self.psql(copy.format("spec_stack", members), db)
        self.psql(INDICES, db)
        specs.unlink()
        members.unlink()
        return time.perf_counter() - started

    def serve(self, db: str, port: int) -> None:
        """Start PostGraphile on ``db`` (npm installs it into the work folder once)."""
        peer = self.work / "postgraphile"
        if not (peer / "node_modules" / "postgraphile").exists():
            peer.mkdir(parents=True, exist_ok=True)
            shutil.copy(HERE / "postgraphile" / "package.json", peer)
            subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=peer, check=True, capture_output=True,
            )  # fmt: skip
        shutil.copy(HERE / "postgraphile" / "server.js", peer)
        self.stop_graphql()
        self.gql_port = port
        url = f"postgres://postgres@127.0.0.1:{self.pg_port}/{db}"
        self.node = subprocess.Popen(
            ["node", "server.js", url, str(port)], cwd=peer,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                request = urllib.request.Request(
                    f"http://127.0.0.1:{port}/graphql",
                    data=b'{"query":"{ __typename }"}',
                    headers={"content-type": "application/json"},
                )
                with urllib.request.urlopen(request, timeout=2):
                    return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError("PostGraphile did not start")

    def stop_graphql(self) -> None:
        if self.node is not None:
            self.node.terminate()
            self.node.wait(10)
            self.node = None

    def stop(self) -> None:
        self.stop_graphql()
        if self.pg_port:
            subprocess.run(
                self._as_postgres(_program("pg_ctl"), "-D", str(self.data), "-m", "fast", "stop"),
                capture_output=True,
            )
            self.pg_port = 0


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
