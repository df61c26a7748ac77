// A package: its versions and where it is cached, its specs with badges that filter them,
// lookalike specs marked, and the commands that use a cached spec.

import { useEffect, useState } from "preact/hooks";
import { gql } from "../api.js";
import { Commands } from "./spec.js";
import { SpecResults, filterOf, withParams } from "./search.js";
import { Loading, Problem, count, href, html, noun, useQuery } from "../ui.js";

export default function Package({ argument: name, params }) {
  const tag = params.get("tag") || null;
  const path = `/ui/package/${encodeURIComponent(name)}`;
  const { data, error } = useQuery("Package", { name, tag });
  const marks = useLookalikes(name, tag);
  if (error) return html`<${Problem} error=${error} />`;
  const found = data?.package;
  if (data && !found) {
    return html`<h1>${name}</h1><p>No cached spec of a package named <code>${name}</code>${tag ? ` in ${tag}` : ""}.
      <a href=${href("/ui/search", { q: name })}>Search for it</a>.</p>`;
  }
  const filter = { ...filterOf(params), package: name };
  return html`<h1>${name}${tag ? html` <small>in <span class="tag">${tag}</span></small>` : ""}</h1>
    ${found
      ? html`<section class="facts" aria-label="package facts">
          <p><strong>${count(found.specCount)}</strong> cached ${noun(found.specCount, "spec")} ·
            tags: ${found.tags.length ? null : "none (known from spec files and mirrors)"}${found.tags.map(
              (t, i) => html`${i ? ", " : ""}<a href=${withParams(path, params, { tag: t.name === tag ? null : t.name, after: null, from: null })}
                aria-pressed=${String(t.name === tag)}>${t.name}</a>`,
            )}</p>
          <p>versions: ${found.versions.map(
            (v, i) => html`${i ? " " : ""}<a class="version" href=${withParams(path, params, { version: v, after: null, from: null })}>${v}</a>`,
          )}</p>
          ${found.dependencies.length
            ? html`<p>depends on: ${found.dependencies.map(
                (d, i) => html`${i ? ", " : ""}<a href=${href(`/ui/package/${d.name}`)}>${d.name}</a>`,
              )}</p>`
            : null}
          <details><summary>Use a cached ${name}</summary>
            <${Commands} hash=${null} name=${name} tag=${tag}
              mirrors=${data.mirrors.filter((m) => m.specs.totalCount > 0)} /></details>
        </section>`
      : html`<${Loading} />`}
    ${marks.size ? html`<p class="hint">≈ marks lookalikes: specs alike in every attribute of their own that differ only in their dependencies.</p>` : null}
    <${SpecResults} filter=${filter} params=${params} path=${path} view="package" skip=${["packages"]}
      marks=${Object.fromEntries(marks)} showPackage=${false} />`;
}

/** hash -> what makes it a lookalike, asked once the table is on the screen. */
function useLookalikes(name, tag) {
  const [marks, setMarks] = useState(new Map());
  useEffect(() => {
    const controller = new AbortController();
    const later = setTimeout(() => {
      gql("Lookalikes", { name, tag }, { signal: controller.signal }).then(
        ({ data }) => {
          const found = new Map();
          for (const group of data.package?.lookalikes ?? []) {
            const why = `one of ${group.specs.length} lookalikes; their dependencies differ in ${group.differingDependencies.join(", ") || "nothing loaded"}`;
            for (const s of group.specs) found.set(s.hash, why);
          }
          setMarks(found);
        },
        () => {},
      );
    }, 50);
    return () => {
      clearTimeout(later);
      controller.abort();
    };
  }, [name, tag]);
  return marks;
}
