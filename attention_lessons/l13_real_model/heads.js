// The head explorer of lesson 13: one head of a real model on a sentence, as two columns of
// tokens joined by lines whose opacity is the attention weight (bertviz's head view), or as a
// heatmap. Python ran the model with attnlib and shipped every head of every layer: this selects.
// Lesson 16 ships a causal model's weights (row i holds keys 0 … i only) and marks its sink.
// Where the picture would not show whole on a phone, it is drawn narrow (NARROW): the same numbers,
// the tokens' labels cut short, the sentences below it in lines, the heatmap's colour bar across.

import { element, escapeXml, formatNumber, groupPart, heatmapCells, heatmapParts, niceTicks, numberText, text, tickLabel } from "../kit/widgets/js/svg.js";
import { applyTheme, bind, button, explorerRoot, html, markupOf, row, sender, slider, styleNameOf, styleSelect, themeOf } from "../kit/widgets/js/controls.js";

const WIDTH = 760;
const ROW = 22;
const TOP = 64;

/**
 * Where the picture's parts go: `width` of the picture; in the lines view, the x of the largest
 * weights, of the right end of the queries' labels and of the left end of the keys'; `clip`, the
 * most characters a token's label shows (Infinity: all); `stacked`, whether the sentences below the
 * picture are drawn in lines (else each on one line).
 */
export const WIDE = { width: WIDTH, weightX: 40, left: 250, right: 510, clip: Infinity, stacked: false };
/**
 * The phone's (controls.js's narrowWhen says when): 400 units wide, its texts within ~404, so that
 * it shows whole, its text at 11 px, in the 390 px of a phone and in the 374 px the book's dark mode
 * leaves an explorer there.
 */
export const NARROW = { width: 400, weightX: 4, left: 204, right: 298, clip: 10, stacked: true };
// the narrow heatmap: its cells' left edge (its row labels before it, cut to 5 characters), its top
const GRID_X = 50;
const GRID_TOP = 76;
const GRID_CLIP = 5;

/** The weights of one head: sentences[s].attentions[layer][head], an n × n matrix.
 *
 * A causal model's rows may be shipped without the keys after the query (row i: i + 1 weights):
 * they are padded with zeros, the weights the mask gave them. Where the entry has a scale, its
 * weights were shipped as whole numbers of 1/scale (smaller pages) and are divided by it. */
export function headWeights(sentences, s, layer, head) {
  const entry = sentences[s];
  if (!entry) throw new Error(`no sentence ${s}`);
  const perLayer = entry.attentions[layer];
  if (!perLayer) throw new Error(`no layer ${layer}`);
  const weights = perLayer[head];
  if (!weights) throw new Error(`no head ${head}`);
  const n = weights.length;
  const scale = entry.scale ?? 1;
  if (scale === 1 && weights.every((row) => row.length === n)) return weights;
  return weights.map((row, i) => {
    if (row.length > n || row.length < i + 1) throw new Error(`row ${i} of head ${head} has ${row.length} weights, not ${i + 1} to ${n}`);
    return row.map((w) => w / scale).concat(new Array(n - row.length).fill(0));
  });
}

/** The sink's weight: the mean weight the queries after the first put on the first token. */
export function sinkWeight(weights) {
  const n = weights.length;
  if (n < 2) return null;
  let total = 0;
  for (let i = 1; i < n; i++) total += weights[i][0];
  return total / (n - 1);
}

/** The tokens as drawn: the first one labelled as the sink where the sink is marked. */
export function shownTokens(tokens, markSink) {
  return markSink ? tokens.map((t, i) => (i === 0 ? `${t} (sink)` : t)) : tokens;
}

/** The height of the picture for n tokens. */
export function pictureHeight(n) {
  return Math.max(260, TOP + n * ROW + 80);
}

/** The side of the heatmap for n tokens: cells of 34 px, within the picture's width. */
export function heatmapSize(n) {
  return Math.min(WIDTH - 300, Math.max(6, n) * 34);
}

/** A token's label cut to at most `most` characters, its end then an ellipsis ("because" → "becau…"). */
export function clipped(label, most) {
  const chars = Array.from(String(label));
  return chars.length <= most ? String(label) : `${chars.slice(0, most - 1).join("")}\u2026`;
}

/** A sentence given in pieces, as drawn: a line per piece where `stacked`, else one line, the pieces joined. */
export function linesOf(pieces, stacked) {
  return stacked ? pieces : [pieces.join("")];
}

/** The sentence stating the sink's weight (0 to n - 1: the queries), in two pieces. */
export function sinkSentence(first, n, weight) {
  return [`weight on the sink (the first token, ${first}), `, `mean over queries 1 to ${n - 1}: ${formatNumber(weight, 2)}`];
}

