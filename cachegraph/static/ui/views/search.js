// Search and facets: one box for a package, a hash prefix or a Spack constraint; the
// facet counts of everything that matches narrow it by clicking; one page at a time.

import { useEffect, useState } from "preact/hooks";
import { gql } from "../api.js";
import { navigate } from "../app.js";
import {
  Badge,
  Loading,
  Pager,
  Problem,
  SpecTable,
  TagPicker,
  Updating,
  Warnings,
  commonVariants,
  count,
  counted,
  href,
  html,
  noun,
  orderBy,
  queryString,
  usePainted,
  useQuery,
} from "../ui.js";

export const PAGE = 25;
/** The page sizes a reader may choose. */
export const SIZES = [25, 50, 100];

/** facet of the API -> [URL parameter, SpecFilter field, several values?] */
export const FACETS = {
  packages: ["package", "package", false],
  versions: ["version", "version", false],
  compilers: ["compiler", "compiler", false],
  targets: ["target", "target", false],
  oss: ["os", "os", false],
  stacks: ["stack", "stacks", true],
  variants: ["variant", "variants", true],
};

/** The SpecFilter a view's URL says. */
export function filterOf(params) {
  const filter = {};
  const q = (params.get("q") || "").trim();
  if (q) filter.satisfies = q;
  for (const [param, field, several] of Object.values(FACETS)) {
    const values = params.getAll(param);
    if (values.length) filter[field] = several ? values : values[0];
  }
  for (const key of ["tag", "mirror", "platform"]) if (params.get(key)) filter[key] = params.get(key);
  return filter;
}

/** The same URL with one parameter's value added or, when present, removed. */
export function toggled(path, params, param, value, several) {
  const next = new URLSearchParams(params);
  next.delete("after");
  next.delete("from");
  const values = next.getAll(param);
  next.delete(param);
  const on = values.includes(value);
  const kept = several ? values.filter((v) => v !== value) : [];
  for (const v of kept) next.append(param, v);
  if (!on) next.append(param, value);
  return href(path) + (next.toString() ? "?" + queryString(next) : "");
}

export function withParams(path, params, changes) {
  const next = new URLSearchParams(params);
  for (const [key, value] of Object.entries(changes)) {
    next.delete(key);
    for (const one of [].concat(value ?? [])) next.append(key, one);
  }
  return href(path) + (next.toString() ? "?" + queryString(next) : "");
}

export function FacetPanel({ facets, params, path, skip = [] }) {
  return html`<aside class="facets" aria-label="facets">
    <p class="total"><strong>${count(facets.specCount)}</strong> ${noun(facets.specCount, "spec")}</p>
    ${Object.entries(FACETS)
      .filter(([facet]) => !skip.includes(facet) && facets[facet]?.length)
      .map(([facet, [param, , several]]) => {
        const chosen = params.getAll(param);
        return html`<section class="facet" aria-label=${facet}>
          <h3>${facet === "oss" ? "os" : facet}</h3>
          <div class="badges">${facets[facet].map(
            (v) => html`<${Badge} to=${toggled(path, params, param, v.value, several)}
              on=${chosen.includes(v.value)}>${v.value} <span class="n">${count(v.count)}</span><//>`,
          )}</div>
        </section>`;
      })}
  </aside>`;
}

