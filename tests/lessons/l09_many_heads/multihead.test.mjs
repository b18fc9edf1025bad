// The multi-head explorer of lesson 09 (attention_lessons/l09_many_heads/multihead.js) against
// attnlib.multihead.multi_head_attention, and the numbers its SVG shows.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  NARROW,
  WIDE,
  WIDEST,
  computeMultiHead,
  concatHeads,
  drawMultiHead,
  headColumns,
  multiHeadAttention,
  multiHeadParts,
  multiHeadRegions,
} from "../../../attention_lessons/l09_many_heads/multihead.js";
import { assertClose, fixtures } from "../../kit/js/fixtures.mjs";
import { grownRegions, PHONE_UNITS } from "../../kit/js/phone_layout.mjs";

/** Every element with data-quantity in an SVG string: {quantity, row, col, value}. */
function numbersIn(svg) {
  const found = [];
  for (const [, attrs] of svg.matchAll(/<text([^>]*data-quantity[^>]*)>/g)) {
    const get = (name) => attrs.match(new RegExp(` ${name}="([^"]*)"`))?.[1];
    found.push({ quantity: get("data-quantity"), row: Number(get("data-row")), col: Number(get("data-col")), value: get("data-value") });
  }
  return found;
}

test("head columns and concatenation take columns h·d … (h+1)·d − 1, in head order", () => {
  const M = [
    [0, 1, 2, 3, 4, 5],
    [6, 7, 8, 9, 10, 11],
  ];
  assert.deepEqual(headColumns(M, 2, 3), [
    [4, 5],
    [10, 11],
  ]);
  assert.deepEqual(concatHeads([0, 1, 2].map((h) => headColumns(M, h, 3))), M);
});

test("multi-head attention equals attnlib's: weights, concatenation and output (1 to 4 heads, cross-attention)", () => {
  const cases = fixtures.multihead;
  assert.ok(cases.length >= 7);
  assert.ok(cases.some((c) => c.X_q.length !== c.X_kv.length));
  cases.forEach((c, k) => {
    const result = multiHeadAttention(c.X_q, c.X_kv, c.W_q, c.W_k, c.W_v, c.W_o, c.n_heads);
    assertClose(result.weights, c.expected.weights, `case ${k} weights`);
    assertClose(result.concat, c.expected.concat, `case ${k} concat`);
    assertClose(result.output, c.expected.output, `case ${k} output`);
  });
});

test("the explorer's picture shows attnlib's weights, concatenation and output, every one", () => {
  const twoD = fixtures.multihead.filter((c) => c.n_heads === 2 && c.X_q[0].length === 2 && c.W_o[0].length === 2);
  assert.ok(twoD.length >= 4);
  for (const [style, theme] of Object.entries(fixtures.themes)) {
    for (const c of twoD) {
      const tokens = c.X_q.map(() => "t"); // every token named alike: numbers are found by position
      const state = { tokens, embeddings: c.X_q, W_q: c.W_q, W_k: c.W_k, W_v: c.W_v, W_o: c.W_o, valueMin: -2, valueMax: 2 };
      const result = computeMultiHead(state);
      const numbers = numbersIn(drawMultiHead(state, result, theme, fixtures.colormaps));
      const n = tokens.length;
      for (const [quantity, expected] of [
        ["weights_1", c.expected.weights[0]],
        ["weights_2", c.expected.weights[1]],
        ["concat", c.expected.concat],
        ["output", c.expected.output],
        ["W_o", c.W_o],
      ]) {
        const shown = numbers.filter((x) => x.quantity === quantity);
        assert.equal(shown.length, expected.length * expected[0].length, `${style}: ${quantity} of ${n} tokens`);
        for (const x of shown) assertClose(Number(x.value), expected[x.row][x.col], `${style}: ${quantity}[${x.row}][${x.col}]`);
      }
    }
  }
});

