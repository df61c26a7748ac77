// The shell: header, search box, theme, and the router that turns a URL into a view.
// Every view has a URL; links change it with the History API, so back and forward work.

import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { ROOT, params as addressParams } from "./api.js";
import { href, html } from "./ui.js";

const VIEWS = {
  home: () => import("./views/home.js"),
  search: () => import("./views/search.js"),
  package: () => import("./views/package.js"),
  spec: () => import("./views/spec.js"),
  diff: () => import("./views/tagdiff.js"),
  coverage: () => import("./views/coverage.js"),
  status: () => import("./views/status.js"),
};

/** [view, its path argument] of a location. */
function route(location) {
  const path = location.pathname.slice(ROOT.length).replace(/\/+$/, "") || "/";
  const match =
    path.match(/^\/ui\/(package|spec)\/([^/]+)$/) || path.match(/^\/ui\/(search|diff|coverage|status)$/);
  if (match) return [match[1], decodeURIComponent(match[2] ?? "")];
  if (path === "/" || path === "/ui") return ["home", ""];
  return ["missing", path];
}

let rerender = () => {};

/** Go to an explorer URL without reloading the page. */
export function navigate(url, { replace = false } = {}) {
  history[replace ? "replaceState" : "pushState"](null, "", url);
  rerender();
  if (!replace) window.scrollTo(0, 0);
}

// Links inside the explorer are followed in place; others (GraphiQL, downloads) as usual.
document.addEventListener("click", (event) => {
  const link = event.target.closest?.("a[href]");
  if (!link || event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey || link.target) return;
  const url = new URL(link.href, location.href);
  if (url.origin !== location.origin) return;
  const path = url.pathname.slice(ROOT.length);
  if (!url.pathname.startsWith(ROOT) || !(path === "/" || path === "/ui" || path.startsWith("/ui/"))) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
});

function SearchBox() {
  const params = addressParams();
  const input = useRef(null);
  useEffect(() => {
    const key = (event) => {
      const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement?.tagName);
      if (event.key === "/" && !typing) {
        event.preventDefault();
        input.current?.focus();
      }
    };
    document.addEventListener("keydown", key);
    return () => document.removeEventListener("keydown", key);
  }, []);
  const submit = (event) => {
    event.preventDefault();
    const text = input.current.value.trim();
    navigate(href("/ui/search", { q: text }));
  };
  return html`<form class="searchbox" role="search" onSubmit=${submit}>
    <input ref=${input} type="search" name="q" aria-label="search the cache"
      placeholder="package, /hash or constraint (hdf5+mpi %gcc@11:)   press /"
      value=${route(location)[0] === "search" ? params.get("q") ?? "" : ""} />
    <button type="submit">Search</button>
  </form>`;
}

function ThemeToggle() {
  const [theme, setTheme] = useState(document.documentElement.dataset.theme || "");
  const next = { "": "dark", dark: "light", light: "" }[theme];
  const flip = () => {
    setTheme(next);
    if (next) {
      document.documentElement.dataset.theme = next;
      localStorage.setItem("cg-theme", next);
    } else {
      delete document.documentElement.dataset.theme;
      localStorage.removeItem("cg-theme");
    }
  };
  const label = { "": "auto", dark: "dark", light: "light" }[theme];
  return html`<button type="button" class="theme" onClick=${flip}
    title="colour scheme: ${label} (click for ${next || "auto"})">◐ ${label}</button>`;
}

function Shell({ view, argument, module }) {
  const [name] = route(location);
  const nav = [
    ["home", "/", "Home"],
    ["search", "/ui/search", "Search"],
    ["diff", "/ui/diff", "Tag diff"],
    ["coverage", "/ui/coverage", "Is my environment cached?"],
    ["status", "/ui/status", "Status"],
  ];
  const View = module?.default;
  return html`<header class="top">
      <a class="brand" href=${href("/")}>Spack Cache Graph</a>
      <nav aria-label="views">${nav.map(
        ([key, path, label]) =>
          html`<a href=${href(path)} aria-current=${name === key ? "page" : undefined}>${label}</a>`,
      )}<a href=${`${ROOT}/graphql`} class="external">GraphiQL</a></nav>
      <${SearchBox} key=${location.search} />
      <${ThemeToggle} />
    </header>
    <main id="main">${
      view === "missing"
        ? html`<h1>Not found</h1><p>No view is at <code>${argument}</code>. <a href=${href("/")}>Home</a></p>`
        : View
          ? html`<${View} key=${location.pathname + location.search} argument=${argument}
              params=${addressParams()} />`
          : html`<p class="loading">Loading…</p>`
    }</main>`;
}

const saved = localStorage.getItem("cg-theme");
if (saved) document.documentElement.dataset.theme = saved;

const app = document.getElementById("app");
app.replaceChildren(); // the page's "Loading…"
let shown = 0;
rerender = async () => {
  const [view, argument] = route(location);
  const ticket = ++shown;
  const module = view in VIEWS ? await VIEWS[view]() : null;
  if (ticket !== shown) return; // a later navigation won
  render(html`<${Shell} view=${view} argument=${argument} module=${module} />`, app);
};
window.addEventListener("popstate", () => rerender());
rerender();
