// A spec's dependency DAG as a picture: dagre lays it out in layers (dependents above
// their dependencies), Preact draws it as SVG; every node links to its spec page and
// each edge's style says how the dependency is needed.

import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { Graph, layout } from "dagre";
import { Loading, Problem, count, counted, href, html, short, useQuery } from "./ui.js";

const NODE_HEIGHT = 38;
const CHAR = 7.2; // width of a character of the node font, in px

/** The edge style of a set of deptypes: link (and run) solid, build-only dashed... */
export function edgeKind(deptypes) {
  if (deptypes.includes("link")) return "link";
  if (deptypes.includes("run")) return "run";
  if (deptypes.includes("build")) return "build";
  return "test";
}

/** hash -> [edge] of the DAG below ``root`` (a Spec of Spec.graphql), edges kept by ``keep``. */
function edgesOf(root, keep) {
  const specs = [root, ...root.dag];
  const known = new Set(specs.map((s) => s.hash));
  return new Map(
    specs.map((s) => [s.hash, s.dependencyEdges.filter((e) => known.has(e.spec.hash) && keep(e))]),
  );
}

/** The same edges less those another path implies (the transitive reduction): a picture
 * of a DAG where every node also depends on the compiler's runtime reads as a hairball. */
export function reduced(edges) {
  const below = new Map(); // hash -> every hash reachable from it
  const reach = (hash) => {
    if (below.has(hash)) return below.get(hash);
    const found = new Set();
    below.set(hash, found);
    for (const e of edges.get(hash) ?? []) {
      found.add(e.spec.hash);
      for (const h of reach(e.spec.hash)) found.add(h);
    }
    return found;
  };
  return new Map(
    [...edges].map(([hash, out]) => [
      hash,
      out.filter((e) => !out.some((o) => o !== e && reach(o.spec.hash).has(e.spec.hash))),
    ]),
  );
}

