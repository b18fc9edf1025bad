// The online softmax explorer (lesson 12) draws the states Python computed with attnlib.efficient.
// Run by tests/course/test_online_softmax_explorer.py, which writes the states to ATTNLIB_ONLINE_SOFTMAX.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { drawOnlineSoftmax, stateAfter } from "../../../course/l12_attention_at_scale/online_softmax.js";

const path = process.env.ATTNLIB_ONLINE_SOFTMAX;

function numbersIn(svg) {
  const found = [];
  for (const [, attrs] of svg.matchAll(/<(?:text|rect)([^>]*data-quantity[^>]*)>/g)) {
    const get = (name) => attrs.match(new RegExp(` ${name}="([^"]*)"`))?.[1];
    found.push({ quantity: get("data-quantity"), col: get("data-col"), value: get("data-value") });
  }
  return found;
}

test("every slider position shows attnlib's state after that many blocks", { skip: !path && "run through pytest" }, () => {
  const fixture = JSON.parse(readFileSync(path, "utf-8"));
  const theme = fixture.themes.light;
  for (const [blockSize, table] of Object.entries(fixture.tables)) {
    table.forEach((expected, index) => {
      const blocksRead = index + 1;
      const { state, previous } = stateAfter(fixture.tables, Number(blockSize), blocksRead);
      assert.deepEqual(state, expected);
      assert.equal(previous, index > 0 ? table[index - 1] : null);
      const svg = drawOnlineSoftmax({ ...fixture, blockSize: Number(blockSize), blocksRead }, theme);
      const numbers = numbersIn(svg);
      const one = (q) => numbers.filter((x) => x.quantity === q);
      assert.equal(one("maximum")[0].value, String(expected.maximum));
      assert.equal(one("total")[0].value, String(expected.total));
      assert.equal(one("rescale")[0].value, String(expected.rescale));
      assert.deepEqual(one("output").map((x) => x.value), expected.output.map(String));
      assert.deepEqual(one("exact_output").map((x) => x.value), fixture.exactOutput.map(String));
      assert.equal(one("scores").length, fixture.scores.length);
      // the running maximum in the palette's colour (Python's theme), the raw-score colour nowhere
      assert.match(svg, new RegExp(`<line[^>]*stroke="${theme.runningMaximum}"[^>]*data-mark="running-maximum"`));
      assert.ok(!svg.includes(theme.raw), "the explorer draws something in the raw-score colour");
    });
  }
  assert.throws(() => stateAfter(fixture.tables, 3, 1), /blocks of 3/);
  assert.throws(() => stateAfter(fixture.tables, 4, 0), /from 1 to/);
});
