// The similarity explorer of lesson 01: two 2D vectors, the projection of the second onto
// the first, their angle and the numbers (attention_lessons.l01_embeddings.plots.similarity_figure), with x/y sliders.

import { similarity } from "../kit/widgets/js/mirror.js";
import { arrow, element, labelPlacements, numberText, text, tipLabel, title, vectorPanel } from "../kit/widgets/js/svg.js";
import { applyTheme, bind, explorerRoot, html, row, sender, slider, stepDecimals, themeOf } from "../kit/widgets/js/controls.js";

/**
 * The picture's geometry: WIDE wherever its 520 units show whole; else NARROW (a phone, at most
 * 424 units wide): a smaller plot, the box of numbers below it instead of on its top left corner
 * and the two lengths beside that box. `box` is the plot, `numbers` the top left corner of the box
 * of numbers, `norms` the right end of the label of each length ("|a| =") and its baseline.
 */
export const WIDE = { width: 520, height: 540, box: { x: 70, y: 40, width: 420, height: 420 }, numbers: [74, 44], norms: [[110, 525], [290, 525]] };
export const NARROW = { width: 410, height: 515, box: { x: 60, y: 40, width: 336, height: 336 }, numbers: [60, 426], norms: [[320, 440], [320, 457]] };

/** Dot product, lengths, cosine and angle of the explorer's two vectors (attention_lessons.l01_embeddings.similarity). */
export function computeSimilarity({ vectors }) {
  return similarity(vectors[0], vectors[1]);
}

const signed = (v) => (v < 0 ? "\u2212" : "+") + Math.abs(v).toFixed(3);

/** The angle's arc from a to b, radius r (data units), as polyline points in pixels. */
function arcPoints(frame, a, b, r, opposite) {
  const start = Math.atan2(a[1], a[0]);
  let turn = Math.atan2(b[1], b[0]) - start;
  turn = ((((turn + Math.PI) % (2 * Math.PI)) + 2 * Math.PI) % (2 * Math.PI)) - Math.PI;
  if (opposite) turn = Math.PI;
  return Array.from({ length: 40 }, (_, k) => {
    const t = start + (turn * k) / 39;
    return `${frame.sx(r * Math.cos(t))},${frame.sy(r * Math.sin(t))}`;
  }).join(" ");
}

/** The panel and its numbers, as SVG markup (`narrow`: laid out as NARROW). */
export function drawSimilarity(state, sim, theme, narrow = false) {
  return similarityParts(state, sim, theme, narrow).join("");
}