/** One page of specs with its facets: the body of the search and package views. */
export function SpecResults({ filter, params, path, view, skip = [], marks, showPackage = true }) {
  const order = params.get("order");
  const shown = Number(params.get("from") || 0);
  const size = SIZES.includes(Number(params.get("size"))) ? Number(params.get("size")) : PAGE;
  const showCommon = params.get("common") === "show";
  const variables = {
    filter,
    tag: filter.tag ?? null,
    first: size,
    after: params.get("after"),
    orderBy: orderBy(order),
  };
  const { data, warnings, error, loading } = useQuery("Search", variables);
  usePainted(data, view);
  if (error) return html`<${Problem} error=${error} />`;
  if (!data) return html`<${Loading} />`;
  const { specs, facets } = data;
  const link = (o) => withParams(path, params, { order: o, after: null, from: null });
  const common = commonVariants(specs.nodes);
  const pager = html`<${Pager} connection=${specs} shown=${shown}
    first=${withParams(path, params, { after: null, from: null })}
    next=${withParams(path, params, { after: specs.pageInfo.endCursor, from: shown + specs.nodes.length })} />`;
  return html`<div class="results" aria-busy=${loading ? "true" : "false"}>
    <${FacetPanel} facets=${facets} params=${params} path=${path} skip=${skip} />
    <section class="table" aria-label="specs" id="results">
      <${Warnings} warnings=${warnings} />
      <${Corrections} warnings=${warnings} params=${params} path=${path} />
      <${Updating} busy=${loading} />
      ${pager}
      ${common.length
        ? html`<p class="common" data-testid="common-values">${showCommon
            ? html`Every variant shown. <a href=${withParams(path, params, { common: null })}>Hide the ${count(common.length)} common to every row</a>`
            : html`Common to every row, hidden: ${common.map((v) => html`<span class="chip">${v}</span>`)}
                <a href=${withParams(path, params, { common: "show" })}>show all</a>`}</p>`
        : null}
      ${specs.nodes.length
        ? html`<${SpecTable} specs=${specs.nodes} order=${order} link=${link} marks=${marks} showPackage=${showPackage}
            hidden=${showCommon ? [] : common} />`
        : html`<p>No spec matches.</p>`}
      ${specs.nodes.length > 10 ? pager : null}
      <${Download} variables=${variables} />
      <p class="pagesize">Per page: ${SIZES.map((n) => html` <a href=${withParams(path, params, { size: n === PAGE ? null : n, after: null, from: null })}
        aria-current=${n === size ? "true" : undefined}>${n}</a>`)}</p>
    </section>
  </div>`;
}

/** A word with nothing of Spack's syntax in it: a name, a version-less value. */
const BARE = /^[A-Za-z0-9_.-]+$/;
const HASH = /^\/?[A-Za-z2-7]{7,32}$/;

/** The search text as a constraint the server understands, forgivingly: names lowercased
 * (ZLIB is zlib), a bare word that is an os, a platform, a target or a compiler made that
 * attribute (ubuntu22.04 is os=ubuntu22.04), a word that is part of one package's name made
 * that package (keras is py-keras), and the packages a word is part of, listed. Asks the
 * server about each bare word (Understand.graphql); null until it has answered. */
export function useUnderstood(q) {
  const [understood, setUnderstood] = useState(null);
  useEffect(() => {
    const controller = new AbortController();
    setUnderstood(null);
    understand(q, controller.signal).then(setUnderstood, (error) => {
      if (error.name !== "AbortError") setUnderstood({ constraint: q, notes: [], packages: [] });
    });
    return () => controller.abort();
  }, [q]);
  return understood;
}

