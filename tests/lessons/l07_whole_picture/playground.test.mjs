// The playground of lesson 07 (attention_lessons/l07_whole_picture/playground.js): its steps against
// attnlib's, and what its SVG carries, wide and on a phone.
import { test } from "node:test";
import assert from "node:assert/strict";
import { formatNumber } from "../../../attention_lessons/kit/widgets/js/svg.js";
import {
  NARROW,
  WIDE,
  computePlayground,
  drawPlayground,
  pictureHeight,
  playgroundParts,
  playgroundRegions,
} from "../../../attention_lessons/l07_whole_picture/playground.js";
import { assertClose, fixtures } from "../../kit/js/fixtures.mjs";
import { grownRegions, PHONE_UNITS } from "../../kit/js/phone_layout.mjs";

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

test("the playground's steps (Q = X W_q, K = X W_k, V = X W_v, scale 1/√d_k) equal attnlib's", () => {
  for (const [k, c] of fixtures.playground.entries()) {
    const steps = computePlayground(c);
    assertClose(steps.rawScores, c.expected.rawScores, `playground ${k} raw scores`);
    assertClose(steps.scale, c.expected.scale, `playground ${k} scale`);
    assertClose(steps.weights, c.expected.weights, `playground ${k} weights`);
    assertClose(steps.output, c.expected.output, `playground ${k} output`);
  }
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
