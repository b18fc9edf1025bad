// The tokens explorer of lesson 17: text becomes tokens by byte-pair encoding, and a slider over the
// merges of the learner's table shows them applying one by one. Python sends the table (token
// 256 + i joins merge i's two tokens), the pre-tokenizer's name and the samples; this module does
// what attnlib.tokens does (the UTF-8 bytes, the cut into pieces, the merges by rank) and draws the
// text as boxes, one per token: its text and its id (as the lesson's static picture: neighbours
// told apart by a border, a gap and two greys alternating; the last merge's tokens by a bold
// border and text), the numbers of bytes, characters and tokens, and the tokens' count at every
// number of merges.
//
// Fast enough for a redraw in a frame: the text is encoded once with the whole table (per piece of
// the cut, cached; each piece by a heap of its pairs, lowest rank first), and the tokens after the
// first k merges are read off that encoding, since a token made by merge r >= k is undone into
// the two tokens it joined (every merge r joins tokens made before it: ids below 256 + r).

import { axes, element, escapeXml, niceTicks, numberText, text, textWidth, title } from "../kit/widgets/js/svg.js";
import { applyTheme, bind, button, explorerRoot, html, markupOf, row, sender, slider, styleNameOf, styleSelect, themeOf } from "../kit/widgets/js/controls.js";

/** The wide drawing's width: the book's text column at 1280 px is about 917 px, drawn at 1:1. */
export const WIDTH = 900;
/** The narrow drawing's width (a phone's): each panel shows whole with its text at 11 px or more. */
export const NARROW_WIDTH = 400;
const MONO = "DejaVu Sans Mono, monospace";
// The boxes of the tokens: a box's height, a line of boxes, the gap between two boxes, the room
// each side of a box's text, the sizes of its text and id.
const CHIP = { height: 38, line: 46, gap: 4, pad: 5, size: 14, idSize: 12 };
// The heights of the numbers panel (both drawings) and of the narrow drawing's chart panel.
const NUMBERS_HEIGHT = 230;
const CHART_HEIGHT = 236;
// The widest token text shown in the line under the numbers, in units (wider ones end in "…").
const SHOWN_IN_MERGE = 96;

// --- the arithmetic: what attnlib.tokens computes -------------------------------------------------

/** The pre-tokenizers attnlib.tokens knows (attnlib.tokens.RULES): none, GPT-2's, SmolLM2's. */
export const RULES = [null, "gpt2", "smollm"];
// Unicode's White_Space property, as attnlib.tokens.WHITE_SPACE (JavaScript's \s adds U+FEFF and
// lacks U+0085; Python's adds U+001C to U+001F).
const SPACE = "\\p{White_Space}";
/**
 * GPT-2's pre-tokenizer (attnlib.tokens.GPT2_PATTERN), with Unicode's White_Space property for \s
 * as attnlib compiles it. Letters and numbers follow the browser's Unicode version (attnlib's, its
 * Python's): they differ only on characters that one of them does not know yet.
 */
export const GPT2_PATTERN = `'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^${SPACE}\\p{L}\\p{N}]+|${SPACE}+(?!\\P{White_Space})|${SPACE}+`;
const GPT2 = new RegExp(GPT2_PATTERN, "gu");
const NUMBER = /(\p{N})/u;

/** The UTF-8 bytes of a text (a Uint8Array). */
export function utf8Bytes(words) {
  return new TextEncoder().encode(words);
}

/** The characters of a text as Python counts them: its code points (an emoji is one, not two). */
export function characterCount(words) {
  let n = 0;
  for (const _ of words) n += 1;
  return n;
}

/** A text that UTF-8 can encode: every lone surrogate (half of a UTF-16 pair) becomes U+FFFD. */
export function wellFormed(words) {
  return typeof words.toWellFormed === "function" ? words.toWellFormed() : words.replace(/\p{Cs}/gu, "\ufffd");
}

/**
 * The text cut into the pieces a tokenizer merges within (attnlib.tokens.pretokenize): null, the
 * whole text; "gpt2", GPT2_PATTERN's matches; "smollm", each number character alone, then GPT-2's.
 */
export function pretokenize(words, rule) {
  if (rule === null || rule === undefined) return words ? [words] : [];
  if (rule === "gpt2") return words.match(GPT2) ?? [];
  if (rule === "smollm") return words.split(NUMBER).filter(Boolean).flatMap((part) => part.match(GPT2) ?? []);
  throw new Error(`rule must be one of ${JSON.stringify(RULES)}, got ${JSON.stringify(rule)}`);
}

// A pair of ids as one number (ids below 2^20), and a heap entry (rank, position) as one number.
const PAIR = 2 ** 20;
const AT = 2 ** 24;

/** Each merge's rank by its pair of ids (pairKey(a, b) → r): the first rank where a pair repeats. */
export function mergeRanks(merges) {
  const ranks = new Map();
  merges.forEach(([a, b], r) => {
    const key = a * PAIR + b;
    if (!ranks.has(key)) ranks.set(key, r);
  });
  return ranks;
}

function heapPush(heap, value) {
  let i = heap.length;
  heap.push(value);
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (heap[parent] <= value) break;
    heap[i] = heap[parent];
    i = parent;
  }
  heap[i] = value;
}

function heapPop(heap) {
  const top = heap[0];
  const last = heap.pop();
  if (heap.length) {
    let i = 0;
    const n = heap.length;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const child = left + 1 < n && heap[left + 1] < heap[left] ? left + 1 : left;
      if (heap[child] >= last) break;
      heap[i] = heap[child];
      i = child;
    }
    heap[i] = last;
  }
  return top;
}

