// Colour maps and text contrast (attention_lessons/kit/widgets/js/colors.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { colormapColor, contrastRatio, relativeLuminance, textColorOn } from "../../../attention_lessons/kit/widgets/js/colors.js";
import { fixtures } from "./fixtures.mjs";

test("WCAG contrast: black on white is 21:1, a colour on itself 1:1", () => {
  assert.equal(contrastRatio("#000000", "#ffffff"), 21);
  assert.equal(contrastRatio("#ffffff", "#000000"), 21);
  assert.equal(contrastRatio("#21918c", "#21918c"), 1);
  assert.ok(Math.abs(relativeLuminance("#808080") - 0.2158605) < 1e-6);
});

test("every number on a cell of viridis or cividis, in both styles, has a contrast of at least 4.5:1", () => {
  let worst = Infinity;
  for (const [style, theme] of Object.entries(fixtures.themes)) {
    const backgrounds = [...fixtures.colormaps.viridis, ...fixtures.colormaps.cividis, theme.background];
    assert.equal(backgrounds.length, 513, style);
    for (const cell of backgrounds) {
      const ink = textColorOn(cell, theme.annotationDark, theme.annotationLight);
      const ratio = contrastRatio(cell, ink);
      worst = Math.min(worst, ratio);
      assert.ok(ratio >= 4.5, `${style}: ${ink} on ${cell} has contrast ${ratio.toFixed(2)}:1`);
    }
  }
  assert.ok(worst < 5, `the worst cell should be a mid-luminance one, got ${worst}`);
});

test("the text colour picked is the one of higher contrast", () => {
  assert.equal(textColorOn("#fde725", "#000000", "#ffffff"), "#000000"); // viridis' yellow
  assert.equal(textColorOn("#440154", "#000000", "#ffffff"), "#ffffff"); // viridis' purple
});

test("colour-map lookup normalises like matplotlib: ends, middle, outside, flat limits", () => {
  const table = fixtures.colormaps.viridis;
  assert.equal(table.length, 256);
  assert.equal(colormapColor(table, 0, 0, 1), table[0]);
  assert.equal(colormapColor(table, 1, 0, 1), table[255]);
  assert.equal(colormapColor(table, 0.5, 0, 1), table[128]);
  assert.equal(colormapColor(table, -3, 0, 1), table[0]);
  assert.equal(colormapColor(table, 7, 0, 1), table[255]);
  assert.equal(colormapColor(table, 2, -2, 2), table[255]);
});
