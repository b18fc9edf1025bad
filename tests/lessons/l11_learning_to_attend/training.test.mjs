// The training replay of lesson 11 draws, at every saved step, exactly what Python computed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { drawTraining, logDecades, replayRow, trainingLayout, WIDEST_PANEL } from "../../../attention_lessons/l11_learning_to_attend/training.js";
import { fixtures } from "../../kit/js/fixtures.mjs";
import { PHONE_UNITS, textsBeyond } from "../../kit/js/phone_layout.mjs";

function numbersIn(svg) {
  const found = [];
  for (const [, attrs] of svg.matchAll(/<text([^>]*data-quantity[^>]*)>/g)) {
    const get = (name) => attrs.match(new RegExp(` ${name}="([^"]*)"`))?.[1];
    found.push({ quantity: get("data-quantity"), row: get("data-row"), col: get("data-col"), value: get("data-value") });
  }
  return found;
}

test("every saved step shows its loss, its weights and the previous-token weight as Python computed them", () => {
  const { table, losses, tokens } = fixtures.trainingReplay;
  assert.deepEqual(table.map((r) => r.step), [0, 10, 20, 30]);
  for (const r of table) {
    const svg = drawTraining({ table, losses, tokens, step: r.step }, fixtures.themes.dark, fixtures.colormaps);
    const numbers = numbersIn(svg);
    const weights = numbers.filter((x) => x.quantity === "weights");
    assert.equal(weights.length, tokens.length * tokens.length);
    weights.forEach((x) => assert.equal(x.value, String(r.weights[Number(x.row)][Number(x.col)])));
    assert.equal(numbers.find((x) => x.quantity === "loss").value, String(r.loss));
    assert.equal(numbers.find((x) => x.quantity === "previous").value, String(r.previous));
    assert.equal(r.loss, losses[r.step]);
    assert.ok(svg.includes(`Weights at step ${r.step}`));
  }
  assert.throws(() => replayRow(table, 5), /step 5 was not saved/);
});

test("the loss axis covers every loss in whole decades", () => {
  assert.deepEqual(logDecades([2.1, 0.5, 0.0012]), [-3, 1]);
  assert.deepEqual(logDecades([1, 0.1]), [-1, 0]);
});

test("the keys the causal mask hides are hatched, one hatch per hidden cell, the others not", () => {
  const { table, losses, tokens } = fixtures.trainingReplay;
  const svg = drawTraining({ table, losses, tokens, step: table[0].step }, fixtures.themes.light, fixtures.colormaps);
  const hidden = (tokens.length * (tokens.length - 1)) / 2; // above the diagonal
  assert.equal(svg.match(/data-hatch=""/g)?.length ?? 0, hidden);
});

test("on a phone the replay draws narrow: each panel whole in 424 units, every number of the wide drawing", () => {
  const { table, losses, tokens } = fixtures.trainingReplay;
  const narrow = trainingLayout(true);
  const wide = trainingLayout(false);
  assert.ok(WIDEST_PANEL > PHONE_UNITS, "the wide drawing would not show whole on a phone");
  assert.equal(WIDEST_PANEL, Math.max(...wide.regions.map((r) => r.at[2])));
  assert.deepEqual(narrow.regions.map((r) => r.name), wide.regions.map((r) => r.name));
  for (const { at } of narrow.regions) {
    assert.ok(at[2] <= PHONE_UNITS, `a narrow panel is ${at[2]} units wide`);
    assert.ok(at[1] + at[3] <= narrow.height && at[0] + at[2] <= narrow.width);
  }
  for (const r of table) {
    for (const style of ["light", "dark"]) {
      const state = { table, losses, tokens, step: r.step };
      const svg = drawTraining(state, fixtures.themes[style], fixtures.colormaps, true);
      assert.deepEqual(numbersIn(svg), numbersIn(drawTraining(state, fixtures.themes[style], fixtures.colormaps)), `step ${r.step}`);
      assert.deepEqual(textsBeyond(svg, narrow.regions.map((x) => x.at)), [], `step ${r.step}`);
      assert.equal(svg.match(/data-hatch=""/g)?.length, (tokens.length * (tokens.length - 1)) / 2);
    }
  }
});