/**
 * The token ids of one piece's bytes with every merge of the table: the pair of lowest rank
 * present is merged, all its occurrences left to right, until no pair of the table is left
 * (attnlib.tokens.Tokenizer's merge of a piece). A heap holds every adjacent pair by (rank,
 * position); a merge joins a box to its right neighbour in a linked list, and pushes the two
 * pairs it makes (each of a rank above its own, so the order stays that of the ranks).
 */
export function mergePiece(bytes, ranks) {
  const n = bytes.length;
  const ids = Array.from(bytes);
  if (n < 2 || ranks.size === 0) return ids;
  const next = new Int32Array(n);
  const prev = new Int32Array(n);
  const alive = new Uint8Array(n).fill(1);
  for (let i = 0; i < n; i += 1) {
    next[i] = i + 1 < n ? i + 1 : -1;
    prev[i] = i - 1;
  }
  const heap = [];
  const push = (i) => {
    const j = next[i];
    if (j < 0) return;
    const r = ranks.get(ids[i] * PAIR + ids[j]);
    if (r !== undefined) heapPush(heap, r * AT + i);
  };
  for (let i = 0; i + 1 < n; i += 1) push(i);
  while (heap.length) {
    const entry = heapPop(heap);
    const r = Math.floor(entry / AT);
    const i = entry - r * AT;
    const j = next[i];
    // an entry is stale where its box was merged into its left neighbour or its pair changed
    if (!alive[i] || j < 0 || ranks.get(ids[i] * PAIR + ids[j]) !== r) continue;
    ids[i] = 256 + r;
    alive[j] = 0;
    next[i] = next[j];
    if (next[j] >= 0) prev[next[j]] = i;
    if (prev[i] >= 0) push(prev[i]);
    push(i);
  }
  const out = [];
  for (let i = 0; i >= 0; i = next[i]) out.push(ids[i]);
  return out;
}

/**
 * The token ids of `words` after the first `k` merges, from its ids after all of them (`full`):
 * each token made by a merge r >= k is undone into the two tokens merge r joined, and those in
 * turn (attnlib.tokens.encode with merges[:k]).
 */
export function tokensAt(full, merges, k) {
  const limit = 256 + k;
  const out = [];
  const stack = [];
  for (const t of full) {
    if (t < limit) {
      out.push(t);
      continue;
    }
    stack.push(t);
    while (stack.length) {
      const u = stack.pop();
      if (u < limit) out.push(u);
      else {
        const [a, b] = merges[u - 256];
        stack.push(b, a);
      }
    }
  }
  return out;
}

/**
 * The number of tokens after each number of merges, 0 … merges.length (`counts`), and how often each
 * merge joins two tokens in the text (`made`): merge r, where it applies `made[r]` times, takes that
 * many tokens away.
 */
export function tokensByMerges(full, merges, nBytes) {
  const made = new Int32Array(merges.length);
  const stack = [];
  for (const t of full) {
    stack.push(t);
    while (stack.length) {
      const u = stack.pop();
      if (u < 256) continue;
      made[u - 256] += 1;
      const [a, b] = merges[u - 256];
      stack.push(b, a);
    }
  }
  const counts = new Array(merges.length + 1);
  counts[0] = nBytes;
  for (let r = 0; r < merges.length; r += 1) counts[r + 1] = counts[r] - made[r];
  return { counts, made };
}

/**
 * A merge table's encoder: `full(words)` (the ids with every merge, each piece of the cut encoded
 * once and kept), `at(full, k)` (tokensAt) and `info(id)` (the token's bytes and how it is shown,
 * kept).
 */
export function makeEncoder(merges, rule) {
  const ranks = mergeRanks(merges);
  const pieces = new Map();
  const infos = new Map();
  const bytesOf = (id) => {
    if (id < 256) return [id];
    const kept = infos.get(id);
    if (kept) return kept.bytes;
    const [a, b] = merges[id - 256];
    return [...bytesOf(a), ...bytesOf(b)];
  };
  return {
    merges,
    rule,
    full(words) {
      const ids = [];
      for (const piece of pretokenize(words, rule)) {
        let got = pieces.get(piece);
        if (got === undefined) {
          if (pieces.size > 20000) pieces.clear(); // typed texts: the pieces kept stay few
          got = mergePiece(utf8Bytes(piece), ranks);
          pieces.set(piece, got);
        }
        for (const id of got) ids.push(id);
      }
      return ids;
    },
    at(full, k) {
      return tokensAt(full, merges, k);
    },
    info(id) {
      let kept = infos.get(id);
      if (kept === undefined) {
        const bytes = bytesOf(id);
        const shown = tokenText(bytes);
        kept = { bytes, shown, words: tokenWords(bytes), hex: bytes.map(hex2).join(" "), width: shownWidth(shown, CHIP.size) };
        infos.set(id, kept);
      }
      return kept;
    },
  };
}

/** The ids of `words` after the first `k` merges of `merges` with `rule`'s cut (attnlib.tokens.encode). */
export function encode(words, merges, rule, k = merges.length) {
  return tokensAt(makeEncoder(merges, rule).full(words), merges, k);
}

/** The bytes of each token id: the 256 single bytes, then one per merge (attnlib.tokens.vocabulary). */
export function vocabulary(merges) {
  const vocab = Array.from({ length: 256 }, (_, b) => [b]);
  for (const [a, b] of merges) vocab.push([...vocab[a], ...vocab[b]]);
  return vocab;
}

