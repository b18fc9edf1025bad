// The scaling explorer of lesson 04: random queries and keys of dimension d_k, raw vs scaled
// scores (attention_lessons.l04_scaling.plots.scaling_figure). Python computes every d_k of the slider with attnlib and
// ships the results (histogram counts, one query's weights, the statistics); this only selects.

import { axes, element, niceTicks, numberText, text, tickLabel, title } from "../kit/widgets/js/svg.js";
import { applyTheme, bind, button, explorerRoot, row, sender, slider, themeOf } from "../kit/widgets/js/controls.js";

const WIDTH = 1300;
const HEIGHT = 540;
const BINS = 48;
const PANELS = [
  { at: [25, 0, 400, 380], name: "the spread of every score, raw (hatched) and scaled" },
  { at: [466, 0, 392, 380], name: "one query's weights over the keys, raw (hatched) and scaled" },
  { at: [906, 0, 385, 380], name: "the variance of the scores against d_k, raw (dashed, circles) and scaled (solid, squares)" },
];
const STATISTICS = "the statistics over every query, raw and scaled";
/**
 * The picture's viewBox and panels: WIDE, the statistics in a table one row a line (550 units
 * wide), wherever that panel shows whole; else NARROW (a phone): the same three plots, the
 * statistics with each row's label on two lines, every panel at most 424 units wide.
 */
export const WIDE = { width: WIDTH, height: HEIGHT, regions: [...PANELS, { at: [10, 380, 550, HEIGHT - 380], name: STATISTICS }] };
export const NARROW = { width: WIDTH, height: 590, regions: [...PANELS, { at: [10, 380, 400, 210], name: STATISTICS }] };

/** The precomputed row of the table for one d_k. */
export function rowFor(table, dK) {
  const found = table.find((r) => r.d_k === dK);
  if (!found) throw new Error(`no precomputed results for d_k = ${dK}`);
  return found;
}

// Raw and scaled are told apart by more than colour: raw is hatched (histograms, bars), drawn
// dashed with circles (variance); scaled is plain, solid with squares. HATCH is the pattern's id.
const HATCH = "attnlib-scaling-hatch";

/** The hatching pattern raw areas are filled with on top of their colour (lines in the text colour). */
function hatchPattern(theme) {
  const line = element("line", { x1: 0, y1: 0, x2: 0, y2: 7, stroke: theme.text, "stroke-width": 1.5, "stroke-opacity": 0.7 });
  const pattern = element("pattern", { id: `${HATCH}-${theme.text.slice(1)}`, patternUnits: "userSpaceOnUse", width: 7, height: 7, patternTransform: "rotate(45)" }, line);
  return element("defs", {}, pattern);
}

/** The fill of the hatching over a raw area. */
const hatched = (theme) => `url(#${HATCH}-${theme.text.slice(1)})`;

/** A legend: a swatch per entry ([label, color, opacity, raw?]), raw swatches hatched. */
function legend(x, y, entries, theme) {
  return entries
    .map(([label, color, opacity, raw], k) => {
      const swatch = { x, y: y + 18 * k - 10, width: 18, height: 12 };
      return (
        element("rect", { ...swatch, fill: color, "fill-opacity": opacity }) +
        (raw ? element("rect", { ...swatch, fill: hatched(theme) }) : "") +
        text(x + 24, y + 18 * k, label, { "font-size": 12, fill: theme.text })
      );
    })
    .join("");
}

/** A variance marker: a circle for raw, a square for scaled. */
function marker(x, y, size, color, raw, attrs = {}) {
  if (raw) return element("circle", { cx: x, cy: y, r: size, fill: color, ...attrs });
  return element("rect", { x: x - size, y: y - size, width: 2 * size, height: 2 * size, fill: color, ...attrs });
}

const SUPERSCRIPT = { "-": "\u207b", 0: "\u2070", 1: "\u00b9", 2: "\u00b2", 3: "\u00b3", 4: "\u2074", 5: "\u2075", 6: "\u2076", 7: "\u2077", 8: "\u2078", 9: "\u2079" };

/** 2 to the power `exponent` as text with superscript digits: 2⁴, 2⁻². */
export function powerOfTwoLabel(exponent) {
  return `2${[...String(exponent)].map((c) => SUPERSCRIPT[c]).join("")}`;
}

