// What changed: each mirror's history as a bar a day (specs added above, removed below)
// over the last days chosen, from the server's change log; a day (its bar or its row) lists
// that day's changes with their specs, each a link while the spec is loaded. Days are UTC.

import { navigate } from "../app.js";
import { changeTimeline } from "../charts.js";
import { withParams } from "./search.js";
import {
  Loading,
  Pager,
  Problem,
  Updating,
  count,
  counted,
  href,
  html,
  short,
  useDrawn,
  usePainted,
  useQuery,
} from "../ui.js";

const PATH = "/ui/changes";
const RANGES = [7, 30, 90, 365];
const DAY = 86_400_000;

/** The UTC day (YYYY-MM-DD) of an ISO 8601 moment or a time in milliseconds. */
export const dayOf = (moment) => new Date(moment).toISOString().slice(0, 10);

/** A moment as read here: "2026-11-28 22:10:05 UTC", in a <time> a tool can read. */
export function Moment({ at }) {
  return html`<time datetime=${at}>${new Date(at).toISOString().slice(0, 19).replace("T", " ")} UTC</time>`;
}

/** Whether a text is a day of the calendar as YYYY-MM-DD (not 2026-02-30). */
function isDay(text) {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text ?? "")) return false;
  const time = Date.parse(text);
  return !Number.isNaN(time) && dayOf(time) === text;
}

/** The last ``n`` UTC days, oldest first, today last. */
function lastDays(n) {
  const today = Date.parse(dayOf(Date.now()));
  return Array.from({ length: n }, (_, i) => dayOf(today - (n - 1 - i) * DAY));
}

/** mirror -> its days with changes, oldest first: {day, added, removed, replaced, events}. */
function byMirror(events) {
  const mirrors = new Map();
  for (const e of events) {
    const days = mirrors.get(e.mirror) ?? new Map();
    mirrors.set(e.mirror, days);
    const day = dayOf(e.at);
    const row = days.get(day) ?? { day, added: 0, removed: 0, replaced: 0, events: 0 };
    days.set(day, row);
    row.added += e.addedCount;
    row.removed += e.removedCount;
    row.replaced += e.replacedCount;
    row.events += 1;
  }
  return [...mirrors].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, days]) => [name, [...days.values()]]);
}

export default function Changes({ params }) {
  const range = RANGES.includes(Number(params.get("days"))) ? Number(params.get("days")) : 30;
  const mirror = params.get("mirror") || null;
  const asked = params.get("day");
  const day = isDay(asked) ? asked : null;
  const days = lastDays(range);
  // Asked fresh: the history grows with each refresh that changes an index.
  const { data, error, loading } = useQuery("Changes", { since: `${days[0]}T00:00:00Z`, mirror }, { fresh: true });
  usePainted(data, "changes");
  if (error) return html`<${Problem} error=${error} />`;
  if (!data) return html`<${Loading} />`;
  const { changes, mirrors } = data;
  const timelines = byMirror(changes.nodes);
  // every day with a change has its column, even one past "today" by this browser's clock
  const columns = [...new Set([...days, ...changes.nodes.map((e) => dayOf(e.at))])].sort();
  const names = [...new Set([...mirrors.map((m) => m.name), ...timelines.map(([name]) => name)])].sort();
  const link = (changes) => withParams(PATH, params, changes);
  return html`<h1>What changed</h1>
    <p class="hint">Each time a refresh or a reload finds a mirror's index changed, the server records
      the specs it added, removed and replaced (rebuilt under a new hash). Days are in UTC.</p>
    <div class="filters" role="group" aria-label="range and mirror">
      ${RANGES.map((n) => html`<a class=${"badge" + (n === range ? " on" : "")} aria-pressed=${String(n === range)}
        href=${link({ days: n === 30 ? null : n, day: null, after: null, from: null })}>last ${n} days</a> `)}
      <label class="picker">Mirror <select aria-label="mirror" onChange=${(e) => navigate(link({ mirror: e.target.value || null, day: null, after: null, from: null }))}>
        <option value="" selected=${!mirror}>every mirror</option>
        ${names.map((n) => html`<option value=${n} selected=${n === mirror}>${n}</option>`)}
      </select></label>
    </div>
    <${Updating} busy=${loading} />
    ${asked && !day
      ? html`<p class="warnings" role="note" data-testid="not-a-day">“${asked}” is not a day: write it as YYYY-MM-DD (2026-11-28).</p>`
      : null}
    <section aria-labelledby="timeline-h" aria-busy=${loading ? "true" : "false"}>
      <h2 id="timeline-h">Changes a day <small>since ${days[0]}${mirror ? ` in ${mirror}` : ""}</small></h2>
      ${changes.pageInfo.hasNextPage
        ? html`<p class="warnings" role="note">Only the first ${count(changes.nodes.length)} of ${count(changes.totalCount)}
            changes are drawn: choose a mirror or fewer days.</p>`
        : null}
      ${timelines.length === 0
        ? html`<p data-testid="no-changes">No change recorded since ${days[0]}${mirror ? ` in ${mirror}` : ""}:
            the history kept holds none in this range.</p>`
        : html`<p class="hint">A day's bar lists its changes: click it, or reach it with Tab and
            the arrow keys, then press Enter.</p>`}
      ${timelines.map(([name, rows]) => html`<${Timeline} key=${name} name=${name} rows=${rows} days=${columns} params=${params} />`)}
    </section>
    ${day ? html`<${Day} day=${day} mirror=${params.get("of") || mirror} params=${params} />` : null}`;
}

