// The multi-head explorer of lesson 09: two heads of 2D tokens. Each head attends with its own
// columns of W_q, W_k and W_v; their outputs are concatenated and multiplied by W_o, as
// attnlib.multihead.multi_head_attention computes them (and attention_lessons.l09_many_heads.plots draws them).
// Every move redraws from the mirror inside the input event, then sends the embeddings to
// Python (MultiHeadExplorer.heads computes the same with attnlib when read).

import { attentionSteps, matmul } from "../kit/widgets/js/mirror.js";
import { arrowsMarkup, element, heatmap, numberText, signed, squareLimits, text, title, vectorPanel } from "../kit/widgets/js/svg.js";
import { applyTheme, bind, button, embeddingSliders, embeddingState, explorerRoot, row, sender, styleNameOf, styleSelect, themeOf } from "../kit/widgets/js/controls.js";

export const N_HEADS = 2;
const NAMES = [
  "1. the embeddings",
  "2. head 1's weights",
  "3. head 2's weights",
  "4. head 1's output",
  "5. head 2's output",
  "6. the output",
  "the concatenation of both heads",
  "W_o",
];

/**
 * Where the explorer draws, for a layout: the SVG's size, the table of outputs' top left corner and
 * the regions ([x, y, w, h] of each panel). WIDE is the desktop's: three rows, W_o's table of
 * outputs beside its heatmap (a region of 430 units that grows to hold the table, 445 units).
 */
export const WIDE = {
  width: 960,
  height: 1020,
  outputTable: { x: 760, y: 720 },
  regions: [
    [40, 0, 290, 330],
    [335, 0, 295, 330],
    [655, 0, 295, 330],
    [40, 330, 290, 330],
    [360, 330, 290, 330],
    [675, 330, 285, 330],
    [15, 660, 370, 360],
    [492, 660, 430, 360],
  ],
};
/** The widest panel of WIDE, as drawn: W_o's, grown to hold its table of outputs. */
export const WIDEST = 445;

/**
 * The layout for a phone: the same drawing, W_o's table of outputs below its heatmap instead of
 * beside it, so that no panel is wider than 240 units (the SVG taller by the table).
 */
export const NARROW = {
  width: 960,
  height: 1130,
  outputTable: { x: 520, y: 965 },
  regions: [...WIDE.regions.slice(0, 7), [490, 660, 240, 470]],
};

/** The regions ({at, name}) of a layout. */
export function multiHeadRegions(layout = WIDE) {
  return layout.regions.map((at, k) => ({ at, name: NAMES[k] }));
}

/** The columns of a matrix that belong to head h of nHeads: h·d … (h+1)·d − 1. */
export function headColumns(M, h, nHeads) {
  const d = M[0].length / nHeads;
  return M.map((r) => r.slice(h * d, (h + 1) * d));
}

/** The heads' outputs side by side, in head order: (n, d_v) each -> (n, nHeads·d_v). */
export function concatHeads(outputs) {
  return outputs[0].map((_, i) => outputs.flatMap((out) => out[i]));
}

/**
 * Multi-head attention as attnlib.multihead.multi_head_attention computes it (no masks).
 * @returns {{weights: number[][][], heads: number[][][], concat: number[][], output: number[][]}}
 */
export function multiHeadAttention(Xq, Xkv, Wq, Wk, Wv, Wo, nHeads) {
  const Q = matmul(Xq, Wq);
  const K = matmul(Xkv, Wk);
  const V = matmul(Xkv, Wv);
  const steps = Array.from({ length: nHeads }, (_, h) =>
    attentionSteps(headColumns(Q, h, nHeads), headColumns(K, h, nHeads), headColumns(V, h, nHeads)),
  );
  const heads = steps.map((s) => s.output);
  const concat = concatHeads(heads);
  return { weights: steps.map((s) => s.weights), heads, concat, output: matmul(concat, Wo) };
}

/** The explorer's self-attention of its embeddings. */
export function computeMultiHead({ embeddings, W_q, W_k, W_v, W_o }) {
  return multiHeadAttention(embeddings, embeddings, W_q, W_k, W_v, W_o, N_HEADS);
}

/** A table of 2D vectors, one line per token: "token (x, y)", each number a <text> with its value. */
function vectorTable(x, y, heading, tokens, values, quantity, theme) {
  const cell = { "font-size": 13, "font-family": "DejaVu Sans Mono, monospace", fill: theme.text };
  const parts = [text(x, y, heading, { "font-size": 13, "font-weight": "bold", fill: theme.text })];
  tokens.forEach((token, i) => {
    const at = y + 18 * (i + 1);
    parts.push(
      text(x, at, token, { "font-size": 13, fill: theme.text }),
      text(x + 70, at, "(", cell),
      numberText(x + 78, at, values[i][0], signed(values[i][0]), { quantity, row: i, col: 0 }, cell),
      text(x + 118, at, ",", cell),
      numberText(x + 128, at, values[i][1], signed(values[i][1]), { quantity, row: i, col: 1 }, cell),
      text(x + 168, at, ")", cell),
    );
  });
  return parts.join("");
}

/** The whole picture for one state, as SVG markup. */
export function drawMultiHead(state, result, theme, colormaps, layout = WIDE) {
  return multiHeadParts(state, result, theme, colormaps, layout).join("");
}

