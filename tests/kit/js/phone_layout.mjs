// Shared by the Node tests of the explorers' narrow drawings: how wide a panel a phone shows whole,
// and where an SVG string's texts reach (their widths estimated).
import { holding, regionOf } from "../../../attention_lessons/kit/widgets/js/a11y.js";
import { textWidth } from "../../../attention_lessons/kit/widgets/js/svg.js"; // the kit's estimate, as heatmapCells uses it

// The widest panel a 390 px phone shows whole with its 12-unit text at 11 px (controls.js: a
// panel is never drawn narrower than 11/12 of its units, plus a pixel).
export const PHONE_UNITS = 424;

/**
 * The texts of an SVG string that reach beyond the region ([x, y, w, h]) holding their anchor, in
 * x (their width estimated; a turned text, only its anchor): a panel grows to hold those on the page.
 */
export function textsBeyond(svg, regions) {
  const beyond = [];
  for (const [, attrs, label] of svg.matchAll(/<text([^>]*)>([^<]*)<\/text>/g)) {
    const get = (name) => attrs.match(new RegExp(` ${name}="([^"]*)"`))?.[1];
    const [x, y, size] = ["x", "y", "font-size"].map((name) => Number(get(name)));
    const region = regions.find(([rx, ry, w, h]) => x >= rx && x <= rx + w && y >= ry && y <= ry + h);
    const width = get("transform") ? 0 : textWidth(label, size, { mono: /Mono/.test(get("font-family") ?? ""), bold: get("font-weight") === "bold" });
    const start = { start: x, middle: x - width / 2, end: x - width }[get("text-anchor") ?? "start"];
    if (!region || start < region[0] || start + width > region[0] + region[2]) beyond.push(label);
  }
  return beyond;
}

/**
 * Each region's box grown to hold its texts, as controls.js grows it: a text goes to the region
 * holding the centre of its box, estimated from its anchor, size and length (0.6 em a character,
 * a rotated label as wide as it is tall).
 */
export function grownRegions(svg, regions) {
  const at = regions.map((r) => r.at);
  const texts = at.map(() => []);
  for (const [, attrs, shown] of svg.matchAll(/<text([^>]*)>([^<]*)<\/text>/g)) {
    const get = (name) => attrs.match(new RegExp(` ${name}="([^"]*)"`))?.[1];
    const size = Number(get("font-size"));
    const long = shown.replace(/&#\d+;/g, "x").length * 0.6 * size;
    const width = get("transform") ? size : long;
    const anchor = get("text-anchor") ?? "start";
    const x = Number(get("x")) - { start: 0, middle: width / 2, end: width }[anchor];
    const box = { x, y: Number(get("y")) - size, width, height: size * 1.2 };
    texts[regionOf(at, box.x + box.width / 2, box.y + box.height / 2)].push(box);
  }
  return at.map((r, k) => holding(r, texts[k]));
}
