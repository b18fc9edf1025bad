// The playground of lesson 07: four panels (embeddings, raw scores Q Kᵀ, weights, outputs)
// as attention_lessons.l07_whole_picture.plots.attention_figure draws them, with a slider for every number.
// Every move redraws from the mirror of attnlib's arithmetic inside the input event, then sends
// the new inputs to Python (Playground.steps computes the same with attnlib when read).

import { attentionSteps, defaultScale, matmul } from "../kit/widgets/js/mirror.js";
import { arrowsMarkup, element, heatmap, numberText, signed, squareLimits, text, title, vectorPanel } from "../kit/widgets/js/svg.js";
import { applyTheme, bind, button, checkbox, embeddingSliders, embeddingState, explorerRoot, html, row, sender, slider, styleNameOf, styleSelect, themeOf } from "../kit/widgets/js/controls.js";

const LINE = 17;

/**
 * Where the playground draws, for a layout: its width, the four panels' boxes, the table's top, its
 * columns and the gap between the token of largest weight and that weight, and each panel's region
 * ([x, y, w] and the top; the table's region reaches the bottom, which depends on the tokens).
 * WIDE is the desktop's: two rows of two panels, the table below them.
 */
export const WIDE = {
  width: 960,
  embeddings: { x: 70, y: 40, width: 300, height: 300 },
  rawScores: { x: 590, y: 40, size: 300 },
  weights: { x: 110, y: 450, size: 300 },
  outputs: { x: 590, y: 450, width: 300, height: 300 },
  tableTop: 830,
  columns: [20, 160, 330, 500],
  weightGap: 70,
  regions: [
    [0, 0, 440, 415],
    [520, 0, 440, 415],
    [20, 415, 440, 395],
    [540, 415, 420, 395],
    [0, 810, 640],
  ],
};

/**
 * The layout for a phone: the same panels in one column, none wider than 410 units (the heatmaps'
 * cells 260 units instead of 300, the table's columns closer), so that each shows whole on a
 * 390 px screen with its text at 11 px or more.
 */
export const NARROW = {
  width: 410,
  embeddings: { x: 60, y: 40, width: 300, height: 300 },
  rawScores: { x: 80, y: 430, size: 260 },
  weights: { x: 80, y: 800, size: 260 },
  outputs: { x: 60, y: 1170, width: 300, height: 300 },
  tableTop: 1550,
  columns: [8, 70, 184, 298],
  weightGap: 60,
  regions: [
    [0, 0, 410, 390],
    [0, 390, 410, 370],
    [0, 760, 410, 370],
    [0, 1130, 410, 390],
    [0, 1520, 410],
  ],
};

const NAMES = ["1. the embeddings", "2. the raw scores", "3. the weights", "4. the outputs", "the numbers of each token"];

/** The SVG's height for n tokens: four panels and a table of n rows. */
export function pictureHeight(n, layout = WIDE) {
  return layout.tableTop + LINE * (n + 2);
}

/** The regions ({at, name}) of a layout for n tokens: the table's reaches the picture's bottom. */
export function playgroundRegions(n, layout = WIDE) {
  return layout.regions.map(([x, y, w, h], k) => ({ at: [x, y, w, h ?? pictureHeight(n, layout) - y], name: NAMES[k] }));
}

/** Attention of the explorer's inputs, as attnlib computes it in Playground. */
export function computePlayground({ embeddings, W_q, W_k, W_v, d_k, causal }) {
  const Q = matmul(embeddings, W_q);
  const K = matmul(embeddings, W_k);
  const V = matmul(embeddings, W_v);
  return attentionSteps(Q, K, V, { scale: defaultScale(d_k), causal });
}

/** The whole picture for one state, as SVG markup. */
export function drawPlayground(state, steps, theme, colormaps, layout = WIDE) {
  return playgroundParts(state, steps, theme, colormaps, layout).join("");
}

/**
 * drawPlayground's markup in parts, in order: a move redraws only the parts whose markup changed.
 * The same parts, with the same numbers, in either layout (WIDE or NARROW).
 */
