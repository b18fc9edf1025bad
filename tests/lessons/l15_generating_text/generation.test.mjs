// The generation explorer of lesson 15 draws, at every step, prompt and cache setting, exactly
// what Python generated with attnlib.decoder: the weights over the cached positions, the cache's
// size, and each position as kept, a sink or evicted (by a letter and a hatch, not colour alone).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  cacheRoles,
  describeStep,
  firstDifference,
  drawGeneration,
  gridHeight,
  gridLayout,
  groupDigits,
  moveSentence,
  NARROW_WIDTH,
  pictureHeight,
  pictureShape,
  queryPosition,
  settingIndex,
  settingWords,
  shownChar,
  textLines,
  weightsOf,
} from "../../../attention_lessons/l15_generating_text/generation.js";
import { fixtures, numbersIn } from "../../kit/js/fixtures.mjs";

const g = fixtures.generation;
const stateOf = (run, step, setting, full) => ({
  run,
  full,
  step,
  setting,
  nLayers: g.n_layers,
  nHeads: g.n_heads,
  bytesPerPosition: g.bytes_per_position,
  decimals: g.decimals,
});

test("every step of every prompt and setting shows the weights and the cache Python computed", () => {
  assert.equal(g.runs.length, 2);
  for (const { settings } of g.runs) {
    settings.forEach((run, k) => {
      const setting = g.settings[k];
      for (let step = 1; step <= g.n_new; step += 1) {
        const style = step % 2 ? "light" : "dark";
        const svg = drawGeneration(stateOf(run, step, setting, settings[0]), fixtures.themes[style], fixtures.colormaps);
        const numbers = numbersIn(svg);
        const kept = run.kept[step - 1];
        for (let layer = 0; layer < g.n_layers; layer += 1) {
          const cells = numbers.filter((x) => x.quantity === `weights_layer_${layer}`);
          assert.equal(cells.length, g.n_heads * kept.length);
          for (const x of cells) {
            const k = kept.indexOf(Number(x.col));
            assert.ok(k >= 0, `position ${x.col} is not cached at step ${step}`);
            const code = run.weights[step - 1][layer][Number(x.row)].slice(2 * k, 2 * k + 2);
            assert.equal(x.value, String(Number.parseInt(code, 36) / 10 ** g.decimals));
          }
        }
        const one = (quantity) => numbers.filter((x) => x.quantity === quantity).map((x) => x.value);
        assert.deepEqual(one("cache_bytes"), [String(run.bytes[step - 1])]);
        assert.deepEqual(one("positions_cached"), [String(kept.length)]);
        assert.deepEqual(one("step"), [String(step)]);
        assert.deepEqual(one("bytes_per_position"), [String(g.bytes_per_position)]);
        assert.equal(run.bytes[step - 1], kept.length * g.bytes_per_position);
        // evicted positions: hatched in the character row and in every head's row, plus the legend's
        const evicted = cacheRoles(run, step, setting.sinks).filter((r) => r === "evicted").length;
        assert.equal((svg.match(/data-hatch/g) ?? []).length, evicted * (1 + g.n_layers * g.n_heads) + 1);
        assert.ok(svg.includes(fixtures.themes[style].background));
        const differs = firstDifference(run, settings[0]);
        assert.deepEqual(one("first_step_unlike_the_full_cache"), setting.window === null ? [] : [String(differs ?? "")]);
      }
    });
  }
});

test("each position's role: sinks and the window kept, the rest evicted, the next character marked", () => {
  const run = g.runs[1].settings[2]; // "a cat": BOS and 5 characters, a window of 5 with 2 sinks
  assert.equal(run.prompt_length, 6);
  assert.equal(queryPosition(run, 1), 5);
  const roles = cacheRoles(run, 4, 2); // the query at 8 sees 0, 1 (sinks) and 4 … 8 (the window)
  assert.deepEqual(run.kept[3], [0, 1, 4, 5, 6, 7, 8]);
  assert.deepEqual(roles.slice(0, 10), ["sink", "sink", "evicted", "evicted", "kept", "kept", "kept", "kept", "kept", "next"]);
  assert.ok(roles.slice(10).every((r) => r === null));
  const plain = g.runs[1].settings[1];
  assert.deepEqual(plain.kept[3], [4, 5, 6, 7, 8]);
  assert.deepEqual(cacheRoles(plain, 4, 0).slice(0, 4), ["evicted", "evicted", "evicted", "evicted"]);
  assert.ok(cacheRoles(g.runs[1].settings[0], 4, 0).slice(0, 9).every((r) => r === "kept"));
  assert.throws(() => queryPosition(run, 0), /step must be from 1 to 10, got 0/);
  assert.throws(() => queryPosition(run, 11), /step must be from 1 to 10, got 11/);
});