async function understand(q, signal) {
  const tokens = q.split(/\s+/).filter(Boolean);
  const notes = [];
  let packages = [];
  let providersOf = null;
  const words = await Promise.all(
    tokens.map(async (token) => {
      // A name leads a token: lowercase it (not a variant's value: build_type=Release).
      const lowered = token.includes("=") ? token : token.replace(/^[A-Za-z0-9_.-]+/, (n) => n.toLowerCase());
      if (!BARE.test(lowered)) return lowered;
      const { data } = await gql("Understand", { word: lowered }, { signal });
      if (data.package) return { name: lowered };
      const as = data.os.specCount ? "os" : data.platform.specCount ? "platform" : data.target ? "target" : null;
      if (as) {
        notes.push(`${token} → ${as}=${lowered}`);
        return `${as}=${lowered}`;
      }
      if (data.compiler) {
        notes.push(`${token} → %${data.compiler.name}`);
        return `%${data.compiler.name}`;
      }
      const named = data.packages.nodes;
      // A virtual (mpi, blas) is searched as `spack find mpi` does: its providers' specs, the
      // packages whose name holds it still offered beside.
      const provided = (await gql("Providers", { word: lowered }, { signal })).data.facets.specCount;
      if (provided) {
        providersOf = lowered;
        if (named.length) {
          packages = named.map((p) => ({ ...p, word: token }));
          packages.total = data.packages.totalCount;
        }
        return { name: lowered };
      }
      if (named.length === 1) {
        notes.push(`${token} → ${named[0].name} (the one package whose name holds it)`);
        return { name: named[0].name };
      }
      if (named.length > 1) {
        packages = named.map((p) => ({ ...p, word: token }));
        packages.total = data.packages.totalCount;
        return null;
      }
      return lowered;
    }),
  );
  // A package name leads a constraint: put the names first.
  const names = words.filter((w) => w?.name).map((w) => w.name);
  const rest = words.filter((w) => typeof w === "string");
  return { constraint: [...names, ...rest].join(" "), notes, packages, providersOf };
}

function PackageChoices({ packages }) {
  if (!packages.length) return null;
  const word = packages[0].word;
  return html`<section class="choices" aria-label="packages">
    <h2>Packages whose name holds <code>${word}</code> <small>${count(packages.total)}</small></h2>
    <div class="badges">${packages.map(
      (p) => html`<${Badge} to=${href(`/ui/package/${p.name}`)}>${p.name} <span class="n">${count(p.specCount)}</span><//>`,
    )}</div>
  </section>`;
}

// The server's warning of a value no loaded spec has: "... 'ubuntu', so nothing matches it
// (did you mean ubuntu22.04?)".
const DID_YOU_MEAN = /'([^']+)'.*\(did you mean ([^?]+)\?\)/;
const escaped = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The server's "did you mean" suggestions as searches: the search text with the unknown
 * word replaced by each suggestion. */
function Corrections({ warnings, params, path }) {
  const q = params.get("q") || "";
  const links = [];
  for (const warning of warnings ?? []) {
    const found = warning.match(DID_YOU_MEAN);
    if (!found) continue;
    const word = new RegExp(`(^|[^A-Za-z0-9_.-])${escaped(found[1])}(?![A-Za-z0-9_.-])`, "i");
    if (!word.test(q)) continue;
    for (const suggestion of found[2].split(", ")) {
      const fixed = q.replace(word, (_, before) => before + suggestion);
      links.push([suggestion, withParams(path, params, { q: fixed, after: null, from: null })]);
    }
  }
  if (!links.length) return null;
  return html`<p class="hint" data-testid="did-you-mean">Did you mean ${links.map(
    ([suggestion, to], i) => html`${i ? ", " : ""}<a href=${to}>${suggestion}</a>`,
  )}?</p>`;
}

/** A search that is a hash: open its spec (replacing the search in the history). */
function useHashOpened(q) {
  const [state, setState] = useState(HASH.test(q) ? "asking" : "no");
  useEffect(() => {
    if (!HASH.test(q)) return undefined;
    const controller = new AbortController();
    gql("HashLookup", { hash: q.replace(/^\//, "").toLowerCase() }, { signal: controller.signal }).then(
      ({ data }) => {
        if (data.spec) navigate(href(`/ui/spec/${data.spec.hash}`), { replace: true });
        else setState("no");
      },
      () => setState("no"),
    );
    return () => controller.abort();
  }, [q]);
  return state;
}

export default function Search({ params }) {
  const q = (params.get("q") || "").trim();
  const opening = useHashOpened(q);
  const understood = useUnderstood(q);
  const tags = useQuery("Tags", {});
  if (opening === "asking") return html`<${Loading} what="Opening the spec" />`;
  if (!understood) return html`<${Loading} />`;
  const filter = filterOf(params);
  if (understood.constraint) filter.satisfies = understood.constraint;
  else delete filter.satisfies;
  const described = understood.providersOf
    ? html`Specs of the providers of <code>${understood.providersOf}</code>`
    : Object.keys(filter).length ? "Specs" : "Every spec";
  const matching = filter.satisfies && filter.satisfies !== understood.providersOf;
  return html`<h1>${described}${matching ? html` matching <code>${filter.satisfies}</code>` : ""}
      ${filter.tag ? html` in <span class="tag">${filter.tag}</span>` : ""}</h1>
    <${TagPicker} tags=${tags.data?.tags ?? []} tag=${filter.tag} counts
      choose=${(chosen) => navigate(withParams("/ui/search", params, { tag: chosen, after: null, from: null }))} />
    ${understood.notes.length
      ? html`<p class="hint">Understood <code>${q}</code> as: ${understood.notes.join("; ")}.</p>`
      : null}
    <${ActiveFilters} params=${params} path="/ui/search" />
    <${PackageChoices} packages=${understood.packages} />
    <${SpecResults} filter=${filter} params=${params} path="/ui/search" view="search" />`;
}

/** The rows of a table as plain values, for a download. */
function exported(s) {
  return {
    hash: s.hash,
    package: s.package.name,
    version: s.version,
    compiler: s.compiler?.name ?? "",
    platform: s.platform,
    os: s.os,
    target: s.target.name,
    variants: s.variants.join(" "),
    stacks: s.stacks.map((t) => t.name).join(" "),
    size: s.size ?? "",
  };
}

const csvCell = (v) => (/[",\n]/.test(String(v)) ? `"${String(v).replaceAll('"', '""')}"` : String(v));

