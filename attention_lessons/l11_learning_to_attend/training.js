// The training replay of lesson 11: a saved training run of attnlib.training, one slider over its
// saved steps. Python computed every step's weights and loss with attnlib (replay_table); this
// module only selects the row of the slider's step and draws it: the loss curve with the step
// marked, and the probe sequence's attention weights as a heatmap.

import { axes, element, heatmap, numberText, text, title } from "../kit/widgets/js/svg.js";
import { applyTheme, bind, explorerRoot, row, sender, slider, themeOf } from "../kit/widgets/js/controls.js";

const WIDTH = 1000;
const HEIGHT = 470;
const NAMES = ["the training loss, step by step", "the attention weights at this step"];

// The drawing's geometry: the loss panel's axes (loss), the weights heatmap's corner and side
// (weights), the picture's height and its regions. The wide one, side by side on a desktop: each
// panel 450 and 446 units wide with its labels. The narrow one, where a phone cannot show those
// whole (narrowWhen): the loss axes 40 units narrower, the heatmap 30 smaller (its line of the
// previous-token weight 30 higher), each panel at most 416 units wide with its labels, so that it
// shows whole with its text at 11 px.
const LAYOUTS = {
  wide: {
    loss: { x: 80, y: 50, width: 380, height: 320 },
    weights: { x: 620, y: 50, size: 320 },
    height: HEIGHT,
    regions: [
      [25, 0, 450, HEIGHT],
      [551, 0, 446, HEIGHT],
    ],
  },
  narrow: {
    loss: { x: 80, y: 50, width: 340, height: 320 },
    weights: { x: 620, y: 50, size: 290 },
    height: HEIGHT - 30,
    regions: [
      [20, 0, 416, 414],
      [548, 0, 416, HEIGHT - 30],
    ],
  },
};

/**
 * The explorer's geometry, wide or narrow: the loss axes' box (`loss`), the heatmap's corner and
 * side (`weights`), the picture's `width` and `height`, and its `regions` for explorerRoot ({at, name}).
 */
export function trainingLayout(narrow = false) {
  const { regions, ...layout } = narrow ? LAYOUTS.narrow : LAYOUTS.wide;
  return { ...layout, width: WIDTH, regions: regions.map((at, k) => ({ at, name: NAMES[k] })) };
}

/** The widest panel of the wide drawing, in units: wider than that, the page draws narrow. */
export const WIDEST_PANEL = Math.max(...LAYOUTS.wide.regions.map((at) => at[2]));

/** The precomputed row of the table for one saved step. */
export function replayRow(table, step) {
  const found = table.find((r) => r.step === step);
  if (!found) throw new Error(`step ${step} was not saved; saved steps: ${table.map((r) => r.step).join(", ")}`);
  return found;
}

/**
 * A slider over a run's saved steps (its value is the index among them): it sends the step, and
 * `show(step)` moves it there and says the step to a screen reader.
 */
export function savedStepSlider(model, send, saved, width) {
  const stepSlider = slider({
    name: "step",
    label: "training step",
    ariaLabel: "training step (saved steps)",
    min: 0,
    max: saved.length - 1,
    step: 1,
    value: saved.indexOf(model.get("step")),
    format: (index) => String(saved[index]),
    width,
    onInput: (index) => send({ step: saved[index] }),
  });
  const show = (step) => {
    stepSlider.set(saved.indexOf(step));
    stepSlider.input.setAttribute("aria-valuetext", `step ${step}`);
  };
  return { ...stepSlider, show };
}

/** The decades a log axis needs to show every positive value of `values`: [lo, hi] exponents. */
export function logDecades(values) {
  const positive = values.filter((v) => v > 0);
  return [Math.floor(Math.log10(Math.min(...positive))), Math.ceil(Math.log10(Math.max(...positive)))];
}

/** The loss curve (log scale), the marked step, and the weights heatmap, as SVG markup, drawn wide or narrow (trainingLayout). */
export function drawTraining(state, theme, colormaps, narrow = false) {
  return trainingParts(state, theme, colormaps, narrow).join("");
}

