// The RoPE explorer of lesson 10: a 2D query and key turned by their positions (faint: before),
// and their score against the distance m − n (course.l10_positions.plots.rope_figure), with sliders
// for the query's position, the key's position and an offset added to both. Every move redraws
// from the mirror of attnlib.positions (rotary.js) inside the input event.

import { computeRope, ropeScore } from "./rotary.js";
import { arrow, axes, element, niceTicks, numberText, text, tipLabel, title, vectorPanel } from "../kit/widgets/js/svg.js";
import { applyTheme, bind, explorerRoot, row, sender, slider, stepDecimals, themeOf } from "../kit/widgets/js/controls.js";

const WIDTH = 960;
const HEIGHT = 485;
const CURVE_POINTS = 481;
const MINUS = "\u2212";

/** A number as the static figure prints it (%g), with a real minus sign. */
export function formatPosition(value) {
  const shown = String(Number(value.toPrecision(6)));
  return shown.startsWith("-") ? MINUS + shown.slice(1) : shown;
}

/** The score with a sign and 3 decimals ("+0.500", "−0.848"), as rope_text prints it. */
export function formatScore(value) {
  const shown = value.toFixed(3);
  const negative = shown.startsWith("-") && !/^-0\.0*$/.test(shown);
  return (negative ? MINUS : "+") + shown.replace("-", "");
}

/** The score panel's y range: ±1.15 |q| |k| (a rotated score never leaves ±|q| |k|). */
export function scoreLimits(query, key) {
  const bound = Math.max(Math.hypot(...query) * Math.hypot(...key), 0.1);
  return [-1.15 * bound, 1.15 * bound];
}

/** The score against the distance d = m − n, sampled from −maxDistance to maxDistance: rope(q, d) · k. */
export function scoreCurve(query, key, maxDistance, points = CURVE_POINTS) {
  return Array.from({ length: points }, (_, i) => {
    const distance = -maxDistance + (2 * maxDistance * i) / (points - 1);
    return [distance, ropeScore(query, key, distance, 0)];
  });
}

/** Both panels and the readout, as SVG markup. */
export function drawRope(state, result, theme) {
  return ropeParts(state, result, theme).join("");
}