/** {nodes, edges, width, height}: the DAG laid out in layers by dagre. */
export function laidOut(root, { every = false, build = true } = {}) {
  let edges = edgesOf(root, (e) => build || edgeKind(e.deptypes) !== "build");
  if (!every) edges = reduced(edges);
  // Without build edges some nodes are reached no more: they are left out.
  const shown = new Set([root.hash]);
  const todo = [root.hash];
  while (todo.length) {
    for (const e of edges.get(todo.pop()) ?? []) {
      if (!shown.has(e.spec.hash)) {
        shown.add(e.spec.hash);
        todo.push(e.spec.hash);
      }
    }
  }
  const g = new Graph({ multigraph: false });
  g.setGraph({ rankdir: "TB", nodesep: 14, ranksep: 42, edgesep: 6, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const s of [root, ...root.dag]) {
    if (!shown.has(s.hash)) continue;
    const label = `${s.package.name}@${s.version}`;
    g.setNode(s.hash, { spec: s, label, width: Math.max(label.length, 9) * CHAR + 20, height: NODE_HEIGHT });
  }
  for (const [hash, out] of edges) {
    if (!shown.has(hash)) continue;
    for (const e of out) g.setEdge(hash, e.spec.hash, { deptypes: e.deptypes, virtuals: e.virtuals });
  }
  layout(g);
  const nodes = g.nodes().map((id) => g.node(id));
  const laid = g.edges().map((e) => ({ from: e.v, to: e.w, ...g.edge(e) }));
  const { width, height } = g.graph();
  return { nodes, edges: laid, width, height };
}

/** Past this many nodes the picture shows the first two levels of the DAG. */
const MAX_NODES = 300;

/** The root and nodes of DagLevels' answer, shaped as Dag's. */
function levels(spec) {
  const nodes = new Map();
  for (const edge of spec.dependencyEdges) {
    nodes.set(edge.spec.hash, edge.spec);
    for (const below of edge.spec.dependencyEdges) {
      if (!nodes.has(below.spec.hash)) nodes.set(below.spec.hash, { ...below.spec, dependencyEdges: [] });
    }
  }
  nodes.delete(spec.hash);
  return { ...spec, dag: [...nodes.values()] };
}

/** The picture of a spec's DAG (``spec`` has its hash and dependency counts). */
export function Dag({ spec }) {
  const [expanded, setExpanded] = useState(false);
  const whole = spec.allDependencies <= MAX_NODES || expanded;
  const { data, error, loading } = useQuery(whole ? "Dag" : "DagLevels", { hash: spec.hash }, {
    skip: spec.allDependencies === 0,
  });
  if (spec.allDependencies === 0) return html`<p>No dependencies are recorded for this spec.</p>`;
  if (error) return html`<${Problem} error=${error} />`;
  if (!data) return html`<${Loading} what="Drawing the DAG" />`;
  // Expanding: the two levels stay drawn until the whole DAG comes.
  const drawn = whole && !loading;
  return html`<${Picture} root=${drawn ? data.spec : levels(data.spec)} whole=${drawn}
    all=${spec.allDependencies} expanding=${expanded && loading} expand=${() => setExpanded(true)} />`;
}

/** The view box that shows the whole picture in a frame of ``frame`` px (never enlarged). */
function fitted(width, height, frame) {
  const scale = Math.min(1, frame.width / width, frame.height / height);
  const w = frame.width / scale;
  const h = frame.height / scale;
  return { x: (width - w) / 2, y: (height - h) / 2, w, h };
}

/** Where the picture opens: the whole DAG when it fits at a readable size (labels at
 * least 0.6 of their size), else the root centred across, near the top, at 0.8. */
function centredOn(node, width, height, frame) {
  const fit = fitted(width, height, frame);
  if (frame.width / fit.w >= 0.6) return fit;
  const w = frame.width / 0.8;
  const h = frame.height / 0.8;
  return { x: node.x - w / 2, y: node.y - node.height / 2 - 16, w, h };
}

function zoomed(box, factor, at = { x: box.x + box.w / 2, y: box.y + box.h / 2 }) {
  const w = box.w / factor;
  const h = box.h / factor;
  return { x: at.x - ((at.x - box.x) * w) / box.w, y: at.y - ((at.y - box.y) * h) / box.h, w, h };
}

function Picture({ root, whole, all, expand, expanding }) {
  const [every, setEvery] = useState(false);
  const [build, setBuild] = useState(true);
  const { nodes, edges, width, height } = laidOut(root, { every, build });
  const frame = useRef(null);
  const [box, setBox] = useState(null);
  const drag = useRef(null);
  const rootNode = nodes.find((n) => n.spec === root);
  const size = () => {
    const r = frame.current.getBoundingClientRect();
    return { width: Math.max(r.width, 100), height: Math.max(r.height, 100) };
  };
  const fit = () => setBox(fitted(width, height, size()));
  const centre = () => setBox(centredOn(rootNode, width, height, size()));
  // On load and when the picture changes: the root centred (the whole DAG when it fits).
  useLayoutEffect(() => {
    if (frame.current) centre();
  }, [width, height]);
  const zoom = (factor, at) => setBox((b) => b && zoomed(b, factor, at));
  const pointAt = (event) => {
    const r = frame.current.getBoundingClientRect();
    return { x: box.x + ((event.clientX - r.left) / r.width) * box.w, y: box.y + ((event.clientY - r.top) / r.height) * box.h };
  };
  const wheel = (event) => {
    if (!box) return;
    event.preventDefault();
    zoom(event.deltaY < 0 ? 1.15 : 1 / 1.15, pointAt(event));
  };
  // Pan by dragging (a click on a node still opens it); pinch with two fingers zooms.
  const pointers = useRef(new Map());
  const down = (event) => {
    pointers.current.set(event.pointerId, { x: event.clientX, y: event.clientY });
    drag.current = { x: event.clientX, y: event.clientY, box, moved: false, spread: spread() };
  };
  const spread = () => {
    const p = [...pointers.current.values()];
    return p.length === 2 ? Math.hypot(p[0].x - p[1].x, p[0].y - p[1].y) : 0;
  };
  const move = (event) => {
    if (!drag.current || !pointers.current.has(event.pointerId)) return;
    pointers.current.set(event.pointerId, { x: event.clientX, y: event.clientY });
    const start = drag.current;
    if (pointers.current.size === 2 && start.spread) {
      setBox(zoomed(start.box, spread() / start.spread));
      start.moved = true;
      return;
    }
    const dx = event.clientX - start.x;
    const dy = event.clientY - start.y;
    if (!start.moved && Math.hypot(dx, dy) < 4) return;
    start.moved = true;
    const r = frame.current.getBoundingClientRect();
    setBox({ ...start.box, x: start.box.x - (dx * start.box.w) / r.width, y: start.box.y - (dy * start.box.h) / r.height });
  };
  const up = (event) => {
    pointers.current.delete(event.pointerId);
    if (drag.current?.moved) {
      const swallow = (e) => { e.preventDefault(); e.stopPropagation(); };
      frame.current.addEventListener("click", swallow, { capture: true, once: true });
      setTimeout(() => frame.current?.removeEventListener("click", swallow, { capture: true }), 0);
    }
    drag.current = null;
  };
  const key = (event) => {
    if (!box) return;
    const step = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[event.key];
    if (step) {
      event.preventDefault();
      setBox({ ...box, x: box.x + step[0] * box.w * 0.15, y: box.y + step[1] * box.h * 0.15 });
    } else if (event.key === "+" || event.key === "=") zoom(1.25);
    else if (event.key === "-") zoom(1 / 1.25);
    else if (event.key === "0") fit();
  };
  const path = (points) => "M" + points.map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join("L");
  const direct = root.dependencyEdges.filter((e) => build || edgeKind(e.deptypes) !== "build").length;
  const drawnFromRoot = edges.filter((e) => e.from === root.hash).length;
  const view = box ?? { x: 0, y: 0, w: width, h: height };
  const uncached = nodes.filter((n) => !n.spec.tags?.length).length;
  return html`<figure class="dag">
    ${whole ? null : html`<p class="hint">The DAG has ${counted(all + 1, "node")}: the picture shows its first two levels.
      <button type="button" onClick=${expand} disabled=${expanding}>${expanding ? "Drawing every node…" : `Draw all ${count(all + 1)}`}</button></p>`}
    <div class="dag-tools" role="toolbar" aria-label="the picture">
      <button type="button" onClick=${fit} title="the whole DAG in the frame (key 0)">fit</button>
      <button type="button" onClick=${() => zoom(1.25)} aria-label="zoom in" title="zoom in (key +, the wheel, a pinch)">+</button>
      <button type="button" onClick=${() => zoom(1 / 1.25)} aria-label="zoom out" title="zoom out (key -)">−</button>
      <button type="button" onClick=${centre} title="back to the root">root</button>
      <small>drag or arrow keys to move</small>
    </div>
    <div class="dag-frame" ref=${frame} tabindex="0" aria-label="the DAG: arrow keys move, + and - zoom, 0 fits"
      onWheel=${wheel} onPointerDown=${down} onPointerMove=${move} onPointerUp=${up} onPointerCancel=${up}
      onKeyDown=${key}>
      <svg width="100%" height="100%" viewBox="${view.x} ${view.y} ${view.w} ${view.h}" preserveAspectRatio="xMidYMid meet" role="img"
        aria-label="dependency DAG of ${root.package.name} with ${counted(nodes.length, "node")}">
        <defs><marker id="arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto">
          <path d="M0,0 L8,4 L0,8 z" class="arrowhead" /></marker></defs>
        ${edges.map(
          (e) => html`<path class=${"edge " + edgeKind(e.deptypes)} d=${path(e.points)} marker-end="url(#arrow)">
            <title>${e.deptypes.join(", ")}${e.virtuals.length ? ` (provides ${e.virtuals.join(", ")})` : ""}</title></path>`,
        )}
        ${nodes.map(
          (n) => html`<a href=${href(`/ui/spec/${n.spec.hash}`)}
            class=${"node" + (n.spec === root ? " root" : "") + (n.spec.tags?.length ? "" : " uncached")}
            aria-label="${n.label} /${short(n.spec.hash)}${n.spec.tags?.length ? "" : " (in no loaded cache: external, or a dependency no mirror holds)"}">
            <rect x=${n.x - n.width / 2} y=${n.y - n.height / 2} width=${n.width} height=${n.height} rx="6" />
            <text x=${n.x} y=${n.y - 3} text-anchor="middle">${n.label}</text>
            <text x=${n.x} y=${n.y + 12} text-anchor="middle" class="sub">/${short(n.spec.hash)}${n.spec.tags?.length ? "" : " · not cached"}</text>
          </a>`,
        )}
      </svg>
    </div>
    <figcaption>
      <label><input type="checkbox" checked=${every} onChange=${(e) => setEvery(e.target.checked)} />
        every edge (else only those no other path implies)</label>
      <label><input type="checkbox" checked=${build} onChange=${(e) => setBuild(e.target.checked)} />
        build-only dependencies</label><br />
      ${counted(nodes.length, "node")}, ${counted(edges.length, "edge")} drawn${drawnFromRoot < direct
        ? html`; <span data-testid="dag-reduced">the root has ${counted(direct, "direct dependency", "direct dependencies")}, ${count(drawnFromRoot)} drawn from it: ${direct - drawnFromRoot === 1 ? "the other is" : `the other ${count(direct - drawnFromRoot)} are`} reached through them too (tick "every edge")</span>`
        : null}${uncached ? html`; <span class="legend uncached">${count(uncached)} in no loaded cache</span>` : null}. Edges:
      <span class="legend link">link</span> <span class="legend run">run</span>
      <span class="legend build">build only</span> <span class="legend test">test only</span>.
      Click a node to open it.</figcaption>
  </figure>`;
}
