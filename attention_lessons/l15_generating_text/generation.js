// The generation explorer of lesson 15: a character-level decoder writes text one character at a
// time. Python generated every step with attnlib (GenerationExplorer): for each prompt and each
// cache setting (the full cache, a sliding window, a window with sinks) it sent, per step, the
// positions the cache keeps, its size in bytes and the new query's weights over those positions
// in every layer and head. This module selects the step, the prompt and the setting and draws the
// sequence (each position kept, a sink, or evicted: a letter and a hatch, not colour alone), every
// head's weights over the cache, and the cache's size step by step.

import { colormapColor } from "../kit/widgets/js/colors.js";
import { axes, colorbar, element, escapeXml, groupPart, hatch, niceTicks, numberText, text, tickLabel, title } from "../kit/widgets/js/svg.js";
import { applyTheme, bind, button, explorerRoot, html, markupOf, row, sender, slider, styleNameOf, styleSelect, themeOf } from "../kit/widgets/js/controls.js";

const WIDTH = 900; // the book's text column at 1280 px is about 917 px: drawn at 1:1, 12 px stays 12 px
const LEFT = 112; // room for the row labels of the grid
const TOP = 58; // the sequence's row of characters
const CHAR_ROW = 24;
const HEAD_ROW = 16;
const CHART = { width: 440, height: 170 };
const MONO = "DejaVu Sans Mono, monospace";
/**
 * The narrow drawing's width (a phone's): each panel shows whole with its text at 11 px or more
 * (controls.js) in the 374 px that the book's dark mode leaves an explorer on a 390 px phone.
 */
export const NARROW_WIDTH = 400;
// The narrow drawing: the sequence cut into lines of `perLine` positions, each with its head rows
// below it (`left`: room for the short row labels, "L0 H1"; `top`: the first line's characters;
// `gap`: between a line's last head row and the next line's position labels).
const NARROW = { left: 44, cell: 10.2, perLine: 30, top: 66, gap: 40 };
// The narrow cache panel: the chart, then the numbers and the text so far below it.
const NARROW_CHART = { x: 60, width: 320, height: 150 };
const NARROW_CACHE_HEIGHT = 470;

/** A character as a cell shows it: a space as "␣", a newline as "↵", a tab as "⇥". */
export function shownChar(c) {
  return { " ": "\u2423", "\n": "\u21b5", "\t": "\u21e5" }[c] ?? c;
}

/** The position of the query at `step` (from 1): the last token before the one it chooses. */
export function queryPosition(run, step) {
  if (!Number.isInteger(step) || step < 1 || step > run.kept.length) {
    throw new Error(`step must be from 1 to ${run.kept.length}, got ${step}`);
  }
  return run.prompt_length - 2 + step;
}

/**
 * What each position of the sequence is at `step`: "sink" (kept for good: one of the first
 * `sinks` positions while a window is set), "kept" (in the cache), "evicted" (read before, now out
 * of the cache), then "next" for the character the step chooses; positions after it are not
 * written yet and get null.
 */
export function cacheRoles(run, step, sinks) {
  const q = queryPosition(run, step);
  const kept = new Set(run.kept[step - 1]);
  return run.tokens.map((_, i) => {
    if (i > q + 1) return null;
    if (i === q + 1) return "next";
    if (!kept.has(i)) return "evicted";
    return i < sinks ? "sink" : "kept";
  });
}

/** The index of the setting with this window (null: the full cache) and sinks; sinks mean nothing without a window. */
export function settingIndex(settings, window, sinks) {
  const k = settings.findIndex((s) => s.window === window && (window === null || s.sinks === sinks));
  if (k < 0) throw new Error(`no precomputed setting has window ${window} and ${sinks} sinks`);
  return k;
}

/**
 * One head's weights from the text Python sent (weight_codes): two base-36 digits per weight,
 * its whole units of 10^-decimals: "3f00rs" -> [0.123, 0, 1].
 */
export function weightsOf(code, decimals) {
  return Array.from({ length: code.length / 2 }, (_, k) => Number.parseInt(code.slice(2 * k, 2 * k + 2), 36) / 10 ** decimals);
}

