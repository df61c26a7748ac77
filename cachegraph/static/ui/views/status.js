// Status, for an admin: every source and mirror with what loaded, the problems of the load
// (paged, by severity or by mirror), and the snapshot in use. A mirror with errors is marked;
// a remote one says when it was checked and changed, and whether what is served is stale.

import { withParams } from "./search.js";
import {
  Loading,
  MirrorMark,
  Problem,
  StaleMark,
  Stat,
  bytes,
  count,
  duration,
  href,
  html,
  usePainted,
  useQuery,
} from "../ui.js";

const PAGE = 25;

export default function Status({ params }) {
  const severity = params.get("severity") || null;
  const mirror = params.get("mirror") || null;
  const offset = Number(params.get("offset") || 0);
  // Asked fresh: a remote mirror's freshness changes with every check, not only with the data.
  const { data: first } = useQuery("Status", { severity: null, under: null, offset: 0 }, { fresh: true });
  const chosen = first?.mirrors.find((m) => m.name === mirror);
  const under = chosen ? chosen.location.replace(/\/(build_cache(\/index\.json)?|index\.json)$/, "") : null;
  const { data, error, loading } = useQuery("Status", { severity, under, offset }, { skip: mirror && !first, fresh: true });
  usePainted(data, "status");
  if (error) return html`<${Problem} error=${error} />`;
  if (!data) return html`<${Loading} />`;
  const { loadStatus: s, mirrors, tags } = data;
  const path = "/ui/status";
  if (!s) return html`<h1>Status</h1><p>This server did not record how its data was loaded.</p>`;
  const problems = s.problems;
  const remote = mirrors.filter((m) => m.freshness);
  const filtered = [severity && `${severity}s`, chosen && `of ${chosen.name}`].filter(Boolean).join(" ");
  return html`<h1>Status</h1>
    <p class="summary" data-testid="load-summary">${s.summary}; ${s.seconds} s, finished ${s.finished}.</p>
    <div class="stats">
      <${Stat} n=${s.pages} one="page" />
      <${Stat} n=${s.specFiles} one="spec file" />
      <${Stat} n=${s.mirrors} one="mirror" />
      <${Stat} n=${s.specs} one="spec" />
      <${Stat} n=${s.errorCount} one="error" />
      <${Stat} n=${s.warningCount} one="warning" />
    </div>
    <section aria-labelledby="sources-h">
      <h2 id="sources-h">Sources</h2>
      <p>${s.bundled ? "The bundled data (no data was given): " : ""}${s.paths.length
        ? s.paths.map((p, i) => html`${i ? ", " : ""}<code>${p}</code>`)
        : "no pages or spec files"}; tags: ${tags.map((t, i) => html`${i ? ", " : ""}<a href=${href("/", { tag: t.name })}>${t.name}</a>`)}.</p>
      <p>Snapshot: ${s.snapshot
        ? html`<code>${s.snapshot}</code> (${s.fromSnapshot ? "the data was read from it: no data file had changed" : "written after this load"})`
        : "none (--snapshot not set)"}.</p>
    </section>
    <section aria-labelledby="mirrors-h">
      <h2 id="mirrors-h">Mirrors</h2>
      ${mirrors.length === 0
        ? html`<p>No build-cache mirror is loaded.</p>`
        : html`<div class="scroll"><table class="mirrors">
          <thead><tr><th>mirror</th><th>tag / stack</th><th>layout</th><th>signed</th><th class="num">specs</th><th class="num">size</th><th class="num">errors</th><th class="num">warnings</th><th>location</th></tr></thead>
          <tbody>${mirrors.map(
            (m) => html`<tr class=${m.errors ? "failed" : undefined} data-mirror=${m.name}>
              <td><a href=${href("/ui/search", { mirror: m.name })}>${m.name}</a><${MirrorMark} mirror=${m} /><${StaleMark} mirror=${m} /></td>
              <td>${m.tag?.name} / ${m.stack?.name}</td><td>${m.layout}</td><td>${m.signed ? "yes" : "no"}</td>
              <td class="num">${count(m.specCount)}</td><td class="num">${m.totalBytes ? bytes(m.totalBytes) : "–"}</td>
              <td class="num">${m.errors + m.warnings
                ? html`<a href=${withParams(path, params, { mirror: m.name, offset: null })}>${count(m.errors)}</a>`
                : "0"}</td>
              <td class="num">${count(m.warnings)}</td>
              <td><code>${m.location}</code></td></tr>`,
          )}</tbody></table></div>`}
    </section>
    ${remote.length ? html`<${Freshness} mirrors=${remote} />` : null}
    <section aria-labelledby="problems-h" aria-busy=${loading ? "true" : "false"}>
      <h2 id="problems-h">Problems ${filtered ? html`<small>${filtered}</small>` : null}</h2>
      <p class="filters">
        ${["error", "warning"].map((v) => html`<a class=${"badge" + (severity === v ? " on" : "")} aria-pressed=${String(severity === v)}
          href=${withParams(path, params, { severity: severity === v ? null : v, offset: null })}>${v}s</a> `)}
        ${severity || mirror ? html`<a href=${href(path)}>all problems</a>` : null}
      </p>
      ${problems.totalCount === 0
        ? html`<p>None${filtered ? ` (${filtered})` : ""}: everything loaded.</p>`
        : html`<p>${count(offset + 1)}–${count(offset + problems.nodes.length)} of ${count(problems.totalCount)}
            ${offset > 0 ? html` · <a href=${withParams(path, params, { offset: Math.max(0, offset - PAGE) || null })}>previous</a>` : null}
            ${offset + PAGE < problems.totalCount ? html` · <a href=${withParams(path, params, { offset: offset + PAGE })}>next</a>` : null}</p>
          <div class="scroll"><table class="problems"><thead><tr><th>severity</th><th>where</th><th>what</th></tr></thead>
          <tbody>${problems.nodes.map(
            (p) => html`<tr class=${p.severity}><td>${p.severity}</td><td><code>${p.path}${p.line ? `:${p.line}` : ""}</code></td><td>${p.message}</td></tr>`,
          )}</tbody></table></div>`}
    </section>`;
}

/** The remote mirrors' freshness: when each was checked and changed, and whether its last
 * check failed (then its last good data is served: stale, with what failed). */
function Freshness({ mirrors }) {
  const at = (moment, never) => (moment ? html`<time datetime=${moment}>${moment}</time>` : never);
  return html`<section aria-labelledby="freshness-h">
    <h2 id="freshness-h">Remote mirrors</h2>
    <div class="scroll"><table class="freshness">
      <thead><tr><th>mirror</th><th>URL</th><th>layout</th><th>last check</th><th>last change</th><th class="num">age</th><th>next check</th><th>state</th><th>error of the last check</th></tr></thead>
      <tbody>${mirrors.map(({ name, location, layout, freshness: f }) => html`<tr class=${f.stale ? "stale" : undefined} data-mirror=${name}>
        <td>${name}</td><td><code>${location}</code></td><td>${layout}</td>
        <td>${at(f.lastCheck, "never")}</td><td>${at(f.lastChange, "never fetched")}</td>
        <td class="num">${f.ageSeconds === null ? "–" : duration(f.ageSeconds)}</td>
        <td>${at(f.nextCheck, "never (refreshing is off)")}</td>
        <td>${f.stale ? html`<strong class="stale">⚠ stale</strong>` : "fresh"}</td>
        <td>${f.error ?? "none"}</td></tr>`)}</tbody>
    </table></div>
  </section>`;
}
