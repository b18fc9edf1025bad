// The training replay of lesson 14 draws, at every saved step and head, exactly what Python
// computed; future keys are drawn masked (hatched, "masked"), never as a weight of 0.
import { test } from "node:test";
import assert from "node:assert/strict";
import { describeNumber, drawInduction, inductionParts, inductionRegions, labelledPositions, lossAt, pictureWidth } from "../../../attention_lessons/l14_induction_heads/induction_replay.js";
import { announcement } from "../../../attention_lessons/kit/widgets/js/a11y.js";
import { markupOf } from "../../../attention_lessons/kit/widgets/js/controls.js";
import { fixtures, numbersIn } from "../../kit/js/fixtures.mjs";

const replay = fixtures.inductionReplay;
const stateAt = (step, heads) => ({
  table: replay.table,
  tokens: replay.tokens,
  repeatStart: replay.repeat_start,
  lossSteps: replay.loss_steps,
  lossFirst: replay.loss_first,
  lossSecond: replay.loss_second,
  chance: replay.chance,
  heads,
  step,
});

test("every step and head shows its weights, scores and losses as Python computed them", () => {
  assert.deepEqual(replay.table.map((r) => r.step), [0, 5, 10]);
  for (const r of replay.table) {
    for (const heads of [[0, 0], [1, 2], [2, 1]]) {
      for (const style of ["light", "dark"]) {
        const svg = drawInduction(stateAt(r.step, heads), fixtures.themes[style], fixtures.colormaps);
        const numbers = numbersIn(svg);
        heads.forEach((head, layer) => {
          const cells = numbers.filter((x) => x.quantity === `weights_layer_${layer}_head_${head}`);
          assert.equal(cells.length, 36);
          for (const x of cells) {
            const w = r.weights[layer][head][Number(x.row)][Number(x.col)];
            assert.equal(x.value, w === null ? "masked" : String(w));
            assert.equal(w === null, Number(x.col) > Number(x.row));
          }
          assert.equal(numbers.find((x) => x.quantity === `previous-token_score_layer_${layer}`).value, String(r.previous[layer][head]));
          assert.equal(numbers.find((x) => x.quantity === `induction_score_layer_${layer}`).value, String(r.induction[layer][head]));
        });
        const k = replay.loss_steps.indexOf(r.step);
        assert.equal(numbers.find((x) => x.quantity === "loss_first_half").value, String(replay.loss_first[k]));
        assert.equal(numbers.find((x) => x.quantity === "loss_repeated_half").value, String(replay.loss_second[k]));
        assert.equal((svg.match(/data-hatch/g) ?? []).length, 2 * 15); // 15 future keys in each 6 × 6 pattern
        assert.ok(svg.includes(`step ${r.step}`) && svg.includes(`Layer 1, head ${heads[1]}`));
        assert.ok(svg.includes(fixtures.themes[style].background));
      }
    }
  }
});

test("each panel shows whole on a phone: at most 424 units wide, within the picture, none overlapping", () => {
  // 424 units: a 390 px phone shows a panel whole with its 12-unit text at 11 px (controls.js)
  for (const nLayers of [1, 2, 3]) {
    const regions = inductionRegions(nLayers).map((r) => r.at);
    assert.equal(regions.length, nLayers + 1);
    regions.forEach(([x, , w], k) => {
      assert.ok(w <= 424, `panel ${k} is ${w} units wide`);
      assert.ok(x >= 0 && x + w <= pictureWidth(nLayers));
      if (k > 0) assert.ok(x >= regions[k - 1][0] + regions[k - 1][2], `panel ${k} overlaps panel ${k - 1}`);
    });
  }
});

test("a step, a head or a loss not saved is named", () => {
  assert.throws(() => drawInduction(stateAt(3, [0, 0]), fixtures.themes.light, fixtures.colormaps), /step 3 was not saved/);
  assert.throws(() => drawInduction(stateAt(5, [0, 3]), fixtures.themes.light, fixtures.colormaps), /layer 1 has no head 3/);
  assert.throws(() => lossAt([0, 1], [2, 1], 5), /no loss measured at step 5/);
});

