// A spec: every attribute, where it is cached, its DAG as a picture, what depends on it,
// its nearest neighbours, and a diff against another spec.

import { useEffect, useState } from "preact/hooks";
import { navigate } from "../app.js";
import { Dag } from "../dag.js";
import {
  Command,
  Loading,
  MirrorMark,
  Pager,
  Problem,
  SpecTable,
  bytes,
  count,
  href,
  html,
  shellCommand,
  short,
  usePainted,
  useQuery,
} from "../ui.js";
import { Moment, dayOf } from "./changes.js";
import { withParams } from "./search.js";

/** The commands that use a cached spec (or, without a hash, a package): the mirrors that hold
 * it, each by its root URL, trusted by its keys when signed and added `--unsigned` when not;
 * every word shell-quoted, so nothing from the data can run. */
export function Commands({ hash, name, mirrors, tag }) {
  const what = hash ? `/${hash}` : name;
  const publicCache = tag || "develop";
  // A mirror on the server's disk comes without its path (the admin's only): nothing to add.
  const onDisk = mirrors.filter((m) => !/^[a-z][a-z0-9+.-]*:\/\//i.test(m.url));
  const adds = mirrors.length
    ? mirrors.filter((m) => !onDisk.includes(m)).flatMap((m) =>
        m.signed
          ? [shellCommand("spack", "mirror", "add", m.name, m.url)]
          : [shellCommand("spack", "mirror", "add", "--unsigned", m.name, m.url)],
      )
    : [shellCommand("spack", "mirror", "add", publicCache, `https://binaries.spack.io/${publicCache}`)];
  const signed = mirrors.length ? mirrors.some((m) => m.signed) : true;
  return html`<div class="commands">
    <p>${mirrors.length
      ? `Add ${mirrors.length === 1 ? "the mirror" : `one of the ${mirrors.length} mirrors`} holding it${signed ? "; trust the keys of a signed one" : " (unsigned: added with --unsigned)"}:`
      : "Add the public build cache of its tag (the cache pages name no mirror), and trust its keys:"}</p>
    ${mirrors.filter((m) => m.errors).map((m) => html`<p class="hint">${m.name}<${MirrorMark} mirror=${m} /></p>`)}
    ${onDisk.map((m) => html`<p class="hint" data-testid="on-disk">${m.name} is a folder on the server's disk: ask its operator for a copy, then <code>spack mirror add${m.signed ? "" : " --unsigned"} ${m.name} PATH-OF-THE-COPY</code>.</p>`)}
    ${adds.map((text) => html`<${Command} text=${text} />`)}
    ${signed ? html`<${Command} text=${shellCommand("spack", "buildcache", "keys", "--install", "--trust")} />` : null}
    <p>then install it from the cache only:</p>
    <${Command} text=${shellCommand("spack", "install", "--use-buildcache", "only", what)} />
    ${hash ? html`<p>or unpack the binary alone:</p><${Command} text=${shellCommand("spack", "buildcache", "install", what)} />` : null}
  </div>`;
}

export default function Spec({ argument: hash, params }) {
  const { data, error } = useQuery("Spec", { hash });
  const spec = data?.spec;
  usePainted(data, "spec");
  useEffect(() => {
    if (spec) document.title = `${spec.package.name}@${spec.version} /${spec.shortHash} · Spec — Spack Cache Graph`;
  }, [spec]);
  if (error) return html`<${Problem} error=${error} />`;
  if (!data) return html`<${Loading} />`;
  if (!spec) {
    return html`<h1>/${hash}</h1><p>No loaded spec has this hash (it may be a spec of a cache
      or a tag this server does not load). <a href=${href("/ui/search", { q: hash.slice(0, 7) })}>Search for /${hash.slice(0, 7)}</a>,
      or <a href=${href("/ui/status")}>see what is loaded</a>.</p>`;
  }
  const tags = spec.stacksByTag;
  const path = `/ui/spec/${spec.hash}`;
  return html`<h1><a href=${href(`/ui/package/${spec.package.name}`)}>${spec.package.name}</a>@${spec.version}
      <small class="hash">/${spec.shortHash}</small></h1>
    <p class="specstring"><code>${spec.specString}</code></p>
    <div class="columns">
      <section aria-labelledby="attrs-h">
        <h2 id="attrs-h">Attributes</h2>
        <dl class="attributes">
          <dt>hash</dt><dd><code>${spec.hash}</code></dd>
          <dt>version</dt><dd>${spec.version}</dd>
          <dt>compiler</dt><dd>${spec.compiler?.name ?? "none"}</dd>
          <dt>arch</dt><dd>${spec.platform}-${spec.os}-${spec.target.name}</dd>
          <dt>variants</dt><dd class="variants">${spec.variants.join(" ") || "none"}</dd>
          <dt>size</dt><dd>${bytes(spec.size)}</dd>
          <dt>first / last seen</dt><dd>${spec.firstSeen?.name ?? "–"} / ${spec.lastSeen?.name ?? "–"}</dd>
          <${Seen} spec=${spec} />
          ${spec.tarball ? html`<dt>tarball</dt><dd><code>${spec.tarball}</code></dd>` : null}
        </dl>
      </section>
      <section aria-labelledby="where-h">
        <h2 id="where-h">Where it is cached</h2>
        ${tags.length
          ? html`<table><thead><tr><th>tag</th><th>stacks</th></tr></thead><tbody>${tags.map(
              (t) => html`<tr><td><a href=${href("/", { tag: t.tag.name })}>${t.tag.name}</a></td>
                <td>${t.stacks.map((s, i) => html`${i ? ", " : ""}<a href=${href("/ui/search", { stack: s.name, tag: t.tag.name })}>${s.name}</a>`)}</td></tr>`,
            )}</tbody></table>`
          : html`<p>No cache page lists it; it is known from ${spec.mirrors.length ? "mirrors" : "a spec file"}.</p>`}
        ${spec.mirrors.length
          ? html`<p>Mirrors: ${spec.mirrors.map((m, i) => html`${i ? ", " : ""}<a href=${href("/ui/search", { mirror: m.name })}>${m.name}</a> <small>(${m.layout}${m.signed ? ", signed" : ""})</small><${MirrorMark} mirror=${m} />`)}</p>`
          : null}
        <details><summary>Use this spec</summary>
          <${Commands} hash=${spec.hash} name=${spec.package.name} mirrors=${spec.mirrors} tag=${spec.lastSeen?.name} /></details>
      </section>
    </div>
    <section aria-labelledby="dag-h">
      <h2 id="dag-h">Dependencies <small>${count(spec.directDependencies)} direct, ${count(spec.allDependencies)} in all</small></h2>
      <${Dag} spec=${spec} />
    </section>
    <${Neighbours} hash=${spec.hash} params=${params} path=${path}
      counts=${[spec.directDependents, spec.allDependents]} />
    <${DiffBox} spec=${spec} params=${params} path=${path} />`;
}

/** When the change log saw the spec come and go, each a link to that day's changes; nothing
 * when it saw neither (no history kept, or the spec is older than it and still cached). */
function Seen({ spec }) {
  const { firstSeenAt: came, lastSeenAt: went } = spec;
  if (!came && !went) return null;
  const on = (at) => href("/ui/changes", { day: dayOf(at), days: 365 });
  return html`<dt>added / removed</dt><dd data-testid="seen">${came
    ? html`first added <a href=${on(came)}><${Moment} at=${came} /></a>`
    : "cached before the history kept"}${went
    ? html`; last removed <a href=${on(went)}><${Moment} at=${went} /></a>`
    : null}</dd>`;
}

function Neighbours({ hash, params, path, counts, missing = false }) {
  const shown = Number(params.get("from") || 0);
  const { data, error } = useQuery("Neighbours", {
    hash,
    dependents: `^/${hash}`,
    after: params.get("after"),
  });
  if (error) return html`<${Problem} error=${error} />`;
  if (!data) return html`<${Loading} what="Finding neighbours" />`;
  const { nearest, dependents } = data;
  const near = nearest.filter((n) => n.spec.hash !== hash).slice(0, 5);
  return html`
    ${missing
      ? null
      : html`<section aria-labelledby="dependents-h">
          <h2 id="dependents-h">Dependents <small>${count(counts[0])} direct, ${count(counts[1])} in all</small></h2>
          ${dependents.totalCount
            ? html`<${Pager} connection=${dependents} shown=${shown}
                first=${withParams(path, params, { after: null, from: null })}
                next=${withParams(path, params, { after: dependents.pageInfo.endCursor, from: shown + dependents.nodes.length })} />
              <${SpecTable} specs=${dependents.nodes} />`
            : html`<p>Nothing loaded depends on it.</p>`}
        </section>`}
    <section aria-labelledby="nearest-h">
      <h2 id="nearest-h">Nearest specs</h2>
      ${near.length
        ? html`<table class="nearest"><thead><tr><th>spec</th><th class="num">distance</th><th>what differs</th><th></th></tr></thead>
          <tbody>${near.map(
            (n) => html`<tr><td><a href=${href(`/ui/spec/${n.spec.hash}`)}>${n.spec.package.name}@${n.spec.version} /${short(n.spec.hash)}</a></td>
              <td class="num">${n.distance}</td>
              <td>${n.differences.map((d) => html`<span class="difference"><b>${d.field}</b> ${d.wanted ?? "–"} → ${d.cached ?? "–"}</span> `)}</td>
              <td>${missing ? null : html`<a href=${withParams(path, params, { diff: n.spec.hash })}>diff</a>`}</td></tr>`,
          )}</tbody></table>`
        : html`<p>No other spec of this package is loaded.</p>`}
    </section>`;
}

function DiffBox({ spec, params, path }) {
  const other = params.get("diff");
  const [text, setText] = useState(other || "");
  const submit = (event) => {
    event.preventDefault();
    navigate(withParams(path, params, { diff: text.trim().replace(/^\//, "") || null }));
  };
  return html`<section aria-labelledby="diff-h">
    <h2 id="diff-h">Diff against another spec</h2>
    <form class="inline" onSubmit=${submit}>
      <input aria-label="hash to diff against" placeholder="hash or unique prefix" value=${text}
        onInput=${(e) => setText(e.target.value)} />
      <button type="submit">Diff</button>
    </form>
    ${other ? html`<${SpecDiff} a=${spec.hash} b=${other} />` : null}
  </section>`;
}

function SpecDiff({ a, b }) {
  const { data, error } = useQuery("SpecDiff", { a, b });
  if (error) return html`<${Problem} error=${error} />`;
  if (!data) return html`<${Loading} />`;
  const diff = data.specDiff;
  if (!diff) return html`<p>No loaded spec has the hash <code>${b}</code>.</p>`;
  const name = (s) => html`<a href=${href(`/ui/spec/${s.hash}`)}>${s.package.name}@${s.version} /${short(s.hash)}</a>`;
  return diff.differences.length
    ? html`<table class="diff"><thead><tr><th>what</th><th>${name(diff.a)}</th><th>${name(diff.b)}</th></tr></thead>
        <tbody>${diff.differences.map(
          (d) => html`<tr><td>${d.field}</td><td>${d.wanted ?? "–"}</td><td>${d.cached ?? "–"}</td></tr>`,
        )}</tbody></table>`
    : html`<p>${name(diff.a)} and ${name(diff.b)} do not differ.</p>`;
}
