// The online softmax explorer of lesson 12: one query's scores read block by block. Python computes
// every state of every block size with attnlib.efficient.online_softmax and ships them; this only
// selects the state after the blocks read and draws it.

import { axes, element, hatch, niceTicks, numberText, text, title, vectorPanel } from "../kit/widgets/js/svg.js";
import { applyTheme, bind, explorerRoot, row, sender, slider, themeOf } from "../kit/widgets/js/controls.js";

const BLOCK_SIZES = [1, 2, 4, 8];

/**
 * Where each part of the drawing goes: the viewBox (width × height units), the scores' axes box
 * (`scores`), the span its title is centred over (`scoresTitle`), where its legend of solid and
 * hatched bars begins (`legend`), where the running maximum's line is named in a key of its own
 * (`maximumKey`), the share of the scores' axes left free above the highest bar for those two
 * where they lie inside the axes (`headroom`), the output panel's box
 * (`out`), the running numbers' first line (`running`: labels at x, values ending at right; with
 * `wrap`, the rescale's remark on a line of its own), the partial and exact output's first line
 * (`outputs`), and the regions the drawing is cut into, one panel each.
 */
export const WIDE = {
  width: 1000,
  height: 480,
  scores: { x: 70, y: 40, width: 520, height: 250 },
  scoresTitle: { x: 70, width: 520 },
  legend: { x: 76, y: 56 },
  out: { x: 700, y: 40, width: 250, height: 250 },
  maximumKey: { x: 330, y: 56 },
  headroom: 0.14,
  running: { x: 70, y: 345, right: 560, wrap: false },
  outputs: { x: 620, y: 345 },
  regions: [
    { at: [12, 0, 576, 330], name: "one query's scores, the keys read so far solid, the others hatched" },
    { at: [640, 0, 320, 330], name: "the partial output converging to the exact output" },
    { at: [60, 330, 520, 150], name: "the running maximum, rescale and sum" },
    { at: [610, 330, 340, 150], name: "the partial and the exact output" },
  ],
};

/**
 * WIDE's drawing for a phone: the same panels, each at most 390 units wide (shown whole, 1:1, on a
 * 390 px screen), stacked; the scores' axes narrower, their legend and the running maximum's name
 * below them (not over the bars), the rescale's remark on a line of its own below its value.
 */
export const NARROW = {
  width: 390,
  height: 930,
  scores: { x: 56, y: 40, width: 326, height: 230 },
  scoresTitle: { x: 0, width: 390 },
  legend: { x: 8, y: 322 },
  out: { x: 60, y: 370, width: 250, height: 250 },
  maximumKey: { x: 8, y: 304 },
  headroom: 0,
  running: { x: 10, y: 675, right: 380, wrap: true },
  outputs: { x: 10, y: 795 },
  regions: [
    { at: [0, 0, 390, 330], name: WIDE.regions[0].name },
    { at: [0, 330, 320, 330], name: WIDE.regions[1].name },
    { at: [0, 660, 390, 120], name: WIDE.regions[2].name },
    { at: [0, 780, 340, 150], name: WIDE.regions[3].name },
  ],
};

/** The state after `blocksRead` blocks of `blockSize` keys, and the one before it (or null). */
export function stateAfter(tables, blockSize, blocksRead) {
  const table = tables[String(blockSize)];
  if (!table) throw new Error(`no precomputed states for blocks of ${blockSize}`);
  if (blocksRead < 1 || blocksRead > table.length) throw new Error(`blocks_read must be from 1 to ${table.length}`);
  return { state: table[blocksRead - 1], previous: blocksRead > 1 ? table[blocksRead - 2] : null, blocks: table.length };
}

/** The scores panel, the output panel and the running numbers, as SVG markup laid out as `layout` (WIDE or NARROW). */
export function drawOnlineSoftmax(model, theme, layout = WIDE) {
  return onlineSoftmaxParts(model, theme, layout).join("");
}