/**
 * The side of a cell of the narrow heatmap for n tokens: as wide as the phone's picture allows, at
 * most 34 (where a cell is narrower than its number, the kit's heatmapCells shows no number).
 */
export function narrowCell(n) {
  return Math.min(34, (NARROW.width - GRID_X) / Math.max(1, n));
}

/** The key each query attends to most: argmax of each row (the first, on ties). */
export function strongest(weights) {
  return weights.map((row) => row.reduce((best, w, j) => (w > row[best] ? j : best), 0));
}

/**
 * The lines view, laid out by `layout` (WIDE or NARROW): a line for each of the `keys[i]` weights
 * of each query i (the keys the model let it see: all n, or a causal model's 0 … i), however
 * faint; the tokens' labels as `tokens` where they are whole (the sink's "… (sink)"), else cut
 * short from `names` (the sink's "sink"), as the largest weights name their keys.
 */
function lines(weights, keys, tokens, theme, names, layout) {
  const n = tokens.length;
  const { left, right, weightX, clip } = layout;
  const y = (i) => TOP + i * ROW + ROW / 2;
  const parts = [
    text(left, TOP - 14, "from (queries)", { "text-anchor": "end", "font-size": 12, fill: theme.text, "font-weight": "bold" }),
    text(right, TOP - 14, "to (keys)", { "font-size": 12, fill: theme.text, "font-weight": "bold" }),
  ];
  // the lines in one group, set in place by a move (svg.js groupPart): the same lines in the same
  // order for every head of a sentence, so that a move sets only each one's opacity and number
  const drawn = [];
  weights.forEach((rowW, i) => {
    rowW.slice(0, keys[i]).forEach((w, j) => {
      drawn.push({
        tag: "line",
        attrs: {
          x1: left + 6,
          y1: y(i),
          x2: right - 6,
          y2: y(j),
          stroke: theme.text,
          "stroke-opacity": Math.min(1, w).toFixed(3),
          "stroke-width": 2,
          "data-quantity": "weight",
          "data-row": i,
          "data-col": j,
          "data-row-label": tokens[i],
          "data-col-label": tokens[j],
          "data-value": String(w),
        },
      });
    });
  });
  parts.push(groupPart("lines", drawn));
  const best = strongest(weights);
  tokens.forEach((token, i) => {
    const label = clip === Infinity ? token : clipped(names[i], clip);
    parts.push(text(left, y(i) + 4, label, { "text-anchor": "end", "font-size": 13, fill: theme.text }));
    parts.push(text(right, y(i) + 4, label, { "font-size": 13, fill: theme.text }));
    const j = best[i];
    parts.push(
      numberText(weightX, y(i) + 4, weights[i][j], `${formatNumber(weights[i][j], 2)} \u2192 ${names[j]}`, { quantity: "largest_weight", row: i, col: j, rowLabel: token, colLabel: tokens[j] }, {
        "font-size": 12,
        fill: theme.tick,
      }),
    );
  });
  parts.push(text(weightX, TOP - 14, "largest weight", { "font-size": 12, fill: theme.tick }));
  const caption = linesOf(["each line: a query's weight on a key ", "(opacity = weight); rows sum to 1"], layout.stacked);
  caption.forEach((line, k) => parts.push(text(layout.width / 2, TOP + n * ROW + 30 + 16 * k, line.trimEnd(), { "text-anchor": "middle", "font-size": 12, fill: theme.text })));
  return parts;
}

/**
 * The narrow heatmap: the kit's heatmap (svg.js) drawn for a phone, every cell with its number as
 * the wide one draws it (named by `tokens` in the tables), the tokens' labels (`names`: the sink's
 * "sink") cut short, the queries' before each row, the keys' upright below each column; the
 * colour bar across below the grid, its ticks under it. (Weights are finite: no cell is hatched.)
 */
function narrowHeatmap(weights, tokens, theme, table, names) {
  const n = tokens.length;
  const cell = narrowCell(n);
  const side = cell * n;
  const parts = [
    text(GRID_X + side / 2, GRID_TOP - 26, "attention weights", { "text-anchor": "middle", "font-weight": "bold", "font-size": 14, fill: theme.text }),
    text(GRID_X + side / 2, GRID_TOP - 9, "rows: queries, columns: keys", { "text-anchor": "middle", "font-size": 12, fill: theme.text }),
    groupPart("cells", heatmapCells({ x: GRID_X, y: GRID_TOP }, cell, weights, { rowLabels: tokens, colLabels: tokens, table, quantity: "weight", theme, lo: 0, hi: 1 })),
  ];
  const bottom = GRID_TOP + side;
  names.forEach((name, k) => {
    const label = clipped(name, GRID_CLIP);
    parts.push(text(GRID_X - 6, GRID_TOP + (k + 0.5) * cell + 4, label, { "text-anchor": "end", "font-size": 12, fill: theme.tick }));
    const x = GRID_X + (k + 0.5) * cell + 4;
    parts.push(text(x, bottom + 6, label, { "text-anchor": "end", "font-size": 12, fill: theme.tick, transform: `rotate(-90 ${x} ${bottom + 6})` }));
  });
  parts.push(colorbarAcross({ x: GRID_X, y: bottom + 64, width: side, height: 12 }, table, theme));
  return { parts, bottom: bottom + 64 + 12 + 20 };
}