function histogram(frame, counts, half, total, color, opacity, over = null) {
  const width = (2 * half) / BINS;
  const points = [`${frame.sx(-half)},${frame.sy(0)}`];
  counts.forEach((count, k) => {
    const share = count / total;
    points.push(`${frame.sx(-half + k * width)},${frame.sy(share)}`, `${frame.sx(-half + (k + 1) * width)},${frame.sy(share)}`);
  });
  points.push(`${frame.sx(half)},${frame.sy(0)}`);
  const shape = { points: points.join(" ") };
  return element("polygon", { ...shape, fill: color, "fill-opacity": opacity, stroke: color }) + (over ? element("polygon", { ...shape, fill: over }) : "");
}

function powerOfTwo(x, y, exponent, attrs) {
  return text(x, y, powerOfTwoLabel(exponent), attrs);
}

/** The three panels and the statistics, as SVG markup. */
export function drawScaling(state, theme) {
  return scalingParts(state, theme).join("");
}

/**
 * drawScaling's markup in parts, in order: a move redraws only the parts whose markup changed.
 * `narrow`: the statistics as NARROW lays them out (see statisticsParts).
 */
export function scalingParts(state, theme, narrow = false) {
  const { table, dK, nQueries, nKeys } = state;
  const r = rowFor(table, dK);
  const total = nQueries * nKeys;
  const mono = { "font-size": 12, "font-family": "DejaVu Sans Mono, monospace", fill: theme.text };
  const { width, height } = narrow ? NARROW : WIDE;
  const parts = [element("rect", { x: 0, y: 0, width, height, fill: theme.background }), hatchPattern(theme)];

  // 1. the spread of every score, raw and scaled
  const spread = { x: 80, y: 40, width: 330, height: 300 };
  const half = r.half_width;
  const top = 1.25 * Math.max(...r.raw_counts, ...r.scaled_counts) / total;
  const yticks = niceTicks(0, top, 5);
  const spreadFrame = axes(spread, {
    xlim: [-half, half],
    ylim: [0, top],
    xticks: niceTicks(-half, half, 6),
    yticks,
    ylabels: yticks.map((t) => `${Math.round(t * 100)}%`),
    xlabel: "score",
    ylabel: "share of the scores",
    theme,
  });
  parts.push(title(spread, `All ${total} scores at d_k = ${dK}`, theme), spreadFrame.markup);
  parts.push(histogram(spreadFrame, r.raw_counts, half, total, theme.raw, 0.45, hatched(theme)));
  parts.push(histogram(spreadFrame, r.scaled_counts, half, total, theme.scaled, 0.6));
  parts.push(legend(spread.x + spread.width - 130, spread.y + 18, [["raw q\u00b7k", theme.raw, 0.45, true], ["scaled q\u00b7k / \u221ad_k", theme.scaled, 0.6]], theme));

  // 2. one query's weights over the keys
  const weights = { x: 520, y: 40, width: 330, height: 300 };
  const keys = r.raw_weights.map((_, j) => j);
  const weightFrame = axes(weights, {
    xlim: [-0.6, nKeys - 0.4],
    ylim: [0, 1.45],
    xticks: keys,
    xlabels: keys.map((j) => `k${j + 1}`),
    yticks: [0, 0.2, 0.4, 0.6, 0.8, 1],
    xlabel: "keys",
    ylabel: "weight",
    theme,
  });
  parts.push(title(weights, "One query's weights over the keys", theme), weightFrame.markup);
  const barWidth = weightFrame.sx(0.4) - weightFrame.sx(0);
  for (const [name, offset, color, raw] of [["raw_weights", -0.4, theme.raw, true], ["scaled_weights", 0, theme.scaled, false]]) {
    r[name].forEach((w, j) => {
      const bar = { x: weightFrame.sx(j + offset), y: weightFrame.sy(w), width: barWidth, height: weightFrame.sy(0) - weightFrame.sy(w) };
      parts.push(
        element("rect", { ...bar, fill: color, "data-quantity": name, "data-col": j, "data-col-label": `k${j + 1}`, "data-value": String(w) }),
        raw ? element("rect", { ...bar, fill: hatched(theme) }) : "",
      );
    });
  }
  parts.push(legend(weights.x + 10, weights.y + 18, [["without scaling", theme.raw, 1, true], ["scaled by 1/\u221ad_k", theme.scaled, 1]], theme));
  const wx = weights.x + weights.width - 8;
  parts.push(
    text(wx, weights.y + 16, "raw   scaled", { ...mono, "text-anchor": "end" }),
    text(weights.x + weights.width - 170, weights.y + 31, "largest", mono),
    numberText(wx - 60, weights.y + 31, r.first_raw_max_weight, r.first_raw_max_weight.toFixed(3), { quantity: "first_raw_max_weight" }, { ...mono, "text-anchor": "end" }),
    numberText(wx, weights.y + 31, r.first_scaled_max_weight, r.first_scaled_max_weight.toFixed(3), { quantity: "first_scaled_max_weight" }, { ...mono, "text-anchor": "end" }),
    text(weights.x + weights.width - 170, weights.y + 46, "entropy", mono),
    numberText(wx - 60, weights.y + 46, r.first_raw_entropy, r.first_raw_entropy.toFixed(3), { quantity: "first_raw_entropy" }, { ...mono, "text-anchor": "end" }),
    numberText(wx, weights.y + 46, r.first_scaled_entropy, r.first_scaled_entropy.toFixed(3), { quantity: "first_scaled_entropy" }, { ...mono, "text-anchor": "end" }),
  );

  // 3. the variance against d_k, log–log, base 2
  const variance = { x: 960, y: 40, width: 310, height: 300 };
  const lx = (d) => variance.x + ((Math.log2(d) - Math.log2(0.7)) / (Math.log2(1500) - Math.log2(0.7))) * variance.width;
  const ly = (v) => variance.y + variance.height - ((Math.log2(v) - Math.log2(0.25)) / (Math.log2(4096) - Math.log2(0.25))) * variance.height;
  const tickStyle = { "font-size": 12, fill: theme.tick };
  for (let e = 0; e <= 10; e += 2) {
    parts.push(element("line", { x1: lx(2 ** e), x2: lx(2 ** e), y1: variance.y, y2: variance.y + variance.height, stroke: theme.grid }));
    parts.push(powerOfTwo(lx(2 ** e), variance.y + variance.height + 16, e, { ...tickStyle, "text-anchor": "middle" }));
  }
  for (let e = -2; e <= 12; e += 2) {
    parts.push(element("line", { x1: variance.x, x2: variance.x + variance.width, y1: ly(2 ** e), y2: ly(2 ** e), stroke: theme.grid }));
    parts.push(powerOfTwo(variance.x - 7, ly(2 ** e) + 4, e, { ...tickStyle, "text-anchor": "end" }));
  }
  const varianceFrame = axes(variance, { xlim: [0, 1], ylim: [0, 1], xlabel: "d_k", ylabel: "variance of the scores", theme });
  parts.push(title(variance, "Variance grows like d_k; scaled stays 1", theme), varianceFrame.markup);
  for (const [name, color, raw] of [["raw_variance", theme.raw, true], ["scaled_variance", theme.scaled, false]]) {
    const points = table.map((t) => `${lx(t.d_k)},${ly(Math.max(t[name], 1e-12))}`);
    parts.push(element("polyline", { points: points.join(" "), fill: "none", stroke: color, "stroke-width": 1.5, "stroke-dasharray": raw ? "5 3" : null }));
    table.forEach((t) => parts.push(marker(lx(t.d_k), ly(Math.max(t[name], 1e-12)), 2.5, color, raw)));
    parts.push(marker(lx(dK), ly(Math.max(r[name], 1e-12)), 6, color, raw, { stroke: theme.text }));
  }
  const key = { x: variance.x + variance.width - 150, y: variance.y + variance.height / 2 };
  [["raw: dashed, circles", theme.raw, true], ["scaled: solid, squares", theme.scaled, false]].forEach(([label, color, raw], k) => {
    const y = key.y + 18 * k;
    parts.push(
      element("line", { x1: key.x, x2: key.x + 18, y1: y - 4, y2: y - 4, stroke: color, "stroke-width": 1.5, "stroke-dasharray": raw ? "5 3" : null }),
      marker(key.x + 9, y - 4, 4, color, raw),
      text(key.x + 24, y, label, { "font-size": 12, fill: theme.text }),
    );
  });
  parts.push(
    text(variance.x + 8, variance.y + 16, `d_k = ${dK}`, mono),
    text(variance.x + 8, variance.y + 31, "variance raw", mono),
    numberText(variance.x + 180, variance.y + 31, r.raw_variance, r.raw_variance.toFixed(2), { quantity: "raw_variance" }, { ...mono, "text-anchor": "end" }),
    text(variance.x + 8, variance.y + 46, "variance scaled", mono),
    numberText(variance.x + 180, variance.y + 46, r.scaled_variance, r.scaled_variance.toFixed(2), { quantity: "scaled_variance" }, { ...mono, "text-anchor": "end" }),
  );

  parts.push(...statisticsParts(state, r, theme, narrow));
  return parts;
}

