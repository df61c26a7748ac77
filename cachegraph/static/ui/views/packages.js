// The package index: every package, A to Z, with its count of specs; narrowed by a letter,
// a part of the name or a tag, one page at a time.

import { navigate } from "../app.js";
import { Loading, Pager, Problem, TagPicker, Updating, count, counted, href, html, usePainted, useQuery } from "../ui.js";
import { withParams } from "./search.js";

const PAGE = 100;
const PATH = "/ui/packages";

export default function Packages({ params }) {
  const letter = params.get("letter") || null;
  const name = params.get("name") || null;
  const tag = params.get("tag") || null;
  const shown = Number(params.get("from") || 0);
  const scope = { nameContains: name, tag };
  const { data, error, loading } = useQuery("Packages", {
    scope,
    filter: { ...scope, namePrefix: letter },
    first: PAGE,
    after: params.get("after"),
    tag,
  });
  usePainted(data, "packages");
  if (error) return html`<${Problem} error=${error} />`;
  if (!data) return html`<${Loading} />`;
  const { packageInitials: initials, tags, packages } = data;
  const within = (changes) => withParams(PATH, params, { after: null, from: null, ...changes });
  // Typing narrows in place (the address replaced, not added to the history).
  const narrow = (changes) => navigate(within(changes), { replace: true });
  const total = initials.reduce((sum, i) => sum + i.count, 0);
  return html`<h1>Packages${tag ? html` in <span class="tag">${tag}</span>` : ""} <small>${count(total)}</small></h1>
    <form class="inline" role="search" aria-label="packages" onSubmit=${(e) => e.preventDefault()}>
      <label>name holds <input type="search" aria-label="a part of the package name" value=${name ?? ""}
        onInput=${(e) => narrow({ name: e.target.value.trim() || null })} /></label>
      <${TagPicker} tags=${tags} tag=${tag} choose=${(chosen) => narrow({ tag: chosen })} label="tag" />
    </form>
    <nav class="letters" aria-label="initials">
      <a href=${within({ letter: null })} aria-current=${letter ? undefined : "page"}>all</a>
      ${initials.map(
        (i) => html`<a href=${within({ letter: i.value })} aria-current=${i.value === letter ? "page" : undefined}
          aria-label=${`${i.value.toUpperCase()}: ${counted(i.count, "package")}`}>${i.value.toUpperCase()} <span class="n">${count(i.count)}</span></a>`,
      )}
    </nav>
    <${Updating} busy=${loading} />
    <${Pager} connection=${packages} shown=${shown} first=${within({})}
      next=${within({ after: packages.pageInfo.endCursor, from: shown + packages.nodes.length })} />
    <div class="scroll" aria-busy=${loading ? "true" : "false"}><table class="packages">
      <thead><tr><th>package</th><th class="num">specs</th></tr></thead>
      <tbody>${packages.nodes.map(
        (p) => html`<tr><td><a href=${href(`/ui/package/${p.name}`, { tag: tag ?? undefined })}>${p.name}</a></td>
          <td class="num">${count(p.specCount)}</td></tr>`,
      )}</tbody>
    </table></div>`;
}
