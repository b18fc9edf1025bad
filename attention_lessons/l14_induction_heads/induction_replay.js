// The training replay of lesson 14: a two-layer decoder's saved snapshots on one probe sequence
// whose second half repeats its first. Python computed every head's weights and scores at every
// saved step with attnlib (replay_table); this module selects the slider's step and one head per
// layer and draws the losses on both halves with the step marked, and each layer's pattern.
// Future keys (masked by the causal mask) come as null and are drawn hatched, never as 0.

import { colormapColor } from "../kit/widgets/js/colors.js";
import { axes, colorbar, element, hatch, niceTicks, numberText, text, tickLabel, title } from "../kit/widgets/js/svg.js";
import { announcement } from "../kit/widgets/js/a11y.js";
import { applyTheme, bind, explorerRoot, markupOf, row, sender, slider, styleNameOf, styleSelect, themeOf } from "../kit/widgets/js/controls.js";
import { replayRow, savedStepSlider } from "../l11_learning_to_attend/training.js";

const HEIGHT = 440;
const LOSS_WIDTH = 470;
const LAYER_WIDTH = 300;
const MAP = { y: 60, size: 240 };

/** The width of the picture for a number of layers: the loss panel and one panel per layer. */
export function pictureWidth(nLayers) {
  return LOSS_WIDTH + nLayers * LAYER_WIDTH;
}

// The loss panel shows what it draws, from its axis label (x ≈ 15) to its right edge (430), and no
// more: 422 units, whole at 11 px text on a 390 px phone (at most 424 units).
const LOSS_REGION = [12, 0, 422, HEIGHT];

/** The panels of the picture for a number of layers: the loss panel, then one panel per layer. */
export function inductionRegions(nLayers) {
  return [
    { at: LOSS_REGION, name: "the loss on each half of the sequence, step by step" },
    ...Array.from({ length: nLayers }, (_, layer) => ({
      at: [LOSS_WIDTH + layer * LAYER_WIDTH, 0, LAYER_WIDTH, HEIGHT],
      name: `the weights of the chosen head of layer ${layer} at this step`,
    })),
  ];
}

/** The loss at `step` of a curve measured at `lossSteps`. */
export function lossAt(lossSteps, curve, step) {
  const k = lossSteps.indexOf(step);
  if (k < 0) throw new Error(`no loss measured at step ${step}`);
  return curve[k];
}

/** Every k-th position labelled, so that labels never overlap: the positions to label. */
export function labelledPositions(n, cell, room = 14) {
  const every = Math.max(1, Math.ceil(room / cell));
  return Array.from({ length: n }, (_, i) => i).filter((i) => i % every === 0);
}

const HEAD_WEIGHTS = /^weights_layer_(\d+)_head_(\d+)$/;
const LAYER_SCORE = /^(.+)_score_layer_(\d+)$/;
const LOSSES = { loss_first_half: "the loss on the first half", loss_repeated_half: "the loss on the repeated half" };

/**
 * A number of this explorer in words, for the sentence said after a move: "the weight that
 * position 15 (token 5) gives position 3 (token 10) in layer 1, head 1", "layer 1's induction
 * score", "the loss on the repeated half" (a cell's labels are "position:token").
 */
export function describeNumber(n) {
  const position = (label) => {
    const [at, ...token] = String(label).split(":");
    return `position ${at} (token ${token.join(":")})`;
  };
  const weights = HEAD_WEIGHTS.exec(n.quantity);
  if (weights) {
    return `the weight that ${position(n.rowLabel)} gives ${position(n.colLabel)} in layer ${weights[1]}, head ${weights[2]}`;
  }
  const score = LAYER_SCORE.exec(n.quantity);
  if (score) return `layer ${score[2]}'s ${score[1]} score`;
  return LOSSES[n.quantity] ?? n.quantity.replace(/_/g, " ");
}

/** A pattern's cells, one rect per (query, key) with its weight ("masked" for a future key). */
function patternCells(box, weights, options) {
  const { tokens, table, theme, quantity } = options;
  const n = weights.length;
  const cell = box.size / n;
  const labels = tokens.map((t, i) => `${i}:${t}`);
  const parts = [];
  weights.forEach((rowW, i) => {
    rowW.forEach((w, j) => {
      const { fill, value } = cellLook(w, table, theme);
      parts.push(
        element("rect", {
          x: box.x + j * cell,
          y: box.y + i * cell,
          width: cell,
          height: cell,
          fill,
          "data-quantity": quantity,
          "data-row": i,
          "data-col": j,
          "data-row-label": labels[i],
          "data-col-label": labels[j],
          "data-value": value,
        }),
      );
    });
  });
  return parts.join("");
}

