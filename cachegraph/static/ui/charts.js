// Charts with Observable Plot, loaded (with d3, its dependency) only by the views that
// draw one, and only once their tables are on the screen.

import { ROOT } from "./api.js";

let loading = null;

function script(src) {
  return new Promise((resolve, reject) => {
    const element = document.createElement("script");
    element.src = src;
    element.onload = resolve;
    element.onerror = () => reject(new Error(`could not load ${src}`));
    document.head.append(element);
  });
}

/** window.Plot, once loaded. */
export function plot() {
  loading ??= script(`${ROOT}/static/ui/vendor/d3.min.js`)
    .then(() => script(`${ROOT}/static/ui/vendor/plot.umd.min.js`))
    .then(() => window.Plot);
  return loading;
}

// Inline CSS on the chart: it follows the page's light or dark colours.
const style = () => ({ background: "transparent", color: "var(--fg)", fontSize: "12px", overflow: "visible" });

/** A square heatmap of stacks by stacks, coloured by Jaccard index; a cell opens the shared specs. */
export async function heatmap(element, { names, pairs, open }) {
  const Plot = await plot();
  const cells = [];
  for (const p of pairs) {
    cells.push({ a: p.a, b: p.b, shared: p.shared, jaccard: p.jaccard });
    cells.push({ a: p.b, b: p.a, shared: p.shared, jaccard: p.jaccard });
  }
  const size = Math.min(640, Math.max(260, names.length * 26 + 120));
  const chart = Plot.plot({
    width: size,
    height: size,
    marginLeft: 110,
    marginBottom: 110,
    style: style(),
    x: { domain: names, tickRotate: -45, label: null },
    y: { domain: names, label: null },
    color: { scheme: "blues", domain: [0, 1], legend: true, label: "Jaccard index" },
    marks: [
      Plot.cell(cells, {
        x: "a",
        y: "b",
        fill: "jaccard",
        inset: 0.5,
        title: (d) => `${d.a} ∩ ${d.b}: ${d.shared} specs (Jaccard ${d.jaccard.toFixed(2)})`,
      }),
    ],
  });
  const rects = chart.querySelectorAll("g[aria-label='cell'] rect");
  rects.forEach((rect, i) => {
    rect.style.cursor = "pointer";
    rect.addEventListener("click", () => open(cells[i].a, cells[i].b));
  });
  element.replaceChildren(chart);
}

/** Stacked bars of added, removed and kept specs per row (stacks or packages). */
export async function changeBars(element, rows) {
  const Plot = await plot();
  const kinds = ["added", "removed", "kept"];
  const data = rows.flatMap((r) => kinds.map((kind) => ({ name: r.name, kind, n: r[kind] })));
  const chart = Plot.plot({
    width: Math.min(900, element.clientWidth || 700),
    height: Math.max(120, rows.length * 22 + 60),
    marginLeft: 140,
    style: style(),
    x: { label: "specs", grid: true },
    y: { domain: rows.map((r) => r.name), label: null },
    color: { domain: kinds, range: ["#2e9d57", "#d1453b", "#9aa4b1"], legend: true },
    marks: [
      Plot.barX(data, Plot.stackX({ x: "n", y: "name", fill: "kind", title: (d) => `${d.name}: ${d.n} ${d.kind}` })),
      Plot.ruleX([0]),
    ],
  });
  element.replaceChildren(chart);
}

/** One bar: the hits and misses of an environment. */
export async function coverageBar(element, { hits, misses }) {
  const Plot = await plot();
  const data = [
    { kind: "cached", n: hits },
    { kind: "missing", n: misses },
  ];
  const chart = Plot.plot({
    width: Math.min(900, element.clientWidth || 700),
    height: 70,
    style: style(),
    x: { label: "specs", domain: [0, hits + misses] },
    color: { domain: ["cached", "missing"], range: ["#2e9d57", "#d1453b"], legend: true },
    marks: [Plot.barX(data, Plot.stackX({ x: "n", fill: "kind", title: (d) => `${d.n} ${d.kind}` }))],
  });
  element.replaceChildren(chart);
}
