// The mirror of attnlib's arithmetic (attention_lessons/kit/widgets/js/mirror.js) against attnlib itself.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  attentionSteps,
  causalMask,
  defaultScale,
  entropy,
  rawScores,
  scaleScores,
  similarity,
  softmax,
  softmaxRow,
} from "../../../attention_lessons/kit/widgets/js/mirror.js";
import { assertClose, entropyScale, fixtures, withInfinity } from "./fixtures.mjs";

test("attention steps equal attnlib.attention_steps (causal, masked, fully masked rows, extremes)", () => {
  assert.ok(fixtures.attention.length >= 20);
  fixtures.attention.forEach((c, k) => {
    const steps = attentionSteps(c.Q, c.K, c.V, {
      scale: c.scale ?? undefined,
      causal: c.causal,
      mask: c.mask ?? undefined,
    });
    const e = c.expected;
    assertClose(steps.rawScores, e.rawScores, `case ${k} raw scores`);
    assertClose(steps.scale, e.scale, `case ${k} scale`);
    assertClose(steps.scaledScores, e.scaledScores, `case ${k} scaled scores`);
    assertClose(steps.maskedScores, withInfinity(e.maskedScores), `case ${k} masked scores`);
    assertClose(steps.weights, e.weights, `case ${k} weights`);
    assertClose(steps.output, e.output, `case ${k} output`);
    assertClose(steps.weights.map(entropy), e.entropy, `case ${k} entropy`, entropyScale(c.K.length));
  });
});

test("a fully masked row gives zero weights and a zero output", () => {
  const masked = fixtures.attention.filter((c) => c.mask);
  assert.ok(masked.length > 0);
  for (const c of masked) {
    const steps = attentionSteps(c.Q, c.K, c.V, { mask: c.mask });
    assert.ok(steps.weights[0].every((w) => w === 0));
    assert.ok(steps.output[0].every((v) => v === 0));
  }
  assert.deepEqual(softmaxRow([-Infinity, -Infinity]), [0, 0]);
});

test("the causal mask equals attnlib.causal_mask", () => {
  for (const c of fixtures.causalMask) assert.deepEqual(causalMask(c.n_q, c.n_k), c.expected);
});

test("the playground's steps (Q = X W_q, K = X W_k, V = X W_v, scale 1/√d_k) equal attnlib's", async () => {
  const { computePlayground } = await import("../../../attention_lessons/l07_whole_picture/playground.js");
  for (const [k, c] of fixtures.playground.entries()) {
    const steps = computePlayground(c);
    assertClose(steps.rawScores, c.expected.rawScores, `playground ${k} raw scores`);
    assertClose(steps.scale, c.expected.scale, `playground ${k} scale`);
    assertClose(steps.weights, c.expected.weights, `playground ${k} weights`);
    assertClose(steps.output, c.expected.output, `playground ${k} output`);
  }
});

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
