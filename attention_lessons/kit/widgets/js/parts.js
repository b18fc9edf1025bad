// What an explorer's draw(parts) takes (controls.js): a part is markup, or an updatable part whose
// markup it makes on demand (svg.js's groupPart and heatmapParts make such parts).

/**
 * The markup of a part of draw(parts): a string is its own markup; an updatable part
 * `{key, markup, update}` gives it by `markup()`. Its `key` names all that its elements share
 * from draw to draw (their number, kinds and the attributes that `update` leaves alone), and
 * `update(nodes)` makes the elements `markup()` would make out of those last drawn for that key.
 */
export function markupOf(part) {
  return typeof part === "string" ? part : part.markup();
}
