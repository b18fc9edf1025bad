// Drawing helpers shared by the explorers: each returns SVG markup as a string (an explorer sets
// it as its <svg>'s content in one assignment). Every number drawn is a <text> carrying its full
// value in data-value (and data-quantity, data-row, data-col), for screen readers and tests. What
// a move may add or remove (ticks) comes in a group of its own, so that the elements after it stay
// the same and are patched in place (controls.js).

import { colormapColor, textColorOn } from "./colors.js";
import { markupOf } from "./parts.js";

const MINUS = "\u2212";

/** Text made safe for SVG/HTML markup. */
export function escapeXml(text) {
  const plain = String(text);
  return /[&<>"']/.test(plain) ? plain.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`) : plain;
}

/**
 * A number as a heatmap cell shows it (attention_lessons.kit.plots.format_cell): fixed decimals, a real minus
 * sign, "−∞" for -Infinity, never "−0.00".
 */
export function formatNumber(value, decimals = 2) {
  if (value === -Infinity) return `${MINUS}\u221e`;
  const text = value.toFixed(decimals);
  if (!text.startsWith("-")) return text;
  const digits = text.slice(1);
  return /^[0.]*$/.test(digits) ? digits : MINUS + digits;
}

/** Attributes as markup; undefined and null values are left out. */
function attributes(attrs) {
  let markup = "";
  for (const key in attrs) {
    const value = attrs[key];
    if (value === undefined || value === null) continue;
    // numbers are geometry (pixels) or indices: a hundredth of a pixel is plenty
    markup += ` ${key}="${typeof value === "number" ? Math.round(value * 100) / 100 : escapeXml(value)}"`;
  }
  return markup;
}

/** Any SVG element; `content` is markup (already escaped). */
export function element(name, attrs, content = "") {
  return `<${name}${attributes(attrs)}>${content}</${name}>`;
}

/** A plain text label. */
export function text(x, y, label, attrs = {}) {
  return element("text", { x, y, ...attrs }, escapeXml(label));
}

/**
 * A number: shown formatted, its full value in data-value (String(value), "" when undefined).
 * @param {{quantity: string, row?: number, col?: number, rowLabel?: string, colLabel?: string}} what
 *   what the number is; the labels name its row and column in the explorer's tables
 */
export function numberText(x, y, value, shown, what, attrs = {}) {
  return element(
    "text",
    {
      x,
      y,
      "data-quantity": what.quantity,
      "data-row": what.row,
      "data-col": what.col,
      "data-row-label": what.rowLabel,
      "data-col-label": what.colLabel,
      "data-value": value === null || value === undefined ? "" : String(value),
      ...attrs,
    },
    escapeXml(shown),
  );
}

/** An attribute's value as element() writes it (a number to a hundredth of a pixel). */
const shownValue = (value) => String(typeof value === "number" ? Math.round(value * 100) / 100 : value);

/**
 * A group of many elements that a move changes all at once (every weight of a head, every line of
 * a pattern), as an updatable part of an explorer's draw(parts) (controls.js markupOf): `items` are
 * its children, each `{tag, attrs, text}` (text: plain, escaped here; omitted: none; the children
 * of a tag always carry the same attributes, so none is left over from a move before). Its one
 * element is the <g>, so its `key` stays the same from move to move even where the number of
 * children changes; a move sets on the children shown only the attributes and texts that changed,
 * adding or removing children at the end, with no markup made or parsed (in a browser: `update`
 * makes the elements it adds). Making and parsing the markup of hundreds of elements was most of
 * a move's work on a phone.
 */
export function groupPart(key, items) {
  return {
    key,
    markup: () => element("g", {}, items.map(({ tag, attrs, text: words = "" }) => element(tag, attrs, escapeXml(words))).join("")),
    update([group]) {
      const shown = group.children;
      items.forEach(({ tag, attrs, text: words = "" }, k) => {
        let node = shown[k];
        if (node?.tagName !== tag) {
          const made = document.createElementNS("http://www.w3.org/2000/svg", tag);
          if (node) node.replaceWith(made);
          else group.append(made);
          node = made;
        }
        for (const name in attrs) {
          if (attrs[name] === undefined || attrs[name] === null) continue;
          const value = shownValue(attrs[name]);
          if (node.getAttribute(name) !== value) node.setAttribute(name, value);
        }
        if (node.textContent !== words) node.textContent = words;
      });
      while (shown.length > items.length) group.lastElementChild.remove();
    },
  };
}

/** Colour limits of a heatmap: the given ones, else the range of the finite values (widened if flat). */
export function colorLimits(matrix, vmin, vmax) {
  const finite = matrix.flat().filter(Number.isFinite);
  let lo = vmin ?? (finite.length ? Math.min(...finite) : 0);
  let hi = vmax ?? (finite.length ? Math.max(...finite) : 1);
  if (hi <= lo) [lo, hi] = [lo - 0.5, lo + 0.5];
  return [lo, hi];
}

/** Round tick values covering [lo, hi], about `count` of them (1, 2, 2.5 or 5 times a power of ten). */
export function niceTicks(lo, hi, count = 5) {
  const span = hi - lo;
  if (!(span > 0)) return [lo];
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const ticks = [];
  for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) {
    ticks.push(Math.abs(t) < step * 1e-9 ? 0 : Number(t.toPrecision(12)));
  }
  return ticks;
}

