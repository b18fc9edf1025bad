// What lesson 04's scaling explorer (attention_lessons/l04_scaling/scaling.js) computes and draws:
// the mirror's scores, weights and entropies for d_k from 1 to 1024 against attnlib, every number
// in its SVG equal to the table Python computed with attnlib, and its axis labels.
import { test } from "node:test";
import assert from "node:assert/strict";
import { defaultScale, entropy, rawScores, scaleScores, softmax } from "../../../attention_lessons/kit/widgets/js/mirror.js";
import { drawScaling, NARROW as SCALING_NARROW, powerOfTwoLabel, statisticsParts, WIDE as SCALING_WIDE } from "../../../attention_lessons/l04_scaling/scaling.js";
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

/** The x of every <text> in an SVG string and its anchor: {x, anchor}. */
function textAnchors(svg) {
  return [...svg.matchAll(/<text([^>]*)>/g)].map(([, attrs]) => ({
    x: Number(attrs.match(/ x="([^"]*)"/)[1]),
    anchor: attrs.match(/ text-anchor="([^"]*)"/)?.[1] ?? "start",
  }));
}

const pick = (numbers, quantity) => numbers.filter((x) => x.quantity === quantity);

test("random queries and keys with d_k from 1 to 1024: scores, weights and entropies equal attnlib's", () => {
  const dims = fixtures.scaling.map((c) => c.d_k);
  assert.equal(Math.min(...dims), 1);
  assert.equal(Math.max(...dims), 1024);
  for (const c of fixtures.scaling) {
    const raw = rawScores(c.Q, c.K);
    const scaled = scaleScores(raw, defaultScale(c.d_k));
    const e = c.expected;
    assertClose(raw, e.rawScores, `d_k ${c.d_k} raw scores`);
    assertClose(scaled, e.scaledScores, `d_k ${c.d_k} scaled scores`);
    assertClose(softmax(raw), e.rawWeights, `d_k ${c.d_k} raw weights`);
    assertClose(softmax(scaled), e.scaledWeights, `d_k ${c.d_k} scaled weights`);
    assertClose(softmax(raw).map(entropy), e.rawEntropy, `d_k ${c.d_k} raw entropy`, entropyScale(c.K.length));
    assertClose(softmax(scaled).map(entropy), e.scaledEntropy, `d_k ${c.d_k} scaled entropy`, entropyScale(c.K.length));
  }
});

test("the scaling explorer shows, for every d_k, exactly the statistics Python computed", () => {
  const { table, n_queries: nQueries, n_keys: nKeys, seed } = fixtures.scalingTable;
  assert.equal(table.length, 20);
  for (const row of table) {
    const svg = drawScaling({ table, dK: row.d_k, nQueries, nKeys, seed }, fixtures.themes.light);
    const numbers = numbersIn(svg);
    for (const name of ["raw_variance", "scaled_variance", "raw_max_weight", "scaled_max_weight", "raw_entropy", "scaled_entropy"]) {
      assert.equal(pick(numbers, name).length, 1, name);
      assert.equal(pick(numbers, name)[0].value, String(row[name]), `${name} at d_k ${row.d_k}`);
    }
    for (const name of ["raw_weights", "scaled_weights"]) {
      const bars = pick(numbers, name);
      assert.equal(bars.length, nKeys);
      bars.forEach((x) => assert.equal(x.value, String(row[name][x.col])));
    }
    assert.ok(svg.includes(`All ${nQueries * nKeys} scores at d_k = ${row.d_k}`));
    assert.equal(row.raw_counts.reduce((a, b) => a + b, 0), nQueries * nKeys);
  }
  assert.throws(() => drawScaling({ table, dK: 5, nQueries, nKeys, seed }, fixtures.themes.light), /d_k = 5/);
});

test("the scaling explorer's narrow drawing: panels at most 424 units wide, the wide one's numbers, shown alike", () => {
  assert.deepEqual(SCALING_NARROW.regions.slice(0, 3), SCALING_WIDE.regions.slice(0, 3), "the three plots as wide");
  for (const { at, name } of SCALING_NARROW.regions) assert.ok(at[2] <= PHONE_UNITS, `${name}: ${at[2]} units`);
  const { table, n_queries: nQueries, n_keys: nKeys, seed } = fixtures.scalingTable;
  const [x, y, w, h] = SCALING_NARROW.regions[3].at;
  for (const row of table) {
    const state = { table, dK: row.d_k, nQueries, nKeys, seed };
    const narrow = drawScaling(state, fixtures.themes.light, true);
    assert.deepEqual(numbersIn(narrow), numbersIn(drawScaling(state, fixtures.themes.light)), `d_k = ${row.d_k}`);
    const statistics = statisticsParts(state, row, fixtures.themes.light, true).join("");
    for (const t of textAnchors(statistics)) {
      assert.ok(t.x >= x && (t.anchor === "end" ? t.x <= x + w - 5 : t.x <= x + w / 2), `a text at x = ${t.x} (${t.anchor})`);
    }
    for (const [, ty] of statistics.matchAll(/<text[^>]* y="([^"]*)"/g)) assert.ok(Number(ty) > y + 12 && Number(ty) < y + h - 4, `a text at y = ${ty}`);
  }
});

test("the variance axis writes powers of two with superscript digits (no smaller text)", () => {
  assert.equal(powerOfTwoLabel(4), "2\u2074");
  assert.equal(powerOfTwoLabel(-2), "2\u207b\u00b2");
  assert.equal(powerOfTwoLabel(10), "2\u00b9\u2070");
});