/**
 * The statistics over every query, raw and scaled, as parts of markup. Wide: a table whose rows
 * are one line each (label, raw, scaled). Narrow: the line of what was drawn cut in two, and each
 * row's label on two lines, its numbers on the first; the same numbers, in the same order.
 */
export function statisticsParts(state, r, theme, narrow = false) {
  const { dK, nQueries, nKeys, seed } = state;
  const y0 = 405;
  const plain = { "font-size": 13, fill: theme.text };
  const bold = { ...plain, "font-weight": "bold", "text-anchor": "end" };
  const [raw, scaled] = narrow ? [250, 395] : [400, 540]; // where the two columns end
  const drawn = `d_k = ${dK}: ${nQueries} random queries`;
  const keys = `${nKeys} random keys (seed ${seed})`;
  const scale = `scale 1/\u221ad_k = ${tickLabel(1 / Math.sqrt(dK))}`;
  const lines = narrow ? [drawn, `and ${keys}`, scale] : [`${drawn} \u00b7 ${keys}`, scale];
  const head = y0 + 18 * lines.length + 4; // the columns' headers
  const parts = [
    ...lines.map((line, k) => text(20, y0 + 18 * k, line, plain)),
    text(raw, head, "raw q\u00b7k", bold),
    text(scaled, head, "scaled q\u00b7k/\u221ad_k", bold),
  ];
  const rows = [
    [["largest weight", "(mean over queries)"], "max_weight", 3],
    [["entropy, nats", `(uniform: ${Math.log(nKeys).toFixed(3)})`], "entropy", 3],
    [["gradient size", "|\u2202softmax/\u2202s|"], "jacobian_norm", 3],
  ];
  const spacing = narrow ? 40 : 18; // between rows
  rows.forEach(([label, key, decimals], k) => {
    const y = head + 18 + spacing * k;
    parts.push(
      text(20, y, narrow ? label[0] : label.join(" "), plain),
      numberText(raw, y, r[`raw_${key}`], r[`raw_${key}`].toFixed(decimals), { quantity: `raw_${key}` }, { ...plain, "text-anchor": "end" }),
      numberText(scaled, y, r[`scaled_${key}`], r[`scaled_${key}`].toFixed(decimals), { quantity: `scaled_${key}` }, { ...plain, "text-anchor": "end" }),
    );
    if (narrow) parts.push(text(20, y + 18, label[1], plain));
  });
  return parts;
}