/** A tick label: the shortest decimal form, with a real minus sign. */
export function tickLabel(value) {
  const shown = String(Number(value.toPrecision(6)));
  return shown.startsWith("-") ? MINUS + shown.slice(1) : shown;
}

/** A panel's title, centred above the box. */
export function title(box, label, theme) {
  return text(box.x + box.width / 2, box.y - 10, label, {
    "text-anchor": "middle",
    "font-weight": "bold",
    "font-size": 14,
    fill: theme.text,
  });
}

/**
 * Axes in a box: frame, ticks, tick labels, optional grid and axis labels.
 * @returns {{markup: string, sx: (x: number) => number, sy: (y: number) => number}}
 */
export function axes(box, { xlim, ylim, xticks, yticks, xlabels, ylabels, xlabel, ylabel, grid, theme }) {
  const sx = (x) => box.x + ((x - xlim[0]) / (xlim[1] - xlim[0])) * box.width;
  const sy = (y) => box.y + box.height - ((y - ylim[0]) / (ylim[1] - ylim[0])) * box.height;
  const inX = (t) => t >= Math.min(...xlim) && t <= Math.max(...xlim);
  const inY = (t) => t >= Math.min(...ylim) && t <= Math.max(...ylim);
  // each axis's ticks in a group: a move that changes how many there are changes only the group
  const xs = [];
  (xticks ?? []).forEach((t, i) => {
    if (!inX(t)) return;
    const x = sx(t);
    if (grid) xs.push(element("line", { x1: x, x2: x, y1: box.y, y2: box.y + box.height, stroke: theme.grid }));
    xs.push(element("line", { x1: x, x2: x, y1: box.y + box.height, y2: box.y + box.height + 4, stroke: theme.edge }));
    const label = xlabels ? xlabels[i] : tickLabel(t);
    xs.push(text(x, box.y + box.height + 16, label, { "text-anchor": "middle", "font-size": 12, fill: theme.tick }));
  });
  const ys = [];
  (yticks ?? []).forEach((t, i) => {
    if (!inY(t)) return;
    const y = sy(t);
    if (grid) ys.push(element("line", { x1: box.x, x2: box.x + box.width, y1: y, y2: y, stroke: theme.grid }));
    ys.push(element("line", { x1: box.x - 4, x2: box.x, y1: y, y2: y, stroke: theme.edge }));
    const label = ylabels ? ylabels[i] : tickLabel(t);
    ys.push(text(box.x - 7, y + 4, label, { "text-anchor": "end", "font-size": 12, fill: theme.tick }));
  });
  const parts = [element("g", {}, xs.join("")), element("g", {}, ys.join(""))];
  parts.push(
    element("rect", { x: box.x, y: box.y, width: box.width, height: box.height, fill: "none", stroke: theme.edge }),
  );
  if (xlabel) {
    parts.push(
      text(box.x + box.width / 2, box.y + box.height + 34, xlabel, { "text-anchor": "middle", "font-size": 12, fill: theme.text }),
    );
  }
  if (ylabel) {
    const x = box.x - 44;
    const y = box.y + box.height / 2;
    parts.push(
      text(x, y, ylabel, { "text-anchor": "middle", "font-size": 12, fill: theme.text, transform: `rotate(-90 ${x} ${y})` }),
    );
  }
  return { markup: parts.join(""), sx, sy };
}

