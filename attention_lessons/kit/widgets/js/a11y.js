// What a screen reader gets from an explorer, built from the numbers its SVG draws (every number is
// an element with data-quantity, data-value and, where it has them, data-row, data-col and their
// labels): the numbers as tables with row and column headers, and one sentence after a move; and
// which of the explorer's panels each element drawn goes to (regionOf).

/** A quantity's name for people: "raw_max_weight" -> "raw max weight". */
export function quantityName(quantity) {
  return String(quantity).replace(/_/g, " ");
}

/**
 * A drawn number as the text a table shows: its shown text where it has one, else its value to
 * three decimals (a bar carries its value but no text).
 */
export function shownNumber({ shown, value }) {
  if (shown) return shown;
  const number = Number(value);
  return Number.isFinite(number) ? number.toFixed(3) : String(value);
}

/**
 * Group the numbers drawn into tables: the quantities without row or column in one table of
 * values; those with columns only, one table per set of column labels (a row per quantity); each
 * quantity with rows and columns, a table of its own.
 *
 * @param {{quantity: string, row?: number, col?: number, rowLabel?: string, colLabel?: string,
 *          value: string, shown?: string}[]} numbers
 * @returns {{caption: string, corner: string, columns: string[], rows: {header: string, cells: string[]}[]}[]}
 *   `corner` heads the column of row headers: "quantity", or a matrix's own name
 */
export function numberTables(numbers) {
  const scalars = numbers.filter((n) => n.row === undefined && n.col === undefined);
  const vectors = numbers.filter((n) => n.row === undefined && n.col !== undefined);
  const matrices = numbers.filter((n) => n.row !== undefined);
  const tables = [];
  if (scalars.length) {
    tables.push({
      caption: "values",
      corner: "quantity",
      columns: ["value"],
      rows: scalars.map((n) => ({ header: quantityName(n.quantity), cells: [shownNumber(n)] })),
    });
  }
  const byColumns = new Map();
  for (const [quantity, entries] of groupBy(vectors)) {
    entries.sort((a, b) => a.col - b.col);
    const columns = entries.map((n) => n.colLabel ?? String(n.col + 1));
    const key = JSON.stringify(columns);
    if (!byColumns.has(key)) byColumns.set(key, { caption: "", corner: "quantity", columns, rows: [] });
    byColumns.get(key).rows.push({ header: quantityName(quantity), cells: entries.map(shownNumber) });
  }
  for (const table of byColumns.values()) {
    table.caption = table.rows.map((r) => r.header).join(", ");
    tables.push(table);
  }
  for (const [quantity, entries] of groupBy(matrices)) {
    const rowLabels = new Map();
    const colLabels = new Map();
    const at = new Map();
    for (const n of entries) {
      if (!rowLabels.has(n.row)) rowLabels.set(n.row, n.rowLabel);
      if (!colLabels.has(n.col)) colLabels.set(n.col, n.colLabel);
      const where = `${n.row}|${n.col}`;
      if (!at.has(where)) at.set(where, n);
    }
    const rowIds = [...rowLabels.keys()].sort((a, b) => a - b);
    const colIds = [...colLabels.keys()].sort((a, b) => a - b);
    tables.push({
      caption: quantityName(quantity),
      corner: quantityName(quantity),
      columns: colIds.map((j) => colLabels.get(j) ?? String(j + 1)),
      rows: rowIds.map((i) => ({
        header: rowLabels.get(i) ?? String(i + 1),
        cells: colIds.map((j) => {
          const found = at.get(`${i}|${j}`);
          return found ? shownNumber(found) : "";
        }),
      })),
    });
  }
  return tables;
}

/** The numbers by quantity, in the order each quantity first comes. */
function groupBy(numbers) {
  const groups = new Map();
  for (const n of numbers) {
    if (!groups.has(n.quantity)) groups.set(n.quantity, []);
    groups.get(n.quantity).push(n);
  }
  return groups;
}

/** Where a number sits, for a sentence: " of h1", " at row it, column the", "" for a lone value. */
function place(n) {
  if (n.row !== undefined && n.col !== undefined) {
    return ` at row ${n.rowLabel ?? n.row + 1}, column ${n.colLabel ?? n.col + 1}`;
  }
  if (n.row !== undefined) return n.rowLabel === undefined ? ` at row ${n.row + 1}` : ` of ${n.rowLabel}`;
  if (n.col !== undefined) return n.colLabel === undefined ? ` at column ${n.col + 1}` : ` of ${n.colLabel}`;
  return "";
}

/**
 * What a drawn number is, for a sentence: its quantity's name and where it sits ("weights of h1",
 * "raw scores at row it, column the"). An explorer may name its numbers more plainly (announcement's
 * `describe`).
 */
