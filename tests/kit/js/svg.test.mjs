// Drawing helpers (attention_lessons/kit/widgets/js/svg.js) and what the playground's SVG carries.
import { test } from "node:test";
import assert from "node:assert/strict";
import { colorLimits, escapeXml, formatNumber, heatmapCells, labelPlacements, niceTicks, textWidth } from "../../../attention_lessons/kit/widgets/js/svg.js";
import {
  NARROW,
  WIDE,
  computePlayground,
  drawPlayground,
  pictureHeight,
  playgroundParts,
  playgroundRegions,
} from "../../../attention_lessons/l07_whole_picture/playground.js";
import { fixtures, withInfinity } from "./fixtures.mjs";
import { grownRegions, PHONE_UNITS } from "./phone_layout.mjs";

/** Every <text data-quantity=...> of an SVG string: {quantity, row, col, value, shown}. */
function numbersIn(svg) {
  const found = [];
  const pattern = /<text([^>]*)>([^<]*)<\/text>/g;
  for (const [, attrs, shown] of svg.matchAll(pattern)) {
    const get = (name) => attrs.match(new RegExp(` ${name}="([^"]*)"`))?.[1];
    if (get("data-quantity") === undefined) continue;
    const row = get("data-row");
    const col = get("data-col");
    found.push({
      quantity: get("data-quantity"),
      row: row === undefined ? undefined : Number(row),
      col: col === undefined ? undefined : Number(col),
      value: get("data-value"),
      shown,
    });
  }
  return found;
}

test("numbers are shown as attention_lessons.kit.plots.format_cell shows them", () => {
  for (const [value, decimals, expected] of fixtures.formatCell) {
    assert.equal(formatNumber(withInfinity(value), decimals), expected, `${value} with ${decimals} decimals`);
  }
});

test("a heatmap shows its numbers where its cells hold the widest, else none; the values stay for the tables", () => {
  const theme = { background: "#ffffff", annotationDark: "#111111", annotationLight: "#eeeeee" };
  const options = { rowLabels: ["a", "b"], colLabels: ["a", "b"], table: ["#000000", "#ffffff"], quantity: "w", theme, lo: -1, hi: 1 };
  const matrix = [[0.5, -0.25], [1, 0]];
  assert.ok(Math.abs(textWidth("\u22120.25", 12) - 12 * (0.84 + 0.32 + 3 * 0.636)) < 1e-9); // 36.5
  const numbers = (cell) => heatmapCells({ x: 0, y: 0 }, cell, matrix, options).filter((item) => item.tag === "text");
  const wide = numbers(40); // "−0.25" at 12 units: 36.5 wide, within 40 − 2
  assert.ok(wide.every((item) => item.attrs.display === undefined));
  const narrow = numbers(30);
  assert.ok(narrow.every((item) => item.attrs.display === "none"));
  assert.deepEqual(narrow.map((item) => [item.text, item.attrs["data-value"]]), wide.map((item) => [item.text, item.attrs["data-value"]]));
  assert.deepEqual(wide.map((item) => item.text), ["0.50", "\u22120.25", "1.00", "0.00"]);
});

test("labels of tips that end close together go to either side; a lone tip's above right", () => {
  assert.deepEqual(labelPlacements([[0, 0], [1, 1], [0.01, 0.02]], 0.1), ["right-below", "right-above", "left-above"]);
  assert.deepEqual(labelPlacements([[0, 0]], 0.1), ["right-above"]);
  assert.deepEqual(labelPlacements([[0, 0], [0, 0]], 0.1), ["left-above", "right-below"]);
});