export function playgroundParts(state, steps, theme, colormaps, layout = WIDE) {
  const { tokens, embeddings, d_k, causal, valueMin, valueMax } = state;
  const n = tokens.length;
  const limits = squareLimits([valueMin, valueMax, ...embeddings.flat(), ...steps.output.flat()]);
  const reach = 0.08 * (limits[1] - limits[0]);
  const parts = [element("rect", { x: 0, y: 0, width: layout.width, height: pictureHeight(n, layout), fill: theme.background })];

  const top = layout.embeddings;
  const panel1 = vectorPanel(top, limits, theme);
  parts.push(title(top, "1. Embeddings X", theme), panel1.markup);
  parts.push(arrowsMarkup(panel1, embeddings, tokens, theme.palette, { reach }));

  parts.push(
    heatmap(layout.rawScores, steps.rawScores, {
      rowLabels: tokens,
      colLabels: tokens,
      title: "2. Raw scores Q K\u1d40",
      table: colormaps.cividis,
      quantity: "raw_scores",
      theme,
    }),
  );
  parts.push(
    heatmap(layout.weights, steps.weights, {
      rowLabels: tokens,
      colLabels: tokens,
      title: `3. Weights softmax(Q K\u1d40/\u221ad_k${causal ? " + mask" : ""})`,
      table: colormaps.viridis,
      vmin: 0,
      vmax: 1,
      quantity: "weights",
      theme,
    }),
  );

  const bottom = layout.outputs;
  const panel4 = vectorPanel(bottom, limits, theme);
  parts.push(title(bottom, "4. Outputs (weights \u00b7 V)", theme), panel4.markup);
  parts.push(arrowsMarkup(panel4, embeddings, tokens, theme.palette, { opacity: 0.25, reach }));
  parts.push(arrowsMarkup(panel4, steps.output, tokens, theme.palette, { reach }));

  const scale = steps.scale;
  const head = layout.tableTop;
  const columns = layout.columns;
  const lead = `scale 1/\u221ad_k = 1/\u221a${d_k} = `;
  const after = columns[0] + lead.length * 7.4;
  parts.push(
    text(columns[0], head, lead, { "font-size": 13, fill: theme.text }),
    numberText(after, head, scale, scale.toFixed(4), { quantity: "scale" }, { "font-size": 13, fill: theme.text }),
    text(after + 60, head, `\u00b7 causal mask ${causal ? "on" : "off"}`, { "font-size": 13, fill: theme.text }),
  );
  ["token", "embedding", "output", "largest weight"].forEach((label, k) => {
    parts.push(text(columns[k], head + LINE, label, { "font-size": 13, "font-weight": "bold", fill: theme.text }));
  });
  const cell = { "font-size": 13, "font-family": "DejaVu Sans Mono, monospace", fill: theme.text };
  tokens.forEach((token, i) => {
    const y = head + LINE * (i + 2);
    parts.push(text(columns[0], y, token, { "font-size": 13, fill: theme.text }));
    const pair = (values, x, quantity) =>
      [
        text(x, y, "(", cell),
        numberText(x + 8, y, values[i][0], signed(values[i][0]), { quantity, row: i, col: 0 }, cell),
        text(x + 48, y, ",", cell),
        numberText(x + 58, y, values[i][1], signed(values[i][1]), { quantity, row: i, col: 1 }, cell),
        text(x + 98, y, ")", cell),
      ].join("");
    parts.push(pair(embeddings, columns[1], "embeddings"), pair(steps.output, columns[2], "output"));
    const w = steps.weights[i];
    const j = w.indexOf(Math.max(...w));
    parts.push(
      text(columns[3], y, tokens[j], { "font-size": 13, fill: theme.text }),
      numberText(columns[3] + layout.weightGap, y, w[j], w[j].toFixed(3), { quantity: "largest_weight", row: i, col: j }, cell),
    );
  });
  return parts;
}

function render({ model, el }) {
  const tokens = model.get("tokens");
  const n = tokens.length;
  const { root, controls, draw, reshape, narrowWhen } = explorerRoot(
    el,
    "playground",
    WIDE.width,
    pictureHeight(n),
    "the four panels of attention",
    playgroundRegions(n),
  );
  const send = sender(model);

  const coordinateSliders = embeddingSliders(model, controls, tokens, send);
  const dK = slider({
    name: "d_k",
    label: "d_k in the scale 1/\u221ad_k",
    ariaLabel: "d_k in the scale 1/\u221ad_k",
    min: 1,
    max: model.get("max_d_k"),
    step: 1,
    value: model.get("d_k"),
    format: (v) => String(v),
    onInput: (v) => send({ d_k: v }),
  });
  const causal = checkbox({ name: "causal", label: "causal mask", checked: model.get("causal"), onChange: (c) => send({ causal: c }) });
  const style = styleSelect({ model, value: model.get("style_name"), onChange: (s) => send({ style_name: s }) });
  const reset = button({ name: "reset", label: "reset", onClick: () => send({ ...model.get("initial") }) });
  const note = html(
    "div",
    { class: "attnlib-note" },
    "The vectors stay 2D: the d_k slider only changes the scale 1/\u221ad_k applied to their scores, " +
      "like a temperature. Lesson 04's explorer varies the real dimension.",
  );
  note.style.fontSize = "12px";
  controls.append(row(dK.node, causal.node, style.node, reset), note);

  // narrow where the desktop's widest panel, its table, would not show whole
  const narrow = narrowWhen(WIDE.regions[4][2], () => redraw());
  const redraw = () => {
    const layout = narrow() ? NARROW : WIDE;
    reshape(layout.width, pictureHeight(n, layout), playgroundRegions(n, layout));
    const state = embeddingState(model, ["W_q", "W_k", "W_v", "d_k", "causal"]);
    const theme = themeOf(model);
    coordinateSliders.set(state.embeddings);
    dK.set(state.d_k);
    causal.input.checked = state.causal;
    style.select.value = styleNameOf(model);
    applyTheme(root, theme);
    draw(playgroundParts(state, computePlayground(state), theme, model.get("colormaps"), layout));
  };
  return bind(model, ["embeddings", "d_k", "causal", "style_name"], redraw);
}

export default { render };
