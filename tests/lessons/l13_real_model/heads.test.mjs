// The head explorer's module (attention_lessons/l13_real_model/heads.js) on a causal model's weights, as
// lesson 16's answer explorer ships them: rows without the masked keys, the sink marked.
import { test } from "node:test";
import assert from "node:assert/strict";
import { NARROW, clipped, drawHeads, headWeights, linesOf, narrowCell, shownTokens, sinkSentence, sinkWeight } from "../../../attention_lessons/l13_real_model/heads.js";

const THEME = { background: "#ffffff", text: "#222222", tick: "#444444", edge: "#333333", annotationDark: "#111111", annotationLight: "#eeeeee" };
const COLORMAPS = { viridis: ["#440154", "#21918c", "#fde725"] };
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

// A sentence of 12 tokens (lesson 13's longest; "because" longer than a heatmap's label), every weight
// shown; and a prompt of 32 (lesson 16's most) in the chat template's tokens, causal, the sink marked.
const TWELVE = ["[CLS]", "the", "cat", "sat", "on", "the", "mat", "because", "it", "was", "tired", "[SEP]"];
const SOFT = TWELVE.map((_, i) => TWELVE.map((__, j) => (i === j ? 0.45 : 0.05)));
const CHAT = ["<|im_start|>", "system", "\\n", "Be", " brief", ".", "<|im_end|>", ...Array.from({ length: 25 }, (_, k) => `token${k}`)];
const RAGGED = CHAT.map((_, i) => Array.from({ length: i + 1 }, (__, j) => (j === 0 ? 60 : Math.round(40 / i))));
const FIXTURES = [
  { sentences: [{ text: "s", tokens: TWELVE, attentions: [[SOFT]] }], sentence: 0, layer: 0, head: 0, modelName: "all-MiniLM-L6-v2" },
  { sentences: [{ text: "p", tokens: CHAT, scale: 100, attentions: [[RAGGED]] }], sentence: 0, layer: 0, head: 0, modelName: "SmolLM2-135M-Instruct", markSink: true },
];

/** Markup's text as read: escapeXml's character references undone. */
function unescaped(markup) {
  return markup.replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code)));
}

/** The numbers a drawing carries, as the tables read them: each one's attributes and shown text, in order. */
function numbersOf(markup) {
  const found = /<(text|line)([^>]*data-quantity="[^"]*"[^>]*)>(.*?)<\/\1>/g;
  return [...markup.matchAll(found)].map((m) => {
    const attrs = Object.fromEntries([...m[2].matchAll(/(data-[a-z-]+)="([^"]*)"/g)].map((a) => [a[1], a[2]]));
    return { ...attrs, shown: m[1] === "text" ? m[3].replace(/<[^>]*>/g, "") : undefined };
  });
}

test("a phone's drawing carries every number the desktop's does, shown the same, in the same order", () => {
  for (const state of FIXTURES) {
    for (const view of ["lines", "heatmap"]) {
      const wide = drawHeads({ ...state, view }, THEME, COLORMAPS);
      const narrow = drawHeads({ ...state, view }, THEME, COLORMAPS, true);
      const numbers = numbersOf(wide.markup);
      assert.ok(numbers.length > TWELVE.length, `${view}: the wide drawing's numbers are found`);
      assert.deepEqual(numbersOf(narrow.markup), numbers, `${state.modelName}, ${view}`);
      assert.equal(wide.width, 760);
      assert.equal(narrow.width, NARROW.width);
    }
  }
});

test("the phone's drawing keeps within its width: labels cut short, the heatmap's cells sized to it", () => {
  assert.ok(NARROW.width <= 400); // a panel of ≤ 406 units shows whole in 374 px, its texts at 11 px
  for (const state of FIXTURES) {
    for (const view of ["lines", "heatmap"]) {
      const { markup } = drawHeads({ ...state, view }, THEME, COLORMAPS, true);
      // every element's x (lines' ends, texts' anchors, cells) within the picture
      for (const m of markup.matchAll(/ (?:x|x1|x2)="([^"]+)"/g)) {
        assert.ok(Number(m[1]) >= 0 && Number(m[1]) <= NARROW.width, `${view}: x = ${m[1]}`);
      }
      for (const m of markup.matchAll(/ width="([^"]+)"/g)) assert.ok(Number(m[1]) <= NARROW.width);
      // each token's label cut short: 10 characters in the lines, 5 before and below the heatmap
      const most = view === "lines" ? 10 : 5;
      const plain = [...markup.matchAll(/<text(?![^>]*data-quantity)[^>]*>([^<]*)<\/text>/g)].map((m) => unescaped(m[1]));
      const tokens = state.sentences[0].tokens;
      const names = state.markSink ? ["sink", ...tokens.slice(1)] : tokens;
      for (const name of names) assert.ok(plain.includes(clipped(name, most)), `${view}: ${name}`);
      for (const name of names) if (Array.from(name).length > most) assert.ok(!plain.includes(name), `${view}: ${name} whole`);
    }
  }
  // 12 tokens: each cell holds its "0.00" (27 units at 12 px); the grid ends at the picture's edge
  assert.ok(narrowCell(12) >= 29, String(narrowCell(12)));
  assert.ok(50 + 12 * narrowCell(12) <= NARROW.width);
  assert.equal(narrowCell(3), 34); // few tokens: cells as on a desktop
  // 32 tokens: the grid takes the picture's width, its cells narrower than their numbers, which it
  // does not show (their values stay for the tables); 12 tokens: every number shown
  assert.equal(50 + 32 * narrowCell(32), NARROW.width);
  const weightTexts = (state) => [...drawHeads({ ...state, view: "heatmap" }, THEME, COLORMAPS, true).markup.matchAll(/<text[^>]*data-quantity="weight"[^>]*>/g)].map((m) => m[0]);
  for (const [state, n] of FIXTURES.map((state) => [state, state.sentences[0].tokens.length])) {
    const numbers = weightTexts(state);
    assert.equal(numbers.length, n * n);
    assert.ok(numbers.every((tag) => tag.includes('display="none"') === (n === 32)), `${n} tokens`);
  }
});

test("labels are cut with an ellipsis; the sentences below come in lines on a phone, joined on a desktop", () => {
  assert.equal(clipped("because", 6), "becau\u2026");
  assert.equal(clipped("<|im_start|>", 10), "<|im_star\u2026");
  assert.equal(clipped("tired", 6), "tired");
  assert.equal(clipped("\u{1F600}\u{1F600}ab", 3), "\u{1F600}\u{1F600}\u2026"); // characters, not UTF-16 halves
  const pieces = sinkSentence("<s>", 4, 0.625);
  assert.deepEqual(linesOf(pieces, false), ["weight on the sink (the first token, <s>), mean over queries 1 to 3: 0.63"]);
  assert.deepEqual(linesOf(pieces, true), pieces);
  // on a phone the sink's number is one text in two lines (tspans): the tables read the same sentence
  const state = { ...FIXTURES[1], view: "lines" };
  const narrow = drawHeads(state, THEME, COLORMAPS, true).markup;
  const sink = narrow.match(/<text[^>]*data-quantity="sink_weight"[^>]*>(.*?)<\/text>/)[1];
  assert.equal((sink.match(/<tspan/g) ?? []).length, 2);
  assert.match(sink.replace(/<[^>]*>/g, ""), /^weight on the sink \(the first token, &#60;\|im_start\|&#62;\), mean over queries 1 to 31: 0\.\d\d$/);
});
