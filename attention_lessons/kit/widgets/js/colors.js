// Colours: matplotlib's colour maps as lookup tables (sent from Python, never retyped here) and
// the WCAG contrast that picks the colour of the text written on a coloured cell.

/** "#rrggbb" -> [r, g, b] in 0..1. */
export function hexToRgb(hex) {
  const value = Number.parseInt(hex.slice(1, 7), 16);
  return [(value >> 16) & 255, (value >> 8) & 255, value & 255].map((c) => c / 255);
}

/** Relative luminance of an sRGB colour (WCAG 2). */
export function relativeLuminance(hex) {
  const [r, g, b] = hexToRgb(hex).map((c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG contrast ratio of two colours, 1 to 21. */
export function contrastRatio(a, b) {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** Of a dark and a light text colour, the one with the higher contrast on `background`. */
export function textColorOn(background, dark, light) {
  return contrastRatio(background, dark) >= contrastRatio(background, light) ? dark : light;
}

/**
 * The colour of `value` in a colour map given as a lookup table of N colours, with matplotlib's
 * linear normalisation between lo and hi (values outside take the end colours).
 */
export function colormapColor(table, value, lo, hi) {
  const n = table.length;
  const x = hi > lo ? (value - lo) / (hi - lo) : 0.5;
  const index = Math.min(n - 1, Math.max(0, Math.floor(x * n)));
  return table[index];
}