/**
 * A heatmap with every cell annotated (its value in data-value), tick labels, axis labels and a
 * colour bar as tall as the cells. -Infinity cells (masked) are left in the background colour,
 * hatched and shown "−∞", so that no colour alone tells them; so are the cells that
 * options.masked marks true (a key the mask hides), which still show their value.
 *
 * @param {{x, y, size}} box  top left corner and the side of the square cell area
 * @param {number[][]} matrix
 * @param {{rowLabels, colLabels, title, table, vmin?, vmax?, decimals?, quantity, theme,
 *          xlabel?, ylabel?, masked?: boolean[][]}} options
 */
export function heatmap(box, matrix, options) {
  return heatmapParts(box, matrix, options).map(markupOf).join("");
}

/**
 * heatmap's drawing as parts of draw(parts): its cells (each a rect and its number) in one
 * groupPart keyed by `options.key` where it is given and no cell is hidden (a move then sets their
 * colours and numbers in place), else in markup; the labels and colour bar as markup.
 */
export function heatmapParts(box, matrix, options) {
  const { rowLabels, colLabels, table, quantity, theme, decimals = 2 } = options;
  const [lo, hi] = colorLimits(matrix, options.vmin, options.vmax);
  const nRows = matrix.length;
  const nCols = matrix[0].length;
  const cell = box.size / Math.max(nRows, nCols);
  const width = cell * nCols;
  const height = cell * nRows;
  const parts = [title({ x: box.x, y: box.y, width }, options.title, theme)];
  const hidden = (i, j) => !Number.isFinite(matrix[i][j]) || Boolean(options.masked?.[i]?.[j]);
  const cells = heatmapCells(box, cell, matrix, { ...options, lo, hi }, hidden);
  if (options.key !== undefined && !matrix.some((row, i) => row.some((_, j) => hidden(i, j)))) {
    parts.push(groupPart(options.key, cells));
  } else {
    // in markup, each hidden cell hatched over its square
    for (let k = 0; k < cells.length; k += 2) {
      const [square, number] = [cells[k], cells[k + 1]];
      parts.push(element("rect", square.attrs));
      if (square.hidden) parts.push(hatch(square.attrs.x, square.attrs.y, cell, cell, theme.grid));
      parts.push(element("text", number.attrs, escapeXml(number.text)));
    }
  }
  const crowded = Math.max(...colLabels.map((label) => String(label).length)) * 7 > cell;
  colLabels.forEach((label, j) => {
    const x = box.x + (j + 0.5) * cell;
    const y = box.y + height + 16;
    const turn = crowded ? { "text-anchor": "end", transform: `rotate(-45 ${x} ${y - 8})` } : { "text-anchor": "middle" };
    parts.push(text(x, y, label, { "font-size": 12, fill: theme.tick, ...turn }));
  });
  rowLabels.forEach((label, i) => {
    parts.push(text(box.x - 6, box.y + (i + 0.5) * cell + 4, label, { "text-anchor": "end", "font-size": 12, fill: theme.tick }));
  });
  const below = crowded ? 26 + 4.6 * Math.max(...colLabels.map((label) => String(label).length)) : 34;
  parts.push(text(box.x + width / 2, box.y + height + below, options.xlabel ?? "keys", { "text-anchor": "middle", "font-size": 12, fill: theme.text }));
  const yx = box.x - 58;
  const yy = box.y + height / 2;
  parts.push(
    text(yx, yy, options.ylabel ?? "queries", { "text-anchor": "middle", "font-size": 12, fill: theme.text, transform: `rotate(-90 ${yx} ${yy})` }),
  );
  parts.push(colorbar({ x: box.x + width + 8, y: box.y, width: 12, height }, table, lo, hi, theme));
  return parts;
}

/**
 * A text's width in units at `size`, estimated from DejaVu Sans's advances (em): a digit 0.636; a
 * space, point, comma, colon, semicolon, bracket or bar 0.32; m and w 0.98; =, + and the minus
 * sign 0.84; any other character 0.62; in DejaVu Sans Mono 0.602 each; bold 10% wider.
 */
export function textWidth(label, size, { mono = false, bold = false } = {}) {
  const em = [...String(label)].reduce(
    (sum, c) => sum + (mono ? 0.602 : /[0-9]/.test(c) ? 0.636 : /[ .,:;()|]/.test(c) ? 0.32 : /[mwMW]/.test(c) ? 0.98 : /[=+\u2212]/.test(c) ? 0.84 : 0.62),
    0,
  );
  return em * size * (bold ? 1.1 : 1);
}