/** drawOnlineSoftmax's markup in parts, in order: a move redraws only the parts whose markup changed. */
export function onlineSoftmaxParts(model, theme, layout = WIDE) {
  const { scores, values, tables, blockSize, blocksRead, exactOutput } = model;
  const { state, previous, blocks } = stateAfter(tables, blockSize, blocksRead);
  const mono = { "font-size": 13, "font-family": "DejaVu Sans Mono, monospace", fill: theme.text };
  const parts = [element("rect", { x: 0, y: 0, width: layout.width, height: layout.height, fill: theme.background })];

  // 1. the scores, keys read so far in colour, the running maximum as a line
  const box = layout.scores;
  const lo = Math.min(0, ...scores) - 0.5;
  // above the highest bar, room for the legend and the key where they are drawn inside the axes
  const hi = Math.max(...scores) + 0.5 + layout.headroom * (Math.max(...scores) + 0.5 - lo);
  const yticks = niceTicks(lo, hi, 6);
  const frame = axes(box, {
    xlim: [-0.6, scores.length - 0.4],
    ylim: [lo, hi],
    xticks: scores.map((_, j) => j),
    xlabels: scores.map((_, j) => String(j)),
    yticks,
    xlabel: "key j",
    ylabel: "score s_j",
    theme,
  });
  parts.push(title({ ...box, ...layout.scoresTitle }, `One query's scores: ${blocksRead} of ${blocks} blocks of ${blockSize} read`, theme), frame.markup);
  // what a move adds or removes (block edges, hatches) is grouped: the groups that follow keep their nodes
  const edges = [];
  for (let j0 = 0; j0 < scores.length; j0 += blockSize) {
    const x = frame.sx(j0 - 0.5);
    edges.push(element("line", { x1: x, x2: x, y1: box.y, y2: box.y + box.height, stroke: theme.grid, "stroke-dasharray": "3 3" }));
  }
  parts.push(element("g", {}, edges.join("")));
  parts.push(
    element("rect", {
      x: frame.sx(state.start - 0.5),
      y: box.y,
      width: frame.sx(state.stop - 0.5) - frame.sx(state.start - 0.5),
      height: box.height,
      fill: theme.scaled,
      "fill-opacity": 0.12,
    }),
  );
  const barWidth = frame.sx(0.35) - frame.sx(-0.35);
  // read keys: solid bars; keys not read yet: pale, hatched and outlined (not by lightness alone)
  const bars = [];
  scores.forEach((s, j) => {
    const read = j < state.stop;
    const bar = { x: frame.sx(j) - barWidth / 2, y: frame.sy(Math.max(s, 0)), width: barWidth, height: Math.abs(frame.sy(s) - frame.sy(0)) };
    bars.push(
      element("rect", {
        ...bar,
        fill: read ? theme.scaled : theme.tick,
        "fill-opacity": read ? 1 : 0.3,
        stroke: read ? null : theme.tick,
        "data-quantity": "scores",
        "data-col": j,
        "data-col-label": `key ${j}`,
        "data-value": String(s),
      }),
      read ? "" : hatch(bar.x, bar.y, bar.width, bar.height, theme.tick),
    );
  });
  parts.push(element("g", {}, bars.join("")));
  parts.push(text(layout.legend.x, layout.legend.y, "solid: read \u00b7 hatched: not read yet", { "font-size": 12, fill: theme.text }));
  const my = frame.sy(state.maximum);
  parts.push(element("line", { x1: box.x, x2: box.x + box.width, y1: my, y2: my, stroke: theme.runningMaximum, "stroke-width": 2, "data-mark": "running-maximum" }));
  // the line named in a key of its own, clear of the bars and of the line
  const key = layout.maximumKey;
  parts.push(
    element("line", { x1: key.x, x2: key.x + 20, y1: key.y - 4, y2: key.y - 4, stroke: theme.runningMaximum, "stroke-width": 2 }),
    text(key.x + 24, key.y, "running maximum m", { "font-size": 12, fill: theme.text }),
  );

  // 2. the partial output in 2D, converging to the exact output
  const all = [...values.flat(), ...exactOutput];
  const reach = Math.max(...all.map(Math.abs)) * 1.1;
  const out = layout.out;
  const panel = vectorPanel(out, [-reach, reach], theme, { xlabel: "output, dim 0", ylabel: "output, dim 1" });
  parts.push(title(out, "Partial output o / l", theme), panel.markup);
  values.forEach((v, j) => {
    const read = j < state.stop;
    parts.push(element("circle", { cx: panel.sx(v[0]), cy: panel.sy(v[1]), r: 3.5, fill: read ? theme.tick : "none", stroke: theme.tick, "fill-opacity": 0.9 }));
  });
  const path = tables[String(blockSize)].slice(0, blocksRead).map((st) => `${panel.sx(st.output[0])},${panel.sy(st.output[1])}`);
  parts.push(element("polyline", { points: path.join(" "), fill: "none", stroke: theme.scaled, "stroke-width": 1.5 }));
  parts.push(
    element("circle", { cx: panel.sx(exactOutput[0]), cy: panel.sy(exactOutput[1]), r: 9, fill: "none", stroke: theme.text, "stroke-width": 2 }),
    element("circle", { cx: panel.sx(state.output[0]), cy: panel.sy(state.output[1]), r: 5, fill: theme.scaled }),
  );

  // 3. the running numbers
  const { x: rx, y: y0, right: valuesEnd, wrap } = layout.running;
  const right = { ...mono, "text-anchor": "end" };
  const line = (k, label, value, shown, quantity, col) =>
    [text(rx, y0 + 22 * k, label, mono), numberText(valuesEnd, y0 + 22 * k, value, shown, { quantity, col }, right)];
  const grew = previous !== null && state.maximum > previous.maximum;
  const remark = previous === null ? "nothing read before" : grew ? "the maximum grew" : "m unchanged";
  const rescale = "rescale exp(m_before − m):";
  parts.push(
    ...line(0, `keys read: 0 … ${state.stop - 1}; this block: ${state.start} … ${state.stop - 1}`, state.stop, String(state.stop), "keys_read"),
    ...line(1, "running maximum m", state.maximum, state.maximum.toFixed(4), "maximum"),
    ...line(2, wrap ? rescale : `${rescale} ${remark}`, state.rescale, previous === null ? "—" : state.rescale.toFixed(4), "rescale"),
  );
  if (wrap) parts.push(text(rx + 16, y0 + 22 * 3, remark, mono));
  parts.push(...line(wrap ? 4 : 3, "running sum l = Σ exp(s_j − m)", state.total, state.total.toFixed(4), "total"));
  const { x: ox, y: oy } = layout.outputs;
  parts.push(text(ox, oy, "partial o / l", mono), text(ox + 180, oy, "exact softmax(s) V", mono));
  [0, 1].forEach((d) => {
    parts.push(
      numberText(ox + 80, oy + 22 * (d + 1), state.output[d], state.output[d].toFixed(4), { quantity: "output", col: d, colLabel: `dim ${d}` }, right),
      numberText(ox + 280, oy + 22 * (d + 1), exactOutput[d], exactOutput[d].toFixed(4), { quantity: "exact_output", col: d, colLabel: `dim ${d}` }, right),
    );
  });
  const done = blocksRead === blocks;
  parts.push(
    text(ox, oy + 22 * 3.4, done ? "last block: o / l = softmax(s) V" : "o / l: keys read so far only", mono),
    text(ox, oy + 22 * 4.4, "dots: values v_j (filled: read,", { ...mono, "font-size": 12 }),
    text(ox, oy + 22 * 5.2, "hollow: not read); ring: exact", { ...mono, "font-size": 12 }),
  );
  return parts;
}