test("the first step a window writes unlike the full cache is found, or none", () => {
  const full = { tokens: ["\u25b8", "a", " ", "c", "a", "t", "s"], prompt_length: 3 };
  assert.equal(firstDifference(full, full), null);
  assert.equal(firstDifference({ ...full, tokens: ["\u25b8", "a", " ", "c", "u", "t", "s"] }, full), 2);
  assert.equal(firstDifference({ ...full, tokens: ["\u25b8", "a", " ", "b", "a", "t", "s"] }, full), 1);
  for (const { settings } of g.runs) {
    settings.forEach((run) => {
      const k = firstDifference(run, settings[0]);
      const written = (r) => r.tokens.slice(r.prompt_length);
      if (k === null) assert.deepEqual(written(run), written(settings[0]));
      else {
        assert.deepEqual(written(run).slice(0, k - 1), written(settings[0]).slice(0, k - 1));
        assert.notEqual(written(run)[k - 1], written(settings[0])[k - 1]);
      }
    });
  }
});

test("a setting is found by its window and sinks; sinks mean nothing without a window", () => {
  assert.equal(settingIndex(g.settings, null, 0), 0);
  assert.equal(settingIndex(g.settings, null, 2), 0);
  assert.equal(settingIndex(g.settings, 5, 0), 1);
  assert.equal(settingIndex(g.settings, 5, 2), 2);
  assert.throws(() => settingIndex(g.settings, 7, 0), /no precomputed setting has window 7 and 0 sinks/);
  assert.equal(settingWords(g.settings[0]), "the full cache");
  assert.equal(settingWords(g.settings[2]), "a window of 5 with 2 sinks");
  assert.equal(settingWords({ window: 5, sinks: 1 }), "a window of 5 with 1 sink");
});

test("a move is one sentence naming what changed, now and before", () => {
  const run = g.runs[0].settings[0]; // "the ": BOS and 4 characters
  const was = describeStep(run, 1, g.settings[0], "the ");
  const now = describeStep(run, 2, g.settings[0], "the ");
  const said = moveSentence(was, now);
  const q = queryPosition(run, 2);
  assert.ok(said.startsWith("Step 2 (was 1): the query "), said);
  assert.ok(said.includes(`at position ${q} reads ${q + 1} cached positions (${groupDigits(run.bytes[1])} bytes)`), said);
  assert.ok(said.endsWith(`writes "${shownChar(run.tokens[q + 1])}".`), said);
  const windowed = describeStep(g.runs[0].settings[2], 2, g.settings[2], "the ");
  assert.ok(moveSentence(now, windowed).startsWith("Cache a window of 5 with 2 sinks (was the full cache): "));
  assert.equal(moveSentence(now, now), `${now.reads[0].toUpperCase()}${now.reads.slice(1)}.`);
});

test("characters, numbers and the text so far are shown as the picture needs them", () => {
  assert.equal(shownChar(" "), "\u2423");
  assert.equal(shownChar("\n"), "\u21b5");
  assert.equal(shownChar("a"), "a");
  assert.equal(groupDigits(20480), "20,480");
  assert.equal(groupDigits(512), "512");
  assert.equal(groupDigits(1234567), "1,234,567");
  assert.deepEqual(weightsOf("3f00rs", 3), [0.123, 0, 1]);
  assert.deepEqual(weightsOf("", 3), []);
  const run = { tokens: ["\u25b8", "a", " ", "c", "a", "t", "\n", "s", "!"], prompt_length: 3 };
  assert.deepEqual(textLines(run, 7, 5), [
    [
      ["a ", false],
      ["cat", true],
    ],
    [["\u21b5s", true]],
  ]);
});

// What the tables are made of: each number's every data- attribute, in the order drawn.
const numberMarks = (svg) =>
  [...svg.matchAll(/<(?:text|rect)[^>]*data-quantity[^>]*>/g)].map(([tag]) =>
    [...tag.matchAll(/ (data-[a-z-]+)="([^"]*)"/g)].map(([, name, value]) => `${name}=${value}`).join(" "),
  );

// A run of n positions (prompt_length of them the prompt's) whose cache is full at every step,
// each weight k/1000 at the k-th cached position: a sequence as long as a typed prompt makes it.
function longRun(n, promptLength) {
  const steps = n - promptLength;
  const kept = Array.from({ length: steps }, (_, s) => Array.from({ length: promptLength + s }, (_, i) => i));
  const code = (m) => Array.from({ length: m }, (_, k) => k.toString(36).padStart(2, "0")).join("");
  return {
    tokens: Array.from({ length: n }, (_, i) => (i === 0 ? "\u25b8" : "abc de"[i % 6])),
    prompt_length: promptLength,
    kept,
    bytes: kept.map((k) => k.length * g.bytes_per_position),
    weights: kept.map((k) => Array.from({ length: g.n_layers }, () => Array.from({ length: g.n_heads }, () => code(k.length)))),
  };
}

