// What lesson 01's similarity explorer (attention_lessons/l01_embeddings/similarity.js) computes and
// draws: the mirror's dot product, lengths, cosine and angle against Python's, and every number in its SVG.
import { test } from "node:test";
import assert from "node:assert/strict";
import { similarity } from "../../../attention_lessons/kit/widgets/js/mirror.js";
import { computeSimilarity, drawSimilarity, NARROW as SIMILARITY_NARROW } from "../../../attention_lessons/l01_embeddings/similarity.js";
import { assertClose, fixtures } from "../../kit/js/fixtures.mjs";
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

test("dot product, lengths, cosine and angle equal attention_lessons.l01_embeddings.similarity (a zero vector: undefined)", () => {
  fixtures.similarity.forEach((c, k) => {
    const s = similarity(c.a, c.b);
    const e = c.expected;
    assertClose([s.dot, s.normA, s.normB], [e.dot, e.normA, e.normB], `similarity ${k}`);
    if (e.cosine === null) {
      assert.equal(s.cosine, null);
      assert.equal(s.angleDegrees, null);
    } else {
      assertClose(s.cosine, e.cosine, `similarity ${k} cosine`);
      assertClose(s.angleDegrees, e.angleDegrees, `similarity ${k} angle`);
    }
  });
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
