// RoPE (attention_lessons/l10_positions/rotary.js) against attnlib.positions, and what the RoPE explorer draws.
import { test } from "node:test";
import assert from "node:assert/strict";
import { computeRope, rope, ropeFrequencies, ropeScore } from "../../../attention_lessons/l10_positions/rotary.js";
import { drawRope, formatScore, ropeLayout, scoreCurve, WIDEST_PANEL } from "../../../attention_lessons/l10_positions/rope.js";
import { assertClose, fixtures } from "../../kit/js/fixtures.mjs";
import { PHONE_UNITS, textsBeyond } from "../../kit/js/phone_layout.mjs";

/** Every <text data-quantity=...> of an SVG string: {quantity, col, value}. */
function numbersIn(svg) {
  const found = [];
  for (const [, attrs] of svg.matchAll(/<text([^>]*data-quantity[^>]*)>/g)) {
    const get = (name) => attrs.match(new RegExp(` ${name}="([^"]*)"`))?.[1];
    found.push({ quantity: get("data-quantity"), col: get("data-col") === undefined ? undefined : Number(get("data-col")), value: get("data-value") });
  }
  return found;
}

test("RoPE's frequencies, rotations and scores equal attnlib's, at positions up to ±2000", () => {
  assert.ok(fixtures.rope.length >= 10);
  for (const c of fixtures.rope) {
    const m = c.queryPosition + c.offset;
    const n = c.keyPosition + c.offset;
    const what = `d ${c.query.length}, base ${c.base}, m ${m}, n ${n}`;
    assertClose(ropeFrequencies(c.query.length, c.base), c.expected.frequencies, `${what} frequencies`);
    assertClose(rope(c.query, m, c.base), c.expected.rotatedQuery, `${what} rope(q, m)`);
    assertClose(rope(c.key, n, c.base), c.expected.rotatedKey, `${what} rope(k, n)`);
    assertClose(ropeScore(c.query, c.key, m, n, c.base), c.expected.score, `${what} score`, Math.hypot(...c.query) * Math.hypot(...c.key));
    const result = computeRope(c);
    assertClose(result.rotatedQuery, c.expected.rotatedQuery, `${what} computeRope query`);
    assertClose(result.score, c.expected.score, `${what} computeRope score`, Math.hypot(...c.query) * Math.hypot(...c.key));
  }
});

test("odd or empty widths are refused, as attnlib refuses them", () => {
  assert.throws(() => ropeFrequencies(3), /even/);
  assert.throws(() => ropeFrequencies(0), /even/);
});

test("the score depends on m − n only: the same for every offset", () => {
  const q = [0.3, -1.2, 0.7, 2.0];
  const k = [1.1, 0.4, -0.5, 0.9];
  const reference = ropeScore(q, k, 7, 3);
  for (const offset of [-500, -1, 0.5, 10, 1234]) {
    assert.ok(Math.abs(ropeScore(q, k, 7 + offset, 3 + offset) - reference) < 1e-9, `offset ${offset}`);
  }
});

test("the explorer's SVG shows the positions, the score and the rotated vectors with their full values", () => {
  const explorer = fixtures.rope.slice(-5); // the explorer's 2D query and key at slider positions
  assert.ok(explorer.every((c) => c.query.length === 2));
  for (const c of explorer) {
    const state = { ...c, limits: [-1.4, 1.4], maxPosition: 12 };
    const result = computeRope(state);
    const numbers = numbersIn(drawRope(state, result, fixtures.themes.light));
    const one = (quantity) => numbers.filter((x) => x.quantity === quantity);
    assert.equal(one("score").length, 1);
    assertClose(Number(one("score")[0].value), c.expected.score, "score in the SVG");
    assert.equal(one("m")[0].value, String(c.queryPosition + c.offset));
    assert.equal(one("n")[0].value, String(c.keyPosition + c.offset));
    assert.equal(one("distance")[0].value, String(c.queryPosition - c.keyPosition));
    for (const x of one("rotated_query")) assertClose(Number(x.value), c.expected.rotatedQuery[x.col], "rope(q, m) in the SVG");
    for (const x of one("rotated_key")) assertClose(Number(x.value), c.expected.rotatedKey[x.col], "rope(k, n) in the SVG");
    assert.equal(one("rotated_query").length + one("rotated_key").length, 4);
  }
});

test("the score curve passes through the current score, and scores print with a sign", () => {
  const q = [1, 0.2];
  const k = [0.6, 0.8];
  const curve = scoreCurve(q, k, 12, 25); // distances −12, −11, …, 12
  assert.equal(curve.length, 25);
  assert.equal(curve[12][0], 0);
  for (const [distance, score] of curve) {
    assert.ok(Math.abs(score - ropeScore(q, k, distance + 4, 4)) < 1e-12, `distance ${distance}`);
  }
  assert.equal(formatScore(-0.8481), "\u22120.848");
  assert.equal(formatScore(0.5), "+0.500");
  assert.equal(formatScore(-0.0001), "+0.000");
});

test("on a phone the explorer draws narrow: each panel whole in 424 units, every number of the wide drawing", () => {
  const narrow = ropeLayout(true);
  const wide = ropeLayout(false);
  assert.ok(WIDEST_PANEL > PHONE_UNITS, "the wide drawing would not show whole on a phone");
  assert.equal(WIDEST_PANEL, Math.max(...wide.regions.map((r) => r.at[2])));
  assert.deepEqual(narrow.regions.map((r) => r.name), wide.regions.map((r) => r.name));
  for (const { at } of narrow.regions) {
    assert.ok(at[2] <= PHONE_UNITS, `a narrow panel is ${at[2]} units wide`);
    assert.ok(at[1] + at[3] <= narrow.height && at[0] + at[2] <= narrow.width);
  }
  // the lesson's query and key, turned by every whole position and offset (labels "q at m = 24"
  // are the longest), limits as rope_limits sets them
  const query = [1, 0.2];
  const key = [0.6, 0.8];
  const radius = Math.max(Math.hypot(...query), Math.hypot(...key));
  for (let position = 0; position <= 12; position += 1) {
    for (const offset of [0, 6, 12]) {
      const state = { query, key, queryPosition: position, keyPosition: 12 - position, offset, limits: [-1.35 * radius, 1.35 * radius], maxPosition: 12 };
      const result = computeRope(state);
      const svg = drawRope(state, result, fixtures.themes.dark, true);
      assert.deepEqual(numbersIn(svg), numbersIn(drawRope(state, result, fixtures.themes.dark)), `position ${position}, offset ${offset}`);
      assert.deepEqual(textsBeyond(svg, narrow.regions.map((r) => r.at)), [], `position ${position}, offset ${offset}`);
    }
  }
});
