// The softmax explorer of lesson 05: scores and their softmax weights at a temperature T, as
// annotated bars (attention_lessons.l05_softmax.plots.softmax_figure), with a slider and a mask per key.

import { entropy, softmaxRow } from "../kit/widgets/js/mirror.js";
import { axes, element, formatNumber, hatch, niceTicks, numberText, text, title } from "../kit/widgets/js/svg.js";
import { applyTheme, bind, checkbox, explorerRoot, row, sender, slider, stepDecimals, themeOf } from "../kit/widgets/js/controls.js";

const WIDTH = 900;
const HEIGHT = 420;
/**
 * The panels, each drawn whole on a phone (at most 424 units wide: its text at 11 px in 390 px):
 * each region is what its part of the drawing spans, axis labels included.
 */
export const REGIONS = [
  { at: [15, 0, 420, 355], name: "the scores s, masked keys hatched" },
  { at: [465, 0, 420, 355], name: "the weights softmax(s / T), masked keys hatched" },
  { at: [62, 355, 422, HEIGHT - 355], name: "the temperature, the sum of the weights and their entropy" },
];

/** softmax(s / T) with masked keys at -∞, as attnlib computes it in SoftmaxExplorer. */
export function computeSoftmax({ scores, masks, temperature }) {
  const weights = softmaxRow(scores.map((s, i) => (masks[i] ? -Infinity : s) / temperature));
  return { weights, entropy: entropy(weights) };
}

/** A masked key's slot in a panel: hatched from top to bottom and labelled "masked" (not by colour alone). */
function maskedSlot(frame, i, box, theme) {
  const x = frame.sx(i - 0.45);
  const width = frame.sx(0.45) - frame.sx(-0.45);
  return hatch(x, box.y, width, box.height, theme.grid) + text(frame.sx(i), box.y + box.height - 8, "masked", { "text-anchor": "middle", "font-size": 12, fill: theme.text });
}

function bars(frame, values, color, quantity, format, theme, box, labels) {
  const zero = frame.sy(0);
  return values
    .map((value, i) => {
      const height = Number.isFinite(value) ? value : 0;
      const x = frame.sx(i);
      const y = frame.sy(height);
      const bar = element("rect", {
        x: frame.sx(i - 0.3),
        y: Math.min(y, zero),
        width: frame.sx(0.3) - frame.sx(-0.3),
        height: Math.abs(zero - y),
        fill: color,
      });
      const above = height >= 0;
      const labelY = Math.max(box.y + 12, Math.min(box.y + box.height - 4, above ? y - 5 : y + 14));
      const label = numberText(x, labelY, value, format(value), { quantity, col: i, colLabel: labels[i] }, {
        "text-anchor": "middle",
        "font-size": 12,
        fill: theme.text,
      });
      return bar + label;
    })
    .join("");
}

/** Both panels and a line of numbers, as SVG markup. */
export function drawSoftmax(state, result, theme) {
  return softmaxParts(state, result, theme).join("");
}