/** The colour bar of weights 0 … 1 laid across (its ticks below it), named "weight" on its left. */
function colorbarAcross(box, table, theme) {
  const id = `attnlib-cmap-across-${table[0].slice(1)}-${table[table.length - 1].slice(1)}`;
  const stops = Array.from({ length: 33 }, (_, k) => {
    const at = k / 32;
    return element("stop", { offset: at, "stop-color": table[Math.min(table.length - 1, Math.floor(at * table.length))] });
  });
  const ticks = niceTicks(0, 1, 5).map((t) => {
    const x = box.x + t * box.width;
    return (
      element("line", { x1: x, x2: x, y1: box.y + box.height, y2: box.y + box.height + 4, stroke: theme.edge }) +
      text(x, box.y + box.height + 17, tickLabel(t), { "text-anchor": "middle", "font-size": 12, fill: theme.tick })
    );
  });
  return (
    element("defs", {}, element("linearGradient", { id, x1: 0, y1: 0, x2: 1, y2: 0 }, stops.join(""))) +
    element("rect", { x: box.x, y: box.y, width: box.width, height: box.height, fill: `url(#${id})`, stroke: theme.edge }) +
    text(box.x - 6, box.y + box.height - 1, "weight", { "text-anchor": "end", "font-size": 12, fill: theme.tick }) +
    ticks.join("")
  );
}

/**
 * The picture for one head: its `parts` for draw(parts) (markup, and the lines view's lines as
 * svg.js's groupPart), their whole `markup` (made when read), its `height` and `width`: wide
 * (WIDE, 1 unit = 1 px on a desktop) or, where `narrow`, for a phone (NARROW): the same numbers,
 * drawn in less width.
 */
export function drawHeads(state, theme, colormaps, narrow = false) {
  const { sentences, sentence, layer, head, view, modelName, markSink = false } = state;
  const layout = narrow ? NARROW : WIDE;
  const entry = sentences[sentence];
  const weights = headWeights(sentences, sentence, layer, head);
  const keys = entry.attentions[layer][head].map((row) => row.length); // each query's keys, as shipped
  const tokens = shownTokens(entry.tokens, markSink);
  const names = markSink ? ["sink", ...tokens.slice(1)] : tokens;
  const n = tokens.length;
  const sink = markSink ? sinkWeight(weights) : null;
  const sinkLines = sink === null ? [] : linesOf(sinkSentence(entry.tokens[0], n, sink), layout.stacked);
  let picture;
  let height;
  if (narrow && view === "heatmap") {
    const grid = narrowHeatmap(weights, tokens, theme, colormaps.viridis, names);
    picture = grid.parts;
    height = grid.bottom + 20 + 17 * sinkLines.length;
  } else if (narrow) {
    picture = lines(weights, keys, tokens, theme, names, layout);
    height = TOP + n * ROW + (sinkLines.length ? 75 + 17 * sinkLines.length : 66);
  } else {
    const size = heatmapSize(n);
    height = view === "heatmap" ? Math.max(pictureHeight(n), TOP + size + 120) : pictureHeight(n);
    picture =
      view === "heatmap"
        ? heatmapParts({ x: 150, y: TOP, size }, weights, {
            rowLabels: tokens,
            colLabels: tokens,
            table: colormaps.viridis,
            quantity: "weight",
            theme,
            vmin: 0,
            vmax: 1,
            decimals: 2,
            title: "attention weights (rows: queries, columns: keys)",
            key: "cells",
          })
        : lines(weights, keys, tokens, theme, names, layout);
  }
  const { width } = layout;
  const parts = [element("rect", { x: 0, y: 0, width, height, fill: theme.background })];
  parts.push(text(width / 2, 22, `${modelName}: layer ${layer}, head ${head}`, { "text-anchor": "middle", "font-size": 15, fill: theme.text, "font-weight": "bold" }));
  if (sink !== null) {
    const what = { quantity: "sink_weight", row: 0, col: 0, rowLabel: "queries after the first", colLabel: tokens[0] };
    const attrs = { "text-anchor": "middle", "font-size": 13, fill: theme.text };
    const y = height - 18 - 17 * (sinkLines.length - 1);
    parts.push(sinkLines.length === 1 ? numberText(width / 2, y, sink, sinkLines[0], what, attrs) : numberLines(width / 2, y, sink, sinkLines, what, attrs));
  }
  parts.push(...picture);
  // the whole markup only where it is read (the tests): a move draws the parts
  return {
    parts,
    get markup() {
      return parts.map(markupOf).join("");
    },
    height,
    width,
  };
}

