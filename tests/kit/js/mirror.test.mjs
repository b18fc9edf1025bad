// The mirror of attnlib's arithmetic (attention_lessons/kit/widgets/js/mirror.js) against attnlib itself.
// The parts one lesson's explorer uses on that lesson's cases are checked in its folder of tests:
// similarity (l01), scores and entropies for every d_k (l04), softmax over a temperature (l05), the
// playground's steps (l07).
import { test } from "node:test";
import assert from "node:assert/strict";
import { attentionSteps, causalMask, entropy, softmaxRow } from "../../../attention_lessons/kit/widgets/js/mirror.js";
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
