// Is my environment cached? A spack.lock dropped, chosen or pasted; the coverage bar, the
// hits (where they are) and the misses (why, and the nearest cached spec).

import { useEffect, useState } from "preact/hooks";
import { ApiError, gql } from "../api.js";
import { coverageBar } from "../charts.js";
import { Loading, Problem, bytes, count, href, html, short, useDrawn, usePainted, useQuery } from "../ui.js";

// The last answer, so that coming back to this view shows it again.
let last = null;

export default function Coverage() {
  const tags = useQuery("Tags", {});
  const [state, setState] = useState(last ?? {});
  const [tag, setTag] = useState(last?.tag ?? "");
  const [text, setText] = useState("");
  const [over, setOver] = useState(false);
  usePainted(tags.data, "coverage");

  const ask = async (source, name) => {
    let lockfile;
    try {
      lockfile = JSON.parse(source);
    } catch (error) {
      setState({ error: new ApiError(`${name} is not JSON, as a spack.lock is: ${error.message}`) });
      return;
    }
    setState({ loading: true, name });
    try {
      const { data } = await gql("Coverage", { lockfile, tag: tag || null });
      last = { coverage: data.coverage, name, tag };
      setState(last);
    } catch (error) {
      setState({ error, name });
    }
  };
  const read = (file) => file && file.text().then((source) => ask(source, file.name));
  const drop = (event) => {
    event.preventDefault();
    setOver(false);
    read(event.dataTransfer.files[0]);
  };

  return html`<h1>Is my environment cached?</h1>
    <p>Give a <code>spack.lock</code> (lockfile versions 2 to 6): every spec in it is looked up by
      its hash; a miss says why and which cached spec is nearest. Nothing is stored.</p>
    <div class=${"dropzone" + (over ? " over" : "")} onDragOver=${(e) => { e.preventDefault(); setOver(true); }}
      onDragLeave=${() => setOver(false)} onDrop=${drop}>
      <label>Drop a spack.lock here, or choose one: <input type="file" accept=".lock,.json,application/json"
        aria-label="spack.lock file" onChange=${(e) => read(e.target.files[0])} /></label>
      <details><summary>or paste it</summary>
        <textarea aria-label="spack.lock text" rows="6" value=${text} onInput=${(e) => setText(e.target.value)}></textarea>
        <button type="button" onClick=${() => ask(text, "the pasted text")} disabled=${!text.trim()}>Check</button>
      </details>
      <label class="picker">only in tag <select aria-label="tag" onChange=${(e) => setTag(e.target.value)}>
        <option value="">any tag</option>
        ${(tags.data?.tags ?? []).map((t) => html`<option value=${t.name} selected=${t.name === tag}>${t.name}</option>`)}
      </select></label>
    </div>
    ${state.loading ? html`<${Loading} what=${`Checking ${state.name}`} />` : null}
    ${state.error ? html`<${Problem} error=${state.error} />` : null}
    ${state.coverage ? html`<${Answer} coverage=${state.coverage} name=${state.name} tag=${state.tag} />` : null}`;
}

function Answer({ coverage, name, tag }) {
  const ref = useDrawn((element) => coverageBar(element, { hits: coverage.hitCount, misses: coverage.missCount }), [coverage]);
  const [onlyMisses, setOnlyMisses] = useState(coverage.missCount > 0);
  useEffect(() => document.getElementById("coverage-h")?.scrollIntoView?.({ block: "nearest" }), [coverage]);
  // externals are never fetched from a cache: neither hits nor misses
  const wanted = coverage.total - coverage.externalCount;
  const percent = wanted ? (100 * coverage.hitCount) / wanted : 0;
  const entries = onlyMisses ? coverage.entries.filter((e) => !e.hit && !e.external) : coverage.entries;
  return html`<section aria-labelledby="coverage-h">
    <h2 id="coverage-h">${name}${tag ? ` in ${tag}` : ""}</h2>
    <p class="summary" data-testid="coverage-summary">${html`<strong>${count(coverage.hitCount)}</strong>`} of ${html`<strong>${count(coverage.total)}</strong>`} specs cached (${percent.toFixed(1)}%), ${html`<strong>${count(coverage.missCount)}</strong>`} missing${coverage.externalCount ? `, ${count(coverage.externalCount)} external (never from a cache)` : ""}; ${coverage.hitBytes ? `${bytes(coverage.hitBytes)} to fetch` : "no sizes recorded"}; ${count(coverage.cachedRoots.length)} roots cached with their whole DAG.</p>
    <div class="chart" ref=${ref} aria-label="coverage bar"></div>
    <label><input type="checkbox" checked=${onlyMisses} onChange=${(e) => setOnlyMisses(e.target.checked)} /> only the misses</label>
    <div class="scroll"><table class="coverage">
      <thead><tr><th>spec</th><th>hash</th><th></th><th>where, or why not</th><th>nearest cached</th></tr></thead>
      <tbody>${entries.map((e) => html`<tr class=${e.hit ? "hit" : e.external ? "external" : "miss"}>
        <td>${e.name}${e.version ? `@${e.version}` : ""}</td>
        <td>${e.spec ? html`<a class="hash" href=${href(`/ui/spec/${e.hash}`)}>${short(e.hash)}</a>` : html`<span class="hash">${short(e.hash)}</span>`}</td>
        <td>${e.hit ? "✓ cached" : e.external ? "external" : "✗ missing"}</td>
        <td>${e.hit
          ? [
              e.spec.stacks.length ? `stacks: ${e.spec.stacks.map((s) => s.name).join(", ")}` : "",
              e.spec.mirrors.length ? `mirrors: ${e.spec.mirrors.map((m) => m.name).join(", ")}` : "",
            ].filter(Boolean).join(" · ")
          : e.reason}</td>
        <td>${e.nearest.map((n) => html`<a href=${href(`/ui/spec/${n.spec.hash}`)}>${n.spec.package.name}@${n.spec.version} /${short(n.spec.hash)}</a>
          <small> distance ${n.distance}: ${n.differences.map((d) => d.field).join(", ") || "same"}</small>`)}</td>
      </tr>`)}</tbody>
    </table></div>
  </section>`;
}
