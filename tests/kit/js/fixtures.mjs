// Shared by the Node tests (the kit's here, each lesson's in tests/lessons/lNN_slug/): the fixtures
// written by make_fixtures.py, and comparison to 1e-12.
import { readFileSync } from "node:fs";
import assert from "node:assert/strict";

const path = process.env.ATTNLIB_FIXTURES;
if (!path) {
  throw new Error(
    "set ATTNLIB_FIXTURES to a fixtures.json written by `python tests/kit/js/make_fixtures.py DIR` " +
      "(pytest tests/kit/js/test_node.py does both)",
  );
}

/** The fixtures: seeded inputs and attnlib's results (null where a score is -inf). */
export const fixtures = JSON.parse(readFileSync(path, "utf-8"));

export const RELATIVE = 1e-12;

/**
 * The scale an entropy of n weights is compared at: its largest value, log n (at least 1). An
 * entropy near 0 comes from weights near 1, whose logarithms keep only the absolute precision of
 * the weights, so it is checked to 1e-12 of the entropy's range, not of itself.
 */
export function entropyScale(n) {
  return Math.max(1, Math.log(n));
}

/** null -> -Infinity, recursively (JSON has no -inf). */
export function withInfinity(value) {
  if (value === null) return -Infinity;
  return Array.isArray(value) ? value.map(withInfinity) : value;
}

function largest(value) {
  if (Array.isArray(value)) return Math.max(0, ...value.map(largest));
  return Number.isFinite(value) ? Math.abs(value) : 0;
}

/**
 * Every number of `actual` equals `expected` to 1e-12 relative to the larger of the entry and
 * the largest entry of the array (a sum that cancels to near 0 keeps the error of its terms);
 * -Infinity and null must match exactly.
 */
export function assertClose(actual, expected, what, scale = largest(expected)) {
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${what}: expected an array, got ${actual}`);
    assert.equal(actual.length, expected.length, `${what}: length`);
    expected.forEach((e, i) => assertClose(actual[i], e, `${what}[${i}]`, scale));
    return;
  }
  if (expected === null || !Number.isFinite(expected)) {
    assert.equal(actual, expected, what);
    return;
  }
  assert.equal(typeof actual, "number", `${what}: expected a number, got ${actual}`);
  const tolerance = RELATIVE * Math.max(Math.abs(expected), scale);
  assert.ok(
    Math.abs(actual - expected) <= tolerance,
    `${what}: ${actual} differs from attnlib's ${expected} by ${Math.abs(actual - expected)} (> ${tolerance})`,
  );
}

/** Every number an explorer's SVG carries (`data-quantity` on a text or rect), its attributes as strings. */
export function numbersIn(svg) {
  const found = [];
  for (const [, attrs] of svg.matchAll(/<(?:text|rect)([^>]*data-quantity[^>]*)>/g)) {
    const get = (name) => attrs.match(new RegExp(` ${name}="([^"]*)"`))?.[1];
    found.push({ quantity: get("data-quantity"), row: get("data-row"), col: get("data-col"), value: get("data-value") });
  }
  return found;
}