/** A cell's colour and data-value for a weight (null: a future key, masked). */
function cellLook(w, table, theme) {
  return w === null ? { fill: theme.background, value: "masked" } : { fill: colormapColor(table, w, 0, 1), value: String(w) };
}

/**
 * A pattern's cells as an updatable part of the explorer's draw(parts) (controls.js markupOf):
 * from one step or head to another only each cell's colour, weight and quantity change, set on
 * the rects shown, in the order patternCells draws them. `key` holds all the rest: the box, the
 * tokens, the theme and which cells are masked.
 */
export function patternCellsPart(box, weights, options, themeKey) {
  const { tokens, table, theme, quantity } = options;
  const hidden = weights.map((rowW) => rowW.map((w) => (w === null ? 1 : 0)).join("")).join("/");
  return {
    key: JSON.stringify([box, tokens, themeKey, table[0], table.length, hidden]),
    markup: () => patternCells(box, weights, options),
    update(nodes) {
      const n = weights.length;
      for (let i = 0; i < n; i += 1) {
        for (let j = 0; j < n; j += 1) {
          const node = nodes[i * n + j];
          const { fill, value } = cellLook(weights[i][j], table, theme);
          if (node.getAttribute("fill") !== fill) node.setAttribute("fill", fill);
          if (node.getAttribute("data-value") !== value) node.setAttribute("data-value", value);
          if (node.getAttribute("data-quantity") !== quantity) node.setAttribute("data-quantity", quantity);
        }
      }
    },
  };
}

/**
 * What a pattern draws over its cells, the same at every step and head: the hatching of the
 * future keys (null weights), the repeat's start, the frame and the position labels.
 */
function patternFrame(box, weights, options) {
  const { repeatStart, theme } = options;
  const n = weights.length;
  const cell = box.size / n;
  const parts = [];
  weights.forEach((rowW, i) => {
    rowW.forEach((w, j) => {
      if (w === null) parts.push(hatch(box.x + j * cell, box.y + i * cell, cell, cell, theme.grid));
    });
  });
  // where the repeat begins: a dashed line across the keys and one across the queries
  const at = box.x + repeatStart * cell;
  const down = box.y + repeatStart * cell;
  const dashed = { stroke: theme.text, "stroke-width": 1.2, "stroke-dasharray": "4 3" };
  parts.push(element("line", { x1: at, x2: at, y1: box.y, y2: box.y + box.size, ...dashed }));
  parts.push(element("line", { x1: box.x, x2: box.x + box.size, y1: down, y2: down, ...dashed }));
  parts.push(element("rect", { x: box.x, y: box.y, width: box.size, height: box.size, fill: "none", stroke: theme.edge }));
  for (const i of labelledPositions(n, cell)) {
    const c = (i + 0.5) * cell;
    parts.push(text(box.x + c, box.y + box.size + 14, String(i), { "text-anchor": "middle", "font-size": 12, fill: theme.tick }));
    parts.push(text(box.x - 4, box.y + c + 4, String(i), { "text-anchor": "end", "font-size": 12, fill: theme.tick }));
  }
  parts.push(text(box.x + box.size / 2, box.y + box.size + 32, "key position", { "text-anchor": "middle", "font-size": 12, fill: theme.text }));
  const yx = box.x - 30;
  const yy = box.y + box.size / 2;
  parts.push(text(yx, yy, "query position", { "text-anchor": "middle", "font-size": 12, fill: theme.text, transform: `rotate(-90 ${yx} ${yy})` }));
  return parts.join("");
}

const LOSS_BOX = { x: 70, y: 60, width: 360, height: 250 };

/** The loss panel's axes, as lossFrame and lossMarks draw them. */
function lossAxes(state, theme) {
  const { lossSteps, lossFirst, lossSecond, chance } = state;
  const box = LOSS_BOX;
  const last = lossSteps[lossSteps.length - 1];
  const top = Math.max(chance, ...lossFirst, ...lossSecond);
  const yticks = niceTicks(0, top, 5);
  return axes(box, {
    xlim: [lossSteps[0], last],
    ylim: [0, Math.max(top, yticks[yticks.length - 1])],
    xticks: niceTicks(lossSteps[0], last, 4).filter((t) => t <= last),
    yticks,
    ylabels: yticks.map(tickLabel),
    xlabel: "training step",
    ylabel: "loss (nats)",
    grid: true,
    theme,
  });
}

