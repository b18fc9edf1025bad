// What lesson 05's softmax explorer (attention_lessons/l05_softmax/softmax.js) computes and draws:
// the mirror's softmax over a temperature against attnlib, and every number in its SVG.
import { test } from "node:test";
import assert from "node:assert/strict";
import { entropy, softmaxRow } from "../../../attention_lessons/kit/widgets/js/mirror.js";
import { computeSoftmax, drawSoftmax, REGIONS as SOFTMAX_REGIONS } from "../../../attention_lessons/l05_softmax/softmax.js";
import { assertClose, entropyScale, fixtures } from "../../kit/js/fixtures.mjs";
import { PHONE_UNITS } from "../../kit/js/phone_layout.mjs";

/** Every element with data-quantity in an SVG string: {quantity, row, col, value, shown} (shown: a text's text). */
function numbersIn(svg) {
  const found = [];
  for (const [, tag, attrs, content] of svg.matchAll(/<(text|rect)([^>]*data-quantity[^>]*)>([^<]*)/g)) {
    const get = (name) => attrs.match(new RegExp(` ${name}="([^"]*)"`))?.[1];
    found.push({
      quantity: get("data-quantity"),
      row: get("data-row") === undefined ? undefined : Number(get("data-row")),
      col: get("data-col") === undefined ? undefined : Number(get("data-col")),
      value: get("data-value"),
      shown: tag === "text" ? content : undefined,
    });
  }
  return found;
}

const pick = (numbers, quantity) => numbers.filter((x) => x.quantity === quantity);

test("softmax of masked scores over a temperature equals attnlib's (T = 0.1 … 10)", () => {
  const temperatures = fixtures.softmax.map((c) => c.temperature);
  assert.ok(temperatures.includes(0.1) && temperatures.includes(10));
  fixtures.softmax.forEach((c, k) => {
    const scores = c.scores.map((s, i) => (c.masks[i] ? -Infinity : s) / c.temperature);
    const weights = softmaxRow(scores);
    assertClose(weights, c.expected.weights, `softmax ${k} weights`);
    assertClose(entropy(weights), c.expected.entropy, `softmax ${k} entropy`, entropyScale(weights.length));
  });
});

test("the softmax explorer's weights equal attnlib's and its SVG shows them, keys by position", () => {
  for (const c of fixtures.softmax) {
    const result = computeSoftmax(c);
    assertClose(result.weights, c.expected.weights, "weights");
    assertClose(result.entropy, c.expected.entropy, "entropy", entropyScale(c.scores.length));
    const labels = c.scores.map(() => "k"); // every key named alike
    const state = { ...c, labels, limits: [-12.4, 12.4] };
    const numbers = numbersIn(drawSoftmax(state, result, fixtures.themes.light));
    const weights = pick(numbers, "weights");
    const scores = pick(numbers, "scores");
    assert.equal(weights.length, c.scores.length);
    weights.forEach((x) => assert.equal(x.value, String(result.weights[x.col])));
    scores.forEach((x) => assert.equal(x.value, String(c.masks[x.col] ? -Infinity : c.scores[x.col])));
    assert.equal(pick(numbers, "temperature")[0].value, String(c.temperature));
  }
});

test("the softmax explorer's panels are each at most 424 units wide: they show whole on a phone", () => {
  for (const { at, name } of SOFTMAX_REGIONS) assert.ok(at[2] <= PHONE_UNITS, `${name}: ${at[2]} units`);
});
