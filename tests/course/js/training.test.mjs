// The training replay of lesson 11 draws, at every saved step, exactly what Python computed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { drawTraining, logDecades, replayRow } from "../../../course/l11_learning_to_attend/training.js";
import { fixtures } from "./fixtures.mjs";

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