/** The loss panel's frame (log scale) in `box` and the curve through every step: the same at every step. */
function lossFrame(losses, theme, box) {
  const [lo, hi] = logDecades(losses);
  const decades = Array.from({ length: hi - lo + 1 }, (_, k) => lo + k);
  const frame = axes(box, {
    xlim: [0, losses.length - 1],
    ylim: [lo, hi],
    xticks: [0, Math.round((losses.length - 1) / 2), losses.length - 1],
    yticks: decades,
    ylabels: decades.map((e) => (e === 0 ? "1" : `1e${e}`)),
    xlabel: "training step",
    ylabel: "loss (log scale)",
    grid: true,
    theme,
  });
  const logLoss = (v) => Math.log10(Math.max(v, 10 ** lo));
  const points = losses.map((v, s) => `${frame.sx(s)},${frame.sy(logLoss(v))}`);
  const markup =
    title(box, "Loss while training", theme) +
    frame.markup +
    element("polyline", { points: points.join(" "), fill: "none", stroke: theme.scaled, "stroke-width": 1.5 });
  return { markup, sx: frame.sx, sy: (v) => frame.sy(logLoss(v)) };
}

// The loss frame of each run, theme and width (wide or narrow), made once (its curve holds every step).
const frames = new WeakMap();

/**
 * The picture in parts (drawTraining's markup, cut where a move changes one part and not the
 * next): the background, the loss panel's frame, the step marked on it, the weights heatmap.
 */
export function trainingParts(state, theme, colormaps, narrow = false) {
  const { table, losses, tokens, step } = state;
  const r = replayRow(table, step);
  const { loss: box, weights, width, height } = trainingLayout(narrow);
  if (!frames.has(losses)) frames.set(losses, new Map());
  const frameKey = `${narrow}|${JSON.stringify(theme)}`;
  const made = frames.get(losses);
  if (!made.has(frameKey)) made.set(frameKey, lossFrame(losses, theme, box));
  const frame = made.get(frameKey);
  const mono = { "font-size": 13, "font-family": "DejaVu Sans Mono, monospace", fill: theme.text };
  const below = weights.y + weights.size + 70; // the previous-token weight's line, below the heatmap
  return [
    element("rect", { x: 0, y: 0, width, height, fill: theme.background }),
    // 1. the loss at every step, log scale
    frame.markup,
    [
      element("line", { x1: frame.sx(step), x2: frame.sx(step), y1: box.y, y2: box.y + box.height, stroke: theme.raw, "stroke-width": 1.5 }),
      element("circle", { cx: frame.sx(step), cy: frame.sy(r.loss), r: 6, fill: theme.raw, stroke: theme.text }),
      text(box.x + box.width - 150, box.y + 20, `step ${step}`, mono),
      text(box.x + box.width - 150, box.y + 38, "loss", mono),
      numberText(box.x + box.width - 10, box.y + 38, r.loss, r.loss.toFixed(4), { quantity: "loss" }, { ...mono, "text-anchor": "end" }),
    ].join(""),
    // 2. the probe's weights at this step
    heatmap(weights, r.weights, {
      rowLabels: tokens,
      colLabels: tokens,
      title: `Weights at step ${step}`,
      table: colormaps.viridis,
      vmin: 0,
      vmax: 1,
      quantity: "weights",
      masked: r.weights.map((row, i) => row.map((_, j) => j > i)), // causal: later keys hidden, hatched
      theme,
      xlabel: "keys (position:token)",
      ylabel: "queries",
    }) +
      text(weights.x, below, "mean weight on the previous token", { "font-size": 13, fill: theme.text }) +
      numberText(weights.x + weights.size, below, r.previous, r.previous.toFixed(3), { quantity: "previous" }, { ...mono, "text-anchor": "end" }),
  ];
}

function render({ model, el }) {
  const table = model.get("table");
  const saved = table.map((r) => r.step);
  const send = sender(model);
  const label = "the loss and the attention weights during training";
  const { root, controls, draw, reshape, narrowWhen } = explorerRoot(el, "training", WIDTH, HEIGHT, label, trainingLayout(false).regions);
  const stepSlider = savedStepSlider(model, send, saved, "360px");
  controls.append(row(stepSlider.node));

  // narrow where a panel of the wide drawing would not show whole
  const narrow = narrowWhen(WIDEST_PANEL, () => redraw());
  const redraw = () => {
    const state = { table, losses: model.get("losses"), tokens: model.get("tokens"), step: model.get("step") };
    const theme = themeOf(model);
    const layout = trainingLayout(narrow());
    stepSlider.show(state.step);
    applyTheme(root, theme);
    reshape(layout.width, layout.height, layout.regions);
    draw(trainingParts(state, theme, model.get("colormaps"), narrow()));
  };
  return bind(model, ["step", "style_name"], redraw);
}

export default { render };
