// What a screen reader gets from an explorer (attention_lessons/kit/widgets/js/a11y.js) and which mode it takes
// from the page (attention_lessons/kit/widgets/js/page.js): pure functions, on hand-made numbers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { announcement, changeSentence, holding, numberTables, regionOf, shownNumber } from "../../../attention_lessons/kit/widgets/js/a11y.js";
import { pageStyleOf } from "../../../attention_lessons/kit/widgets/js/page.js";

const weight = (col, colLabel, value, shown) => ({ quantity: "weights", col, colLabel, value: String(value), shown });

test("the page's mode wins: the book's resolved theme, then JupyterLab's, then the system's under auto", () => {
  assert.equal(pageStyleOf({ theme: "dark", jpThemeLight: "true" }), "dark");
  assert.equal(pageStyleOf({ theme: "light", prefersDark: true, mode: "auto" }), "light");
  assert.equal(pageStyleOf({ jpThemeLight: "false" }), "dark");
  assert.equal(pageStyleOf({ jpThemeLight: "true" }), "light");
  assert.equal(pageStyleOf({ mode: "auto", prefersDark: true }), "dark");
  assert.equal(pageStyleOf({ mode: "auto", prefersDark: false }), "light");
  assert.equal(pageStyleOf({ prefersDark: true }), null, "a page that says nothing leaves the explorer its style");
});

test("a move is said in one plain sentence: the number that moved most for its quantity's size, and how many more", () => {
  const t = (value, shown) => ({ quantity: "temperature", value: String(value), shown });
  const before = [weight(0, "h1", 0.88, "0.880"), weight(1, "h2", 0.12, "0.120"), weight(2, "h3", 0.001, "0.00"), t(1, "1.00")];
  const after = [weight(0, "h1", 0.92, "0.920"), weight(1, "h2", 0.0888, "0.089"), weight(2, "h3", 0.0012, "0.00"), t(1, "1.00")];
  assert.equal(announcement(before, after), "Weights of h1 rose from 0.880 to 0.920, and 1 other number changed.", "h3's shown 0.00 did not change");
  const hotter = [weight(0, "h1", 0.5, "0.500"), weight(1, "h2", 0.5, "0.500"), weight(2, "h3", 0, "0.00"), t(100, "100.00")];
  assert.equal(announcement(after, hotter), "Temperature rose from 1.00 to 100.00, and 2 other numbers changed.", "sizes are relative to the quantity's");
  assert.equal(announcement(after, after), "", "nothing changed, nothing said");
  const matrix = [{ quantity: "raw_scores", row: 0, col: 1, rowLabel: "it", colLabel: "the", value: "1", shown: "1.00" }];
  const moved = [{ ...matrix[0], value: "-Infinity", shown: "\u2212\u221e" }];
  assert.equal(announcement(matrix, moved), "Raw scores at row it, column the fell from 1.00 to \u2212\u221e.");
  const unlabelled = [{ quantity: "W", row: 1, col: 0, value: "2", shown: "2" }];
  assert.equal(announcement(unlabelled, [{ ...unlabelled[0], value: "3", shown: "3" }]), "W at row 2, column 1 rose from 2 to 3.");
  const named = announcement(matrix, moved, (n) => `the score of ${n.rowLabel} on ${n.colLabel}`);
  assert.equal(named, "The score of it on the fell from 1.00 to \u2212\u221e.", "an explorer names its numbers its own way");
});

test("a change is one sentence with no symbol to hear: rose, fell, or changed where it is not a number", () => {
  assert.equal(changeSentence({ what: "the loss", was: "2.30", now: "0.41", wasValue: 2.3, nowValue: 0.41, others: 3 }), "The loss fell from 2.30 to 0.41, and 3 other numbers changed.");
  assert.equal(changeSentence({ what: "a cell", was: "masked", now: "0.50", wasValue: NaN, nowValue: 0.5 }), "A cell changed from masked to 0.50.");
  for (const said of [changeSentence({ what: "x", was: "1", now: "2", wasValue: 1, nowValue: 2, others: 1 })]) {
    assert.doesNotMatch(said, /[\u2192:()]/, "no arrow, colon or parentheses");
  }
});

test("the numbers become tables with row and column headers: values, vectors by their columns, matrices", () => {
  const numbers = [
    { quantity: "entropy", value: "0.5", shown: "0.500 nats" },
    weight(1, "h2", 0.12, "0.120"),
    weight(0, "h1", 0.88, "0.880"),
    { quantity: "scores", col: 0, colLabel: "h1", value: "2", shown: "2.00" },
    { quantity: "scores", col: 1, colLabel: "h2", value: "0", shown: "0.00" },
    { quantity: "raw_weights", col: 0, value: "0.25" }, // a bar: a value, no text
    { quantity: "W", row: 1, col: 0, value: "3", shown: "3" },
    { quantity: "W", row: 0, col: 0, value: "1", shown: "1" },
  ];
  assert.deepEqual(numberTables(numbers), [
    { caption: "values", corner: "quantity", columns: ["value"], rows: [{ header: "entropy", cells: ["0.500 nats"] }] },
    {
      caption: "weights, scores",
      corner: "quantity",
      columns: ["h1", "h2"],
      rows: [
        { header: "weights", cells: ["0.880", "0.120"] },
        { header: "scores", cells: ["2.00", "0.00"] },
      ],
    },
    { caption: "raw weights", corner: "quantity", columns: ["1"], rows: [{ header: "raw weights", cells: ["0.250"] }] },
    { caption: "W", corner: "W", columns: ["1"], rows: [{ header: "1", cells: ["1"] }, { header: "2", cells: ["3"] }] },
  ]);
  assert.equal(shownNumber({ value: "-Infinity" }), "-Infinity");
});

test("an element drawn goes to the panel holding its centre, else the nearest one", () => {
  const regions = [[0, 0, 100, 100], [100, 0, 100, 100], [0, 100, 200, 50]];
  assert.equal(regionOf(regions, 50, 50), 0);
  assert.equal(regionOf(regions, 150, 99), 1);
  assert.equal(regionOf(regions, 190, 120), 2);
  assert.equal(regionOf(regions, 400, 10), 1, "outside every panel: the nearest centre");
});

test("a panel grows to hold the texts drawn across its edge, and only those with a size", () => {
  const box = (x, y, width, height) => ({ x, y, width, height });
  assert.deepEqual(holding([10, 0, 100, 50], [box(20, 10, 30, 12)]), [10, 0, 100, 50], "inside: as it was");
  assert.deepEqual(holding([10, 0, 100, 50], [box(2, 10, 12, 30), box(90, 45, 40, 12)]), [2, 0, 128, 57]);
  assert.deepEqual(holding([10, 0, 100, 50], [box(-500, 0, 0, 0)]), [10, 0, 100, 50], "an empty text does not count");
});
