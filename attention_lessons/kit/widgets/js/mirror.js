// The little arithmetic of attention, mirrored from attnlib so that an explorer redraws in the
// same frame as a slider moves, with or without a kernel. Plain functions on arrays of numbers
// (a matrix is an array of rows); tests/kit/js/mirror.test.mjs and the Node tests of the lessons
// that use them (tests/lessons/lNN_slug/*.test.mjs) check each one against attnlib.

/** Dot product of two vectors of the same length. */
export function dot(a, b) {
  let sum = 0;
  for (let i = 0; i < a.length; i += 1) sum += a[i] * b[i];
  return sum;
}

/** Matrix product A B: A (n, m), B (m, p) -> (n, p). */
export function matmul(A, B) {
  const p = B.length ? B[0].length : 0;
  return A.map((row) => {
    const out = new Array(p).fill(0);
    for (let k = 0; k < row.length; k += 1) {
      for (let j = 0; j < p; j += 1) out[j] += row[k] * B[k][j];
    }
    return out;
  });
}

/** Raw scores Q Kᵀ: Q (n_q, d_k), K (n_k, d_k) -> (n_q, n_k). */
export function rawScores(Q, K) {
  return Q.map((q) => K.map((k) => dot(q, k)));
}

/** The transformer's scale 1/√d_k. */
export function defaultScale(dK) {
  return 1 / Math.sqrt(dK);
}

/** Every entry times a factor. */
export function scaleScores(S, factor) {
  return S.map((row) => row.map((s) => s * factor));
}

/** The causal mask (n_q, n_k): true where query i may attend to key j, that is j <= i. */
export function causalMask(nQ, nK = nQ) {
  return Array.from({ length: nQ }, (_, i) => Array.from({ length: nK }, (_, j) => j <= i));
}

/** Scores with -Infinity where the boolean mask is false (true = may attend). */
export function applyMask(S, mask) {
  return S.map((row, i) => row.map((s, j) => (mask[i][j] ? s : -Infinity)));
}

/**
 * Softmax of one row with the max trick; a row that is entirely -Infinity gives zeros.
 * A spread beyond the float range gives exp(-inf) = 0 for the far entries, as in numpy.
 */
export function softmaxRow(row) {
  if (row.length === 0) return [];
  let max = -Infinity;
  for (const s of row) if (s > max) max = s;
  if (max === -Infinity) return row.map(() => 0);
  const exps = row.map((s) => Math.exp(s - max));
  let sum = 0;
  for (const e of exps) sum += e;
  return exps.map((e) => e / sum);
}

/** Softmax of every row of a matrix. */
export function softmax(S) {
  return S.map(softmaxRow);
}

/** Attention steps of self- or cross-attention, as attnlib.attention_steps computes them.
 *
 * @param {number[][]} Q (n_q, d_k)
 * @param {number[][]} K (n_k, d_k)
 * @param {number[][]} V (n_k, d_v)
 * @param {{scale?: number, causal?: boolean, mask?: boolean[][]}} options
 *   scale defaults to 1/√d_k; mask: true = may attend.
 * @returns {{rawScores, scale, scaledScores, maskedScores, weights, output}}
 */
export function attentionSteps(Q, K, V, { scale, causal = false, mask } = {}) {
  const factor = scale === undefined ? defaultScale(Q[0].length) : scale;
  const raw = rawScores(Q, K);
  const scaled = scaleScores(raw, factor);
  let masked = scaled;
  if (mask) masked = applyMask(masked, mask);
  if (causal) masked = applyMask(masked, causalMask(Q.length, K.length));
  const weights = softmax(masked);
  const output = matmul(weights, V);
  return { rawScores: raw, scale: factor, scaledScores: scaled, maskedScores: masked, weights, output };
}

/** Entropy -Σ p log p in nats of one distribution (0 log 0 = 0). */
export function entropy(p) {
  let sum = 0;
  for (const x of p) if (x > 0) sum -= x * Math.log(x);
  return sum;
}

/** Euclidean length of a vector, √(a·a) as numpy.linalg.norm computes it. */
export function norm(a) {
  return Math.sqrt(dot(a, a));
}

/** The largest |entry| of a vector. */
function largestEntry(a) {
  let largest = 0;
  for (const x of a) largest = Math.max(largest, Math.abs(x));
  return largest;
}

/** |a| as largest · |a / largest|, as attention_lessons.l01_embeddings.similarity computes it (no overflow, no underflow). */
function scaledLength(a, largest) {
  return largest === 0 ? 0 : largest * norm(a.map((x) => x / largest));
}

/**
 * Dot product, lengths, cosine and angle of two vectors, as attention_lessons.l01_embeddings.similarity computes them:
 * the cosine from the vectors divided by their largest entries. cosine and angleDegrees are
 * null when a vector is zero (no direction).
 */
export function similarity(a, b) {
  const d = dot(a, b);
  const largestA = largestEntry(a);
  const largestB = largestEntry(b);
  const normA = scaledLength(a, largestA);
  const normB = scaledLength(b, largestB);
  if (largestA === 0 || largestB === 0) return { dot: d, normA, normB, cosine: null, angleDegrees: null };
  const unitA = a.map((x) => x / largestA);
  const unitB = b.map((x) => x / largestB);
  const cosine = Math.min(1, Math.max(-1, dot(unitA, unitB) / (norm(unitA) * norm(unitB))));
  return { dot: d, normA, normB, cosine, angleDegrees: Math.acos(cosine) / (Math.PI / 180) };
}