/**
 * drawMultiHead's markup in parts, in order: a move redraws only the parts whose markup changed.
 * The same parts, with the same numbers, in either layout (WIDE or NARROW).
 */
export function multiHeadParts(state, result, theme, colormaps, layout = WIDE) {
  const { tokens, embeddings, W_o: Wo, valueMin, valueMax } = state;
  const headValues = result.heads.flat(2);
  const limits = squareLimits([valueMin, valueMax, ...embeddings.flat(), ...headValues, ...result.output.flat()]);
  const reach = 0.08 * (limits[1] - limits[0]);
  const palette = theme.palette;
  const parts = [element("rect", { x: 0, y: 0, width: layout.width, height: layout.height, fill: theme.background })];
  const panel = (x, y) => ({ x, y, width: 220, height: 220 });

  const top = panel(70, 40);
  const p1 = vectorPanel(top, limits, theme);
  parts.push(title(top, "1. Embeddings X", theme), p1.markup, arrowsMarkup(p1, embeddings, tokens, palette, { reach }));
  result.weights.forEach((w, h) => {
    parts.push(
      heatmap({ x: 400 + 320 * h, y: 40, size: 180 }, w, {
        rowLabels: tokens,
        colLabels: tokens,
        title: `${2 + h}. Head ${h + 1} weights`,
        table: colormaps.viridis,
        vmin: 0,
        vmax: 1,
        quantity: `weights_${h + 1}`,
        theme,
      }),
    );
  });

  result.heads.forEach((out, h) => {
    const box = panel(70 + 320 * h, 370);
    const frame = vectorPanel(box, limits, theme);
    parts.push(title(box, `${4 + h}. Head ${h + 1} output (weights \u00b7 V${h + 1})`, theme), frame.markup);
    parts.push(arrowsMarkup(frame, embeddings, tokens, palette, { opacity: 0.25, reach, withLabels: false }));
    parts.push(arrowsMarkup(frame, out, tokens, palette, { reach }));
  });
  const last = panel(710, 370);
  const p6 = vectorPanel(last, limits, theme);
  parts.push(title(last, "6. Output concat \u00b7 W_o", theme), p6.markup);
  parts.push(arrowsMarkup(p6, embeddings, tokens, palette, { opacity: 0.25, reach, withLabels: false }));
  parts.push(arrowsMarkup(p6, result.output, tokens, palette, { reach }));

  const columns = ["h1 x", "h1 y", "h2 x", "h2 y"];
  // one colour scale for the concatenation and W_o, symmetric about 0: 0 has one colour in both
  const span = Math.max(...result.concat.flat().map(Math.abs), ...Wo.flat().map(Math.abs), 1e-12);
  parts.push(
    heatmap({ x: 110, y: 700, size: 200 }, result.concat, {
      rowLabels: tokens,
      colLabels: columns,
      title: `7. concat(head 1, head 2) (${tokens.length} \u00d7 4)`,
      table: colormaps.cividis,
      quantity: "concat",
      vmin: -span,
      vmax: span,
      theme,
      xlabel: "columns",
      ylabel: "tokens",
    }),
  );
  parts.push(
    heatmap({ x: 560, y: 700, size: 200 }, Wo, {
      rowLabels: columns,
      colLabels: ["x", "y"],
      title: "8. W_o (4 \u00d7 2), fixed",
      table: colormaps.cividis,
      quantity: "W_o",
      vmin: -span,
      vmax: span,
      theme,
      xlabel: "output",
      ylabel: "concat column",
    }),
  );
  const table = layout.outputTable;
  parts.push(vectorTable(table.x, table.y, "output", tokens, result.output, "output", theme));
  parts.push(
    text(20, 980, "output = concat \u00b7 W_o: each output coordinate", { "font-size": 13, fill: theme.text }),
    text(20, 1000, "is a column of W_o applied to both heads' outputs", { "font-size": 13, fill: theme.text }),
  );
  return parts;
}

function render({ model, el }) {
  const tokens = model.get("tokens");
  const { root, controls, draw, reshape, narrowWhen } = explorerRoot(
    el,
    "multihead",
    WIDE.width,
    WIDE.height,
    "two attention heads, their concatenation and W_o",
    multiHeadRegions(),
  );
  const send = sender(model);
  const sliders = embeddingSliders(model, controls, tokens, send);
  const style = styleSelect({ model, value: model.get("style_name"), onChange: (s) => send({ style_name: s }) });
  const reset = button({ name: "reset", label: "reset", onClick: () => send({ ...model.get("initial") }) });
  controls.append(row(style.node, reset));

  const narrow = narrowWhen(WIDEST, () => redraw());
  const redraw = () => {
    const layout = narrow() ? NARROW : WIDE;
    reshape(layout.width, layout.height, multiHeadRegions(layout));
    const state = embeddingState(model, ["W_q", "W_k", "W_v", "W_o"]);
    const theme = themeOf(model);
    sliders.set(state.embeddings);
    style.select.value = styleNameOf(model);
    applyTheme(root, theme);
    draw(multiHeadParts(state, computeMultiHead(state), theme, model.get("colormaps"), layout));
  };
  return bind(model, ["embeddings", "style_name"], redraw);
}

export default { render };
