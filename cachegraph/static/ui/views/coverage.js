// Is my environment cached? A spack.lock dropped, chosen or pasted; the coverage bar, the
// hits (where they are) and the misses (why, and the nearest cached spec).

import { useEffect, useState } from "preact/hooks";
import { ApiError, gql } from "../api.js";
import { coverageBar } from "../charts.js";
import { MirrorMark, Problem, TagPicker, Updating, bytes, count, counted, href, html, short, useDrawn, usePainted, useQuery } from "../ui.js";

// The last answer, so that coming back to this view shows it again.
let last = null;

/** What the lockfile itself says, beside the server's answer: its externals (never fetched
 * from a cache: counted apart) and how many of its specs depend on each (misses ranked). */
export function lockfileFacts(lockfile) {
  const version = lockfile?._meta?.["lockfile-version"] ?? 0;
  const nodes = {};
  for (const [key, raw] of Object.entries(lockfile?.concrete_specs ?? {})) {
    let node = raw;
    if (node && typeof node === "object" && !("name" in node) && Object.keys(node).length === 1) {
      node = Object.values(node)[0]; // lockfile version 2: {name: body}
    }
    if (node && typeof node === "object") nodes[key] = node;
  }
  const dagOf = (key) => (version <= 3 && typeof nodes[key]?.hash === "string" ? nodes[key].hash : key);
  const externals = new Set();
  const users = new Map();
  for (const [key, node] of Object.entries(nodes)) {
    const hash = dagOf(key);
    if (node.external) externals.add(hash);
    if (!users.has(hash)) users.set(hash, new Set());
    let deps = node.dependencies ?? [];
    if (!Array.isArray(deps)) deps = Object.values(deps);
    for (const dep of deps) {
      const named = version === 3 ? dep?.build_hash ?? dep?.hash : dep?.hash;
      if (typeof named !== "string") continue;
      const target = named in nodes ? dagOf(named) : named;
      if (target === hash) continue;
      if (!users.has(target)) users.set(target, new Set());
      users.get(target).add(hash);
    }
  }
  const dependents = new Map();
  for (const hash of users.keys()) {
    const seen = new Set();
    const todo = [...users.get(hash)];
    while (todo.length) {
      const user = todo.pop();
      if (seen.has(user)) continue;
      seen.add(user);
      todo.push(...(users.get(user) ?? []));
    }
    dependents.set(hash, seen.size);
  }
  return { externals, dependents };
}

/** The coverage as guix weather words it: the share cached of the specs a cache can give
 * (externals apart), what they weigh, and the misses the most depended on first. */
export function weather(coverage, facts) {
  const apart = coverage.entries.filter((e) => facts.externals.has(e.hash));
  const kept = coverage.entries.filter((e) => !facts.externals.has(e.hash));
  const hits = kept.filter((e) => e.hit);
  const needed = (e) => facts.dependents.get(e.hash) ?? 0;
  const misses = kept
    .filter((e) => !e.hit)
    .sort((a, b) => needed(b) - needed(a) || `${a.name}@${a.version}`.localeCompare(`${b.name}@${b.version}`) || a.hash.localeCompare(b.hash));
  const weight = hits.reduce((sum, e) => sum + (e.spec?.size ?? 0), 0);
  const total = hits.length + misses.length;
  const share = total ? `${((100 * hits.length) / total).toFixed(1)}%` : "0%";
  let summary = `${share} cached: ${count(hits.length)} of ${counted(total, "spec")}; ${download(hits, weight)}`;
  if (apart.length) summary += `; ${counted(apart.length, "external")} apart (never fetched from a cache)`;
  return { hits, misses, apart, needed, summary };
}

/** What the hits weigh, as `cachegraph coverage` says it: a size unknown is said, never
 * counted as 0 bytes (an index gives no sizes). */
function download(hits, weight) {
  const unknown = hits.filter((e) => e.spec?.size === null || e.spec?.size === undefined).length;
  if (!hits.length) return "nothing to download";
  if (unknown === hits.length) return "download size unknown (no source gives the sizes of these specs)";
  return `${bytes(weight)} to download${unknown ? `, and ${count(unknown)} of unknown size` : ""}`;
}

function NotALockfile({ message }) {
  return html`<div class="problem" role="alert"><strong>This is not a spack.lock:</strong>
    <pre>${message}</pre></div>`;
}