/**
 * A heatmap's cells from its top left corner `box` ({x, y}), `cell` units each: for each value,
 * row by row, its square (`hidden(i, j)`: filled with the background, marked `hidden`, for the
 * caller to hatch) and its number, as groupPart items. `options` as heatmap's, with the colour
 * limits `lo` and `hi`. Where the widest number is wider than a cell, no number is shown (each is
 * drawn with display none, its value still read into the tables): numbers running into each other
 * read as none; the colours and the colour bar carry them.
 */
export function heatmapCells(box, cell, matrix, options, hidden = () => false) {
  const { rowLabels, colLabels, table, quantity, theme, decimals = 2, lo, hi } = options;
  const fontSize = Math.max(12, Math.min(13, cell / 4));
  const shown = matrix.map((row) => row.map((value) => formatNumber(value, decimals)));
  const crowded = shown.some((row) => row.some((words) => textWidth(words, fontSize) > cell - 2));
  return matrix.flatMap((row, i) =>
    row.flatMap((value, j) => {
      const x = box.x + j * cell;
      const y = box.y + i * cell;
      const shade = hidden(i, j) ? theme.background : colormapColor(table, value, lo, hi);
      const number = {
        x: x + cell / 2,
        y: y + cell / 2 + fontSize / 3,
        "data-quantity": quantity,
        "data-row": i,
        "data-col": j,
        "data-row-label": String(rowLabels[i]),
        "data-col-label": String(colLabels[j]),
        "data-value": value === null || value === undefined ? "" : String(value), // as numberText's
        "text-anchor": "middle",
        "font-size": fontSize,
        fill: textColorOn(shade, theme.annotationDark, theme.annotationLight),
        display: crowded ? "none" : undefined,
      };
      return [
        { tag: "rect", attrs: { x, y, width: cell, height: cell, fill: shade, stroke: theme.background, "stroke-width": 1 }, hidden: hidden(i, j) },
        { tag: "text", attrs: number, text: shown[i][j] },
      ];
    }),
  );
}

/**
 * A vertical colour bar for limits lo..hi, with ticks on its right: one rectangle filled with a
 * gradient through the colour map's table (the same for any limits, so its id can be shared).
 */
export function colorbar(box, table, lo, hi, theme) {
  const id = `attnlib-cmap-${table[0].slice(1)}-${table[table.length - 1].slice(1)}`;
  const stops = Array.from({ length: 33 }, (_, k) => {
    const at = k / 32;
    return element("stop", { offset: at, "stop-color": table[Math.min(table.length - 1, Math.floor(at * table.length))] });
  });
  const ticks = [];
  for (const t of niceTicks(lo, hi, 5)) {
    const y = box.y + box.height - ((t - lo) / (hi - lo)) * box.height;
    ticks.push(element("line", { x1: box.x + box.width, x2: box.x + box.width + 4, y1: y, y2: y, stroke: theme.edge }));
    ticks.push(text(box.x + box.width + 6, y + 4, tickLabel(t), { "font-size": 12, fill: theme.tick }));
  }
  return (
    element("defs", {}, element("linearGradient", { id, x1: 0, y1: 1, x2: 0, y2: 0 }, stops.join(""))) +
    element("rect", { x: box.x, y: box.y, width: box.width, height: box.height, fill: `url(#${id})`, stroke: theme.edge }) +
    element("g", {}, ticks.join("")) // as many ticks as the limits need: a group
  );
}

/**
 * Diagonal hatching over a rectangle (lines at 45°, 6 units apart, clipped to it): what marks a
 * masked cell or an unread value besides its colour.
 */
export function hatch(x, y, width, height, color) {
  const lines = [];
  for (let d = 6; d < width + height; d += 6) {
    const x1 = x + Math.max(0, d - height);
    const y1 = y + Math.min(d, height);
    const x2 = x + Math.min(d, width);
    const y2 = y + Math.max(0, d - width);
    lines.push(element("line", { x1, y1, x2, y2, stroke: color, "stroke-width": 1.2 }));
  }
  return element("g", { "data-hatch": "" }, lines.join(""));
}

/** An arrow from (x1, y1) to (x2, y2) in pixels: a line and a filled head. */
export function arrow(x1, y1, x2, y2, color, { opacity = 1, width = 2.5 } = {}) {
  const length = Math.hypot(x2 - x1, y2 - y1);
  if (length < 1e-9) return element("circle", { cx: x1, cy: y1, r: 2.5, fill: color, "fill-opacity": opacity });
  const ux = (x2 - x1) / length;
  const uy = (y2 - y1) / length;
  const head = Math.min(11, length * 0.6);
  const bx = x2 - ux * head;
  const by = y2 - uy * head;
  const points = [
    [x2, y2],
    [bx - uy * head * 0.45, by + ux * head * 0.45],
    [bx + uy * head * 0.45, by - ux * head * 0.45],
  ];
  return (
    element("line", { x1, y1, x2: bx, y2: by, stroke: color, "stroke-width": width, "stroke-opacity": opacity }) +
    element("polygon", { points: points.map((p) => p.join(",")).join(" "), fill: color, "fill-opacity": opacity })
  );
}