/** One mirror's bars, and the same days as a table (links a reader can tab through). */
function Timeline({ name, rows, days, params }) {
  const open = (day) => withParams(PATH, params, { day, of: name, after: null, from: null });
  const ref = useDrawn(
    (element) => changeTimeline(element, { days, rows, label: name, open: (day) => navigate(open(day)) }),
    // drawn again only when what it shows changes: a day opened keeps the focus on its bar
    [JSON.stringify(rows), days.join()],
  );
  const total = (key) => rows.reduce((n, r) => n + r[key], 0);
  return html`<section class="timeline" data-mirror=${name} aria-label=${`changes of ${name}`}>
    <h3>${name} <small>${total("added")} added, ${total("removed")} removed, ${total("replaced")} replaced</small></h3>
    <div class="chart scroll" ref=${ref}
      aria-label=${`changes a day of ${name}: one tab stop, the arrow keys move between days, Enter lists a day's changes`}></div>
    <details><summary>As a table</summary>
      <table class="days"><thead><tr><th>day</th><th class="num">added</th><th class="num">removed</th><th class="num">replaced</th><th class="num">changes</th></tr></thead>
      <tbody>${[...rows].reverse().map((r) => html`<tr data-day=${r.day}><td><a href=${open(r.day)}>${r.day}</a></td>
        <td class="num">${count(r.added)}</td><td class="num">${count(r.removed)}</td><td class="num">${count(r.replaced)}</td>
        <td class="num">${count(r.events)}</td></tr>`)}</tbody></table>
    </details>
  </section>`;
}

/** A day's changes (of one mirror, or every one), a page at a time, each with its specs. */
function Day({ day, mirror, params }) {
  const until = dayOf(Date.parse(day) + DAY);
  const after = params.get("after");
  const shown = Number(params.get("from") || 0);
  const { data, error, loading } = useQuery(
    "ChangesDay",
    { since: `${day}T00:00:00Z`, until: `${until}T00:00:00Z`, mirror, after },
    { fresh: true },
  );
  if (error) return html`<${Problem} error=${error} />`;
  const changes = data?.changes;
  return html`<section class="changes" aria-labelledby="day-h" aria-busy=${loading ? "true" : "false"} data-testid="day">
    <h2 id="day-h">Changes on ${day} <small>${mirror ? `in ${mirror}` : "in every mirror"}</small></h2>
    ${mirror ? html`<p><a href=${withParams(PATH, params, { of: null, mirror: null, after: null, from: null })}>every mirror that day</a></p>` : null}
    ${!changes
      ? html`<${Loading} />`
      : changes.totalCount === 0
        ? html`<p>No change that day.</p>`
        : html`<${Pager} connection=${changes} shown=${shown}
              first=${withParams(PATH, params, { after: null, from: null })}
              next=${withParams(PATH, params, { after: changes.pageInfo.endCursor, from: shown + changes.nodes.length })} />
            ${changes.nodes.map((e) => html`<${Event} key=${e.id} event=${e} />`)}`}
  </section>`;
}

function Event({ event: e }) {
  return html`<article class="event" data-event=${e.id} aria-labelledby=${`event-${e.id}`}>
    <h3 id=${`event-${e.id}`}><${Moment} at=${e.at} /> · ${e.mirror}: ${e.addedCount} added, ${e.removedCount} removed, ${e.replacedCount} replaced</h3>
    ${e.atStart ? html`<p class="hint">Found at a start: the index changed while the server was down.</p>` : null}
    <${Specs} title="Added" kind="added" specs=${e.added} />
    <${Specs} title="Removed" kind="removed" specs=${e.removed} />
    ${e.replaced.length
      ? html`<h4>Replaced <small>rebuilt under a new hash</small></h4>
        <ul class="changed" data-kind="replaced">${e.replaced.map(
          (r) => html`<li><${SpecLink} spec=${r.old} /> → <${SpecLink} spec=${r.new} /></li>`,
        )}</ul>`
      : null}
  </article>`;
}

function Specs({ title, kind, specs }) {
  if (!specs.length) return null;
  return html`<h4>${title} <small>${counted(specs.length, "spec")}</small></h4>
    <ul class="changed" data-kind=${kind}>${specs.map((s) => html`<li><${SpecLink} spec=${s} /></li>`)}</ul>`;
}

/** A changed spec: its hash, a link to its page while it is loaded, and its spec string. */
function SpecLink({ spec }) {
  const hash = spec.spec
    ? html`<a class="hash" href=${href(`/ui/spec/${spec.hash}`)} data-hash=${spec.hash}>/${short(spec.hash)}</a>`
    : html`<span class="hash gone" title="no longer loaded" data-hash=${spec.hash}>/${short(spec.hash)}</span>`;
  return html`${hash} <code>${spec.specString}</code>`;
}