// Each text (not rotated) and the span it takes, roughly: a character of DejaVu Sans at most 0.62 of
// its size (bold 0.7), of DejaVu Sans Mono 0.61.
function textSpans(svg) {
  return [...svg.matchAll(/<text([^>]*)>(.*?)<\/text>/g)]
    .filter(([, attrs]) => !attrs.includes("transform"))
    .map(([, attrs, content]) => {
      const get = (name) => attrs.match(new RegExp(` ${name}="([^"]*)"`))?.[1];
      const words = content.replace(/<[^>]*>/g, "").replace(/&#?[a-z0-9]+;/g, "&");
      const bold = content.includes("bold") || get("font-weight") === "bold";
      const per = get("font-family")?.includes("Mono") ? 0.61 : bold ? 0.7 : 0.62;
      const width = words.length * Number(get("font-size") ?? 14) * per;
      const x = Number(get("x"));
      const start = { end: x - width, middle: x - width / 2 }[get("text-anchor")] ?? x;
      return { words, start, end: start + width, size: Number(get("font-size")) };
    });
}

test("the wide picture keeps its shape; the narrow one's panels show whole on a phone, stacked", () => {
  const rows = g.n_layers * g.n_heads;
  const wide = pictureShape(59, rows, false);
  assert.deepEqual([wide.width, wide.height], [900, pictureHeight(rows)]);
  assert.deepEqual(wide.regions.map((r) => r.at), [
    [0, 0, 900, gridHeight(rows)],
    [0, gridHeight(rows), 900, pictureHeight(rows) - gridHeight(rows)],
  ]);
  for (const n of [15, 30, 31, 59, 81]) {
    const narrow = pictureShape(n, 8, true);
    assert.equal(narrow.width, NARROW_WIDTH);
    // at 11/12 px a unit (its 12-unit text at 11 px) in the 374 px of a phone in dark mode
    assert.ok(Math.ceil((NARROW_WIDTH * 11) / 12) + 1 <= 374);
    // stacked: the second panel starts where the first ends, and both fill the picture
    const [first, second] = narrow.regions.map((r) => r.at);
    assert.deepEqual([first[0], first[1], first[2]], [0, 0, NARROW_WIDTH]);
    assert.deepEqual([second[0], second[1], second[2]], [0, first[3], NARROW_WIDTH]);
    assert.equal(first[3] + second[3], narrow.height);
    // a line of at most 30 positions each, every line's head rows below its characters
    const layout = gridLayout(n, 8, true);
    assert.equal(layout.tops.length, Math.ceil(n / 30));
    assert.ok(layout.x0 + layout.perLine * layout.cell + 8 + 12 + 6 + 20 <= NARROW_WIDTH, "the cells and the colour bar fit");
    layout.tops.slice(1).forEach((top, k) => assert.ok(top - 6 - 12 > layout.tops[k] + 24 + 22 + 8 * 16, "lines apart"));
  }
  assert.deepEqual(gridLayout(59, rows, false).tops, [62]);
});

test("the narrow drawing shows every number of the wide one, and every text within its width", () => {
  const states = [];
  for (const { settings } of g.runs) {
    settings.forEach((run, k) => {
      for (let step = 1; step <= g.n_new; step += 3) states.push(stateOf(run, step, g.settings[k], settings[0]));
    });
  }
  // longer sequences than the fixtures': two and three lines of positions
  for (const n of [59, 81]) {
    const run = longRun(n, n - 48);
    for (const step of [1, 20, 48]) states.push(stateOf(run, step, g.settings[0], run));
  }
  for (const state of states) {
    const theme = fixtures.themes.light;
    const wide = drawGeneration(state, theme, fixtures.colormaps);
    const narrow = drawGeneration(state, theme, fixtures.colormaps, true);
    assert.deepEqual(numberMarks(narrow), numberMarks(wide));
    assert.equal((narrow.match(/data-hatch/g) ?? []).length, (wide.match(/data-hatch/g) ?? []).length);
    for (const t of textSpans(narrow)) {
      assert.ok(t.size >= 12, `${t.words} is ${t.size} units`);
      assert.ok(t.start >= 0 && t.end <= NARROW_WIDTH, `${JSON.stringify(t.words)} from ${t.start} to ${t.end}`);
    }
  }
  // each weight in its position's line and column: position 47 is line 1's 18th
  const run = longRun(59, 11);
  const narrow = drawGeneration(stateOf(run, 48, g.settings[0], run), fixtures.themes.dark, fixtures.colormaps, true);
  const { x0, cell, tops } = gridLayout(59, g.n_layers * g.n_heads, true);
  const cellOf = narrow.match(/<rect[^>]*data-quantity="weights_layer_0" data-row="0" data-col="47"[^>]*>/)[0];
  const at = (name) => Number(cellOf.match(new RegExp(` ${name}="([^"]*)"`))[1]);
  assert.ok(Math.abs(at("x") - (x0 + 17 * cell)) < 1e-6 && at("y") === tops[1] + 24 + 22, cellOf);
});