/** The losses on both halves at every step, the chance line and the legend: the same at every step. */
function lossFrame(state, theme) {
  const { lossSteps, lossFirst, lossSecond, chance } = state;
  const box = LOSS_BOX;
  const frame = lossAxes(state, theme);
  const parts = [title(box, "Loss on each half of the sequence", theme), frame.markup];
  const line = (curve) => lossSteps.map((s, k) => `${frame.sx(s)},${frame.sy(curve[k])}`).join(" ");
  parts.push(element("line", { x1: box.x, x2: box.x + box.width, y1: frame.sy(chance), y2: frame.sy(chance), stroke: theme.tick, "stroke-dasharray": "2 4" }));
  parts.push(text(box.x + box.width - 4, frame.sy(chance) + 16, "ln(vocab): a uniform guess", { "text-anchor": "end", "font-size": 12, fill: theme.tick }));
  parts.push(element("polyline", { points: line(lossFirst), fill: "none", stroke: theme.raw, "stroke-width": 1.5, "stroke-dasharray": "6 3" }));
  parts.push(element("polyline", { points: line(lossSecond), fill: "none", stroke: theme.scaled, "stroke-width": 2 }));
  const legendY = box.y + box.height + 50;
  parts.push(
    element("line", { x1: box.x, x2: box.x + 26, y1: legendY + 18, y2: legendY + 18, stroke: theme.raw, "stroke-width": 2, "stroke-dasharray": "6 3" }),
    element("rect", { x: box.x + 8, y: legendY + 13, width: 10, height: 10, fill: theme.raw, stroke: theme.text }),
    text(box.x + 34, legendY + 22, "loss on the first half (dashed, square)", { "font-size": 12, fill: theme.text }),
    element("line", { x1: box.x, x2: box.x + 26, y1: legendY + 40, y2: legendY + 40, stroke: theme.scaled, "stroke-width": 2 }),
    element("circle", { cx: box.x + 13, cy: legendY + 40, r: 5, fill: theme.scaled, stroke: theme.text }),
    text(box.x + 34, legendY + 44, "loss on the repeated half (solid, dot)", { "font-size": 12, fill: theme.text }),
  );
  return parts.join("");
}

/** The step marked on the loss curves, and the step and both losses written below them. */
function lossMarks(state, theme, frame) {
  const { lossSteps, lossFirst, lossSecond, step } = state;
  const box = LOSS_BOX;
  const first = lossAt(lossSteps, lossFirst, step);
  const second = lossAt(lossSteps, lossSecond, step);
  const mono = { "font-size": 13, "font-family": "DejaVu Sans Mono, monospace", fill: theme.text };
  const legendY = box.y + box.height + 50;
  return [
    element("line", { x1: frame.sx(step), x2: frame.sx(step), y1: box.y, y2: box.y + box.height, stroke: theme.text, "stroke-width": 1.5 }),
    element("rect", { x: frame.sx(step) - 5, y: frame.sy(first) - 5, width: 10, height: 10, fill: theme.raw, stroke: theme.text }),
    element("circle", { cx: frame.sx(step), cy: frame.sy(second), r: 6, fill: theme.scaled, stroke: theme.text }),
    text(box.x, legendY, `step ${step}`, { ...mono, "font-weight": "bold" }),
    numberText(box.x + box.width, legendY + 22, first, first.toFixed(3), { quantity: "loss_first_half" }, { ...mono, "text-anchor": "end" }),
    numberText(box.x + box.width, legendY + 44, second, second.toFixed(3), { quantity: "loss_repeated_half" }, { ...mono, "text-anchor": "end" }),
  ].join("");
}

// What stays the same from move to move, made once per theme and data: the loss panel's frame
// (its curves hold every measured step) and each pattern's frame.
const still = new WeakMap();

/** `make()`, remembered for the object `owner` (the data it draws) and `key` (the theme, the layer). */
function once(owner, key, make) {
  if (!still.has(owner)) still.set(owner, new Map());
  const made = still.get(owner);
  if (!made.has(key)) made.set(key, make());
  return made.get(key);
}

/** The whole picture at the state's step and heads, as SVG markup. */
export function drawInduction(state, theme, colormaps) {
  return inductionParts(state, theme, colormaps).map(markupOf).join("");
}

/**
 * The picture in parts (drawInduction's markup, cut where a move changes one part and not the
 * next): the loss panel's frame, its marks at the step, and per layer the pattern's cells (an
 * updatable part), its frame and its heading and scores; then the colour bar.
 */