/** Text, counts and the tokens' count at every number of merges, of `words` for an encoder. */
export function analyse(encoder, words) {
  const full = encoder.full(words);
  const bytes = utf8Bytes(words).length;
  return { text: words, full, bytes, characters: characterCount(words), ...tokensByMerges(full, encoder.merges, bytes) };
}

/**
 * What the page writes beside the tokens: bytes, characters, tokens, characters and bytes per
 * token (null where there is no token).
 */
export function counts(words, ids) {
  const bytes = utf8Bytes(words).length;
  const characters = characterCount(words);
  const tokens = ids.length;
  return {
    bytes,
    characters,
    tokens,
    charactersPerToken: tokens ? characters / tokens : null,
    bytesPerToken: tokens ? bytes / tokens : null,
  };
}

// --- how a token is shown -------------------------------------------------------------------------

const hex2 = (b) => b.toString(16).padStart(2, "0");

/**
 * A token's bytes read as UTF-8: each character whole, each byte that begins no whole character
 * (a character's bytes split between tokens, or no UTF-8 at all) alone: [{cp}] or [{byte}].
 */
export function utf8Parts(bytes) {
  const parts = [];
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    let n = 0;
    let low = 0x80;
    let high = 0xbf;
    if (b < 0x80) n = 1;
    else if (b >= 0xc2 && b <= 0xdf) n = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      n = 3;
      if (b === 0xe0) low = 0xa0;
      if (b === 0xed) high = 0x9f; // no surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      n = 4;
      if (b === 0xf0) low = 0x90;
      if (b === 0xf4) high = 0x8f; // nothing above U+10FFFF
    }
    let ok = n > 0 && i + n <= bytes.length;
    for (let k = 1; ok && k < n; k += 1) {
      const c = bytes[i + k];
      ok = k === 1 ? c >= low && c <= high : c >= 0x80 && c <= 0xbf;
    }
    if (!ok) {
      parts.push({ byte: b });
      i += 1;
      continue;
    }
    let cp = n === 1 ? b : b & (0xff >> (n + 1));
    for (let k = 1; k < n; k += 1) cp = (cp << 6) | (bytes[i + k] & 0x3f);
    parts.push({ cp });
    i += n;
  }
  return parts;
}

// Characters a box shows by a sign (as the lesson's static picture): a space ␣, a new line ↵, a
// tab ⇥, a carriage return ⏎.
const SIGNS = new Map([
  [0x20, "\u2423"],
  [0x0a, "\u21b5"],
  [0x09, "\u21e5"],
  [0x0d, "\u23ce"],
]);
// Characters that show nothing alone (controls, formats such as the zero-width joiner, other
// spaces, variation selectors, unassigned or private ones): a box writes their code point.
const INVISIBLE = /^[\p{Cc}\p{Cf}\p{Z}\p{Co}\p{Cn}\u{fe00}-\u{fe0f}\u{e0100}-\u{e01ef}]$/u;

/** A code point as a box shows it: itself, a sign (␣ ↵ ⇥ ⏎) or "⟨U+200D⟩". */
export function shownCharacter(cp) {
  if (SIGNS.has(cp)) return SIGNS.get(cp);
  const c = String.fromCodePoint(cp);
  return INVISIBLE.test(c) ? `\u27e8U+${cp.toString(16).toUpperCase().padStart(4, "0")}\u27e9` : c;
}

/**
 * A token's text as its box shows it: its characters (shownCharacter), and each byte that is no
 * character alone as "⟨e2⟩" (the bytes of "’" split over tokens: ⟨e2⟩ ⟨80⟩ ⟨99⟩).
 */
export function tokenText(bytes) {
  return utf8Parts(bytes)
    .map((p) => (p.byte === undefined ? shownCharacter(p.cp) : `\u27e8${hex2(p.byte)}\u27e9`))
    .join("");
}

const SAID = new Map([
  [0x20, "space"],
  [0x0a, "new line"],
  [0x09, "tab"],
  [0x0d, "carriage return"],
]);

/**
 * A token as a sentence says it: its printable characters in quotes, the others by name ("space
 * \"the\"", "new line", "byte e2", "U+200D").
 */
export function tokenWords(bytes) {
  const words = [];
  let run = "";
  const flush = () => {
    if (run) words.push(`"${run}"`);
    run = "";
  };
  for (const p of utf8Parts(bytes)) {
    if (p.byte !== undefined) {
      flush();
      words.push(`byte ${hex2(p.byte)}`);
    } else if (SAID.has(p.cp)) {
      flush();
      words.push(SAID.get(p.cp));
    } else if (INVISIBLE.test(String.fromCodePoint(p.cp))) {
      flush();
      words.push(`U+${p.cp.toString(16).toUpperCase().padStart(4, "0")}`);
    } else run += String.fromCodePoint(p.cp);
  }
  flush();
  return words.join(" ");
}

/**
 * How wide a box's text is, in units at `size`: DejaVu Sans Mono's 0.602 em a character; a wide
 * character (CJK, Hangul, full-width forms) 1.05 em and an emoji 1.25 em (from fallback fonts); a
 * combining mark nothing. An estimate on the wide side: a box is never narrower than its text.
 */