function render({ model, el }) {
  const { root, controls, draw, reshape, narrowWhen } = explorerRoot(
    el,
    "online-softmax",
    WIDE.width,
    WIDE.height,
    "the online softmax of one query row, block by block",
    WIDE.regions,
  );
  // the narrow drawing where the widest panel, the scores', would not show whole
  const narrow = narrowWhen(WIDE.regions[0].at[2], () => redraw());
  const send = sender(model);
  const count = () => model.get("tables")[String(model.get("block_size"))].length;
  const blocks = slider({
    name: "blocks_read",
    label: "blocks read",
    ariaLabel: "number of key blocks read",
    min: 1,
    max: count(),
    step: 1,
    value: model.get("blocks_read"),
    format: (b) => `${b} of ${count()}`,
    unit: "blocks read",
    onInput: (b) => {
      send({ blocks_read: b });
      redraw();
    },
  });
  const size = slider({
    name: "block_size",
    label: "keys per block",
    ariaLabel: "keys per block",
    min: 0,
    max: BLOCK_SIZES.length - 1,
    step: 1,
    value: BLOCK_SIZES.indexOf(model.get("block_size")),
    format: (i) => String(BLOCK_SIZES[i]),
    unit: "keys per block",
    onInput: (i) => {
      const blockSize = BLOCK_SIZES[i];
      const last = model.get("tables")[String(blockSize)].length;
      send({ block_size: blockSize, blocks_read: Math.min(model.get("blocks_read"), last) });
      redraw();
    },
  });
  controls.append(row(blocks.node, size.node));

  function redraw() {
    const theme = themeOf(model);
    blocks.input.max = String(count());
    blocks.set(model.get("blocks_read"));
    size.set(BLOCK_SIZES.indexOf(model.get("block_size")));
    applyTheme(root, theme);
    const layout = narrow() ? NARROW : WIDE;
    reshape(layout.width, layout.height, layout.regions);
    draw(onlineSoftmaxParts(
      {
        scores: model.get("scores"),
        values: model.get("values"),
        tables: model.get("tables"),
        blockSize: model.get("block_size"),
        blocksRead: model.get("blocks_read"),
        exactOutput: model.get("exact_output"),
      },
      theme,
      layout,
    ));
  }
  return bind(model, ["blocks_read", "block_size", "style_name"], redraw);
}

export default { render };
