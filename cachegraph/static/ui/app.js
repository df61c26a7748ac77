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
  packages: () => import("./views/packages.js"),
  changes: () => import("./views/changes.js"),
};

/** [view, its path argument] of a location. */
function route(location) {
  const path = location.pathname.slice(ROOT.length).replace(/\/+$/, "") || "/";
  const match =
    path.match(/^\/ui\/(package|spec)\/([^/]+)$/) || path.match(/^\/ui\/(search|packages|diff|coverage|status|changes)$/);
  if (match) return [match[1], decodeURIComponent(match[2] ?? "")];
  if (path === "/" || path === "/ui") return ["home", ""];
  return ["missing", path];
}

let rerender = () => {};

// Views kept on the screen while their filters change (a facet click): they show the last
// answer, marked as updating, until the new one comes.
const KEEP = new Set(["home", "search", "packages", "package", "status", "changes"]);

/** Go to an explorer URL without reloading the page. */
export function navigate(url, { replace = false } = {}) {
  const before = location.pathname;
  history[replace ? "replaceState" : "pushState"](null, "", url);
  rerender();
  // Another view (not the same one with other filters): to its top, focus on its heading.
  if (!replace && location.pathname !== before) {
    window.scrollTo(0, 0);
    focusPending = true;
  }
}

// Set by a navigation to another view: the heading takes the focus once it is drawn.
let focusPending = false;

/** Move the focus to the view's heading once it is drawn (a reader hears where it is). */
function focusHeading(tries = 300) {
  const heading = document.querySelector("main h1");
  if (!heading) {
    if (tries > 0) requestAnimationFrame(() => focusHeading(tries - 1));
    return;
  }
  heading.setAttribute("tabindex", "-1");
  heading.focus({ preventScroll: true });
}

/** The document's title for a view: what it shows, then the site. */
function titleOf(view, argument, params) {
  const q = params.get("q");
  const tag = params.get("tag");
  const words = {
    home: tag ? `${tag}` : "",
    search: q ? `“${q}” · Search` : "Search",
    package: `${argument}${tag ? ` in ${tag}` : ""} · Package`,
    spec: `/${argument.slice(0, 7)} · Spec`,
    diff: params.get("from") ? `${params.get("from")} → ${params.get("to") ?? ""} · Tag diff` : "Tag diff",
    packages: `Packages${params.get("letter") ? ` · ${params.get("letter").toUpperCase()}` : ""}${tag ? ` in ${tag}` : ""}`,
    coverage: "Is my environment cached?",
    status: "Status",
    changes: params.get("day") ? `${params.get("day")} · What changed` : "What changed",
    missing: "Not found",
  }[view];
  return words ? `${words} — Spack Cache Graph` : "Spack Cache Graph";
}

// Links inside the explorer are followed in place; others (GraphiQL, downloads) as usual.
document.addEventListener("click", (event) => {
  const link = event.target.closest?.("a[href]");
  if (!link || event.defaultPrevented || event.button !== 0) return;
  if (link.getAttribute("href").startsWith("#")) return; // within the page (the skip link)
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
    ["packages", "/ui/packages", "Packages"],
    ["diff", "/ui/diff", "Tag diff"],
    ["coverage", "/ui/coverage", "Is my environment cached?"],
    ["changes", "/ui/changes", "What changed"],
    ["status", "/ui/status", "Status"],
  ];
  const View = module?.default;
  const skip = (event) => {
    event.preventDefault();
    const target = document.getElementById("results") ?? document.querySelector("main h1") ?? document.getElementById("main");
    target.setAttribute("tabindex", "-1");
    target.focus();
  };
  return html`<a class="skip" href="#main" onClick=${skip}>Skip to the results</a>
    <header class="top">
      <a class="brand" href=${href("/")}>Spack Cache Graph</a>
      <nav aria-label="views">${nav.map(
        ([key, path, label]) =>
          html`<a href=${href(path)} aria-current=${name === key ? "page" : undefined}>${label}</a>`,
      )}<a href=${`${ROOT}/graphql`} class="external">GraphiQL</a></nav>
      <${SearchBox} key=${location.search} />
      <${ThemeToggle} />
    </header>
    <main id="main" tabindex="-1">${
      view === "missing"
        ? html`<h1>Not found</h1><p>No view is at <code>${argument}</code>. <a href=${href("/")}>Home</a></p>`
        : View
          ? html`<${View} key=${KEEP.has(view) ? location.pathname : location.pathname + location.search} argument=${argument}
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
  document.title = titleOf(view, argument, addressParams());
  const focusing = focusPending;
  focusPending = false;
  render(html`<${Shell} view=${view} argument=${argument} module=${module} />`, app);
  // The address drawn last: with aria-busy, tells a test (or a tool) the view is settled.
  app.dataset.shown = location.pathname + location.search;
  if (focusing) focusHeading();
};
window.addEventListener("popstate", () => rerender());
rerender();