export function shownWidth(shown, size) {
  let em = 0;
  for (const c of shown) {
    const cp = c.codePointAt(0);
    if (cp >= 0x1f000 || (cp >= 0x2600 && cp <= 0x27bf)) em += 1.25;
    else if (
      (cp >= 0x1100 && cp <= 0x115f) ||
      (cp >= 0x2e80 && cp <= 0xa4cf) ||
      (cp >= 0xac00 && cp <= 0xd7a3) ||
      (cp >= 0xf900 && cp <= 0xfaff) ||
      (cp >= 0xfe30 && cp <= 0xfe4f) ||
      (cp >= 0xff00 && cp <= 0xff60) ||
      (cp >= 0xffe0 && cp <= 0xffe6) ||
      (cp >= 0x20000 && cp <= 0x3fffd)
    )
      em += 1.05;
    else if (!/\p{M}/u.test(c)) em += 0.602;
  }
  return em * size;
}

/** A text cut to `most` characters, "…" at its end where it was longer. */
export function cut(shown, most) {
  const chars = [...shown];
  return chars.length <= most ? shown : `${chars.slice(0, most - 1).join("")}\u2026`;
}

/** A text cut to at most `units` wide at `size` (shownWidth), "…" at its end where it was wider. */
export function cutToWidth(shown, units, size) {
  if (shownWidth(shown, size) <= units) return shown;
  const chars = [...shown];
  let most = chars.length;
  while (most > 1 && shownWidth(`${chars.slice(0, most - 1).join("")}\u2026`, size) > units) most -= 1;
  return cut(shown, most);
}

