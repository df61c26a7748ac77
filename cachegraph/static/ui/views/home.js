// Home: the cache at a glance -- how old it is (remote mirrors), totals, tags, stacks,
// mirrors, and how stacks overlap.

import { useState } from "preact/hooks";
import { heatmap } from "../charts.js";
import { navigate } from "../app.js";
import {
  Loading,
  MirrorMark,
  Problem,
  StaleMark,
  Stat,
  TagPicker,
  Updating,
  bytes,
  count,
  counted,
  duration,
  href,
  html,
  secondsSince,
  useDrawn,
  usePainted,
  useQuery,
} from "../ui.js";

export default function Home({ params }) {
  const tag = params.get("tag") || null;
  const { data, error, loading } = useQuery("Home", { tag });
  usePainted(data, "home");
  if (error) return html`<${Problem} error=${error} />`;
  if (!data) return html`<${Loading} />`;
  const { stats, tags, stacks, stackOverlaps, mirrors, largest } = data;
  const within = (extra = {}) => ({ tag: tag ?? undefined, ...extra });
  return html`<h1>The cache at a glance${tag ? html` in <span class="tag">${tag}</span>` : ""}</h1>
    <${TagPicker} tags=${tags} tag=${tag} choose=${(chosen) => navigate(href("/", { tag: chosen }))} />
    <${Updating} busy=${loading} />
    <${DataAge} mirrors=${mirrors} />
    <${Recent} tag=${tag} />
    <section class="stats" aria-label="totals">
      <${Stat} n=${stats.specCount} one="spec" />
      <${Stat} n=${stats.packageCount} one="package" />
      <${Stat} n=${stats.stackCount} one="stack" />
      <${Stat} n=${stats.compilerCount} one="compiler" />
      <${Stat} n=${stats.targetCount} one="target" />
      <${Stat} n=${stats.tagCount} one="tag" />
    </section>
    <div class="columns">
      <section aria-labelledby="tags-h">
        <h2 id="tags-h">Tags <small>newest first</small></h2>
        <div class="scroll short"><table>
          <thead><tr><th>tag</th><th class="num">specs</th></tr></thead>
          <tbody>${tags.map(
            (t) => html`<tr><td><a href=${href("/", { tag: t.name })}>${t.name}</a></td>
              <td class="num"><a href=${href("/ui/search", { tag: t.name })}>${count(t.specCount)}</a></td></tr>`,
          )}</tbody>
        </table></div>
      </section>
      <section aria-labelledby="packages-h">
        <h2 id="packages-h">Largest packages</h2>
        <div class="scroll short"><table>
          <thead><tr><th>package</th><th class="num">specs</th></tr></thead>
          <tbody>${largest.packages.map(
            (p) => html`<tr><td><a href=${href(`/ui/package/${p.value}`, within())}>${p.value}</a></td>
              <td class="num">${count(p.count)}</td></tr>`,
          )}</tbody>
        </table></div>
      </section>
      <section aria-labelledby="stacks-h">
        <h2 id="stacks-h">Stacks</h2>
        <div class="scroll short"><table>
          <thead><tr><th>stack</th><th class="num">specs</th><th class="num">size</th></tr></thead>
          <tbody>${stacks.map(
            (s) => html`<tr><td><a href=${href("/ui/search", within({ stack: s.name }))}>${s.name}</a></td>
              <td class="num">${count(s.specCount)}</td><td class="num">${s.totalBytes ? bytes(s.totalBytes) : "–"}</td></tr>`,
          )}</tbody>
        </table></div>
      </section>
    </div>
    <section aria-labelledby="overlap-h">
      <h2 id="overlap-h">How stacks overlap</h2>
      ${stacks.length < 2
        ? html`<p>One stack: nothing to overlap.</p>`
        : html`<${Overlaps} stacks=${stacks} overlaps=${stackOverlaps} tag=${tag} />`}
    </section>
    <section aria-labelledby="mirrors-h">
      <h2 id="mirrors-h">Mirrors</h2>
      ${mirrors.length === 0
        ? html`<p>No build-cache mirror is loaded: the specs come from cache pages.</p>`
        : html`<div class="scroll"><table>
          <thead><tr><th>mirror</th><th>tag / stack</th><th>layout</th><th class="num">specs</th><th class="num">size</th><th>location</th></tr></thead>
          <tbody>${mirrors.map(
            (m) => html`<tr class=${m.errors ? "failed" : undefined}><td><a href=${href("/ui/search", { mirror: m.name })}>${m.name}</a><${MirrorMark} mirror=${m} /><${StaleMark} mirror=${m} /></td>
              <td>${m.tag?.name} / ${m.stack?.name}</td><td>${m.layout}</td>
              <td class="num">${count(m.specCount)}</td><td class="num">${m.totalBytes ? bytes(m.totalBytes) : "–"}</td>
              <td>${publicLocation(m.location)}</td></tr>`,
          )}</tbody></table></div>`}
    </section>`;
}