/**
 * Where each arrow's label goes (attention_lessons.kit.plots.place_labels): tips closer than `reach` form a
 * group; within a group, from the highest tip down, labels go alternately left-above and
 * right-below the tip; a lone tip's label goes right-above.
 * @param {number[][]} tips  (n, 2) in data coordinates (y up)
 * @returns {("left-above" | "right-below" | "right-above")[]}
 */
export function labelPlacements(tips, reach) {
  const parent = tips.map((_, i) => i);
  const root = (i) => {
    let r = i;
    while (parent[r] !== r) r = parent[r];
    return r;
  };
  for (let i = 0; i < tips.length; i += 1) {
    for (let j = i + 1; j < tips.length; j += 1) {
      if (Math.hypot(tips[i][0] - tips[j][0], tips[i][1] - tips[j][1]) < reach) parent[root(j)] = root(i);
    }
  }
  const groups = new Map();
  tips.forEach((_, i) => groups.set(root(i), [...(groups.get(root(i)) ?? []), i]));
  const placements = new Array(tips.length).fill("right-above");
  for (const members of groups.values()) {
    if (members.length < 2) continue;
    members.sort((a, b) => tips[b][1] - tips[a][1] || tips[a][0] - tips[b][0]);
    members.forEach((i, rank) => {
      placements[i] = rank % 2 === 0 ? "left-above" : "right-below";
    });
  }
  return placements;
}

/** A label beside an arrow tip (pixels), placed as labelPlacements says. */
export function tipLabel(x, y, label, placement, color, opacity = 1) {
  const left = placement === "left-above";
  const below = placement === "right-below";
  return text(x + (left ? -5 : 5), y + (below ? 14 : -5), label, {
    "text-anchor": left ? "end" : "start",
    "font-size": 12,
    fill: color,
    "fill-opacity": opacity,
  });
}

/**
 * A square 2D panel for vectors: grid, the axes through the origin, ticks.
 * @returns {{markup, sx, sy}}
 */
export function vectorPanel(box, limits, theme, { xlabel, ylabel } = {}) {
  const ticks = niceTicks(limits[0], limits[1], 6);
  const frame = axes(box, { xlim: limits, ylim: limits, xticks: ticks, yticks: ticks, grid: true, theme, xlabel, ylabel });
  const zero = [];
  if (limits[0] < 0 && limits[1] > 0) {
    zero.push(element("line", { x1: frame.sx(0), x2: frame.sx(0), y1: box.y, y2: box.y + box.height, stroke: theme.edge }));
    zero.push(element("line", { x1: box.x, x2: box.x + box.width, y1: frame.sy(0), y2: frame.sy(0), stroke: theme.edge }));
  }
  return { markup: frame.markup + zero.join(""), sx: frame.sx, sy: frame.sy };
}

/**
 * Square limits (the same for x and y) that hold every value given and the origin, with a margin
 * of 15 % of the span (at least 0.5) on each side, as attention_lessons.kit.plots draws its arrow panels.
 */
export function squareLimits(values) {
  const every = [0, ...values];
  const low = Math.min(...every);
  const high = Math.max(...every);
  const pad = 0.15 * Math.max(high - low, 0.5);
  return [low - pad, high + pad];
}

/** Arrows from the origin to each tip, each labelled next to its own tip (unless withLabels is false). */
export function arrowsMarkup(frame, tips, labels, palette, { opacity = 1, reach, withLabels = true }) {
  const placements = labelPlacements(tips, reach);
  return tips
    .map(([x, y], i) => {
      const color = palette[i % palette.length];
      const head = arrow(frame.sx(0), frame.sy(0), frame.sx(x), frame.sy(y), color, { opacity });
      return head + (withLabels ? tipLabel(frame.sx(x), frame.sy(y), labels[i], placements[i], color, opacity) : "");
    })
    .join("");
}

/** A number with its sign, to 2 decimals, with a real minus sign (U+2212). */
export const signed = (v) => (v < 0 ? "\u2212" : "+") + Math.abs(v).toFixed(2);
