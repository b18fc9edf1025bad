// The online softmax explorer (lesson 12) draws the states Python computed with attnlib.efficient.
// Run by test_l12_online_softmax_explorer.py (this folder), which writes the states to ATTNLIB_ONLINE_SOFTMAX.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { drawOnlineSoftmax, NARROW, stateAfter, WIDE } from "../../../attention_lessons/l12_attention_at_scale/online_softmax.js";

const path = process.env.ATTNLIB_ONLINE_SOFTMAX;

function numbersIn(svg) {
  const found = [];
  for (const [, attrs] of svg.matchAll(/<(?:text|rect)([^>]*data-quantity[^>]*)>/g)) {
    const get = (name) => attrs.match(new RegExp(` ${name}="([^"]*)"`))?.[1];
    found.push({ quantity: get("data-quantity"), col: get("data-col"), value: get("data-value") });
  }
  return found;
}

// DejaVu Sans Mono's advance: every character of the monospaced texts is 0.602 of its font size wide
const MONO_ADVANCE = 0.602;

/** The monospaced texts of `svg`: each one's baseline y and its left and right ends, by its anchor. */
function monoTexts(svg) {
  const found = [];
  for (const [, attrs, content] of svg.matchAll(/<text([^>]*font-family="DejaVu Sans Mono[^>]*)>([^<]*)<\/text>/g)) {
    const get = (name) => attrs.match(new RegExp(` ${name}="([^"]*)"`))?.[1];
    const label = content.replace(/&(amp|lt|gt|quot|#39);/g, "_");
    const width = label.length * Number(get("font-size")) * MONO_ADVANCE;
    const x = Number(get("x"));
    const left = get("text-anchor") === "end" ? x - width : x;
    found.push({ label, y: Number(get("y")), left, right: left + width });
  }
  return found;
}

/**
 * Checks that `layout`'s regions lie in its viewBox, none wider than `widest`, and that each
 * monospaced text of `svg` (the running numbers and their labels) lies in the region holding its
 * start, clear of the other texts on its line.
 */
function assertLaidOut(layout, svg, widest) {
  const regions = layout.regions.map((r) => r.at);
  for (const [x, y, w, h] of regions) {
    assert.ok(w <= widest, `a region ${w} units wide`);
    assert.ok(x >= 0 && y >= 0 && x + w <= layout.width && y + h <= layout.height, `region ${[x, y, w, h]} outside the viewBox`);
  }
  const texts = monoTexts(svg);
  assert.ok(texts.length >= 14, `${texts.length} monospaced texts`);
  for (const t of texts) {
    const region = regions.find(([x, y, w, h]) => t.left >= x && t.left < x + w && t.y > y && t.y <= y + h);
    assert.ok(region, `"${t.label}" starts in no region`);
    assert.ok(t.right <= region[0] + region[2], `"${t.label}" runs past its panel's edge`);
    for (const o of texts) {
      if (o === t || o.y !== t.y || o.right <= t.left || o.left >= t.right) continue;
      assert.fail(`"${t.label}" and "${o.label}" overlap`);
    }
  }
}

// One test (the pytest that runs this file wants one pass): the wide drawing and the narrow one.
test("every slider position shows attnlib's state after that many blocks, wide and narrow", { skip: !path && "run through pytest" }, () => {
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
      // a phone's drawing: every number of the desktop's, its panels whole on a 390 px screen
      const narrow = drawOnlineSoftmax({ ...fixture, blockSize: Number(blockSize), blocksRead }, theme, NARROW);
      assert.deepEqual(numbersIn(narrow), numbers);
      assert.match(narrow, new RegExp(`<line[^>]*stroke="${theme.runningMaximum}"[^>]*data-mark="running-maximum"`));
      assert.ok(!narrow.includes(theme.raw), "the narrow drawing draws something in the raw-score colour");
      assertLaidOut(WIDE, svg, WIDE.width);
      assertLaidOut(NARROW, narrow, 390);
    });
  }
  assert.throws(() => stateAfter(fixture.tables, 3, 1), /blocks of 3/);
  assert.throws(() => stateAfter(fixture.tables, 4, 0), /from 1 to/);
});
