// Drawing helpers (course/kit/widgets/js/svg.js) and what the playground's SVG carries.
import { test } from "node:test";
import assert from "node:assert/strict";
import { colorLimits, escapeXml, formatNumber, labelPlacements, niceTicks } from "../../../course/kit/widgets/js/svg.js";
import { computePlayground, drawPlayground } from "../../../course/l07_whole_picture/playground.js";
import { fixtures, withInfinity } from "./fixtures.mjs";

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

test("numbers are shown as course.kit.plots.format_cell shows them", () => {
  for (const [value, decimals, expected] of fixtures.formatCell) {
    assert.equal(formatNumber(withInfinity(value), decimals), expected, `${value} with ${decimals} decimals`);
  }
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
  const { squareLimits } = await import("../../../course/kit/widgets/js/svg.js");
  const near = (actual, expected) => actual.forEach((a, i) => assert.ok(Math.abs(a - expected[i]) < 1e-12, `${actual}`));
  near(squareLimits([1, 3]), [-0.45, 3.45]);
  near(squareLimits([0.1]), [-0.075, 0.175]); // the span counts as at least 0.5
  near(squareLimits([-1, -2]), [-2.3, 0.3]);
});
