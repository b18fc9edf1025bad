// The head explorer of lesson 13: one head of a real model on a sentence, as two columns of
// tokens joined by lines whose opacity is the attention weight (bertviz's head view), or as a
// heatmap. Python ran the model with attnlib and shipped every head of every layer: this selects.
// Lesson 16 ships a causal model's weights (row i holds keys 0 … i only) and marks its sink.

import { element, formatNumber, heatmap, numberText, text } from "../kit/widgets/js/svg.js";
import { applyTheme, bind, button, explorerRoot, html, row, sender, slider, styleNameOf, styleSelect, themeOf } from "../kit/widgets/js/controls.js";

const WIDTH = 760;
const ROW = 22;
const TOP = 64;

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

/** The key each query attends to most: argmax of each row (the first, on ties). */
export function strongest(weights) {
  return weights.map((row) => row.reduce((best, w, j) => (w > row[best] ? j : best), 0));
}

function lines(weights, tokens, theme, names = tokens) {
  const n = tokens.length;
  const left = 250;
  const right = 510;
  const y = (i) => TOP + i * ROW + ROW / 2;
  const parts = [
    text(left, TOP - 14, "from (queries)", { "text-anchor": "end", "font-size": 12, fill: theme.text, "font-weight": "bold" }),
    text(right, TOP - 14, "to (keys)", { "font-size": 12, fill: theme.text, "font-weight": "bold" }),
  ];
  // the lines in one group: a move changes how many there are, never what follows them
  const drawn = [];
  weights.forEach((rowW, i) => {
    rowW.forEach((w, j) => {
      if (w < 0.005) return; // invisible anyway; keeps the picture light
      drawn.push(
        element("line", {
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
        }),
      );
    });
  });
  parts.push(element("g", {}, drawn.join("")));
  const best = strongest(weights);
  tokens.forEach((token, i) => {
    parts.push(text(left, y(i) + 4, token, { "text-anchor": "end", "font-size": 13, fill: theme.text }));
    parts.push(text(right, y(i) + 4, token, { "font-size": 13, fill: theme.text }));
    const j = best[i];
    parts.push(
      numberText(40, y(i) + 4, weights[i][j], `${formatNumber(weights[i][j], 2)} \u2192 ${names[j]}`, { quantity: "largest_weight", row: i, col: j, rowLabel: token, colLabel: tokens[j] }, {
        "font-size": 12,
        fill: theme.tick,
      }),
    );
  });
  parts.push(text(40, TOP - 14, "largest weight", { "font-size": 12, fill: theme.tick }));
  parts.push(text(WIDTH / 2, TOP + n * ROW + 30, "each line: a query's weight on a key (opacity = weight); rows sum to 1", { "text-anchor": "middle", "font-size": 12, fill: theme.text }));
  return parts.join("");
}

/** The picture for one head, as SVG markup. */
export function drawHeads(state, theme, colormaps) {
  const { sentences, sentence, layer, head, view, modelName, markSink = false } = state;
  const entry = sentences[sentence];
  const weights = headWeights(sentences, sentence, layer, head);
  const tokens = shownTokens(entry.tokens, markSink);
  const n = tokens.length;
  const size = heatmapSize(n);
  const height = view === "heatmap" ? Math.max(pictureHeight(n), TOP + size + 120) : pictureHeight(n);
  const parts = [element("rect", { x: 0, y: 0, width: WIDTH, height, fill: theme.background })];
  parts.push(
    text(WIDTH / 2, 22, `${modelName}: layer ${layer}, head ${head}`, { "text-anchor": "middle", "font-size": 15, fill: theme.text, "font-weight": "bold" }),
  );
  const sink = markSink ? sinkWeight(weights) : null;
  if (sink !== null) {
    parts.push(
      numberText(WIDTH / 2, height - 18, sink, `weight on the sink (the first token, ${entry.tokens[0]}), mean over queries 1 to ${n - 1}: ${formatNumber(sink, 2)}`, { quantity: "sink_weight", row: 0, col: 0, rowLabel: "queries after the first", colLabel: tokens[0] }, {
        "text-anchor": "middle",
        "font-size": 13,
        fill: theme.text,
      }),
    );
  }
  if (view === "heatmap") {
    parts.push(
      heatmap({ x: 150, y: TOP, size }, weights, {
        rowLabels: tokens,
        colLabels: tokens,
        table: colormaps.viridis,
        quantity: "weight",
        theme,
        vmin: 0,
        vmax: 1,
        decimals: 2,
        title: "attention weights (rows: queries, columns: keys)",
      }),
    );
  } else {
    parts.push(lines(weights, tokens, theme, markSink ? ["sink", ...tokens.slice(1)] : tokens));
  }
  return { markup: parts.join(""), height };
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
  const { root, controls, message, svg, draw } = explorerRoot(el, "heads", WIDTH, pictureHeight(12), `one attention head's weights on a ${noun}`);
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
    const { markup, height } = drawHeads(state, theme, model.get("colormaps"));
    svg.setAttribute("viewBox", `0 0 ${WIDTH} ${height}`);
    draw([markup]);
  };
  return bind(model, ["sentences", "sentence", "layer", "head", "view", "error", "style_name"], redraw);
}

export default { render };