/** drawRope's markup in parts, in order: a move redraws only the parts whose markup changed. */
export function ropeParts(state, result, theme) {
  const { query, key, limits, maxPosition } = state;
  const colors = [theme.palette[0], theme.palette[2]];
  const parts = [element("rect", { x: 0, y: 0, width: WIDTH, height: HEIGHT, fill: theme.background })];

  const left = { x: 70, y: 40, width: 360, height: 360 };
  const panel = vectorPanel(left, limits, theme, { xlabel: "faint: q and k before the rotation" });
  parts.push(title(left, "RoPE in 2D: q turned by m, k by n", theme), panel.markup);
  const origin = [panel.sx(0), panel.sy(0)];
  [query, key].forEach(([x, y], i) => {
    parts.push(arrow(...origin, panel.sx(x), panel.sy(y), colors[i], { opacity: 0.3 }));
  });
  const labels = [`q at m = ${formatPosition(result.m)}`, `k at n = ${formatPosition(result.n)}`];
  [result.rotatedQuery, result.rotatedKey].forEach(([x, y], i) => {
    parts.push(arrow(...origin, panel.sx(x), panel.sy(y), colors[i]));
    parts.push(tipLabel(panel.sx(x), panel.sy(y), labels[i], x < 0 ? "left-above" : "right-above", colors[i]));
  });

  const mono = { "font-size": 12, "font-family": "DejaVu Sans Mono, monospace", fill: theme.text };
  parts.push(element("rect", { x: left.x + 4, y: left.y + 4, width: 150, height: 58, rx: 6, fill: theme.background, "fill-opacity": 0.9, stroke: theme.grid }));
  const lineX = left.x + 10;
  const lineY = (k) => left.y + 20 + 17 * k;
  parts.push(
    text(lineX, lineY(0), "m =", mono),
    numberText(lineX + 30, lineY(0), result.m, formatPosition(result.m), { quantity: "m" }, mono),
    text(lineX + 72, lineY(0), "n =", mono),
    numberText(lineX + 102, lineY(0), result.n, formatPosition(result.n), { quantity: "n" }, mono),
    text(lineX, lineY(1), `m ${MINUS} n =`, mono),
    numberText(lineX + 60, lineY(1), result.distance, formatPosition(result.distance), { quantity: "distance" }, mono),
    text(lineX, lineY(2), "score =", mono),
    numberText(lineX + 60, lineY(2), result.score, formatScore(result.score), { quantity: "score" }, mono),
  );

  const right = { x: 540, y: 40, width: 390, height: 360 };
  const ylim = scoreLimits(query, key);
  const frame = axes(right, {
    xlim: [-maxPosition, maxPosition],
    ylim,
    xticks: niceTicks(-maxPosition, maxPosition, 5),
    yticks: niceTicks(ylim[0], ylim[1], 5),
    xlabel: `distance m ${MINUS} n`,
    ylabel: "score",
    grid: true,
    theme,
  });
  parts.push(title(right, `score rope(q, m)\u00b7rope(k, n) against m ${MINUS} n`, theme), frame.markup);
  parts.push(element("line", { x1: right.x, x2: right.x + right.width, y1: frame.sy(0), y2: frame.sy(0), stroke: theme.edge }));
  const points = scoreCurve(query, key, maxPosition).map(([d, s]) => `${frame.sx(d).toFixed(2)},${frame.sy(s).toFixed(2)}`);
  parts.push(element("polyline", { points: points.join(" "), fill: "none", stroke: theme.raw, "stroke-width": 1.8 }));
  if (Math.abs(result.distance) <= maxPosition) {
    parts.push(element("circle", { cx: frame.sx(result.distance), cy: frame.sy(result.score), r: 5, fill: theme.raw }));
  }

  const plain = { "font-size": 12, fill: theme.text };
  const components = (name, v, quantity, x, y = 455) =>
    text(x, y, `${name} = (`, plain) +
    numberText(x + 88, y, v[0], formatScore(v[0]), { quantity, col: 0, colLabel: "x" }, plain) +
    text(x + 132, y, ",", plain) +
    numberText(x + 140, y, v[1], formatScore(v[1]), { quantity, col: 1, colLabel: "y" }, plain) +
    text(x + 184, y, ")", plain);
  parts.push(components("rope(q, m)", result.rotatedQuery, "rotated_query", 70));
  parts.push(components("rope(k, n)", result.rotatedKey, "rotated_key", 70, 475));
  return parts;
}

function render({ model, el }) {
  const { root, controls, draw } = explorerRoot(el, "rope", WIDTH, HEIGHT, "a query and a key rotated by RoPE, and their score", [
    { at: [15, 0, 445, HEIGHT], name: "the query and the key, rotated by their positions" },
    { at: [488, 0, 450, HEIGHT], name: "the score against the distance" },
  ]);
  const step = model.get("step");
  const decimals = stepDecimals(step);
  const send = sender(model);
  const make = (name, label, ariaLabel) =>
    slider({
      name,
      label,
      ariaLabel,
      min: 0,
      max: model.get("max_position"),
      step,
      value: model.get(name),
      format: (v) => v.toFixed(decimals),
      width: "200px",
      onInput: (v) => send({ [name]: v }),
    });
  const sliders = {
    query_position: make("query_position", "query position", "position of the query"),
    key_position: make("key_position", "key position", "position of the key"),
    offset: make("offset", "offset (added to both)", "offset added to both positions"),
  };
  controls.append(row(...Object.values(sliders).map((s) => s.node)));

  const redraw = () => {
    const state = {
      query: model.get("query"),
      key: model.get("key"),
      queryPosition: model.get("query_position"),
      keyPosition: model.get("key_position"),
      offset: model.get("offset"),
      limits: model.get("limits"),
      maxPosition: model.get("max_position"),
    };
    const theme = themeOf(model);
    Object.entries(sliders).forEach(([name, s]) => s.set(model.get(name)));
    applyTheme(root, theme);
    draw(ropeParts(state, computeRope(state), theme));
  };
  return bind(model, ["query_position", "key_position", "offset", "style_name"], redraw);
}

export default { render };
