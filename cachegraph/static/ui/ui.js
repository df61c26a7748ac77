// What the views share: templates, the query hook, tables, pagers, badges, formats.

import { h } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import htm from "htm";
import { ApiError, gql, href, params, queryString } from "./api.js";

export const html = htm.bind(h);
export { href, params, queryString };

// -- data --------------------------------------------------------------------------------

/** {data, warnings, error, loading} of an operation, asked again when its variables change;
 * ``fresh`` asks the server each time (see gql). */
export function useQuery(name, variables, { skip = false, fresh = false } = {}) {
  const key = JSON.stringify([name, variables]);
  // What is shown answers `state.key`: while that is not the question of this render, the
  // view is loading -- from the very render that asks, so `aria-busy` never claims an old
  // answer is the new one.
  const [state, setState] = useState({});
  useEffect(() => {
    if (skip) return undefined;
    const controller = new AbortController();
    // An answer that comes after its question was replaced is dropped, whatever it is.
    gql(name, variables, { signal: controller.signal, fresh }).then(
      ({ data, warnings }) => controller.signal.aborted || setState({ data, warnings, key }),
      (error) => controller.signal.aborted || setState({ error, key }),
    );
    return () => controller.abort();
  }, [key, skip]);
  const current = state.key === key;
  return { ...state, error: current ? state.error : null, loading: !skip && !current };
}

/** Marks the moment a view's main data is on the screen (tests read it as its first
 * meaningful paint), once per page load. */
export function usePainted(ready, view) {
  useEffect(() => {
    if (!ready || document.documentElement.dataset.painted) return;
    requestAnimationFrame(() => {
      performance.mark("cg-painted");
      document.documentElement.dataset.painted = view;
    });
  }, [ready]);
}

// -- formats -----------------------------------------------------------------------------

// Not Intl.NumberFormat: making one loads locale data, 50 ms of a first paint here.
/** The noun for a count: "spec" for 1, "specs" for 0 and the rest. */
export const noun = (n, one, many = `${one}s`) => (n === 1 ? one : many);

/** "1 spec", "2 specs": a count and its noun. */
export const counted = (n, one, many) => `${count(n)} ${noun(n, one, many)}`;

export const count = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

export function bytes(n) {
  if (n === null || n === undefined) return "–";
  const units = ["B", "kB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000;
    i += 1;
  }
  return `${i ? n.toFixed(n < 10 ? 1 : 0) : n} ${units[i]}`;
}

export const short = (hash) => hash.slice(0, 7);

