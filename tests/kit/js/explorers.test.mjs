// What the softmax, similarity and scaling explorers draw: every number in their SVG carries the
// value of the mirror (checked against attnlib) or of the table Python computed with attnlib.
import { test } from "node:test";
import assert from "node:assert/strict";
import { computeSoftmax, drawSoftmax, REGIONS as SOFTMAX_REGIONS } from "../../../attention_lessons/l05_softmax/softmax.js";
import { computeSimilarity, drawSimilarity, NARROW as SIMILARITY_NARROW } from "../../../attention_lessons/l01_embeddings/similarity.js";
import { drawScaling, NARROW as SCALING_NARROW, statisticsParts, WIDE as SCALING_WIDE } from "../../../attention_lessons/l04_scaling/scaling.js";
import { assertClose, entropyScale, fixtures } from "./fixtures.mjs";
import { PHONE_UNITS } from "./phone_layout.mjs";

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

test("the similarity explorer's numbers equal attnlib's; a zero vector leaves cosine and angle empty", () => {
  for (const c of fixtures.similarity) {
    const sim = computeSimilarity({ vectors: [c.a, c.b] });
    const state = { labels: ["v", "v"], vectors: [c.a, c.b], limits: [-1.8, 1.8] };
    const numbers = numbersIn(drawSimilarity(state, sim, fixtures.themes.dark));
    assertClose(Number(pick(numbers, "dot")[0].value), c.expected.dot, "dot");
    assertClose(Number(pick(numbers, "norm_a")[0].value), c.expected.normA, "norm_a");
    if (c.expected.cosine === null) {
      assert.equal(pick(numbers, "cosine")[0].value, "");
      assert.equal(pick(numbers, "angle_degrees")[0].value, "");
    } else {
      assertClose(Number(pick(numbers, "cosine")[0].value), c.expected.cosine, "cosine");
      assertClose(Number(pick(numbers, "angle_degrees")[0].value), c.expected.angleDegrees, "angle");
    }
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

test("the softmax explorer's panels are each at most 424 units wide: they show whole on a phone", () => {
  for (const { at, name } of SOFTMAX_REGIONS) assert.ok(at[2] <= PHONE_UNITS, `${name}: ${at[2]} units`);
});

test("the similarity explorer's narrow drawing fits a phone and shows the wide one's numbers, shown alike", () => {
  const { width, box, numbers, norms } = SIMILARITY_NARROW;
  assert.ok(width <= PHONE_UNITS - 10, `${width} units, with room for the labels`);
  assert.ok(box.x >= 50 && box.x + box.width <= width - 12, "the plot and its tick labels inside the width");
  assert.ok(numbers[0] + 190 < norms[0][0] - 40, "the lengths right of the box of numbers");
  for (const c of fixtures.similarity) {
    const state = { labels: ["a", "b"], vectors: [c.a, c.b], limits: [-1.8, 1.8] };
    const sim = computeSimilarity(state);
    const narrow = drawSimilarity(state, sim, fixtures.themes.light, true);
    assert.deepEqual(numbersIn(narrow), numbersIn(drawSimilarity(state, sim, fixtures.themes.light)));
    assert.ok(narrow.includes(`width="${width}" height="${SIMILARITY_NARROW.height}"`), "the background fills the narrow viewBox");
  }
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
