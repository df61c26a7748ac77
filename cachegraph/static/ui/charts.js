// Charts with Observable Plot, loaded (with d3, its dependency) only by the views that
// draw one, and only once their tables are on the screen.

import { ROOT } from "./api.js";
import { counted } from "./ui.js";

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

/** The names in an order that puts alike ones together: average-linkage clustering on
 * 1 - Jaccard, its leaves left to right (a reader sees blocks of stacks that share). */
export function clustered(names, pairs) {
  const sim = new Map();
  for (const p of pairs) {
    sim.set(`${p.a}\u0000${p.b}`, p.jaccard);
    sim.set(`${p.b}\u0000${p.a}`, p.jaccard);
  }
  const s = (x, y) => sim.get(`${x}\u0000${y}`) ?? 0;
  let groups = names.map((n) => [n]);
  while (groups.length > 1) {
    let best = [0, 1, -1];
    for (let i = 0; i < groups.length; i++) {
      for (let j = i + 1; j < groups.length; j++) {
        let total = 0;
        for (const x of groups[i]) for (const y of groups[j]) total += s(x, y);
        const mean = total / (groups[i].length * groups[j].length);
        if (mean > best[2]) best = [i, j, mean];
      }
    }
    const [i, j] = best;
    // Join the two ends that are most alike next to each other.
    const [g, h] = [groups[i], groups[j]];
    const options = [[...g, ...h], [...g, ...[...h].reverse()], [...[...g].reverse(), ...h], [...h, ...g]];
    const seam = (o) => s(o[g.length - 1], o[g.length]);
    const joined = options.reduce((x, y) => (seam(y) > seam(x) ? y : x));
    groups = groups.filter((_, k) => k !== i && k !== j).concat([joined]);
  }
  return groups[0] ?? [];
}

/** A square heatmap of stacks by stacks, coloured by Jaccard index on a quantile scale (the
 * real values are small: 0.01 to 0.2), stacks ordered by likeness, labels given the room
 * they need; a cell opens the shared specs (click, tap, or Enter once reached by the arrow
 * keys: the heatmap is one tab stop). */
export async function heatmap(element, { names, pairs, open }) {
  const Plot = await plot();
  const order = clustered(names, pairs);
  const cells = [];
  for (const p of pairs) {
    cells.push({ a: p.a, b: p.b, shared: p.shared, jaccard: p.jaccard });
    cells.push({ a: p.b, b: p.a, shared: p.shared, jaccard: p.jaccard });
  }
  const longest = Math.max(4, ...order.map((n) => n.length));
  const margin = Math.ceil(longest * 6.6) + 14; // 11px labels
  const cell = order.length > 30 ? 16 : order.length > 15 ? 20 : 26;
  const size = margin + order.length * cell + 20;
  const values = cells.map((c) => c.jaccard).filter((v) => v > 0);
  const chart = Plot.plot({
    width: size,
    height: size,
    marginLeft: margin,
    marginBottom: margin,
    marginTop: 10,
    marginRight: 10,
    style: { ...style(), fontSize: "11px" },
    x: { domain: order, tickRotate: -60, label: null },
    y: { domain: order, label: null },
    color: values.length > 4
      ? { type: "quantile", n: 6, scheme: "blues", legend: true, label: "Jaccard index (quantiles of the pairs)" }
      : { scheme: "blues", domain: [0, Math.max(...values, 0.01)], legend: true, label: "Jaccard index" },
    marks: [
      Plot.cell(cells, {
        x: "a",
        y: "b",
        fill: "jaccard",
        inset: 0.5,
        title: (d) => `${d.a} ∩ ${d.b}: ${counted(d.shared, "spec")} (Jaccard ${d.jaccard.toFixed(3)})`,
      }),
    ],
  });
  const rects = [...chart.querySelectorAll("g[aria-label='cell'] rect")];
  const at = new Map(); // "row col" -> index of its cell
  rects.forEach((rect, i) => {
    const c = cells[i];
    at.set(`${order.indexOf(c.b)} ${order.indexOf(c.a)}`, i);
    rect.style.cursor = "pointer";
    rect.setAttribute("tabindex", "-1");
    rect.setAttribute("role", "link");
    rect.setAttribute("aria-label", `${c.a} ∩ ${c.b}: ${counted(c.shared, "spec")}`);
    rect.addEventListener("click", () => open(c.a, c.b));
    rect.addEventListener("keydown", (event) => {
      const move = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] }[event.key];
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        open(c.a, c.b);
      } else if (move) {
        event.preventDefault();
        let [row, col] = [order.indexOf(c.b), order.indexOf(c.a)];
        for (let step = 0; step < order.length; step++) {
          row += move[0];
          col += move[1];
          if (row < 0 || col < 0 || row >= order.length || col >= order.length) return;
          const next = at.get(`${row} ${col}`);
          if (next !== undefined) {
            rects[i].setAttribute("tabindex", "-1");
            rects[next].setAttribute("tabindex", "0");
            rects[next].focus();
            return;
          }
        }
      }
    });
  });
  if (rects.length) rects[0].setAttribute("tabindex", "0");
  element.replaceChildren(chart);
  return order;
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