/** Download every row of the table (not only this page) as CSV or JSON: the same query,
 * page after page, the file made as they come. */
function Download({ variables }) {
  const [busy, setBusy] = useState(null);
  const fetchAll = async (format) => {
    setBusy(`0 rows`);
    const parts = [];
    let after = null;
    let rows = 0;
    let first = true;
    for (;;) {
      const { data } = await gql("SpecsExport", { ...variables, first: 500, after });
      for (const node of data.specs.nodes) {
        const row = exported(node);
        if (format === "csv") {
          if (first) parts.push(Object.keys(row).join(",") + "\n");
          parts.push(Object.values(row).map(csvCell).join(",") + "\n");
        } else {
          parts.push((first ? "[\n" : ",\n") + JSON.stringify(row));
        }
        first = false;
        rows += 1;
      }
      setBusy(counted(rows, "row"));
      if (!data.specs.pageInfo.hasNextPage) break;
      after = data.specs.pageInfo.endCursor;
    }
    if (format === "json") parts.push(first ? "[]\n" : "\n]\n");
    const blob = new Blob(parts, { type: format === "csv" ? "text/csv" : "application/json" });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = `specs.${format}`;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    setBusy(null);
  };
  return html`<p class="download">Download every row:
    <button type="button" onClick=${() => fetchAll("csv")} disabled=${busy !== null}>CSV</button>
    <button type="button" onClick=${() => fetchAll("json")} disabled=${busy !== null}>JSON</button>
    ${busy ? html` <span role="status">${busy}…</span>` : null}</p>`;
}

/** The filters in force, each with a way to drop it, and one to drop them all. */
export function ActiveFilters({ params, path }) {
  const active = [];
  for (const [param] of Object.values(FACETS)) for (const v of params.getAll(param)) active.push([param, v]);
  for (const key of ["tag", "mirror", "platform"]) if (params.get(key)) active.push([key, params.get(key)]);
  if (!active.length) return null;
  return html`<p class="active" aria-label="filters">Filters:
    ${active.map(([param, v]) => html`<span class="chip">${param}=${v}<a href=${withParams(path, params, {
      [param]: params.getAll(param).filter((x) => x !== v), after: null, from: null,
    })} aria-label=${`remove ${param}=${v}`}>×</a></span> `)}
    <a href=${href(path, { q: params.get("q") || null })}>clear all</a></p>`;
}