/** drawSimilarity's markup in parts, in order: a move redraws only the parts whose markup changed. */
export function similarityParts(state, sim, theme, narrow = false) {
  const { labels, vectors, limits } = state;
  const [a, b] = vectors;
  const [p, q] = labels;
  const { width, height, box, numbers, norms } = narrow ? NARROW : WIDE;
  const parts = [element("rect", { x: 0, y: 0, width, height, fill: theme.background })];
  const frame = vectorPanel(box, limits, theme, { xlabel: `shaded: ${q} projected onto ${p};  ${p}\u00b7${q} = |${p}| \u00d7 its length` });
  parts.push(title(box, "Dot product, cosine and angle", theme), frame.markup);
  if (sim.normA > 0) {
    const t = sim.dot / sim.normA ** 2;
    const foot = [t * a[0], t * a[1]];
    parts.push(
      element("line", { x1: frame.sx(0), y1: frame.sy(0), x2: frame.sx(foot[0]), y2: frame.sy(foot[1]), stroke: theme.palette[0], "stroke-width": 9, "stroke-opacity": 0.35 }),
      element("line", { x1: frame.sx(b[0]), y1: frame.sy(b[1]), x2: frame.sx(foot[0]), y2: frame.sy(foot[1]), stroke: theme.text, "stroke-dasharray": "5 4" }),
    );
  }
  if (sim.cosine !== null) {
    const r = 0.3 * Math.min(sim.normA, sim.normB);
    parts.push(element("polyline", { points: arcPoints(frame, a, b, r, sim.angleDegrees >= 179.999), fill: "none", stroke: theme.text, "stroke-width": 1.5 }));
  }
  const placements = labelPlacements(vectors, 0.08 * (limits[1] - limits[0]));
  vectors.forEach(([x, y], i) => {
    const color = theme.palette[i];
    parts.push(arrow(frame.sx(0), frame.sy(0), frame.sx(x), frame.sy(y), color));
    parts.push(tipLabel(frame.sx(x), frame.sy(y), labels[i], placements[i], color));
  });

  const mono = { "font-size": 12, "font-family": "DejaVu Sans Mono, monospace", fill: theme.text };
  const left = numbers[0] + 4;
  const top = numbers[1] + 14;
  parts.push(element("rect", { x: numbers[0], y: numbers[1], width: 190, height: 78, rx: 6, fill: theme.background, "fill-opacity": 0.9, stroke: theme.grid }));
  const line = (k, label, value, shown, quantity) =>
    text(left, top + 17 * k, label, mono) + numberText(left + 95, top + 17 * k, value, shown, { quantity }, mono);
  parts.push(line(0, `${p}\u00b7${q}`, sim.dot, signed(sim.dot), "dot"));
  parts.push(line(1, `|${p}| |${q}|`, sim.normA * sim.normB, (sim.normA * sim.normB).toFixed(3), "norm_product"));
  if (sim.cosine === null) {
    parts.push(line(2, "cos \u03b8", null, "undefined", "cosine"));
    parts.push(line(3, "\u03b8", null, "(a zero vector)", "angle_degrees"));
  } else {
    parts.push(line(2, "cos \u03b8", sim.cosine, signed(sim.cosine), "cosine"));
    parts.push(line(3, "\u03b8", sim.angleDegrees, `${sim.angleDegrees.toFixed(1)}\u00b0`, "angle_degrees"));
  }
  const plain = { "font-size": 12, fill: theme.text };
  const right = { ...plain, "text-anchor": "end" };
  const [[xa, ya], [xb, yb]] = norms;
  parts.push(
    text(xa, ya, `|${p}| =`, right),
    numberText(xa + 6, ya, sim.normA, sim.normA.toFixed(4), { quantity: "norm_a" }, plain),
    text(xb, yb, `|${q}| =`, right),
    numberText(xb + 6, yb, sim.normB, sim.normB.toFixed(4), { quantity: "norm_b" }, plain),
  );
  return parts;
}

function render({ model, el }) {
  const labels = model.get("labels");
  const { root, controls, draw, reshape, narrowWhen } = explorerRoot(el, "similarity", WIDE.width, WIDE.height, "two vectors, their dot product, cosine and angle");
  const narrow = narrowWhen(WIDE.width, () => redraw());
  const step = model.get("step");
  const decimals = stepDecimals(step);
  const send = sender(model);
  const sliders = labels.map((label, i) => {
    const pair = ["x", "y"].map((axis, j) =>
      slider({
        name: `${axis}-${i}`,
        label: axis,
        ariaLabel: `${axis} of vector ${i + 1}, ${label}`,
        min: model.get("value_min"),
        max: model.get("value_max"),
        step,
        value: model.get("vectors")[i][j],
        format: (v) => v.toFixed(decimals),
        onInput: (v) => {
          const vectors = model.get("vectors").map((r) => r.slice());
          vectors[i][j] = v;
          send({ vectors });
        },
      }),
    );
    const name = html("b", {}, label);
    name.style.display = "inline-block";
    name.style.minWidth = "60px";
    controls.append(row(name, ...pair.map((s) => s.node)));
    return pair;
  });
  const redraw = () => {
    const state = { labels, vectors: model.get("vectors"), limits: model.get("limits") };
    const theme = themeOf(model);
    state.vectors.forEach((v, i) => sliders[i].forEach((s, j) => s.set(v[j])));
    applyTheme(root, theme);
    const layout = narrow() ? NARROW : WIDE;
    reshape(layout.width, layout.height, null);
    draw(similarityParts(state, computeSimilarity(state), theme, layout === NARROW));
  };
  return bind(model, ["vectors", "style_name"], redraw);
}

export default { render };