function render({ model, el }) {
  const values = model.get("d_k_values");
  const label = "raw and scaled scores of random vectors";
  const { root, controls, message, draw, reshape, narrowWhen } = explorerRoot(el, "scaling", WIDTH, HEIGHT, label, WIDE.regions);
  const narrow = narrowWhen(Math.max(...WIDE.regions.map(({ at }) => at[2])), () => redraw());
  const send = sender(model);
  const dK = slider({
    name: "d_k",
    label: "d_k (dimension of q and k)",
    ariaLabel: "d_k, the dimension of queries and keys",
    min: 0,
    max: values.length - 1,
    step: 1,
    value: values.indexOf(model.get("d_k")),
    format: (index) => String(values[index]),
    width: "320px",
    onInput: (index) => send({ d_k: values[index] }),
  });
  dK.input.setAttribute("aria-valuetext", `d_k = ${model.get("d_k")}`);
  const newDraw = button({ name: "new-draw", label: "new random vectors", onClick: () => send({ seed: model.get("seed") + 1 }) });
  controls.append(row(dK.node, newDraw));

  const redraw = () => {
    const state = {
      table: model.get("table"),
      dK: model.get("d_k"),
      nQueries: model.get("n_queries"),
      nKeys: model.get("n_keys"),
      seed: model.get("table_seed"),
    };
    const theme = themeOf(model);
    dK.set(values.indexOf(state.dK));
    dK.input.setAttribute("aria-valuetext", `d_k = ${state.dK}`);
    const waiting = model.get("seed") !== state.seed;
    message.textContent = waiting ? `New random vectors (seed ${model.get("seed")}) are drawn by Python: waiting for the kernel\u2026` : "";
    applyTheme(root, theme);
    const layout = narrow() ? NARROW : WIDE;
    reshape(layout.width, layout.height, layout.regions);
    draw(scalingParts(state, theme, layout === NARROW));
  };
  return bind(model, ["d_k", "seed", "table", "table_seed", "style_name"], redraw);
}

export default { render };
