// Search and facets: one box for a package, a hash prefix or a Spack constraint; the
// facet counts of everything that matches narrow it by clicking; one page at a time.

import {
  Badge,
  Loading,
  Pager,
  Problem,
  SpecTable,
  Warnings,
  count,
  href,
  html,
  orderBy,
  usePainted,
  useQuery,
} from "../ui.js";

export const PAGE = 25;

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
  return href(path) + (next.toString() ? "?" + next : "");
}

export function withParams(path, params, changes) {
  const next = new URLSearchParams(params);
  for (const [key, value] of Object.entries(changes)) {
    next.delete(key);
    for (const one of [].concat(value ?? [])) next.append(key, one);
  }
  return href(path) + (next.toString() ? "?" + next : "");
}

export function FacetPanel({ facets, params, path, skip = [] }) {
  return html`<aside class="facets" aria-label="facets">
    <p class="total"><strong>${count(facets.specCount)}</strong> specs</p>
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
  const variables = {
    filter,
    tag: filter.tag ?? null,
    first: PAGE,
    after: params.get("after"),
    orderBy: orderBy(order),
  };
  const { data, warnings, error, loading } = useQuery("Search", variables);
  usePainted(data, view);
  if (error) return html`<${Problem} error=${error} />`;
  if (!data) return html`<${Loading} />`;
  const { specs, facets } = data;
  const link = (o) => withParams(path, params, { order: o, after: null, from: null });
  return html`<div class="results">
    <${FacetPanel} facets=${facets} params=${params} path=${path} skip=${skip} />
    <section class="table" aria-label="specs">
      <${Warnings} warnings=${warnings} />
      ${loading ? html`<${Loading} what="Updating" />` : null}
      <${Pager} connection=${specs} shown=${shown}
        first=${withParams(path, params, { after: null, from: null })}
        next=${withParams(path, params, { after: specs.pageInfo.endCursor, from: shown + specs.nodes.length })} />
      ${specs.nodes.length
        ? html`<${SpecTable} specs=${specs.nodes} order=${order} link=${link} marks=${marks} showPackage=${showPackage} />`
        : html`<p>No spec matches.</p>`}
    </section>
  </div>`;
}

function HashHint({ text }) {
  const { data } = useQuery("HashLookup", { hash: text.replace(/^\//, "") });
  const spec = data?.spec;
  if (!spec) return null;
  return html`<p class="hint">The hash <a href=${href(`/ui/spec/${spec.hash}`)}>/${spec.hash.slice(0, 7)}</a>
    is ${spec.package.name}@${spec.version}.</p>`;
}

export default function Search({ params }) {
  const q = (params.get("q") || "").trim();
  const filter = filterOf(params);
  const hashLike = /^\/?[a-z0-9]{7,32}$/.test(q);
  const described = Object.keys(filter).length ? "Specs" : "Every spec";
  return html`<h1>${described}${q ? html` matching <code>${q}</code>` : ""}
      ${filter.tag ? html` in <span class="tag">${filter.tag}</span>` : ""}</h1>
    ${hashLike ? html`<${HashHint} text=${q} />` : null}
    <${SpecResults} filter=${filter} params=${params} path="/ui/search" view="search" />`;
}