/** A span of seconds as a person says it: "45 s", "4 min", "2 h", "3 days" (rounded down). */
export function duration(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h`;
  return counted(Math.floor(s / 86400), "day");
}

/** Seconds since an ISO 8601 moment, by this browser's clock (never below 0). */
export const secondsSince = (iso) => Math.max(0, (Date.now() - Date.parse(iso)) / 1000);

// -- pieces ------------------------------------------------------------------------------

export function Loading({ what = "Loading" }) {
  return html`<p class="loading" role="status">${what}…</p>`;
}

/** "Updating…" (or `what`) while a view waits for its new answer. Always drawn, empty when idle:
 * an element that comes and goes among its siblings can make Preact move them, and a moved
 * element loses the focus (the tag picker did); a live region is also only announced when it
 * was there before its text changed. */
export function Updating({ busy, what = "Updating" }) {
  return html`<p class="loading" role="status">${busy ? `${what}…` : ""}</p>`;
}

/** A tag to choose, or none (``every``); ``choose`` gets its name or null. With ``counts``,
 * each tag says how many specs it holds. */
export function TagPicker({ tags, tag, choose, label = "Tag", every = "every tag", counts = false }) {
  return html`<label class="picker">${label} <select aria-label="tag" onChange=${(e) => choose(e.target.value || null)}>
    <option value="" selected=${!tag}>${every}</option>
    ${tags.map((t) => html`<option value=${t.name} selected=${t.name === tag}>${t.name}${counts ? ` (${count(t.specCount)})` : ""}</option>`)}
  </select></label>`;
}

export function Problem({ error }) {
  const text = error instanceof ApiError ? error.message : String(error?.message ?? error);
  return html`<div class="problem" role="alert"><strong>The server said:</strong>
    <pre>${text}</pre></div>`;
}

export function Warnings({ warnings }) {
  if (!warnings?.length) return null;
  return html`<ul class="warnings" role="note">${warnings.map((w) => html`<li>${w}</li>`)}</ul>`;
}

/** A total and its noun ("1 tag", "2 tags"), the count large above it. */
export function Stat({ n, one, many }) {
  return html`<div class="stat"><span class="value">${count(n)}</span>
    <span class="label">${noun(n, one, many)}</span></div>`;
}

/** A chip that links somewhere; "on" when its filter is applied. */
export function Badge({ to, on = false, title, children }) {
  return html`<a class=${"badge" + (on ? " on" : "")} href=${to} title=${title}
    aria-pressed=${to ? String(on) : undefined}>${children}</a>`;
}

/** A mark beside a mirror that met errors while loading: a link to its problems. */
export function MirrorMark({ mirror }) {
  if (!mirror.errors) return null;
  return html` <a class="failed" href=${href("/ui/status", { mirror: mirror.name })}
    title="errors met loading this mirror: it may hold fewer specs than it should">⚠ ${counted(mirror.errors, "error")}</a>`;
}

/** A mark beside a remote mirror whose last check failed: what is served may be old. */
export function StaleMark({ mirror }) {
  if (!mirror.freshness?.stale) return null;
  return html` <a class="stale" href=${href("/ui/status")}
    title=${`stale: its last check failed (${mirror.freshness.error}); its last good data is served`}>⚠ stale</a>`;
}

/** A sortable column header: a link to the same view ordered by it. */
export function SortHeader({ label, field, order, link, cls }) {
  const [current, direction] = (order || "").split(":");
  const on = current === field;
  const next = on && direction === "asc" ? "desc" : "asc";
  const arrow = on ? (direction === "asc" ? " ▲" : " ▼") : "";
  return html`<th class=${cls} aria-sort=${on ? (direction === "asc" ? "ascending" : "descending") : "none"}>
    <a href=${link(`${field}:${next}`)}>${label}${arrow}</a></th>`;
}

/** Forward paging by cursor; back is the browser's. */
export function Pager({ connection, shown, next, first }) {
  const start = shown + 1;
  const end = shown + connection.nodes.length;
  return html`<nav class="pager" aria-label="pages">
    <span>${connection.totalCount ? `${count(start)}–${count(end)} of ${count(connection.totalCount)}` : "none"}</span>
    ${shown > 0 ? html`<a href=${first}>First page</a>` : null}
    ${connection.pageInfo.hasNextPage ? html`<a href=${next} rel="next">Next page</a>` : null}
  </nav>`;
}

/** The variants every one of the specs has (none for fewer than two): what "hide common
 * values" hides. */
export function commonVariants(specs) {
  if (specs.length < 2 || !("variants" in specs[0])) return [];
  return specs[0].variants.filter((v) => specs.every((s) => s.variants.includes(v)));
}

/** The columns a spec table may show, beside the hash (always shown); ``full``: a SpecRow's. */
export const COLUMNS = ["package", "version", "compiler", "arch", "variants", "tags", "stacks", "size"];
const FULL_ONLY = new Set(["variants", "tags", "stacks", "size"]);
const COLUMNS_KEY = "cg-hidden-columns";
/** A phone's defaults: what fits 390 px beside the hash (the picker shows the rest). */
const NARROW = 600;
const NARROW_HIDDEN = ["compiler", "arch", "variants", "tags", "stacks", "size"];

function storedHidden() {
  try {
    const kept = JSON.parse(localStorage.getItem(COLUMNS_KEY));
    if (Array.isArray(kept)) return kept.filter((c) => COLUMNS.includes(c));
  } catch {
    // no storage (a private window) or a value not ours: the defaults
  }
  return window.innerWidth <= NARROW ? NARROW_HIDDEN : [];
}

/** The columns the reader hid, kept in local storage for every spec table and visit. */
export function useHiddenColumns() {
  const [hidden, setHidden] = useState(storedHidden);
  const toggle = (column) => {
    const next = hidden.includes(column) ? hidden.filter((c) => c !== column) : [...hidden, column];
    try {
      localStorage.setItem(COLUMNS_KEY, JSON.stringify(next));
    } catch {
      // not kept: the choice holds for this page only
    }
    setHidden(next);
  };
  return [hidden, toggle];
}

/** Whether a box is wider inside than out (it scrolls sideways): a cue is shown then. */
function useOverflowing() {
  const box = useRef(null);
  const [over, setOver] = useState(false);
  useEffect(() => {
    const element = box.current;
    if (!element || typeof ResizeObserver === "undefined") return undefined;
    const measure = () => setOver(element.scrollWidth > element.clientWidth + 1);
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    if (element.firstElementChild) observer.observe(element.firstElementChild);
    measure();
    return () => observer.disconnect();
  });
  return [box, over];
}

function ColumnPicker({ columns, hidden, toggle }) {
  return html`<details class="colpicker">
    <summary>Columns${hidden.length ? ` (${hidden.filter((c) => columns.includes(c)).length} hidden)` : ""}</summary>
    ${columns.map((c) => html`<label><input type="checkbox" name=${c} checked=${!hidden.includes(c)}
      onChange=${() => toggle(c)} /> ${c}</label> `)}
  </details>`;
}

/** The usual table of specs, one line a row; ``order`` and ``link`` make its headers sort it;
 * ``hidden`` variants (the common ones) are left out of each row, which says so. The reader
 * picks the columns (kept in local storage); the hash and package stay in view while a table
 * wider than its box scrolls sideways, and a cue says that it does. */
export function SpecTable({ specs, order, link, marks = {}, showPackage = true, hidden = [] }) {
  const full = specs.length > 0 && "variants" in specs[0]; // a SpecRow, not a SpecBrief
  const [hiddenColumns, toggle] = useHiddenColumns();
  const [box, over] = useOverflowing();
  const columns = COLUMNS.filter((c) => (c !== "package" || showPackage) && (full || !FULL_ONLY.has(c)));
  const on = (c) => columns.includes(c) && !hiddenColumns.includes(c);
  const sortable = (label, field) =>
    link ? html`<${SortHeader} label=${label} field=${field} order=${order} link=${link} />` : html`<th>${label}</th>`;
  const skip = new Set(hidden);
  return html`<div class="spectable">
  <${ColumnPicker} columns=${columns} hidden=${hiddenColumns} toggle=${toggle} />
  ${over ? html`<p class="scrollcue" data-testid="scroll-cue">More columns to the right: scroll sideways →</p>` : null}
  <div class=${`scroll${over ? " overflowing" : ""}`} ref=${box}><table class=${`specs${on("package") ? " pinned2" : ""}`}>
    <thead><tr>
      <th class="pin">hash</th>
      ${on("package") ? (link ? html`<${SortHeader} label="package" field="package" order=${order} link=${link} cls="pin pin2" />` : html`<th class="pin pin2">package</th>`) : null}
      ${on("version") ? sortable("version", "version") : null}
      ${on("compiler") ? sortable("compiler", "compiler") : null}
      ${on("arch") ? sortable(full ? "arch" : "target", "target") : null}
      ${on("variants") ? html`<th>variants${hidden.length ? html` <small>(what differs)</small>` : null}</th>` : null}
      ${on("tags") ? html`<th>tags</th>` : null}
      ${on("stacks") ? html`<th>stacks</th>` : null}
      ${on("size") ? sortable("size", "size") : null}
    </tr></thead>
    <tbody>${specs.map((s) => {
      const shown = full ? s.variants.filter((v) => !skip.has(v)) : [];
      return html`<tr key=${s.hash}>
        <td class="pin"><a class="hash" href=${href(`/ui/spec/${s.hash}`)}>${short(s.hash)}</a>
          ${marks[s.hash] ? html` <span class="mark" title=${marks[s.hash]}>≈</span>` : null}</td>
        ${on("package") ? html`<td class="pin pin2"><a href=${href(`/ui/package/${s.package.name}`)}>${s.package.name}</a></td>` : null}
        ${on("version") ? html`<td>${s.version}</td>` : null}
        ${on("compiler") ? html`<td>${s.compiler?.name ?? "none"}</td>` : null}
        ${on("arch") ? html`<td>${s.platform ? `${s.platform}-${s.os}-` : ""}${s.target.name}</td>` : null}
        ${on("variants") ? html`<td class="variants" title=${s.variants.join(" ")}>${shown.map((v) => html`<span class="chip">${v}</span>`)}</td>` : null}
        ${on("tags") ? html`<td class="stacks" title=${s.tags.map((t) => t.name).join(", ")}>${s.tags.map((t) => t.name).join(", ")}</td>` : null}
        ${on("stacks") ? html`<td class="stacks" title=${s.stacks.map((t) => t.name).join(", ")}>${s.stacks.map((t) => t.name).join(", ")}</td>` : null}
        ${on("size") ? html`<td class="num">${bytes(s.size)}</td>` : null}
      </tr>`;
    })}</tbody>
  </table></div></div>`;
}

/** One word for a POSIX shell, as Python's shlex.quote makes it: left as it is when it holds
 * only safe characters, else in single quotes (a quote inside written '"'"'). Nothing from the
 * data can end the word, so nothing can run. */
export function shellQuote(value) {
  const text = String(value ?? "");
  if (text === "") return "''";
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(text)) return text;
  return `'${text.replaceAll("'", `'"'"'`)}'`;
}

/** A shell command from its words, each quoted. */
export function shellCommand(...words) {
  return words.map(shellQuote).join(" ");
}

/** A box that copies its text. */
export function Command({ text }) {
  const [copied, setCopied] = useState(false);
  const copy = () =>
    navigator.clipboard?.writeText(text).then(() => {
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    });
  return html`<div class="command"><code>${text}</code>
    <button type="button" onClick=${copy} aria-label="copy">${copied ? "copied" : "copy"}</button></div>`;
}

/** An element the caller draws into after it is on the page (charts, the DAG). */
export function useDrawn(draw, deps) {
  const ref = useRef(null);
  useEffect(() => {
    if (!ref.current) return undefined;
    let undo;
    Promise.resolve(draw(ref.current)).then((u) => (undo = u));
    return () => {
      if (typeof undo === "function") undo();
      if (ref.current) ref.current.replaceChildren();
    };
  }, deps);
  return ref;
}

/** The order parameter ("field:asc") as the API's orderBy. */
export function orderBy(order) {
  if (!order) return null;
  const [field, direction] = order.split(":");
  return [{ field: field.toUpperCase(), direction: direction === "desc" ? "DESC" : "ASC" }];
}