export default function Coverage() {
  const tags = useQuery("Tags", {});
  const [state, setState] = useState(last ?? {});
  const [tag, setTag] = useState(last?.tag ?? "");
  const [source, setSource] = useState(last?.source ?? null);
  const [text, setText] = useState("");
  const [over, setOver] = useState(false);
  usePainted(tags.data, "coverage");

  // Any change of the lockfile or an option asks again; the last request wins.
  useEffect(() => {
    if (!source) return undefined;
    let lockfile;
    try {
      lockfile = JSON.parse(source.text);
    } catch (error) {
      setState({ invalid: `${source.name} is not JSON: ${error.message}` });
      return undefined;
    }
    if (!lockfile || typeof lockfile !== "object" || typeof lockfile.concrete_specs !== "object") {
      setState({ invalid: `${source.name} has no "concrete_specs": it is JSON, but not a spack.lock` });
      return undefined;
    }
    const controller = new AbortController();
    setState({ loading: true, name: source.name });
    gql("Coverage", { lockfile, tag: tag || null }, { signal: controller.signal }).then(
      ({ data }) => {
        last = { coverage: data.coverage, facts: lockfileFacts(lockfile), name: source.name, tag, source };
        setState(last);
      },
      (error) => {
        if (error.name !== "AbortError") setState({ error, name: source.name });
      },
    );
    return () => controller.abort();
  }, [source, tag]);

  const read = (file) => file && file.text().then((content) => setSource({ text: content, name: file.name }));
  const drop = (event) => {
    event.preventDefault();
    setOver(false);
    read(event.dataTransfer.files[0]);
  };
  const chosen = (event) => {
    read(event.target.files[0]);
    event.target.value = ""; // the same file chosen again is read again
  };

  return html`<h1>Is my environment cached?</h1>
    <p>Give a <code>spack.lock</code> (lockfile versions 2 to 8): every spec in it is looked up by
      its hash; a miss says why and which cached spec is nearest. Nothing is stored.</p>
    <div class=${"dropzone" + (over ? " over" : "")} onDragOver=${(e) => { e.preventDefault(); setOver(true); }}
      onDragLeave=${() => setOver(false)} onDrop=${drop}>
      <label>Drop a spack.lock here, or choose one: <input type="file" accept=".lock,.json,application/json"
        aria-label="spack.lock file" onChange=${chosen} /></label>
      <details><summary>or paste it</summary>
        <textarea aria-label="spack.lock text" rows="6" value=${text} onInput=${(e) => setText(e.target.value)}></textarea>
        <button type="button" onClick=${() => setSource({ text, name: "the pasted text" })} disabled=${!text.trim()}>Check</button>
      </details>
      <${TagPicker} tags=${tags.data?.tags ?? []} tag=${tag} choose=${setTag} label="only in tag" every="any tag" />
    </div>
    <${Updating} busy=${state.loading} what=${`Checking ${state.name}`} />
    ${state.invalid ? html`<${NotALockfile} message=${state.invalid} />` : null}
    ${state.error ? html`<${Problem} error=${state.error} />` : null}
    ${state.coverage ? html`<${Answer} coverage=${state.coverage} facts=${state.facts} name=${state.name} tag=${state.tag} />` : null}`;
}

function Row({ e, needed }) {
  return html`<tr class=${e.hit ? "hit" : "miss"}>
    <td>${e.name}${e.version ? `@${e.version}` : ""}</td>
    <td>${e.spec ? html`<a class="hash" href=${href(`/ui/spec/${e.hash}`)}>${short(e.hash)}</a>` : html`<span class="hash">${short(e.hash)}</span>`}</td>
    <td>${e.hit ? "✓ cached" : "✗ missing"}</td>
    <td class="num">${needed === null ? "" : count(needed)}</td>
    <td>${e.hit
      ? html`${e.spec.stacks.length ? `stacks: ${e.spec.stacks.map((s) => s.name).join(", ")}` : ""}${
          e.spec.stacks.length && e.spec.mirrors.length ? " · " : ""}${e.spec.mirrors.length
          ? html`mirrors: ${e.spec.mirrors.map((m, i) => html`${i ? ", " : ""}${m.name}<${MirrorMark} mirror=${m} />`)}`
          : ""}`
      : e.reason}</td>
    <td>${e.nearest.map((n) => html`<a href=${href(`/ui/spec/${n.spec.hash}`)}>${n.spec.package.name}@${n.spec.version} /${short(n.spec.hash)}</a>
      <small> distance ${n.distance}: ${n.differences.map((d) => d.field).join(", ") || "same"}</small>`)}</td>
  </tr>`;
}

function Answer({ coverage, facts, name, tag }) {
  const report = weather(coverage, facts);
  const ref = useDrawn((element) => coverageBar(element, { hits: report.hits.length, misses: report.misses.length }), [coverage]);
  const [onlyMisses, setOnlyMisses] = useState(report.misses.length > 0);
  useEffect(() => document.getElementById("coverage-h")?.scrollIntoView?.({ block: "nearest" }), [coverage]);
  const rows = onlyMisses ? report.misses : [...report.misses, ...report.hits];
  return html`<section aria-labelledby="coverage-h">
    <h2 id="coverage-h">${name}${tag ? ` in ${tag}` : ""}</h2>
    <p class="summary" data-testid="coverage-summary">${report.summary}</p>
    <p>${count(coverage.cachedRoots.length)} of its roots cached with their whole DAG.</p>
    <div class="chart" ref=${ref} aria-label="coverage bar"></div>
    <label><input type="checkbox" checked=${onlyMisses} onChange=${(e) => setOnlyMisses(e.target.checked)} /> only the misses</label>
    <div class="scroll"><table class="coverage">
      <thead><tr><th>spec</th><th>hash</th><th></th><th class="num" title="specs of the environment that depend on it">needed by</th><th>where, or why not</th><th>nearest cached</th></tr></thead>
      <tbody>${rows.map((e) => html`<${Row} e=${e} needed=${e.hit ? null : report.needed(e)} />`)}</tbody>
    </table></div>
    ${report.apart.length
      ? html`<details class="externals"><summary>${counted(report.apart.length, "external")}, apart: a site has them already, never fetched from a cache</summary>
          <p>${report.apart.map((e, i) => html`${i ? ", " : ""}${e.name}@${e.version} <span class="hash">${short(e.hash)}</span>`)}</p></details>`
      : null}
  </section>`;
}
