// A spec's dependency DAG as a picture: dagre lays it out in layers (dependents above
// their dependencies), Preact draws it as SVG; every node links to its spec page and
// each edge's style says how the dependency is needed.

import { useState } from "preact/hooks";
import { Graph, layout } from "dagre";
import { Loading, Problem, count, href, html, short, useQuery } from "./ui.js";

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
  const whole = spec.allDependencies <= MAX_NODES;
  const { data, error } = useQuery(whole ? "Dag" : "DagLevels", { hash: spec.hash }, {
    skip: spec.allDependencies === 0,
  });
  if (spec.allDependencies === 0) return html`<p>No dependencies are recorded for this spec.</p>`;
  if (error) return html`<${Problem} error=${error} />`;
  if (!data) return html`<${Loading} what="Drawing the DAG" />`;
  return html`<${Picture} root=${whole ? data.spec : levels(data.spec)} whole=${whole}
    all=${spec.allDependencies} />`;
}

function Picture({ root, whole, all }) {
  const [every, setEvery] = useState(false);
  const [build, setBuild] = useState(true);
  const { nodes, edges, width, height } = laidOut(root, { every, build });
  const path = (points) => "M" + points.map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join("L");
  return html`<figure class="dag">
    ${whole ? null : html`<p class="hint">The DAG has ${count(all + 1)} nodes: the picture shows its first two levels.</p>`}
    <div class="scroll dag-frame">
      <svg width=${width} height=${height} viewBox="0 0 ${width} ${height}" role="img"
        aria-label="dependency DAG of ${root.package.name} with ${nodes.length} nodes">
        <defs><marker id="arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto">
          <path d="M0,0 L8,4 L0,8 z" class="arrowhead" /></marker></defs>
        ${edges.map(
          (e) => html`<path class=${"edge " + edgeKind(e.deptypes)} d=${path(e.points)} marker-end="url(#arrow)">
            <title>${e.deptypes.join(", ")}${e.virtuals.length ? ` (provides ${e.virtuals.join(", ")})` : ""}</title></path>`,
        )}
        ${nodes.map(
          (n) => html`<a href=${href(`/ui/spec/${n.spec.hash}`)} class=${"node" + (n.spec === root ? " root" : "")}
            aria-label="${n.label} /${short(n.spec.hash)}">
            <rect x=${n.x - n.width / 2} y=${n.y - n.height / 2} width=${n.width} height=${n.height} rx="6" />
            <text x=${n.x} y=${n.y - 3} text-anchor="middle">${n.label}</text>
            <text x=${n.x} y=${n.y + 12} text-anchor="middle" class="sub">/${short(n.spec.hash)}</text>
          </a>`,
        )}
      </svg>
    </div>
    <figcaption>
      <label><input type="checkbox" checked=${every} onChange=${(e) => setEvery(e.target.checked)} />
        every edge (else only those no other path implies)</label>
      <label><input type="checkbox" checked=${build} onChange=${(e) => setBuild(e.target.checked)} />
        build-only dependencies</label><br />
      ${nodes.length} nodes, ${edges.length} edges drawn. Edges:
      <span class="legend link">link</span> <span class="legend run">run</span>
      <span class="legend build">build only</span> <span class="legend test">test only</span>.
      Click a node to open it.</figcaption>
  </figure>`;
}