export function numberName(n) {
  return `${quantityName(n.quantity)}${place(n)}`;
}

/** The key of a drawn number: its quantity and position. */
export function numberKey(n) {
  return `${n.quantity}|${n.row ?? ""}|${n.col ?? ""}`;
}

/**
 * One plain sentence, to be heard: what changed, from what to what, and how many other numbers
 * changed with it: "Weights of h1 rose from 0.880 to 0.920, and 1 other number changed."
 *
 * @param {{what: string, was: string, now: string, wasValue?: number, nowValue?: number, others?: number}} change
 *   `was` and `now` as shown; `wasValue` and `nowValue`, where both are numbers, say whether it rose or fell
 */
export function changeSentence({ what, was, now, wasValue, nowValue, others = 0 }) {
  const verb = nowValue > wasValue ? "rose" : nowValue < wasValue ? "fell" : "changed"; // NaN: neither
  const more = others ? `, and ${others} other number${others === 1 ? "" : "s"} changed` : "";
  const sentence = `${what} ${verb} from ${was} to ${now}${more}.`;
  return sentence[0].toUpperCase() + sentence.slice(1);
}

/**
 * One sentence saying what a move changed, from the numbers drawn before and after it: of the
 * numbers whose shown text changed, the one that moved most for the size of its quantity (the
 * largest magnitude among that quantity's numbers), named by `describe` (numberName by default), as
 * changeSentence says it: "Weights of h1 rose from 0.880 to 0.912, and 3 other numbers changed."
 * Empty where nothing shown changed.
 */
export function announcement(before, after, describe = numberName) {
  const old = new Map(before.map((n) => [numberKey(n), n]));
  const changed = after
    .map((n) => ({ n, was: old.get(numberKey(n)) }))
    .filter(({ n, was }) => was && shownNumber(was) !== shownNumber(n));
  if (!changed.length) return "";
  const scale = new Map();
  for (const n of [...before, ...after]) {
    const size = Math.abs(Number(n.value));
    if (Number.isFinite(size)) scale.set(n.quantity, Math.max(scale.get(n.quantity) ?? 0, size));
  }
  const size = ({ n, was }) => {
    const [a, b] = [Number(was.value), Number(n.value)];
    if (!Number.isFinite(a) || !Number.isFinite(b)) return Infinity;
    return Math.abs(b - a) / Math.max(scale.get(n.quantity) ?? 0, 1e-12);
  };
  const most = changed.reduce((best, c) => (size(c) > size(best) ? c : best));
  return changeSentence({
    what: describe(most.n),
    was: shownNumber(most.was),
    now: shownNumber(most.n),
    wasValue: Number(most.was.value),
    nowValue: Number(most.n.value),
    others: changed.length - 1,
  });
}

/** The numbers drawn in the elements under `root` (an SVG), as numberTables and announcement take them. */
export function numbersIn(root) {
  return [...root.querySelectorAll("[data-quantity]")].map((e) => {
    const d = e.dataset;
    const optional = (key) => (d[key] === undefined || d[key] === "" ? undefined : d[key]);
    return {
      quantity: d.quantity,
      row: optional("row") === undefined ? undefined : Number(d.row),
      col: optional("col") === undefined ? undefined : Number(d.col),
      rowLabel: optional("rowLabel"),
      colLabel: optional("colLabel"),
      value: d.value,
      shown: e.tagName.toLowerCase() === "text" ? e.textContent : undefined,
    };
  });
}

/**
 * A panel's box [x, y, w, h] grown to hold the boxes ({x, y, width, height}) of the texts drawn in
 * it, so that no label or title is cut at its edge.
 */
export function holding(at, boxes) {
  let [x0, y0, x1, y1] = [at[0], at[1], at[0] + at[2], at[1] + at[3]];
  for (const b of boxes) {
    if (!(b.width > 0 && b.height > 0)) continue;
    [x0, y0, x1, y1] = [Math.min(x0, b.x), Math.min(y0, b.y), Math.max(x1, b.x + b.width), Math.max(y1, b.y + b.height)];
  }
  return [x0, y0, x1 - x0, y1 - y0];
}

/** Index of the region holding point (x, y), else of the nearest region's centre. */
export function regionOf(regions, x, y) {
  const inside = regions.findIndex(([rx, ry, w, h]) => x >= rx && x < rx + w && y >= ry && y < ry + h);
  if (inside >= 0) return inside;
  const distance = ([rx, ry, w, h]) => Math.hypot(x - (rx + w / 2), y - (ry + h / 2));
  return regions.reduce((best, r, i) => (distance(r) < distance(regions[best]) ? i : best), 0);
}
