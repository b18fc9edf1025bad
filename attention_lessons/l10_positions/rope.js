// The RoPE explorer of lesson 10: a 2D query and key turned by their positions (faint: before),
// and their score against the distance m − n (attention_lessons.l10_positions.plots.rope_figure), with sliders
// for the query's position, the key's position and an offset added to both. Every move redraws
// from the mirror of attnlib.positions (rotary.js) inside the input event.

import { computeRope, ropeScore } from "./rotary.js";
import { arrow, axes, element, niceTicks, numberText, text, tipLabel, title, vectorPanel } from "../kit/widgets/js/svg.js";
import { applyTheme, bind, explorerRoot, row, sender, slider, stepDecimals, themeOf } from "../kit/widgets/js/controls.js";

const WIDTH = 960;
const HEIGHT = 485;
const CURVE_POINTS = 481;
const MINUS = "\u2212";
const NAMES = ["the query and the key, rotated by their positions", "the score against the distance"];

// The drawing's geometry: the arrow panel (left), the score panel (right), the top left corner of
// the box of m, n, m − n and the score (readout), the picture's height and its regions. The wide
// one, side by side on a desktop: each panel 445 and 453 units wide with its labels, the box below
// the arrow panel, beside the rotated vectors' components (in the panel's corner it hid the query's
// tip label at the first positions). The narrow one, where a phone cannot show those whole (narrowWhen): both
// plots 20 and 40 units narrower and 20 lower, each panel at most 420 units wide with its labels
// (the arrow panel's tip labels included, turned any way), so that it shows whole with its text
// at 11 px; the box below the arrow panel, beside the rotated vectors' components, where it hides
// no tip label.
const LAYOUTS = {
  wide: {
    left: { x: 70, y: 40, width: 360, height: 360 },
    right: { x: 540, y: 40, width: 390, height: 360 },
    readout: { x: 280, y: 438 },
    height: HEIGHT + 15,
    regions: [
      [15, 0, 445, HEIGHT + 15],
      [485, 0, 453, HEIGHT + 15],
    ],
  },
  narrow: {
    left: { x: 70, y: 40, width: 340, height: 340 },
    right: { x: 540, y: 40, width: 350, height: 340 },
    readout: { x: 272, y: 421 },
    height: HEIGHT,
    regions: [
      [30, 0, 420, HEIGHT],
      [480, 0, 416, 428],
    ],
  },
};

/**
 * The explorer's geometry, wide or narrow: its panels' boxes (`left`, `right`), the picture's
 * `width` and `height`, and its `regions` for explorerRoot ({at, name}).
 */
export function ropeLayout(narrow = false) {
  const { regions, ...layout } = narrow ? LAYOUTS.narrow : LAYOUTS.wide;
  return { ...layout, width: WIDTH, regions: regions.map((at, k) => ({ at, name: NAMES[k] })) };
}

/** The widest panel of the wide drawing, in units: wider than that, the page draws narrow. */
export const WIDEST_PANEL = Math.max(...LAYOUTS.wide.regions.map((at) => at[2]));

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

/** Both panels and the readout, as SVG markup, drawn wide or narrow (ropeLayout). */
export function drawRope(state, result, theme, narrow = false) {
  return ropeParts(state, result, theme, narrow).join("");
}

/** drawRope's markup in parts, in order: a move redraws only the parts whose markup changed. */
export function ropeParts(state, result, theme, narrow = false) {
  const { query, key, limits, maxPosition } = state;
  const { left, right, readout, width, height } = ropeLayout(narrow);
  const colors = [theme.palette[0], theme.palette[2]];
  const parts = [element("rect", { x: 0, y: 0, width, height, fill: theme.background })];

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
  parts.push(element("rect", { x: readout.x, y: readout.y, width: 150, height: 58, rx: 6, fill: theme.background, "fill-opacity": 0.9, stroke: theme.grid }));
  const lineX = readout.x + 6;
  const lineY = (k) => readout.y + 16 + 17 * k;
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
  const below = left.y + left.height + 55; // the rotated vectors' components, below the arrow panel
  const components = (name, v, quantity, x, y) =>
    text(x, y, `${name} = (`, plain) +
    numberText(x + 88, y, v[0], formatScore(v[0]), { quantity, col: 0, colLabel: "x" }, plain) +
    text(x + 132, y, ",", plain) +
    numberText(x + 140, y, v[1], formatScore(v[1]), { quantity, col: 1, colLabel: "y" }, plain) +
    text(x + 184, y, ")", plain);
  parts.push(components("rope(q, m)", result.rotatedQuery, "rotated_query", 70, below));
  parts.push(components("rope(k, n)", result.rotatedKey, "rotated_key", 70, below + 20));
  return parts;
}

function render({ model, el }) {
  const label = "a query and a key rotated by RoPE, and their score";
  const { root, controls, draw, reshape, narrowWhen } = explorerRoot(el, "rope", WIDTH, HEIGHT, label, ropeLayout(false).regions);
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

  // narrow where a panel of the wide drawing would not show whole
  const narrow = narrowWhen(WIDEST_PANEL, () => redraw());
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
    const layout = ropeLayout(narrow());
    Object.entries(sliders).forEach(([name, s]) => s.set(model.get(name)));
    applyTheme(root, theme);
    reshape(layout.width, layout.height, layout.regions);
    draw(ropeParts(state, computeRope(state), theme, narrow()));
  };
  return bind(model, ["query_position", "key_position", "offset", "style_name"], redraw);
}

export default { render };
