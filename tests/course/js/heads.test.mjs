// The head explorer's module (course/l13_real_model/heads.js) on a causal model's weights, as
// lesson 16's answer explorer ships them: rows without the masked keys, the sink marked.
import { test } from "node:test";
import assert from "node:assert/strict";
import { drawHeads, headWeights, shownTokens, sinkWeight } from "../../../course/l13_real_model/heads.js";

const THEME = { background: "#ffffff", text: "#222222", tick: "#444444" };
// 2 layers × 1 head over 3 tokens, row i holding keys 0 … i
const CAUSAL = [[[[1], [0.75, 0.25], [0.5, 0.125, 0.375]]], [[[1], [0.25, 0.75], [0.125, 0.125, 0.75]]]];
const SENTENCES = [{ text: "q", tokens: ["<s>", "a", "b"], attentions: CAUSAL }];

test("ragged causal rows are padded with the zeros the mask gave; square rows come back as they are", () => {
  assert.deepEqual(headWeights(SENTENCES, 0, 0, 0), [
    [1, 0, 0],
    [0.75, 0.25, 0],
    [0.5, 0.125, 0.375],
  ]);
  const scaled = [{ tokens: ["<s>", "a"], scale: 100, attentions: [[[[100], [75, 25]]]] }];
  assert.deepEqual(headWeights(scaled, 0, 0, 0), [[1, 0], [0.75, 0.25]]); // whole numbers of 1/scale
  const square = [[[[1, 0], [0.5, 0.5]]]];
  assert.equal(headWeights([{ tokens: ["a", "b"], attentions: square }], 0, 0, 0), square[0][0]);
  assert.throws(() => headWeights([{ tokens: ["a", "b"], attentions: [[[[], [1, 0]]]] }], 0, 0, 0), /row 0 of head 0 has 0 weights/);
  assert.throws(() => headWeights(SENTENCES, 0, 2, 0), /no layer 2/);
});

test("the sink's weight is the mean weight of the queries after the first on the first token", () => {
  assert.equal(sinkWeight(headWeights(SENTENCES, 0, 0, 0)), (0.75 + 0.5) / 2);
  assert.equal(sinkWeight(headWeights(SENTENCES, 0, 1, 0)), (0.25 + 0.125) / 2);
  assert.equal(sinkWeight([[1]]), null); // one token: no query after the first
  assert.deepEqual(shownTokens(["<s>", "a"], true), ["<s> (sink)", "a"]);
  assert.deepEqual(shownTokens(["<s>", "a"], false), ["<s>", "a"]);
});

test("a marked sink is labelled and its weight stated as a number the table and the announcement read", () => {
  const state = { sentences: SENTENCES, sentence: 0, layer: 0, head: 0, view: "lines", modelName: "m" };
  const marked = drawHeads({ ...state, markSink: true }, THEME, {}).markup;
  const stated = marked.match(/<text[^>]*data-quantity="sink_weight"[^>]*data-value="([^"]*)"[^>]*>([^<]*)</);
  assert.ok(stated, "the sink's weight is drawn as a number");
  assert.equal(Number(stated[1]), 0.625);
  assert.match(stated[2], /weight on the sink \(the first token, &#60;s&#62;\), mean over queries 1 to 2: 0\.63/);
  assert.ok(marked.includes("&#60;s&#62; (sink)"));
  // each query's largest weight names the sink short, so that it stays clear of the tokens
  const largest = [...marked.matchAll(/data-quantity="largest_weight"[^>]*>([^<]*)</g)].map((m) => m[1]);
  assert.deepEqual(largest, ["1.00 \u2192 sink", "0.75 \u2192 sink", "0.50 \u2192 sink"]);
  // the lines drawn are the padded weights: none to a key after its query
  const lines = [...marked.matchAll(/<line[^>]*data-row="(\d+)" data-col="(\d+)"/g)].map((m) => [Number(m[1]), Number(m[2])]);
  assert.deepEqual(lines, [[0, 0], [1, 0], [1, 1], [2, 0], [2, 1], [2, 2]]);
  // lesson 13's explorer marks nothing
  const plain = drawHeads(state, THEME, {}).markup;
  assert.ok(!plain.includes("sink"));
});
