// Drawing helpers (attention_lessons/kit/widgets/js/svg.js). What the playground's SVG carries:
// tests/lessons/l07_whole_picture/playground.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { colorLimits, escapeXml, formatNumber, heatmapCells, labelPlacements, niceTicks, textWidth } from "../../../attention_lessons/kit/widgets/js/svg.js";
import { fixtures, withInfinity } from "./fixtures.mjs";

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

test("the playground's arrow panels hold every value and the origin with a 15 % margin", async () => {
  const { squareLimits } = await import("../../../attention_lessons/kit/widgets/js/svg.js");
  const near = (actual, expected) => actual.forEach((a, i) => assert.ok(Math.abs(a - expected[i]) < 1e-12, `${actual}`));
  near(squareLimits([1, 3]), [-0.45, 3.45]);
  near(squareLimits([0.1]), [-0.075, 0.175]); // the span counts as at least 0.5
  near(squareLimits([-1, -2]), [-2.3, 0.3]);
});