/** About six whole-number ticks from ``low`` to ``high``, 0 among them: counts of specs. */
function whole(low, high) {
  const step = Math.max(1, Math.ceil((high - low) / 6));
  const ticks = [];
  for (let v = 0; v >= low; v -= step) ticks.unshift(v);
  for (let v = step; v <= high; v += step) ticks.push(v);
  return ticks;
}

/** One mirror's changes a day over ``days`` (YYYY-MM-DD, a column each): the specs added
 * above the axis, those removed below. A day with changes is a link (its title says what
 * changed): one tab stop for the chart, the arrow keys move between days, Enter or a click
 * opens it with ``open(day)``. */
export async function changeTimeline(element, { days, rows, open, label }) {
  const Plot = await plot();
  const bars = rows.flatMap((r) => [
    { day: r.day, kind: "added", n: r.added },
    { day: r.day, kind: "removed", n: -r.removed },
  ]);
  const top = Math.max(1, ...rows.map((r) => r.added));
  const bottom = Math.max(1, ...rows.map((r) => r.removed));
  const width = Math.min(900, element.clientWidth || 700);
  // a label each 60 px at most, today's always (counted back from it)
  const step = Math.ceil(days.length / Math.max(2, Math.floor((width - 44) / 60)));
  const labelled = days.filter((_, i) => (days.length - 1 - i) % step === 0);
  const said = (r) =>
    `${r.day}: ${r.added} added, ${r.removed} removed, ${r.replaced} replaced (${counted(r.events, "change")})`;
  const chart = Plot.plot({
    width,
    height: 170,
    marginLeft: 44,
    style: style(),
    x: { domain: days, label: null, ticks: labelled, tickFormat: (d) => d.slice(5) },
    y: { domain: [-bottom, top], label: "specs (removed below)", grid: true, ticks: whole(-bottom, top),
         tickFormat: (v) => String(Math.abs(v)) },
    color: { domain: ["added", "removed"], range: ["#2e9d57", "#d1453b"], legend: true },
    marks: [
      Plot.barY(bars, { x: "day", y: "n", fill: "kind" }),
      Plot.ruleY([0]),
      // the whole height of a day with changes: what is clicked and focused
      Plot.barY(rows, { x: "day", y1: () => -bottom, y2: () => top, fill: "currentColor", fillOpacity: 0, title: said }),
    ],
  });
  const layers = chart.querySelectorAll("g[aria-label='bar']");
  const hits = [...layers[layers.length - 1].querySelectorAll("rect")];
  hits.forEach((rect, i) => {
    const row = rows[i];
    rect.classList.add("day");
    rect.style.cursor = "pointer";
    rect.setAttribute("tabindex", i === hits.length - 1 ? "0" : "-1"); // the newest day first
    rect.setAttribute("role", "link");
    rect.setAttribute("aria-label", `${label}, ${said(row)}`);
    rect.dataset.day = row.day;
    rect.addEventListener("click", () => open(row.day));
    rect.addEventListener("keydown", (event) => {
      const move = { ArrowLeft: -1, ArrowRight: 1, Home: -i, End: hits.length - 1 - i }[event.key];
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        open(row.day);
      } else if (move !== undefined && hits[i + move]) {
        event.preventDefault();
        rect.setAttribute("tabindex", "-1");
        hits[i + move].setAttribute("tabindex", "0");
        hits[i + move].focus();
      }
    });
  });
  element.replaceChildren(chart);
}
