// The head explorer of lesson 13: one head of a real model on a sentence, as two columns of
// tokens joined by lines whose opacity is the attention weight (bertviz's head view), or as a
// heatmap. Python ran the model with attnlib and shipped every head of every layer: this selects.

import { element, formatNumber, heatmap, numberText, text } from "../kit/widgets/js/svg.js";
import { applyTheme, bind, button, explorerRoot, html, row, sender, slider, styleNameOf, styleSelect, themeOf } from "../kit/widgets/js/controls.js";

const WIDTH = 760;
const ROW = 22;
const TOP = 64;

/** The weights of one head: sentences[s].attentions[layer][head], an n × n matrix. */
export function headWeights(sentences, s, layer, head) {
  const entry = sentences[s];
  if (!entry) throw new Error(`no sentence ${s}`);
  const perLayer = entry.attentions[layer];
  if (!perLayer) throw new Error(`no layer ${layer}`);
  const weights = perLayer[head];
  if (!weights) throw new Error(`no head ${head}`);
  return weights;
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

function lines(weights, tokens, theme) {
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
      numberText(40, y(i) + 4, weights[i][j], `${formatNumber(weights[i][j], 2)} \u2192 ${tokens[j]}`, { quantity: "largest_weight", row: i, col: j, rowLabel: token, colLabel: tokens[j] }, {
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
  const { sentences, sentence, layer, head, view, modelName } = state;
  const entry = sentences[sentence];
  const weights = headWeights(sentences, sentence, layer, head);
  const n = entry.tokens.length;
  const size = heatmapSize(n);
  const height = view === "heatmap" ? Math.max(pictureHeight(n), TOP + size + 120) : pictureHeight(n);
  const parts = [element("rect", { x: 0, y: 0, width: WIDTH, height, fill: theme.background })];
  parts.push(
    text(WIDTH / 2, 22, `${modelName}: layer ${layer}, head ${head}`, { "text-anchor": "middle", "font-size": 15, fill: theme.text, "font-weight": "bold" }),
  );
  if (view === "heatmap") {
    parts.push(
      heatmap({ x: 150, y: TOP, size }, weights, {
        rowLabels: entry.tokens,
        colLabels: entry.tokens,
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
    parts.push(lines(weights, entry.tokens, theme));
  }
  return { markup: parts.join(""), height };
}

/** A select of the sentences. */
function sentenceSelect(sentences, value, onChange) {
  const select = html("select", { "data-lm-suppress-shortcuts": "true", "data-control": "sentence", "aria-label": "sentence" });
  sentences.forEach((entry, k) => select.append(html("option", { value: k }, entry.text)));
  select.value = String(value);
  select.addEventListener("change", () => onChange(Number(select.value)));
  Object.assign(select.style, { maxWidth: "100%", minHeight: "24px" });
  const node = html("label", {}, "sentence ", select);
  node.style.marginRight = "10px";
  return { node, select };
}

function render({ model, el }) {
  const { root, controls, message, svg, draw } = explorerRoot(el, "heads", WIDTH, pictureHeight(12), "one attention head's weights on a sentence");
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
    "aria-label": "your sentence",
    placeholder: "type a sentence (needs a running kernel)",
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
    };
    const theme = themeOf(model);
    if (!select || select.select.options.length !== sentences.length) {
      select = sentenceSelect(sentences, state.sentence, (k) => send({ sentence: k }));
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
    message.textContent = error || (waiting !== null ? `Python runs the model on "${waiting}": waiting for the kernel\u2026 (with no kernel, pick one of the precomputed sentences)` : "");
    applyTheme(root, theme);
    const { markup, height } = drawHeads(state, theme, model.get("colormaps"));
    svg.setAttribute("viewBox", `0 0 ${WIDTH} ${height}`);
    draw([markup]);
  };
  return bind(model, ["sentences", "sentence", "layer", "head", "view", "error", "style_name"], redraw);
}

export default { render };