test("colour limits: the finite range, widened when flat; ticks are round and inside", () => {
  assert.deepEqual(colorLimits([[1, -Infinity], [3, 2]]), [1, 3]);
  assert.deepEqual(colorLimits([[2, 2]]), [1.5, 2.5]);
  assert.deepEqual(colorLimits([[5]], 0, 1), [0, 1]);
  assert.deepEqual(niceTicks(0, 1, 5), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  assert.deepEqual(niceTicks(-2.3, 2.3, 4), [-2, 0, 2]);
  assert.deepEqual(niceTicks(-2.3, 2.3, 5), [-2, -1, 0, 1, 2]);
});

test("markup escapes token names", () => {
  assert.equal(escapeXml(`<a & "b">`), "&#60;a &#38; &#34;b&#34;&#62;");
});

test("the playground's SVG carries every raw score, weight and output with its full value", () => {
  const theme = fixtures.themes.dark;
  for (const c of fixtures.playground) {
    const n = c.embeddings.length;
    const tokens = Array.from({ length: n }, () => "the"); // the same name for every token
    const state = { ...c, tokens, valueMin: -2, valueMax: 2 };
    const steps = computePlayground(state);
    const numbers = numbersIn(drawPlayground(state, steps, theme, fixtures.colormaps));
    const pick = (quantity) => numbers.filter((x) => x.quantity === quantity);
    assert.equal(pick("raw_scores").length, n * n);
    assert.equal(pick("weights").length, n * n);
    assert.equal(pick("output").length, n * 2);
    for (const x of pick("weights")) assert.equal(x.value, String(steps.weights[x.row][x.col]));
    for (const x of pick("raw_scores")) assert.equal(x.value, String(steps.rawScores[x.row][x.col]));
    for (const x of pick("output")) assert.equal(x.value, String(steps.output[x.row][x.col]));
    for (const x of pick("weights")) assert.equal(x.shown, formatNumber(steps.weights[x.row][x.col]));
  }
});

test("the playground's arrow panels hold every value and the origin with a 15 % margin", async () => {
  const { squareLimits } = await import("../../../attention_lessons/kit/widgets/js/svg.js");
  const near = (actual, expected) => actual.forEach((a, i) => assert.ok(Math.abs(a - expected[i]) < 1e-12, `${actual}`));
  near(squareLimits([1, 3]), [-0.45, 3.45]);
  near(squareLimits([0.1]), [-0.075, 0.175]); // the span counts as at least 0.5
  near(squareLimits([-1, -2]), [-2.3, 0.3]);
});

/** A playground state of n tokens from a fixture, every token named "Token-k". */
function playgroundState(c) {
  const tokens = c.embeddings.map((_, i) => `Token-${i + 1}`);
  return { ...c, tokens, valueMin: -2, valueMax: 2 };
}

test("the playground's narrow layout: each panel, its texts held, fits a phone; the wide one does not", () => {
  // and the most tokens a playground shows (12), spread over the sliders' range
  const twelve = { ...fixtures.playground[0], embeddings: Array.from({ length: 12 }, (_, i) => [2 - i / 3, (i % 5) - 2]) };
  for (const c of [...fixtures.playground, twelve]) {
    for (const causal of [false, true]) {
      const state = { ...playgroundState(c), causal };
      const steps = computePlayground(state);
      const n = state.tokens.length;
      const narrow = drawPlayground(state, steps, fixtures.themes.light, fixtures.colormaps, NARROW);
      const regions = playgroundRegions(n, NARROW);
      assert.equal(regions.at(-1).at[1] + regions.at(-1).at[3], pictureHeight(n, NARROW));
      for (const [k, [x, , w]] of grownRegions(narrow, regions).entries()) {
        assert.ok(w <= PHONE_UNITS && x >= 0 && x + w <= NARROW.width, `${n} tokens: panel ${k + 1} spans ${x} to ${x + w}`);
      }
      const wide = drawPlayground(state, steps, fixtures.themes.light, fixtures.colormaps, WIDE);
      assert.ok(Math.max(...grownRegions(wide, playgroundRegions(n)).map(([, , w]) => w)) > PHONE_UNITS);
    }
  }
});

test("the playground's narrow drawing shows every number of the wide one, in as many parts", () => {
  for (const [style, theme] of Object.entries(fixtures.themes)) {
    for (const c of fixtures.playground) {
      const state = playgroundState(c);
      const steps = computePlayground(state);
      const key = (x) => `${x.quantity} ${x.row} ${x.col} ${x.value} ${x.shown}`;
      const numbers = (layout) => numbersIn(drawPlayground(state, steps, theme, fixtures.colormaps, layout)).map(key).sort();
      assert.deepEqual(numbers(NARROW), numbers(WIDE), style);
      const parts = (layout) => playgroundParts(state, steps, theme, fixtures.colormaps, layout).length;
      assert.equal(parts(NARROW), parts(WIDE));
    }
  }
});