test("the concatenation and W_o share one colour scale: a 0 has the same colour in both", () => {
  const state = {
    tokens: ["a", "b", "c"],
    embeddings: [[1, 0.5], [0.5, 0.5], [0.8, -1]], // x > 0: the concatenation is never negative
    W_q: [[2, 0, 0, 0], [0, 0, 0, 2]],
    W_k: [[2, 0, 0, 0], [0, 0, 0, 2]],
    W_v: [[1, 0, 1, 0], [0, 0, 0, 0]], // the heads' y outputs are 0: columns "h1 y" and "h2 y"
    W_o: [[1, 0], [0, 0], [0, 0], [0, -1]],
    valueMin: -2,
    valueMax: 2,
  };
  const svg = drawMultiHead(state, computeMultiHead(state), fixtures.themes.light, fixtures.colormaps);
  const fills = { concat: new Map(), W_o: new Map() };
  const cell = /<rect[^>]*fill="([^"]+)"[^>]*>(?:<\/rect>)?(?:<g data-hatch[^]*?<\/g>)?<text([^>]*data-quantity="(concat|W_o)"[^>]*)>/g;
  for (const [, fill, attrs, quantity] of svg.matchAll(cell)) {
    const value = Number(attrs.match(/ data-value="([^"]*)"/)[1]);
    fills[quantity].set(Object.is(value, -0) ? 0 : value, fill);
  }
  assert.equal(fills.W_o.size, 3); // W_o holds -1, 0 and 1
  assert.ok(fills.concat.has(0) && fills.W_o.has(0));
  assert.equal(fills.concat.get(0), fills.W_o.get(0));
});

/** The explorer's state for a two-head fixture of 2D tokens, the tokens named "sleeps-k". */
function twoHeadStates() {
  return fixtures.multihead
    .filter((c) => c.n_heads === 2 && c.X_q[0].length === 2 && c.W_o[0].length === 2)
    .map((c) => {
      const tokens = c.X_q.map((_, i) => `sleeps-${i + 1}`);
      return { tokens, embeddings: c.X_q, W_q: c.W_q, W_k: c.W_k, W_v: c.W_v, W_o: c.W_o, valueMin: -2, valueMax: 2 };
    });
}

test("narrow, each panel of the two-head explorer, its texts held, fits a phone; wide, W_o's is WIDEST", () => {
  const eight = twoHeadStates().map((s) => ({ ...s, tokens: Array.from({ length: 8 }, (_, i) => `sleeps-${i + 1}`) }));
  eight.forEach((s) => (s.embeddings = s.tokens.map((_, i) => [2 - i / 2, (i % 5) - 2]))); // the most tokens (8)
  for (const state of [...twoHeadStates(), ...eight]) {
    const result = computeMultiHead(state);
    const narrow = grownRegions(drawMultiHead(state, result, fixtures.themes.light, fixtures.colormaps, NARROW), multiHeadRegions(NARROW));
    for (const [k, [, , w]] of narrow.entries()) {
      assert.ok(w <= PHONE_UNITS, `${state.tokens.length} tokens: panel ${k + 1} is ${w} units wide`);
    }
    assert.ok(narrow[7][1] + narrow[7][3] <= NARROW.height, "W_o's table of outputs ends in the picture");
    const wide = grownRegions(drawMultiHead(state, result, fixtures.themes.light, fixtures.colormaps), multiHeadRegions(WIDE));
    assert.ok(Math.max(...wide.map(([, , w]) => w)) <= WIDEST);
    assert.ok(wide[7][2] > PHONE_UNITS);
  }
});

test("the two-head explorer's narrow drawing shows every number of the wide one, in as many parts", () => {
  for (const [style, theme] of Object.entries(fixtures.themes)) {
    for (const state of twoHeadStates()) {
      const result = computeMultiHead(state);
      const key = (x) => `${x.quantity} ${x.row} ${x.col} ${x.value}`;
      const numbers = (layout) => numbersIn(drawMultiHead(state, result, theme, fixtures.colormaps, layout)).map(key).sort();
      assert.deepEqual(numbers(NARROW), numbers(WIDE), style);
      const parts = (layout) => multiHeadParts(state, result, theme, fixtures.colormaps, layout).length;
      assert.equal(parts(NARROW), parts(WIDE));
    }
  }
});