/** Where a mirror is, as every visitor may see it: a remote mirror's URL; a folder on the
 * server only as "on this server" (its path is for the admin only, by the admin token). */
export function publicLocation(location) {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location) && !/^file:/i.test(location)) return html`<code>${location}</code>`;
  return html`<span class="muted">on this server</span>`;
}

/** "N new in the last 24 hours" (the specs the change log saw added since, in the tag shown),
 * a link to what changed; nothing while the server keeps no history of changes. What is
 * recent is asked only once some history is known: its question names a moment (rounded down
 * to the minute), while the first one is the same each visit (an answer the browser keeps). */
function Recent({ tag }) {
  const { data: kept, loading: asking } = useQuery("ChangeHistory", {}, { fresh: true });
  const some = kept?.changes.totalCount > 0;
  const since = new Date(Math.floor((Date.now() - 86_400_000) / 60_000) * 60_000).toISOString();
  const { data, loading } = useQuery("Recent", { since, tag }, { fresh: true, skip: !some });
  const recent = data?.changes;
  const added = recent?.nodes.reduce((n, e) => n + e.addedCount, 0);
  return html`<p class="age" data-testid="recent" aria-busy=${asking || loading ? "true" : "false"}>${recent
    ? html`<a href=${href("/ui/changes", { days: 7 })}>${recent.pageInfo.hasNextPage ? "more than " : ""}${count(added)} new in the last 24 hours</a>${tag ? ` in ${tag}` : ""}.`
    : null}</p>`;
}

/** How old the data is, in one line: the age of the oldest index served (from its last
 * change, by this browser's clock: a kept answer stays right) and the stale mirrors; nothing
 * without a remote mirror (local data is as old as its load: the status view says when). */
function DataAge({ mirrors }) {
  const remote = mirrors.filter((m) => m.freshness);
  if (remote.length === 0) return null;
  // ISO 8601 moments in UTC sort as the times they are
  const [oldest] = remote.filter((m) => m.freshness.lastChange)
    .sort((a, b) => (a.freshness.lastChange < b.freshness.lastChange ? -1 : 1));
  const stale = remote.filter((m) => m.freshness.stale).map((m) => m.name);
  const age = oldest
    ? `${remote.length === 1 ? "The index" : "The oldest index"} served was fetched ` +
      `${duration(secondsSince(oldest.freshness.lastChange))} ago (${oldest.name})`
    : "No index has been fetched yet";
  return html`<p class="age" data-testid="data-age">${age}${stale.length
    ? html`; <a class="stale" href=${href("/ui/status")}>⚠ ${counted(stale.length, "stale mirror")}: ${stale.join(", ")}</a>`
    : null}.</p>`;
}

/** The heatmap of shared specs (Jaccard as colour), and the largest pairs as links. */
function Overlaps({ stacks, overlaps, tag }) {
  const shared = (a, b) => href("/ui/search", { stack: [a, b], tag: tag ?? undefined });
  // "root" is the whole tag (every spec is in it): left out unless asked for.
  const [withRoot, setWithRoot] = useState(false);
  const kept = (name) => withRoot || name !== "root";
  const shown = overlaps.filter((o) => kept(o.stacks[0].name) && kept(o.stacks[1].name));
  const ref = useDrawn(
    (element) =>
      heatmap(element, {
        names: stacks.map((s) => s.name).filter(kept),
        pairs: shown.map((o) => ({
          a: o.stacks[0].name,
          b: o.stacks[1].name,
          shared: o.sharedSpecCount,
          jaccard: o.jaccard,
        })),
        open: (a, b) => navigate(shared(a, b)),
      }),
    [overlaps, withRoot],
  );
  const top = shown.slice(0, 10);
  const hasRoot = stacks.some((s) => s.name === "root");
  return html`<div class="overlap">
    <div>
      ${hasRoot
        ? html`<label class="toggle"><input type="checkbox" checked=${withRoot} onChange=${(e) => setWithRoot(e.target.checked)} />
            the stack <code>root</code> (every spec of the tag)</label>`
        : null}
      <div class="chart scroll" ref=${ref} aria-label="stack overlap heatmap: one tab stop, arrow keys move between cells, Enter opens"></div>
    </div>
    <div>
      <h3>Most shared</h3>
      ${top.length === 0
        ? html`<p>No two stacks share a spec.</p>`
        : html`<ol class="pairs">${top.map(
            (o) => html`<li><a href=${shared(o.stacks[0].name, o.stacks[1].name)}>
              ${o.stacks[0].name} ∩ ${o.stacks[1].name}</a>: ${counted(o.sharedSpecCount, "spec")}
              (Jaccard ${o.jaccard.toFixed(2)})</li>`,
          )}</ol>`}
    </div>
  </div>`;
}