/** numberText's number shown in lines, 17 units apart: the same attributes, its text the lines joined. */
function numberLines(x, y, value, shown, what, attrs) {
  const number = numberText(x, y, value, "", what, attrs);
  const spans = shown.map((line, k) => element("tspan", { x, dy: k === 0 ? 0 : 17 }, escapeXml(line)));
  return number.replace("></text>", `>${spans.join("")}</text>`);
}

/** A select of the sentences (or prompts: noun). */
function sentenceSelect(sentences, value, onChange, noun) {
  const select = html("select", { "data-lm-suppress-shortcuts": "true", "data-control": "sentence", "aria-label": noun });
  sentences.forEach((entry, k) => select.append(html("option", { value: k }, entry.text)));
  select.value = String(value);
  select.addEventListener("change", () => onChange(Number(select.value)));
  Object.assign(select.style, { maxWidth: "100%", minHeight: "24px" });
  const node = html("label", {}, `${noun} `, select);
  node.style.marginRight = "10px";
  return { node, select };
}

function render({ model, el }) {
  const noun = model.get("noun") ?? "sentence";
  const { root, controls, message, draw, reshape, narrowWhen } = explorerRoot(el, "heads", WIDTH, pictureHeight(12), `one attention head's weights on a ${noun}`);
  const send = sender(model);
  const layer = slider({
    name: "layer",
    label: "layer",
    ariaLabel: "layer, from 0",
    min: 0,
    max: model.get("n_layers") - 1,
    step: 1,
    value: model.get("layer"),
    format: (v) => String(v),
    width: "140px",
    onInput: (v) => send({ layer: v }),
  });
  const head = slider({
    name: "head",
    label: "head",
    ariaLabel: "head, from 0",
    min: 0,
    max: model.get("n_heads") - 1,
    step: 1,
    value: model.get("head"),
    format: (v) => String(v),
    width: "200px",
    onInput: (v) => send({ head: v }),
  });
  const view = html(
    "select",
    { "data-lm-suppress-shortcuts": "true", "data-control": "view", "aria-label": "view" },
    html("option", { value: "lines" }, "lines"),
    html("option", { value: "heatmap" }, "heatmap"),
  );
  view.style.minHeight = "24px";
  view.addEventListener("change", () => send({ view: view.value }));
  const viewLabel = html("label", {}, "view ", view);
  viewLabel.style.marginRight = "10px";
  const choice = html("span", {});
  const typed = html("input", {
    "data-lm-suppress-shortcuts": "true",
    type: "text",
    "data-control": "text",
    "aria-label": `your ${noun}`,
    placeholder: `type a ${noun} (needs a running kernel)`,
    size: 44,
  });
  typed.style.maxWidth = "100%";
  let waiting = null;
  const run = button({
    name: "run",
    label: "run it",
    onClick: () => {
      waiting = typed.value;
      send({ text: typed.value });
      redraw();
    },
  });
  const style = styleSelect({ model, value: model.get("style_name"), onChange: (s) => send({ style_name: s }) });
  controls.append(row(choice, viewLabel, style.node), row(layer.node, head.node), row(typed, run));

  let select = null;
  const redraw = () => {
    const sentences = model.get("sentences");
    const state = {
      sentences,
      sentence: model.get("sentence"),
      layer: model.get("layer"),
      head: model.get("head"),
      view: model.get("view"),
      modelName: model.get("model_name"),
      markSink: model.get("mark_sink") === true,
    };
    const theme = themeOf(model);
    if (!select || select.select.options.length !== sentences.length) {
      select = sentenceSelect(sentences, state.sentence, (k) => send({ sentence: k }), noun);
      choice.replaceChildren(select.node);
    }
    select.select.value = String(state.sentence);
    layer.set(state.layer);
    head.set(state.head);
    view.value = state.view;
    style.select.value = styleNameOf(model);
    const error = model.get("error");
    if (error) waiting = null;
    if (waiting !== null && sentences.some((entry) => entry.text === waiting.trim())) waiting = null;
    message.textContent = error || (waiting !== null ? `Python runs the model on "${waiting}": waiting for the kernel\u2026 (with no kernel, pick one of the precomputed ${noun}s)` : "");
    applyTheme(root, theme);
    const { parts, height, width } = drawHeads(state, theme, model.get("colormaps"), narrow());
    reshape(width, height, null); // one panel, the whole picture
    draw(parts);
  };
  const narrow = narrowWhen(WIDTH, () => redraw());
  return bind(model, ["sentences", "sentence", "layer", "head", "view", "error", "style_name"], redraw);
}

export default { render };