/** drawSoftmax's markup in parts, in order: a move redraws only the parts whose markup changed. */
export function softmaxParts(state, result, theme) {
  const { labels, scores, masks, temperature, limits } = state;
  const n = labels.length;
  const shown = scores.map((s, i) => (masks[i] ? -Infinity : s));
  const xlim = [-0.6, n - 0.4];
  const keys = labels.map((_, i) => i);
  const parts = [element("rect", { x: 0, y: 0, width: WIDTH, height: HEIGHT, fill: theme.background })];

  const left = { x: 70, y: 40, width: 360, height: 280 };
  const scoreFrame = axes(left, {
    xlim,
    ylim: limits,
    xticks: keys,
    xlabels: labels,
    yticks: niceTicks(limits[0], limits[1], 6),
    xlabel: "keys",
    ylabel: "score",
    theme,
  });
  parts.push(title(left, "Scores s", theme), scoreFrame.markup);
  parts.push(element("line", { x1: left.x, x2: left.x + left.width, y1: scoreFrame.sy(0), y2: scoreFrame.sy(0), stroke: theme.edge }));
  masks.forEach((masked, i) => masked && parts.push(maskedSlot(scoreFrame, i, left, theme)));
  parts.push(bars(scoreFrame, shown, theme.raw, "scores", (v) => formatNumber(v), theme, left, labels));

  const right = { x: 520, y: 40, width: 360, height: 280 };
  const weightFrame = axes(right, {
    xlim,
    ylim: [0, 1.12],
    xticks: keys,
    xlabels: labels,
    yticks: [0, 0.2, 0.4, 0.6, 0.8, 1],
    xlabel: "keys",
    ylabel: "weight",
    theme,
  });
  parts.push(title(right, `Weights softmax(s / T), T = ${temperature.toFixed(2)}`, theme), weightFrame.markup);
  masks.forEach((masked, i) => masked && parts.push(maskedSlot(weightFrame, i, right, theme)));
  parts.push(bars(weightFrame, result.weights, theme.palette[2], "weights", (v) => v.toFixed(3), theme, right, labels));

  const sum = result.weights.reduce((a, b) => a + b, 0);
  const y = 395;
  const style = { "font-size": 13, fill: theme.text };
  parts.push(
    text(70, y, "T =", style),
    numberText(100, y, temperature, temperature.toFixed(2), { quantity: "temperature" }, style),
    text(160, y, "\u00b7 sum of weights", style),
    numberText(280, y, sum, sum.toFixed(4), { quantity: "weight_sum" }, style),
    text(345, y, "\u00b7 entropy", style),
    numberText(410, y, result.entropy, `${result.entropy.toFixed(3)} nats`, { quantity: "entropy" }, style),
  );
  return parts;
}

function render({ model, el }) {
  const labels = model.get("labels");
  const { root, controls, draw } = explorerRoot(el, "softmax", WIDTH, HEIGHT, "scores and softmax weights", REGIONS);
  const step = model.get("step");
  const decimals = stepDecimals(step);
  const send = sender(model);
  const keys = labels.map((label, i) => {
    const score = slider({
      name: `score-${i}`,
      label: `score ${label}`,
      ariaLabel: `score of key ${i + 1}, ${label}`,
      min: model.get("value_min"),
      max: model.get("value_max"),
      step,
      value: model.get("scores")[i],
      format: (v) => v.toFixed(decimals),
      width: "220px",
      onInput: (v) => {
        const scores = model.get("scores").slice();
        scores[i] = v;
        send({ scores });
      },
    });
    const mask = checkbox({
      name: `mask-${i}`,
      label: `mask ${label}`,
      checked: model.get("masks")[i],
      onChange: (checked) => {
        const masks = model.get("masks").slice();
        masks[i] = checked;
        send({ masks });
      },
    });
    mask.input.setAttribute("aria-label", `mask key ${i + 1}, ${label}`);
    controls.append(row(score.node, mask.node));
    return { score, mask };
  });
  const temperature = slider({
    name: "temperature",
    label: "temperature T",
    ariaLabel: "temperature T (log scale, 0.1 to 10)",
    min: -1,
    max: 1,
    step: 0.02,
    value: Math.log10(model.get("temperature")),
    format: (v) => (10 ** v).toFixed(2),
    width: "300px",
    onInput: (v) => send({ temperature: 10 ** v }),
  });
  const sayTemperature = () => temperature.input.setAttribute("aria-valuetext", `T = ${model.get("temperature").toFixed(2)}`);
  controls.append(row(temperature.node));

  const redraw = () => {
    const state = {
      labels,
      scores: model.get("scores"),
      masks: model.get("masks"),
      temperature: model.get("temperature"),
      limits: model.get("limits"),
    };
    const theme = themeOf(model);
    keys.forEach(({ score, mask }, i) => {
      score.set(state.scores[i]);
      mask.input.checked = state.masks[i];
    });
    if (Math.abs(10 ** Number(temperature.input.value) - state.temperature) > 1e-9 * state.temperature) {
      temperature.set(Math.log10(state.temperature));
    }
    sayTemperature();
    applyTheme(root, theme);
    draw(softmaxParts(state, computeSoftmax(state), theme));
  };
  return bind(model, ["scores", "masks", "temperature", "style_name"], redraw);
}

export default { render };
