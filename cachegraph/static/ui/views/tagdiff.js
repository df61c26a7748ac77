// Tag diff: what two snapshots of the cache add, remove and keep, per stack and package.

import { navigate } from "../app.js";
import { changeBars } from "../charts.js";
import { Loading, Problem, SpecTable, count, href, html, noun, useDrawn, usePainted, useQuery } from "../ui.js";
import { withParams } from "./search.js";

const PATH = "/ui/diff";
const PACKAGES = 50;

export default function TagDiff({ params }) {
  const tags = useQuery("Tags", {});
  const known = (t) => !t || tags.data.tags.some((x) => x.name === t);
  // Nothing to compare, or a tag no one loaded: shown at once.
  usePainted(tags.data && (tags.data.tags.length < 2 || !known(params.get("from")) || !known(params.get("to"))), "diff");
  if (tags.error) return html`<${Problem} error=${tags.error} />`;
  if (!tags.data) return html`<${Loading} />`;
  const names = tags.data.tags.map((t) => t.name);
  const from = params.get("from") || names[1] || names[0];
  const to = params.get("to") || names[0];
  const pick = (which) => (event) => navigate(withParams(PATH, params, { [which]: event.target.value, addedAfter: null, removedAfter: null }));
  const picker = (which, value) => html`<label class="picker">${which}
    <select aria-label=${which} onChange=${pick(which)}>${names.map(
      (n) => html`<option value=${n} selected=${n === value}>${n}</option>`,
    )}</select></label>`;
  const unknown = [from, to].filter((t) => !names.includes(t));
  return html`<h1>What changed between two tags</h1>
    <form class="inline" onSubmit=${(e) => e.preventDefault()}>${picker("from", from)} ${picker("to", to)}</form>
    ${names.length < 2
      ? html`<p>Only one tag is loaded: there is nothing to compare.</p>`
      : unknown.length
        ? html`<p class="problem" role="alert">No loaded tag is named ${unknown.map((t, i) => html`${i ? " or " : ""}<code>${t}</code>`)}:
            choose one above (the tags loaded: ${names.join(", ")}).</p>`
        : html`<${Changes} from=${from} to=${to} params=${params} />`}`;
}

function Changes({ from, to, params }) {
  const packages = Number(params.get("packages") || PACKAGES);
  const { data, error } = useQuery("TagDiff", {
    from,
    to,
    packages,
    addedAfter: params.get("addedAfter"),
    removedAfter: params.get("removedAfter"),
  });
  const diff = data?.tagDiff;
  usePainted(diff, "diff");
  const ref = useDrawn(
    (element) => diff && changeBars(element, diff.stacks.map((s) => ({ name: s.stack.name, ...s }))),
    [diff],
  );
  if (error) return html`<${Problem} error=${error} />`;
  if (!diff) return html`<${Loading} />`;
  const total = (k) => diff.stacks.reduce((n, s) => n + s[k], 0);
  return html`<p class="summary"><strong>${count(diff.added.totalCount)}</strong> ${noun(diff.added.totalCount, "spec")} added,
      <strong>${count(diff.removed.totalCount)}</strong> removed, <strong>${count(diff.kept.totalCount)}</strong> kept
      from <a href=${href("/", { tag: from })}>${from}</a> to <a href=${href("/", { tag: to })}>${to}</a>.</p>
    <section aria-labelledby="by-stack-h">
      <h2 id="by-stack-h">By stack</h2>
      <div class="chart" ref=${ref} aria-label="added, removed and kept per stack"></div>
      <div class="scroll"><table>
        <thead><tr><th>stack</th><th class="num">added</th><th class="num">removed</th><th class="num">kept</th></tr></thead>
        <tbody>${diff.stacks.map(
          (s) => html`<tr><td>${s.stack.name}</td><td class="num">${count(s.added)}</td>
            <td class="num">${count(s.removed)}</td><td class="num">${count(s.kept)}</td></tr>`,
        )}</tbody>
        <tfoot><tr><th>stack memberships</th><th class="num">${count(total("added"))}</th><th class="num">${count(total("removed"))}</th><th class="num">${count(total("kept"))}</th></tr></tfoot>
      </table></div>
    </section>
    <${Packages} packages=${diff.packages} more=${diff.packages.length === packages
      ? withParams(PATH, params, { from, to, packages: packages + 200 }) : null} />
    <section aria-labelledby="added-h">
      <h2 id="added-h">Added <small>${count(diff.added.totalCount)}</small></h2>
      ${diff.added.nodes.length ? html`<${SpecTable} specs=${diff.added.nodes} />` : html`<p>None.</p>`}
      ${diff.added.pageInfo.hasNextPage ? html`<a href=${withParams(PATH, params, { from, to, addedAfter: diff.added.pageInfo.endCursor })}>More added</a>` : null}
    </section>
    <section aria-labelledby="removed-h">
      <h2 id="removed-h">Removed <small>${count(diff.removed.totalCount)}</small></h2>
      ${diff.removed.nodes.length ? html`<${SpecTable} specs=${diff.removed.nodes} />` : html`<p>None.</p>`}
      ${diff.removed.pageInfo.hasNextPage ? html`<a href=${withParams(PATH, params, { from, to, removedAfter: diff.removed.pageInfo.endCursor })}>More removed</a>` : null}
    </section>`;
}

/** Packages, most changed first: the server's first ones, and a link to more. */
function Packages({ packages, more }) {
  const changed = packages.filter((p) => p.added || p.removed);
  return html`<section aria-labelledby="by-package-h">
    <h2 id="by-package-h">By package <small>most changed first</small></h2>
    ${changed.length
      ? html`<div class="scroll"><table>
          <thead><tr><th>package</th><th class="num">added</th><th class="num">removed</th><th class="num">kept</th></tr></thead>
          <tbody>${changed.map(
            (p) => html`<tr><td><a href=${href(`/ui/package/${p.package.name}`)}>${p.package.name}</a></td>
              <td class="num">${count(p.added)}</td><td class="num">${count(p.removed)}</td><td class="num">${count(p.kept)}</td></tr>`,
          )}</tbody>
        </table></div>
        ${more && changed.length === packages.length ? html`<a href=${more}>More packages</a>` : null}`
      : html`<p>No package changed.</p>`}
  </section>`;
}