/** A whole number with thousands separated by commas: 20480 -> "20,480". */
export function groupDigits(n) {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/**
 * The text from position 1 (after the BOS that starts it) up to position `last`, cut into lines
 * of at most `width` characters (newlines shown as ↵), each line as [text, written] pieces:
 * written is true after the prompt.
 */
export function textLines(run, last, width) {
  const chars = run.tokens.slice(1, last + 1).map((c) => (c === "\n" ? "\u21b5" : c));
  const lines = [];
  for (let start = 0; start < chars.length; start += width) {
    const pieces = [];
    for (let i = start; i < Math.min(start + width, chars.length); i += 1) {
      const written = i + 1 >= run.prompt_length;
      if (pieces.length && pieces[pieces.length - 1][1] === written) pieces[pieces.length - 1][0] += chars[i];
      else pieces.push([chars[i], written]);
    }
    lines.push(pieces);
  }
  return lines;
}

/** The height of the picture's first panel (the sequence and the grid) for a number of rows. */
export function gridHeight(nRows) {
  return TOP + CHAR_ROW + 30 + nRows * HEAD_ROW + 74;
}

/** The height of the whole picture: the grid panel and the cache panel below it. */
export function pictureHeight(nRows) {
  return gridHeight(nRows) + CHART.height + 120;
}

/**
 * Where the grid panel draws `n` positions over `rows` head rows: the wide drawing puts them in
 * one line (cells of at most 22 units after LEFT); the narrow one cuts them into lines of
 * NARROW.perLine, each line's head rows below its characters. Returns the left of the cells (x0),
 * a cell's width, the positions per line, the top of each line's row of characters, and the
 * bottom of the last line's head rows.
 */
export function gridLayout(n, rows, narrow) {
  if (!narrow) {
    const cell = Math.min(22, (WIDTH - LEFT - 60) / n);
    return { narrow, x0: LEFT, cell, perLine: n, tops: [TOP + 4], bottom: TOP + 4 + CHAR_ROW + 22 + rows * HEAD_ROW };
  }
  const { left, cell, perLine, top, gap } = NARROW;
  const block = CHAR_ROW + 22 + rows * HEAD_ROW + gap;
  const tops = Array.from({ length: Math.ceil(n / perLine) }, (_, k) => top + k * block);
  return { narrow, x0: left, cell, perLine, tops, bottom: tops[tops.length - 1] + block - gap };
}

/**
 * The picture's viewBox and panels for `n` positions and `rows` head rows, wide or narrow (its
 * panels stacked, each NARROW_WIDTH wide): {width, height, regions}.
 */
export function pictureShape(n, rows, narrow) {
  const width = narrow ? NARROW_WIDTH : WIDTH;
  const split = narrow ? gridLayout(n, rows, true).bottom + 130 : gridHeight(rows);
  const height = narrow ? split + NARROW_CACHE_HEIGHT : pictureHeight(rows);
  return {
    width,
    height,
    regions: [
      { at: [0, 0, width, split], name: "the sequence, what the cache keeps, and every head's weights over it" },
      { at: [0, split, width, height - split], name: "the cache's size step by step, and the text so far" },
    ],
  };
}

/**
 * The first step (from 1) whose character differs from the one the full cache wrote, null where
 * every step wrote the same: where a window (with or without sinks) changes the text.
 */
export function firstDifference(run, full) {
  const k = run.tokens.findIndex((c, i) => i >= run.prompt_length && c !== full.tokens[i]);
  return k < 0 ? null : k - run.prompt_length + 1;
}

/** The words for a cache setting: "the full cache", "a window of 16 with 4 sinks". */
export function settingWords(setting) {
  if (setting.window === null) return "the full cache";
  return `a window of ${setting.window} with ${setting.sinks} sink${setting.sinks === 1 ? "" : "s"}`;
}

/**
 * What a screen reader hears of a step: the prompt, the setting, the step, and one clause saying
 * what the query reads and writes.
 */
export function describeStep(run, step, setting, prompt) {
  const q = queryPosition(run, step);
  const kept = run.kept[step - 1].length;
  return {
    prompt: `"${prompt}"`,
    cache: settingWords(setting),
    step: String(step),
    reads:
      `the query "${shownChar(run.tokens[q])}" at position ${q} reads ${kept} cached positions ` +
      `(${groupDigits(run.bytes[step - 1])} bytes) and writes "${shownChar(run.tokens[q + 1])}"`,
  };
}

/**
 * One sentence saying what a move changed, from describeStep before and after it: "Step 2 (was 1):
 * the query … writes "e"." (or "Cache a window of 16 with 4 sinks (was the full cache): …").
 */
export function moveSentence(was, now) {
  const changed = ["prompt", "cache", "step"].filter((key) => was[key] !== now[key]);
  const head = changed.map((key) => `${key} ${now[key]} (was ${was[key]})`).join(", ");
  const sentence = head ? `${head}: ${now.reads}.` : `${now.reads}.`;
  return sentence[0].toUpperCase() + sentence.slice(1);
}

/**
 * The sequence with each position's role, and every head's weights over the cache, as parts of
 * draw(parts) (markup, and each head's weights as svg.js's groupPart), laid out by gridLayout
 * (wide: one line of positions; narrow: several, each with its head rows).
 */
function grid(state, theme, table, narrow) {
  const { run, step, setting, nLayers, nHeads } = state;
  const n = run.tokens.length;
  const rows = nLayers * nHeads;
  const { x0, cell, perLine, tops } = gridLayout(n, rows, narrow);
  // where position i is drawn: its line's row of characters, its column in that line
  const xOf = (i) => x0 + (i % perLine) * cell;
  const yOf = (i) => tops[Math.floor(i / perLine)];
  const widthOf = (k) => Math.min(perLine, n - k * perLine) * cell; // of line k's cells
  const q = queryPosition(run, step);
  const roles = cacheRoles(run, step, setting.window === null ? 0 : setting.sinks);
  const label = (i) => `${i}:${shownChar(run.tokens[i])}`;
  const cache = setting.window === null ? "the full cache" : `a window of ${setting.window} and ${setting.sinks} sinks`;
  const bold = { "font-weight": "bold", "font-size": 14, fill: theme.text };
  // the title starts where the sequence does (narrow: at the left, in two lines)
  const parts = narrow
    ? [text(8, 20, `Step ${step}: the query at position ${q}`, bold), text(8, 38, `reads ${cache}`, bold)]
    : [text(x0, TOP - 28, `Step ${step}: the query at position ${q} reads the cache (${cache})`, bold)];
  const small = { "font-size": 12, fill: theme.tick, "text-anchor": "middle" };
  for (let i = 0; i < n; i += 10) parts.push(text(x0 + ((i % perLine) + 0.5) * cell, yOf(i) - 6, String(i), small));
  // runs whose length changes from step to step go in a group each, so that a move patches the
  // nodes shown (controls.js) instead of drawing anew what follows them
  const sequence = [];
  roles.forEach((role, i) => {
    if (role === null) return;
    const x = xOf(i);
    const y = yOf(i);
    const outline = {
      sink: { stroke: theme.key, "stroke-width": 2.5 },
      kept: { stroke: theme.key, "stroke-width": 1.2 },
      evicted: { stroke: theme.grid, "stroke-width": 1 },
      next: { stroke: theme.text, "stroke-width": 1.2, "stroke-dasharray": "3 2" },
    }[role];
    sequence.push(element("rect", { x: x + 0.5, y, width: cell - 1, height: CHAR_ROW, fill: theme.background, ...outline }));
    if (role === "evicted") sequence.push(hatch(x + 0.5, y, cell - 1, CHAR_ROW, theme.grid));
    const weight = role === "next" ? "bold" : "normal";
    sequence.push(text(x + cell / 2, y + 16, shownChar(run.tokens[i]), { "text-anchor": "middle", "font-size": 13, "font-family": MONO, "font-weight": weight, fill: theme.text }));
    const mark = { sink: "S", next: "+" }[role];
    if (mark) sequence.push(text(x + cell / 2, y + CHAR_ROW + 13, mark, { ...small, fill: theme.text, "font-weight": "bold" }));
  });
  parts.push(element("g", {}, sequence.join("")));
  // the query: an outline of its own colour and a letter
  const qx = xOf(q);
  const qy = yOf(q);
  parts.push(element("rect", { x: qx - 1, y: qy - 2, width: cell + 2, height: CHAR_ROW + 4, fill: "none", stroke: theme.query, "stroke-width": 3 }));
  parts.push(text(qx + cell / 2, qy + CHAR_ROW + 13, "q", { ...small, fill: theme.text, "font-weight": "bold" }));
  // every head's weights over the cache: one row per head, under the positions they read
  const gridTops = tops.map((y) => y + CHAR_ROW + 22); // of each line's head rows
  const gridTopOf = (i) => gridTops[Math.floor(i / perLine)];
  const kept = run.kept[step - 1];
  const weights = run.weights[step - 1];
  for (let layer = 0; layer < nLayers; layer += 1) {
    for (let head = 0; head < nHeads; head += 1) {
      const r = layer * nHeads + head;
      const words = narrow ? `L${layer} H${head}` : `layer ${layer} head ${head}`;
      for (const gridTop of gridTops) {
        parts.push(text(x0 - 6, gridTop + r * HEAD_ROW + 12, words, { "font-size": 12, fill: theme.tick, "text-anchor": "end" }));
      }
      const evicted = [];
      roles.forEach((role, i) => {
        if (role === "evicted" && i <= q) evicted.push(hatch(xOf(i), gridTopOf(i) + r * HEAD_ROW, cell, HEAD_ROW, theme.grid));
      });
      parts.push(element("g", {}, evicted.join("")));
      const row = weightsOf(weights[layer][head], state.decimals);
      const cells = kept.map((pos, k) => ({ tag: "rect", attrs: {
        x: xOf(pos),
        y: gridTopOf(pos) + r * HEAD_ROW,
        width: cell,
        height: HEAD_ROW,
        fill: colormapColor(table, row[k], 0, 1),
        stroke: theme.background,
        "stroke-width": 0.5,
        "data-quantity": `weights_layer_${layer}`,
        "data-row": head,
        "data-col": pos,
        "data-row-label": `head ${head}`,
        "data-col-label": label(pos),
        "data-value": String(row[k]),
      } }));
      parts.push(groupPart(`weights ${r}`, cells));
    }
    if (layer > 0) {
      gridTops.forEach((gridTop, k) => {
        const at = gridTop + layer * nHeads * HEAD_ROW;
        parts.push(element("line", { x1: x0, x2: x0 + widthOf(k), y1: at, y2: at, stroke: theme.text, "stroke-width": 1.5 }));
      });
    }
  }
  gridTops.forEach((gridTop, k) => {
    parts.push(element("rect", { x: x0, y: gridTop, width: widthOf(k), height: rows * HEAD_ROW, fill: "none", stroke: theme.edge }));
  });
  const bottom = gridTops[gridTops.length - 1] + rows * HEAD_ROW;
  parts.push(colorbar({ x: x0 + (narrow ? perLine * cell + 8 : n * cell + 10), y: gridTops[0], width: 12, height: Math.max(rows * HEAD_ROW, 60) }, table, 0, 1, theme));
  if (narrow) {
    const caption = [`position in the sequence (${run.tokens[0]} starts every text):`, "each row is one head's weights over the cached keys", "(L0 H1: layer 0, head 1)"];
    caption.forEach((words, k) => parts.push(text(8, bottom + 18 + 16 * k, words, { "font-size": 12, fill: theme.text })));
  } else {
    parts.push(text(x0 + (n * cell) / 2, bottom + 18, `position in the sequence (${run.tokens[0]} starts every text): each row is one head's weights over the cached keys`, { ...small, fill: theme.text }));
  }
  // the legend: each role by its letter or hatch (narrow: in two columns, below the caption)
  const ly = bottom + (narrow ? 76 : 44);
  const legend = [
    [element("rect", { x: x0, y: ly - 12, width: 14, height: 16, fill: theme.background, stroke: theme.query, "stroke-width": 3 }), "q: the query"],
    [element("rect", { x: x0, y: ly - 12, width: 14, height: 16, fill: theme.background, stroke: theme.key, "stroke-width": 2.5 }), "S: a sink, kept for good"],
    [element("rect", { x: x0, y: ly - 12, width: 14, height: 16, fill: theme.background, stroke: theme.key, "stroke-width": 1.2 }), "kept in the cache"],
    [element("rect", { x: x0, y: ly - 12, width: 14, height: 16, fill: theme.background, stroke: theme.grid }) + hatch(x0, ly - 12, 14, 16, theme.grid), "hatched: evicted"],
    [element("rect", { x: x0, y: ly - 12, width: 14, height: 16, fill: theme.background, stroke: theme.text, "stroke-dasharray": "3 2" }), "+: the character chosen"],
  ];
  let lx = 0;
  legend.forEach(([mark, words], k) => {
    const [dx, dy] = narrow ? [8 - x0 + (k % 2) * 190, Math.floor(k / 2) * 20] : [lx, 0];
    parts.push(`<g transform="translate(${dx} ${dy})">${mark}</g>`, text(x0 + dx + 20, ly + dy, words, { "font-size": 12, fill: theme.text }));
    lx += 24 + words.length * 6.6;
  });
  return parts;
}

/**
 * The cache's size at every step of this setting (and of the full cache, dashed), the step marked,
 * and the text so far: beside the chart, or (narrow) below it.
 */
function cachePanel(state, theme, top, narrow) {
  const { run, full, step, setting, bytesPerPosition } = state;
  const steps = run.bytes.length;
  const box = narrow ? { ...NARROW_CHART, y: top + 40 } : { x: 90, y: top + 40, width: CHART.width, height: CHART.height };
  const kib = (b) => b / 1024;
  const highest = kib(Math.max(...full.bytes, ...run.bytes));
  const yticks = niceTicks(0, highest, 4);
  const frame = axes(box, {
    xlim: [1, Math.max(steps, 2)],
    ylim: [0, Math.max(highest, yticks[yticks.length - 1])],
    xticks: niceTicks(1, steps, 4).filter((t) => t >= 1 && t <= steps),
    yticks,
    ylabels: yticks.map(tickLabel),
    xlabel: "step (characters generated)",
    ylabel: "cache (KiB)",
    grid: true,
    theme,
  });
  const parts = [title(box, "The cache's size, step by step", theme), frame.markup];
  const line = (bytes) => bytes.map((b, k) => `${frame.sx(k + 1)},${frame.sy(kib(b))}`).join(" ");
  if (setting.window !== null) {
    parts.push(element("polyline", { points: line(full.bytes), fill: "none", stroke: theme.tick, "stroke-width": 1.5, "stroke-dasharray": "6 3" }));
  }
  parts.push(element("polyline", { points: line(run.bytes), fill: "none", stroke: theme.scaled, "stroke-width": 2 }));
  parts.push(element("line", { x1: frame.sx(step), x2: frame.sx(step), y1: box.y, y2: box.y + box.height, stroke: theme.text, "stroke-width": 1 }));
  parts.push(element("circle", { cx: frame.sx(step), cy: frame.sy(kib(run.bytes[step - 1])), r: 5, fill: theme.scaled, stroke: theme.text }));
  // the numbers and the text so far: right of the chart, or (narrow) below it
  const tx = narrow ? 8 : box.x + box.width + 60;
  const ty = narrow ? box.y + box.height + 56 : box.y;
  const right = narrow ? NARROW_WIDTH - 14 : WIDTH - 20; // where the numbers end
  const mono = { "font-size": 13, "font-family": MONO, fill: theme.text };
  const kept = run.kept[step - 1].length;
  const bytes = run.bytes[step - 1];
  parts.push(
    text(tx, ty + 4, "solid: this setting", { "font-size": 12, fill: theme.text }),
    text(tx, ty + 22, setting.window === null ? "" : "dashed: the full cache", { "font-size": 12, fill: theme.text }),
    text(tx, ty + 48, "step", mono),
    numberText(right, ty + 48, step, `${step} of ${steps}`, { quantity: "step" }, { ...mono, "text-anchor": "end" }),
    text(tx, ty + 68, "positions cached", mono),
    numberText(right, ty + 68, kept, String(kept), { quantity: "positions_cached" }, { ...mono, "text-anchor": "end" }),
    text(tx, ty + 88, "bytes per position", mono),
    numberText(right, ty + 88, bytesPerPosition, groupDigits(bytesPerPosition), { quantity: "bytes_per_position" }, { ...mono, "text-anchor": "end" }),
    text(tx, ty + 108, "cache bytes", { ...mono, "font-weight": "bold" }),
    numberText(right, ty + 108, bytes, groupDigits(bytes), { quantity: "cache_bytes" }, { ...mono, "text-anchor": "end", "font-weight": "bold" }),
  );
  if (setting.window !== null) {
    // where the window changes what the model writes: the first step unlike the full cache's
    const differs = firstDifference(run, full);
    const shown = differs === null ? `none of ${steps}` : `${differs}`;
    parts.push(
      text(tx, ty + 128, "first step unlike the full cache", mono),
      numberText(right, ty + 128, differs ?? "", shown, { quantity: "first_step_unlike_the_full_cache" }, { ...mono, "text-anchor": "end" }),
    );
  }
  // the text so far: the prompt, then what the model wrote (bold)
  const q = queryPosition(run, step);
  parts.push(text(tx, ty + 154, "the text so far (bold: what the model wrote)", { "font-size": 12, fill: theme.text }));
  const lines = textLines(run, q + 1, narrow ? 48 : 34).map((line, k) => {
    const spans = line.map(([words, written]) => element("tspan", written ? { "font-weight": "bold" } : {}, escapeXml(words)));
    return element("text", { x: tx, y: ty + 174 + k * 17, ...mono, "xml:space": "preserve" }, spans.join(""));
  });
  parts.push(element("g", {}, lines.join(""))); // as many lines as the text needs: a group
  return parts.join("");
}

/** The whole picture at the state's step, prompt and setting, as SVG markup (narrow: a phone's, see pictureShape). */
export function drawGeneration(state, theme, colormaps, narrow = false) {
  return generationParts(state, theme, colormaps, narrow).map(markupOf).join("");
}

/** drawGeneration's markup in parts, in order: a move redraws only the parts whose markup changed. */
export function generationParts(state, theme, colormaps, narrow = false) {
  const { width, height, regions } = pictureShape(state.run.tokens.length, state.nLayers * state.nHeads, narrow);
  return [
    element("rect", { x: 0, y: 0, width, height, fill: theme.background }),
    ...grid(state, theme, colormaps.viridis, narrow),
    cachePanel(state, theme, regions[1].at[1], narrow),
  ];
}

/** A labelled select of `options` ([value, words] pairs); `onChange(value)` runs inside its change event. */
function choice({ name, label, options, value, onChange }) {
  const select = html("select", { "data-lm-suppress-shortcuts": "true", "data-control": name, "aria-label": label });
  const fill = (entries) => {
    select.replaceChildren(...entries.map(([v, words]) => html("option", { value: JSON.stringify(v) }, words)));
  };
  fill(options);
  select.value = JSON.stringify(value);
  select.addEventListener("change", () => onChange(JSON.parse(select.value)));
  Object.assign(select.style, { maxWidth: "100%", minHeight: "24px" });
  const node = html("label", {}, `${label} `, select);
  Object.assign(node.style, { marginRight: "10px", maxWidth: "100%" });
  return { node, select, fill };
}

function render({ model, el }) {
  const send = sender(model);
  const nLayers = model.get("n_layers");
  const nHeads = model.get("n_heads");
  // the wide picture's shape does not depend on the length of the sequence
  const wide = pictureShape(1, nLayers * nHeads, false);
  const { root, controls, message, draw, reshape, narrowWhen } = explorerRoot(
    el,
    "generation",
    wide.width,
    wide.height,
    "a decoder generating text one character at a time, its cache and each new query's weights",
    wide.regions,
    () => {
      const now = described();
      const sentence = moveSentence(said, now);
      said = now;
      return sentence;
    },
  );
  const settings = model.get("settings");
  const windows = [...new Set(settings.map((s) => s.window))];
  const sinkCounts = [...new Set(settings.map((s) => s.sinks))];
  const prompts = () => model.get("runs").map((r, k) => [k, r.prompt]);
  const prompt = choice({ name: "prompt", label: "prompt", options: [], value: 0, onChange: (v) => send({ prompt: v }) });
  const windowChoice = choice({
    name: "window",
    label: "window",
    options: windows.map((w) => [w, w === null ? "full cache" : `last ${w} positions`]),
    value: model.get("window"),
    onChange: (v) => send({ window: v }),
  });
  const sinks = choice({
    name: "sinks",
    label: "sinks",
    options: sinkCounts.map((s) => [s, String(s)]),
    value: model.get("sinks"),
    onChange: (v) => send({ sinks: v }),
  });
  const nNew = model.get("n_new");
  const step = slider({
    name: "step",
    label: "step",
    ariaLabel: "generation step",
    min: 1,
    max: nNew,
    step: 1,
    value: model.get("step"),
    format: (v) => `${v}/${nNew}`,
    width: "320px",
    onInput: (v) => send({ step: v }),
  });
  const typed = html("input", {
    "data-lm-suppress-shortcuts": "true",
    type: "text",
    "data-control": "text",
    "aria-label": "your prompt",
    placeholder: "type a prompt (needs a running kernel)",
    size: 36,
  });
  typed.style.maxWidth = "100%";
  typed.style.minHeight = "24px";
  let waiting = null;
  let empty = false; // the box was empty when the reader asked to generate
  const go = () => {
    empty = typed.value === "";
    waiting = empty ? null : typed.value;
    if (!empty) send({ text: typed.value });
    redraw();
  };
  typed.addEventListener("input", () => (empty = false));
  typed.addEventListener("keydown", (event) => {
    if (event.key === "Enter") go();
  });
  const generate = button({ name: "generate", label: "generate", onClick: go });
  const style = styleSelect({ model, value: model.get("style_name"), onChange: (s) => send({ style_name: s }) });
  controls.append(row(prompt.node, style.node), row(step.node), row(windowChoice.node, sinks.node), row(typed, generate));

  const currentSetting = () => settings[settingIndex(settings, model.get("window"), model.get("sinks"))];
  const runOf = (k) => model.get("runs")[model.get("prompt")].settings[k];
  const currentRun = () => runOf(settingIndex(settings, model.get("window"), model.get("sinks")));
  const described = () => describeStep(currentRun(), model.get("step"), currentSetting(), model.get("runs")[model.get("prompt")].prompt);
  let said = described();
  let shownPrompts = "";
  const narrow = narrowWhen(WIDTH, () => redraw());
  const redraw = () => {
    const listed = prompts();
    if (JSON.stringify(listed) !== shownPrompts) {
      prompt.fill(listed.map(([k, p]) => [k, JSON.stringify(p)]));
      shownPrompts = JSON.stringify(listed);
    }
    prompt.select.value = JSON.stringify(model.get("prompt"));
    windowChoice.select.value = JSON.stringify(model.get("window"));
    sinks.select.value = JSON.stringify(model.get("sinks"));
    step.set(model.get("step"));
    step.input.setAttribute("aria-valuetext", `step ${model.get("step")} of ${nNew}`);
    style.select.value = styleNameOf(model);
    const error = model.get("error");
    if (error) waiting = null;
    if (waiting !== null && listed.some(([, p]) => p === waiting)) waiting = null;
    const pending = waiting !== null ? `Python generates from "${waiting}": waiting for the kernel\u2026 (with no kernel, pick one of the precomputed prompts)` : "";
    message.textContent = empty ? "Type a prompt first." : error || pending;
    const theme = themeOf(model);
    applyTheme(root, theme);
    const setting = currentSetting();
    const state = {
      run: currentRun(),
      full: runOf(settingIndex(settings, null, 0)),
      step: model.get("step"),
      setting,
      nLayers,
      nHeads,
      bytesPerPosition: model.get("bytes_per_position"),
      decimals: model.get("decimals"),
    };
    const { width, height, regions } = pictureShape(state.run.tokens.length, nLayers * nHeads, narrow());
    reshape(width, height, regions);
    draw(generationParts(state, theme, model.get("colormaps"), narrow()));
  };
  return bind(model, ["runs", "prompt", "window", "sinks", "step", "error", "style_name"], redraw);
}

export default { render };