export function inductionParts(state, theme, colormaps) {
  const { table, tokens, repeatStart, heads, step } = state;
  const r = replayRow(table, step);
  const width = pictureWidth(r.weights.length);
  const themeKey = JSON.stringify(theme);
  const loss = once(state.lossFirst, themeKey, () => ({ frame: lossAxes(state, theme), markup: lossFrame(state, theme) }));
  const parts = [element("rect", { x: 0, y: 0, width, height: HEIGHT, fill: theme.background }), loss.markup, lossMarks(state, theme, loss.frame)];
  const mono = { "font-size": 13, "font-family": "DejaVu Sans Mono, monospace", fill: theme.text, "text-anchor": "end" };
  r.weights.forEach((perHead, layer) => {
    const head = heads[layer];
    if (!perHead[head]) throw new Error(`layer ${layer} has no head ${head}`);
    const x = LOSS_WIDTH + layer * LAYER_WIDTH + 44;
    const box = { x, y: MAP.y, size: MAP.size - 30 };
    const options = { tokens, repeatStart, table: colormaps.viridis, theme, quantity: `weights_layer_${layer}_head_${head}` };
    parts.push(patternCellsPart(box, perHead[head], options, themeKey));
    const hidden = perHead[head].map((rowW) => rowW.map((w) => (w === null ? 1 : 0)).join("")).join("/");
    parts.push(once(table, `${themeKey}|${layer}|${repeatStart}|${hidden}`, () => patternFrame(box, perHead[head], options)));
    const y = MAP.y + MAP.size + 40;
    const score = (name, value, dy) => [
      text(x, y + dy, `${name} score`, { "font-size": 12, fill: theme.text }),
      numberText(x + box.size, y + dy, value, value.toFixed(3), { quantity: `${name}_score_layer_${layer}` }, mono),
    ];
    parts.push(
      [
        title({ x: box.x, y: box.y, width: box.size }, `Layer ${layer}, head ${head}`, theme),
        ...score("previous-token", r.previous[layer][head], 0),
        ...score("induction", r.induction[layer][head], 20),
        text(x, y + 50, "dashed: where the repeat begins", { "font-size": 12, fill: theme.text }),
        text(x, y + 68, "hatched: future keys (masked)", { "font-size": 12, fill: theme.text }),
      ].join(""),
    );
  });
  const last = LOSS_WIDTH + (r.weights.length - 1) * LAYER_WIDTH + 44 + MAP.size - 30;
  parts.push(colorbar({ x: last + 8, y: MAP.y, width: 12, height: MAP.size - 30 }, colormaps.viridis, 0, 1, theme));
  return parts;
}

function render({ model, el }) {
  const table = model.get("table");
  const saved = table.map((r) => r.step);
  const nLayers = table[0].weights.length;
  const width = pictureWidth(nLayers);
  const send = sender(model);
  const { root, controls, draw } = explorerRoot(el, "induction", width, HEIGHT, "a two-layer decoder's heads and losses during training", inductionRegions(nLayers), (before, after) =>
    announcement(before, after, describeNumber),
  );
  const stepSlider = savedStepSlider(model, send, saved, "320px");
  const headSliders = Array.from({ length: nLayers }, (_, layer) =>
    slider({
      name: `head-${layer}`,
      label: `layer ${layer} head`,
      ariaLabel: `head of layer ${layer}, from 0`,
      min: 0,
      max: model.get("n_heads") - 1,
      step: 1,
      value: model.get("heads")[layer],
      format: (v) => String(v),
      width: "120px",
      onInput: (v) => send({ heads: model.get("heads").map((h, k) => (k === layer ? v : h)) }),
    }),
  );
  const style = styleSelect({ model, value: model.get("style_name"), onChange: (s) => send({ style_name: s }) });
  controls.append(row(stepSlider.node, style.node), row(...headSliders.map((s) => s.node)));

  const redraw = () => {
    const state = {
      table,
      tokens: model.get("tokens"),
      repeatStart: model.get("repeat_start"),
      lossSteps: model.get("loss_steps"),
      lossFirst: model.get("loss_first"),
      lossSecond: model.get("loss_second"),
      chance: model.get("chance"),
      heads: model.get("heads"),
      step: model.get("step"),
    };
    const theme = themeOf(model);
    stepSlider.show(state.step);
    headSliders.forEach((s, layer) => s.set(state.heads[layer]));
    style.select.value = styleNameOf(model);
    applyTheme(root, theme);
    draw(inductionParts(state, theme, model.get("colormaps")));
  };
  return bind(model, ["step", "heads", "style_name"], redraw);
}

export default { render };