/** A number of bytes or tokens with thousands separated by commas: 1234 -> "1,234". */
export function groupDigits(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** A ratio as the page writes it: two decimals, "–" where there is none. */
export function ratioText(value) {
  return value === null ? "\u2013" : value.toFixed(2);
}

// --- the picture ----------------------------------------------------------------------------------

/**
 * "#rrggbb" of `share` of colour `b` mixed into colour `a`, computed as lesson 17's plots.py mixes
 * them with matplotlib (each channel in 0 … 1, then rounded as Python rounds: a half to even).
 */
export function mix(a, b, share) {
  const rgb = (hex) => [1, 3, 5].map((k) => Number.parseInt(hex.slice(k, k + 2), 16) / 255);
  const [x, y] = [rgb(a), rgb(b)];
  return `#${x
    .map((v, k) => {
      const units = ((1 - share) * v + share * y[k]) * 255;
      const floor = Math.floor(units);
      const rounded = units - floor === 0.5 ? floor + (floor % 2) : Math.round(units);
      return hex2(rounded);
    })
    .join("")}`;
}

/**
 * The colours of the box of the token at `position` in `theme`, as lesson 17's static picture of a
 * text as tokens (plots.token_strip_figure) has them: two greys alternating (the grid's colour,
 * 80 % and 25 % of it on the background), so that neighbours differ though no colour means a
 * token; the token's text in the theme's text colour, its id in the ticks' colour.
 */
export function chipColors(position, theme) {
  const key = `${position % 2}|${theme.grid}|${theme.background}|${theme.text}|${theme.tick}`;
  let kept = coloured.get(key);
  if (kept === undefined) {
    kept = { fill: mix(theme.grid, theme.background, position % 2 ? 0.75 : 0.2), ink: theme.text, idInk: theme.tick };
    coloured.set(key, kept);
  }
  return kept;
}

// chipColors' answers, by parity and theme (a redraw colours hundreds of boxes)
const coloured = new Map();

/**
 * The lines of boxes a drawing makes room for, from the lines its boxes take now and the room
 * made before (-1: none yet): where they need more, as many and 2 to spare; at first and once the
 * reader pauses (`settle`), as many as they take; else the same. A change of room redraws the whole picture (a new
 * viewBox), so it comes once in a while, not on every move.
 */
export function roomFor(lines, room, settle = false) {
  if (room < 0 || settle) return Math.max(lines, 1); // the first drawing, or a pause
  return lines > room ? lines + 2 : room;
}

/**
 * Where each box goes: boxes of `widths` left to right from `left`, a new line where the next
 * would pass `right` or after a box that holds a new line (`breaks`). Returns each box's [x, line]
 * and the number of lines.
 */
export function chipLayout(widths, breaks, left, right) {
  const at = [];
  let x = left;
  let line = 0;
  widths.forEach((w, i) => {
    if (x > left && x + w > right) {
      x = left;
      line += 1;
    }
    at.push([x, line]);
    x += w + CHIP.gap;
    if (breaks[i] && i + 1 < widths.length) {
      x = left;
      line += 1;
    }
  });
  return { at, lines: widths.length ? line + 1 : 0 };
}

/** The caption above the boxes, as lines (the narrow drawing's shorter). */
function chipCaption(narrow) {
  return narrow
    ? ["The text as tokens: one box per token,", "its text above its id. \u2423 a space, \u21b5 a new line,", "\u27e8e2\u27e9 a byte that is no character alone;", "a bold box: a token the last merge made"]
    : [
        "The text as tokens: one box per token, its text above its id (\u2423 a space, \u21b5 a new line,",
        "\u27e8e2\u27e9 a byte that is no character alone); a bold box: a token the last merge made",
      ];
}

/**
 * What a redraw draws: the tokens of the analysed text after `k` merges, each box's place, and
 * the picture's shape (its width and height, and its panels: the numbers and the chart, the boxes;
 * narrow: the numbers, the boxes, the chart, one below the other), with room for at least `room`
 * lines of boxes (roomFor).
 */
export function tokensView(encoder, analysis, k, narrow = false, room = 0) {
  const ids = encoder.at(analysis.full, k);
  const width = narrow ? NARROW_WIDTH : WIDTH;
  const left = 10;
  const right = width - 10;
  const most = right - left;
  const infos = ids.map((id) => encoder.info(id));
  const widths = infos.map((info, i) => {
    const shown = Math.min(info.width, most - 2 * CHIP.pad);
    return Math.max(shown, textWidth(String(ids[i]), CHIP.idSize, { mono: true }), 8) + 2 * CHIP.pad;
  });
  const breaks = infos.map((info) => info.bytes.includes(0x0a));
  const { at, lines } = chipLayout(widths, breaks, left, right);
  const caption = chipCaption(narrow);
  const chipsTop = NUMBERS_HEIGHT; // the boxes' panel
  const boxesTop = chipsTop + 18 * caption.length + 16; // the first line of boxes
  const chipsHeight = boxesTop - chipsTop + Math.max(lines, room, 1) * CHIP.line + 8;
  const chartTop = narrow ? chipsTop + chipsHeight : 0;
  const height = narrow ? chartTop + CHART_HEIGHT : chipsTop + chipsHeight;
  const regions = narrow
    ? [
        { at: [0, 0, width, NUMBERS_HEIGHT], name: "the numbers of bytes, characters and tokens, and the last merge" },
        { at: [0, chipsTop, width, chipsHeight], name: "the text as tokens, one box per token" },
        { at: [0, chartTop, width, CHART_HEIGHT], name: "the tokens in this text as the merges grow" },
      ]
    : [
        { at: [0, 0, width, NUMBERS_HEIGHT], name: "the numbers of bytes, characters and tokens, the last merge, and the tokens as the merges grow" },
        { at: [0, chipsTop, width, chipsHeight], name: "the text as tokens, one box per token" },
      ];
  return { encoder, analysis, k, narrow, ids, infos, widths, at, lines, caption, boxesTop, chartTop, width, height, regions };
}

/** The numbers panel: the counts, and the last merge applied. */
function numbersParts(view, theme) {
  const { analysis, k, ids, narrow, encoder } = view;
  const n = encoder.merges.length;
  const c = counts(analysis.text, ids);
  const right = narrow ? NARROW_WIDTH - 14 : 360;
  const plain = { "font-size": 13, fill: theme.text };
  const value = { "font-size": 13, "font-family": MONO, fill: theme.text, "text-anchor": "end" };
  const rows = [
    ["merges applied", k, `${groupDigits(k)} of ${groupDigits(n)}`, "merges"],
    ["bytes (UTF-8)", c.bytes, groupDigits(c.bytes), "bytes"],
    ["characters", c.characters, groupDigits(c.characters), "characters"],
    ["tokens", c.tokens, groupDigits(c.tokens), "tokens"],
    ["characters per token", c.charactersPerToken, ratioText(c.charactersPerToken), "characters_per_token"],
    ["bytes per token", c.bytesPerToken, ratioText(c.bytesPerToken), "bytes_per_token"],
  ];
  const parts = [text(12, 22, `The text after ${groupDigits(k)} of ${groupDigits(n)} merges`, { "font-size": 14, "font-weight": "bold", fill: theme.text })];
  rows.forEach(([label, number, shown, quantity], r) => {
    const y = 48 + 20 * r;
    const bold = quantity === "tokens" ? { "font-weight": "bold" } : {};
    parts.push(text(12, y, label, { ...plain, ...bold }), numberText(right, y, number ?? "", shown, { quantity }, { ...value, ...bold }));
  });
  // the last merge applied: its two tokens, the token they make, how often in this text
  const lines = ["", "", ""];
  if (k > 0) {
    const [a, b] = encoder.merges[k - 1];
    const shown = (id) => `\u201c${cutToWidth(encoder.info(id).shown, SHOWN_IN_MERGE, 13)}\u201d`;
    const made = view.analysis.made[k - 1];
    lines[0] = `the last merge, number ${groupDigits(k)}, joins`;
    lines[1] = `${shown(a)} + ${shown(b)} \u2192 ${shown(256 + k - 1)}`;
    lines[2] = `into token ${256 + k - 1}: ${made === 0 ? "not in this text" : `${groupDigits(made)} time${made === 1 ? "" : "s"} in this text`}`;
  } else {
    lines[0] = "no merge applied: each byte is a token";
  }
  parts.push(
    text(12, 180, lines[0], { "font-size": 12, fill: theme.text }),
    text(12, 198, lines[1], { "font-size": 13, "font-family": MONO, fill: theme.text }),
    text(12, 216, lines[2], { "font-size": 12, fill: theme.text }),
  );
  return parts;
}

/** The chart: the tokens in this text after each number of merges, the slider's place marked. */
function chartParts(view, theme) {
  const { analysis, k, narrow, encoder, chartTop } = view;
  const n = encoder.merges.length;
  const box = narrow ? { x: 66, y: chartTop + 40, width: NARROW_WIDTH - 90, height: 120 } : { x: 476, y: 44, width: 400, height: 130 };
  const highest = Math.max(analysis.bytes, 1);
  const yticks = niceTicks(0, highest, 4);
  const xticks = niceTicks(0, Math.max(n, 1), narrow ? 4 : 5).filter((t) => Number.isInteger(t) && t <= Math.max(n, 1));
  const frame = axes(box, {
    xlim: [0, Math.max(n, 1)],
    ylim: [0, Math.max(highest, yticks[yticks.length - 1])],
    xticks,
    yticks,
    xlabels: xticks.map(groupDigits),
    ylabels: yticks.map(groupDigits),
    xlabel: "merges applied",
    ylabel: "tokens",
    grid: true,
    theme,
  });
  // the points where the count changes (and the ends): a step a merge makes, no more
  const points = [];
  analysis.counts.forEach((count, r) => {
    const keep = r === 0 || r === n || count !== analysis.counts[r - 1] || count !== analysis.counts[r + 1];
    if (keep) points.push(`${Math.round(frame.sx(r) * 100) / 100},${Math.round(frame.sy(count) * 100) / 100}`);
  });
  const x = frame.sx(k);
  const y = frame.sy(analysis.counts[k]);
  return [
    title(box, "Tokens in this text as the merges grow", theme),
    frame.markup,
    element("polyline", { points: points.join(" "), fill: "none", stroke: theme.scaled, "stroke-width": 2 }),
    element("line", { x1: x, x2: x, y1: box.y, y2: box.y + box.height, stroke: theme.text, "stroke-width": 1, "stroke-dasharray": "4 3" }),
    element("circle", { cx: x, cy: y, r: 5, fill: theme.scaled, stroke: theme.text, "stroke-width": 1.5 }),
  ];
}

/**
 * The boxes: one per token, its text and its id, each number also in the tables (a row per token,
 * "byte 4: space \"the\"", its id and bytes). Each box is a group placed by a translate and keyed
 * by the token's first byte in the text (`data-key`, also its row), so that a merge, which joins
 * two boxes, moves the boxes after it (a translate each) instead of writing every later box anew
 * (chipsPart).
 */
function chipsParts(view, theme) {
  const { k, ids, infos, widths, at, caption, boxesTop, regions } = view;
  const top = regions[1].at[1];
  const parts = caption.map((words, i) => text(10, top + 20 + 18 * i, words, { "font-size": 12, fill: theme.text }));
  parts.push(text(10, boxesTop + 24, ids.length ? "" : "No text: type some, or pick a sample.", { "font-size": 13, fill: theme.text }));
  const last = k > 0 ? 256 + k - 1 : -1;
  const chips = [];
  let offset = 0;
  ids.forEach((id, i) => {
    const info = infos[i];
    const w = widths[i];
    const { fill, ink, idInk } = chipColors(i, theme);
    const made = id === last;
    chips.push({
      key: offset,
      x: round(at[i][0]),
      y: round(boxesTop + at[i][1] * CHIP.line),
      w: round(w),
      id,
      row: offset,
      label: `byte ${offset}: ${info.words}`,
      shown: info.width > w - 2 * CHIP.pad + 0.01 ? cutToWidth(info.shown, w - 2 * CHIP.pad, CHIP.size) : info.shown,
      hex: info.hex,
      fill,
      ink,
      idInk,
      stroke: made ? theme.text : theme.edge,
      strokeWidth: made ? 3 : 1,
      weight: made ? "bold" : "normal",
    });
    offset += info.bytes.length;
  });
  parts.push(chipsPart(chips));
  return parts;
}

const SVG_NS = "http://www.w3.org/2000/svg";
const round = (v) => Math.round(v * 100) / 100; // as svg.js writes a number
// What every box's elements share, whatever the token: the rect, the text, the id, the bytes.
const CHIP_FIXED = [
  { height: CHIP.height, rx: 3 },
  { y: 17, "text-anchor": "middle", "font-size": CHIP.size, "font-family": MONO },
  { y: 33, "text-anchor": "middle", "font-size": CHIP.idSize, "font-family": MONO, "data-quantity": "each_token", "data-col": 0, "data-col-label": "id" },
  { x: 2, y: 12, "font-size": CHIP.idSize, display: "none", "data-quantity": "each_token", "data-col": 1, "data-col-label": "bytes" },
];
const CHIP_TAGS = ["rect", "text", "text", "text"];

/** What a box's elements show of its token (with CHIP_FIXED, all their attributes), and their texts. */
function chipAttributes(c) {
  return {
    group: { "data-key": c.key, transform: `translate(${round(c.x)} ${round(c.y)})` },
    attrs: [
      { width: c.w, fill: c.fill, stroke: c.stroke, "stroke-width": c.strokeWidth },
      { x: c.w / 2, "font-weight": c.weight, fill: c.ink },
      { x: c.w / 2, "font-weight": c.weight, fill: c.idInk, "data-row": c.row, "data-row-label": c.label, "data-value": String(c.id) },
      { "data-row": c.row, "data-row-label": c.label, "data-value": c.hex },
    ],
    texts: ["", c.shown, String(c.id), c.hex],
  };
}

// Each field of a box, and the elements (0 the group, 1 … 4 its children) whose attributes or
// texts it sets: a move sets only what changed.
const CHIP_FIELDS = {
  x: [0],
  y: [0],
  key: [0],
  w: [1, 2, 3],
  fill: [1],
  stroke: [1],
  strokeWidth: [1],
  weight: [2, 3],
  ink: [2],
  idInk: [3],
  shown: [2],
  id: [3],
  row: [3, 4],
  label: [3, 4],
  hex: [4],
};

/** Set on a box's group `node` what `chip` shows and `old` (what it showed, null: unknown) did not. */
function setChip(node, chip, old) {
  const touched = new Set();
  for (const field in CHIP_FIELDS) if (!old || old[field] !== chip[field]) CHIP_FIELDS[field].forEach((e) => touched.add(e));
  if (!touched.size) return;
  const { group, attrs, texts } = chipAttributes(chip);
  const elements = [node, ...node.children];
  for (const e of touched) {
    const target = elements[e];
    const set = e === 0 ? group : attrs[e - 1];
    for (const name in set) target.setAttribute(name, String(typeof set[name] === "number" ? round(set[name]) : set[name]));
    if (e > 0 && target.textContent !== texts[e - 1]) target.textContent = texts[e - 1];
  }
}

/** What a box's group drawn from markup shows, as chipsParts describes a box. */
function shownChip(node) {
  const [rect, shown, id, hex] = node.children;
  const [x, y] = node.getAttribute("transform").match(/[-\d.]+/g).map(Number);
  return {
    key: Number(node.getAttribute("data-key")),
    x,
    y,
    w: Number(rect.getAttribute("width")),
    id: Number(id.textContent),
    row: Number(id.getAttribute("data-row")),
    label: id.getAttribute("data-row-label"),
    shown: shown.textContent,
    hex: hex.textContent,
    fill: rect.getAttribute("fill"),
    ink: shown.getAttribute("fill"),
    idInk: id.getAttribute("fill"),
    stroke: rect.getAttribute("stroke"),
    strokeWidth: Number(rect.getAttribute("stroke-width")),
    weight: shown.getAttribute("font-weight"),
  };
}

/** A new box's group, its fixed attributes set (setChip sets the rest). */
function newChip() {
  const node = document.createElementNS(SVG_NS, "g");
  CHIP_TAGS.forEach((tag, k) => {
    const child = document.createElementNS(SVG_NS, tag);
    for (const name in CHIP_FIXED[k]) child.setAttribute(name, String(CHIP_FIXED[k][name]));
    node.append(child);
  });
  return node;
}

// For each group of boxes shown: its boxes' groups by key (each node keeps what it shows as __chip).
const chipNodes = new WeakMap();

/**
 * The boxes as an updatable part of draw(parts) (controls.js markupOf): its markup, or, from one
 * move to the next, the boxes shown kept by key and changed in place: a box that stays only moves,
 * a box made by a merge replaces the two it joins.
 */
function chipsPart(chips) {
  return {
    key: "tokens",
    markup() {
      const boxes = chips.map((c) => {
        const { group, attrs, texts } = chipAttributes(c);
        const children = CHIP_TAGS.map((tag, k) => element(tag, { ...CHIP_FIXED[k], ...attrs[k] }, escapeXml(texts[k])));
        return element("g", group, children.join(""));
      });
      return element("g", {}, boxes.join(""));
    },
    update([group]) {
      let nodes = chipNodes.get(group);
      if (nodes === undefined) {
        // drawn from markup: what each node shows is read from it once
        nodes = new Map();
        for (const node of group.children) {
          node.__chip = shownChip(node);
          nodes.set(node.__chip.key, node);
        }
        chipNodes.set(group, nodes);
      }
      const keys = new Set();
      for (const chip of chips) {
        keys.add(chip.key);
        let node = nodes.get(chip.key);
        if (node === undefined) {
          node = newChip();
          group.append(node);
          nodes.set(chip.key, node);
        }
        setChip(node, chip, node.__chip ?? null);
        node.__chip = chip;
      }
      for (const [key, node] of nodes) {
        if (keys.has(key)) continue;
        node.remove();
        nodes.delete(key);
      }
    },
  };
}

/** tokensView's picture in parts, in order: a move redraws only the parts whose markup changed. */
export function tokensParts(view, theme) {
  const background = element("rect", { x: 0, y: 0, width: view.width, height: view.height, fill: theme.background });
  return [background, ...numbersParts(view, theme), ...chartParts(view, theme), ...chipsParts(view, theme)];
}

/** tokensView's whole picture as SVG markup. */
export function drawTokens(view, theme) {
  return tokensParts(view, theme).map(markupOf).join("");
}

// --- what a screen reader hears ------------------------------------------------------------------

/** The sample whose text `words` is, else null. */
export function sampleOf(samples, words) {
  return Object.keys(samples).find((name) => samples[name] === words) ?? null;
}

/**
 * The state a sentence tells: which text (a sample's or the reader's), the merges applied, the
 * counts, and the last merge in words.
 */
export function describe(view, samples) {
  const { analysis, k, ids, encoder } = view;
  const sample = sampleOf(samples, analysis.text);
  const c = counts(analysis.text, ids);
  let merge = "no merge applies, so each byte is a token";
  if (k > 0) {
    const [a, b] = encoder.merges[k - 1];
    const said = (id) => tokenWords(encoder.info(id).bytes);
    const made = analysis.made[k - 1];
    const where = made === 0 ? "not in this text" : `${made} time${made === 1 ? "" : "s"} in this text`;
    merge = `merge ${k} joins ${said(a)} and ${said(b)} into ${said(256 + k - 1)}, ${where}`;
  }
  return {
    text: sample === null ? `your text of ${c.characters} character${c.characters === 1 ? "" : "s"}` : `the ${sample} sample`,
    merges: String(k),
    of: String(encoder.merges.length),
    counts: `${c.tokens} token${c.tokens === 1 ? "" : "s"} for ${c.bytes} byte${c.bytes === 1 ? "" : "s"}, ${ratioText(c.charactersPerToken)} characters per token`,
    merge,
  };
}

/**
 * One sentence saying what a move changed, from describe before and after it: "Merges 12 of 1024
 * (was 11): 57 tokens for 87 bytes, 1.05 characters per token; merge 12 joins …".
 */
export function moveSentence(was, now) {
  const changed = ["text", "merges"].filter((key) => was[key] !== now[key]);
  const of = (key) => (key === "merges" ? ` of ${now.of}` : "");
  const head = changed.map((key) => `${key} ${now[key]}${of(key)} (was ${was[key]})`).join(", ");
  const sentence = `${head ? `${head}: ` : ""}${now.counts}; ${now.merge}.`;
  return sentence[0].toUpperCase() + sentence.slice(1);
}

// --- the explorer ---------------------------------------------------------------------------------

function render({ model, el }) {
  const send = sender(model);
  let encoder = null;
  let analysis = null;
  let view = null;
  const shape = tokensView(makeEncoder([], null), { text: "", full: [], bytes: 0, characters: 0, counts: [0], made: [] }, 0);
  const { root, controls, message, draw, reshape, narrowWhen } = explorerRoot(
    el,
    "tokens",
    shape.width,
    shape.height,
    "text as tokens of byte-pair encoding, the merges applying one by one",
    shape.regions,
    () => {
      const now = describe(view, model.get("samples"));
      const sentence = said === null ? "" : moveSentence(said, now);
      said = now;
      return sentence;
    },
  );
  let said = null;
  // the controls: the sample, the style; the merges (a slider and one step each way); the text
  const samples = html("select", { "data-lm-suppress-shortcuts": "true", "data-control": "sample", "aria-label": "sample text" });
  Object.assign(samples.style, { maxWidth: "100%", minHeight: "24px" });
  const sampleLabel = html("label", {}, "sample ", samples);
  Object.assign(sampleLabel.style, { marginRight: "10px", maxWidth: "100%" });
  let typed = ""; // the reader's own text, which "your text" brings back
  samples.addEventListener("change", () => {
    const chosen = samples.value === "" ? typed : model.get("samples")[samples.value];
    box.value = chosen;
    send({ text: chosen });
  });
  const style = styleSelect({ model, value: model.get("style_name"), onChange: (s) => send({ style_name: s }) });
  const merges = slider({
    name: "n_merges",
    label: "merges",
    ariaLabel: "merges applied",
    min: 0,
    max: 0,
    step: 1,
    value: 0,
    format: (v) => `${v}/${model.get("merges").length}`,
    width: "360px",
    onInput: (v) => send({ n_merges: v }),
  });
  const stepBy = (d) => {
    const k = Math.min(Math.max(model.get("n_merges") + d, 0), model.get("merges").length);
    if (k !== model.get("n_merges")) send({ n_merges: k });
  };
  // the visible text is the accessible name (WCAG 2.5.3): no aria-label that says it otherwise
  const back = button({ name: "previous_merge", label: "one merge fewer", onClick: () => stepBy(-1) });
  const forward = button({ name: "next_merge", label: "one merge more", onClick: () => stepBy(1) });
  const box = html("textarea", {
    "data-lm-suppress-shortcuts": "true",
    "data-control": "text",
    "aria-label": "text to turn into tokens",
    rows: 3,
    spellcheck: "false",
    maxlength: model.get("max_text"),
  });
  Object.assign(box.style, { width: "100%", maxWidth: "100%", boxSizing: "border-box", minHeight: "48px", fontFamily: "DejaVu Sans Mono, monospace", fontSize: "14px" });
  box.addEventListener("input", () => {
    const words = wellFormed(box.value);
    if (sampleOf(model.get("samples"), words) === null) typed = words;
    send({ text: words });
  });
  const boxLabel = html("label", {}, `your text (up to ${groupDigits(model.get("max_text"))} characters; tokens follow as you type)`, box);
  Object.assign(boxLabel.style, { display: "block", width: "100%" });
  controls.append(row(sampleLabel, style.node), row(merges.node, back, forward), row(boxLabel));

  const narrow = narrowWhen(WIDTH, () => redraw(true));
  let shownSamples = null;
  let shownMerges = null;
  let room = -1; // the lines of boxes the picture makes room for (roomFor); none yet
  let settling = null; // the timer that gives back the room no longer needed, once the reader pauses
  const redraw = (settle = false) => {
    const table = model.get("merges");
    const rule = model.get("rule") ?? null;
    if (encoder === null || encoder.merges !== table || encoder.rule !== rule) {
      encoder = makeEncoder(table, rule);
      analysis = null;
    }
    const words = model.get("text");
    if (analysis === null || analysis.text !== words) analysis = analyse(encoder, words);
    const offered = model.get("samples");
    if (offered !== shownSamples) {
      shownSamples = offered;
      samples.replaceChildren(html("option", { value: "" }, "your text"), ...Object.keys(offered).map((name) => html("option", { value: name }, name)));
    }
    const sample = sampleOf(offered, words);
    if (sample === null && words !== typed) typed = words;
    samples.value = sample ?? "";
    if (box.value !== words) box.value = words;
    if (shownMerges !== table.length) {
      shownMerges = table.length;
      merges.input.max = String(table.length);
    }
    const k = Math.min(model.get("n_merges"), table.length);
    merges.set(k);
    merges.input.setAttribute("aria-valuetext", `${k} of ${table.length} merges`);
    back.disabled = k === 0;
    forward.disabled = k === table.length;
    style.select.value = styleNameOf(model);
    message.textContent = "";
    const theme = themeOf(model);
    applyTheme(root, theme);
    view = tokensView(encoder, analysis, k, narrow(), room);
    const wanted = roomFor(view.lines, room, settle === true);
    clearTimeout(settling);
    if (wanted !== room) {
      room = wanted;
      view = tokensView(encoder, analysis, k, narrow(), room);
    }
    if (roomFor(view.lines, room, true) !== room) settling = setTimeout(() => redraw(true), 600); // lines left empty
    if (said === null) said = describe(view, offered);
    reshape(view.width, view.height, view.regions);
    draw(tokensParts(view, theme));
  };
  const unbind = bind(model, ["merges", "rule", "text", "n_merges", "samples", "style_name"], () => redraw());
  return () => {
    clearTimeout(settling);
    cancelAnimationFrame(waiting);
    unbind();
  };
}

export default { render };
