// Rotary position embeddings (RoPE), mirrored from attnlib.positions so that the RoPE explorer
// redraws in the same frame as a slider moves, with or without a kernel. Plain functions on
// arrays of numbers; tests/lessons/l10_positions/rotary.test.mjs checks each one against attnlib.

import { dot } from "../kit/widgets/js/mirror.js";

/** The angle per position of each pair: θ_i = base^(−2i/d), i = 0 … d/2 − 1 (attnlib.positions.rope_frequencies). */
export function ropeFrequencies(d, base = 10000) {
  if (!(Number.isInteger(d) && d > 0 && d % 2 === 0)) {
    throw new Error(`rope rotates pairs of components, so d must be even and positive, got ${d}`);
  }
  return Array.from({ length: d / 2 }, (_, i) => base ** (-(2 * i) / d));
}

/**
 * One vector at one position, rotated pair by pair: (x[2i], x[2i+1]) turned by position · θ_i
 * (attnlib.positions.rope of a single vector).
 */
export function rope(x, position, base = 10000) {
  const theta = ropeFrequencies(x.length, base);
  const out = new Array(x.length);
  theta.forEach((t, i) => {
    const angle = position * t;
    const c = Math.cos(angle);
    const s = Math.sin(angle);
    const even = x[2 * i];
    const odd = x[2 * i + 1];
    out[2 * i] = even * c - odd * s;
    out[2 * i + 1] = even * s + odd * c;
  });
  return out;
}

/** The score of a query at position m and a key at position n: rope(q, m) · rope(k, n). */
export function ropeScore(q, k, m, n, base = 10000) {
  return dot(rope(q, m, base), rope(k, n, base));
}

/**
 * The explorer's numbers: the query at queryPosition + offset, the key at keyPosition + offset,
 * rotated, and their score, as attnlib computes them in RopeExplorer.
 */
export function computeRope({ query, key, queryPosition, keyPosition, offset, base = 10000 }) {
  const m = queryPosition + offset;
  const n = keyPosition + offset;
  const rotatedQuery = rope(query, m, base);
  const rotatedKey = rope(key, n, base);
  return { m, n, distance: m - n, rotatedQuery, rotatedKey, score: dot(rotatedQuery, rotatedKey) };
}