test("positions are labelled sparsely enough not to overlap, and the picture widens per layer", () => {
  assert.deepEqual(labelledPositions(6, 35), [0, 1, 2, 3, 4, 5]);
  assert.deepEqual(labelledPositions(20, 10.5), [0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
  assert.equal(pictureWidth(2) - pictureWidth(1), pictureWidth(3) - pictureWidth(2));
});

/** The elements of some markup as stand-ins for DOM nodes: their attributes, get and set. */
function fakeNodes(markup) {
  return [...markup.matchAll(/<(\w+)((?:\s[\w:-]+="[^"]*")*)>/g)].map(([, name, attrs]) => {
    const map = new Map([...attrs.matchAll(/([\w:-]+)="([^"]*)"/g)].map(([, k, v]) => [k, v]));
    return { name, map, getAttribute: (k) => map.get(k) ?? null, setAttribute: (k, v) => map.set(k, String(v)) };
  });
}

test("a move's update of the pattern cells gives the shown rects what the new markup draws", () => {
  const [first, ...others] = replay.table;
  for (const style of ["light", "dark"]) {
    const theme = fixtures.themes[style];
    const before = inductionParts(stateAt(first.step, [0, 0]), theme, fixtures.colormaps);
    for (const r of others) {
      for (const heads of [[0, 0], [1, 2]]) {
        const after = inductionParts(stateAt(r.step, heads), theme, fixtures.colormaps);
        const updatable = after.map((part, i) => [part, before[i]]).filter(([part]) => typeof part !== "string");
        assert.equal(updatable.length, 2); // one pattern per layer
        for (const [part, was] of updatable) {
          assert.equal(part.key, was.key); // the same cells: only their look and numbers change
          const shown = fakeNodes(markupOf(was));
          part.update(shown);
          const drawn = fakeNodes(part.markup());
          assert.equal(shown.length, drawn.length);
          shown.forEach((node, k) => assert.deepEqual(Object.fromEntries(node.map), Object.fromEntries(drawn[k].map)));
        }
      }
    }
  }
});

test("a move is heard as one plain sentence naming the head, the two positions and their tokens", () => {
  const cell = { quantity: "weights_layer_1_head_1", row: 15, col: 3, rowLabel: "15:5", colLabel: "3:10" };
  assert.equal(describeNumber(cell), "the weight that position 15 (token 5) gives position 3 (token 10) in layer 1, head 1");
  const before = [{ ...cell, value: "0.66", shown: undefined }, { quantity: "induction_score_layer_1", value: "0.7", shown: "0.700" }];
  const after = [{ ...cell, value: "0.012", shown: undefined }, { quantity: "induction_score_layer_1", value: "0.71", shown: "0.710" }];
  assert.equal(
    announcement(before, after, describeNumber),
    "The weight that position 15 (token 5) gives position 3 (token 10) in layer 1, head 1 fell from 0.660 to 0.012, and 1 other number changed.",
  );
  assert.equal(describeNumber({ quantity: "previous-token_score_layer_0" }), "layer 0's previous-token score");
  assert.equal(describeNumber({ quantity: "loss_repeated_half" }), "the loss on the repeated half");
  // every number the explorer draws has a name in words, with no underscore left
  const drawn = numbersIn(drawInduction(stateAt(5, [1, 2]), fixtures.themes.light, fixtures.colormaps));
  const labelled = (n) => ({ ...n, rowLabel: n.row === undefined ? undefined : `${n.row}:a`, colLabel: n.col === undefined ? undefined : `${n.col}:b` });
  for (const n of drawn.map(labelled)) assert.doesNotMatch(describeNumber(n), /_|undefined/, n.quantity);
});
