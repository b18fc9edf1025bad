// The controls every explorer builds: a root <div>, labelled native sliders (keyboard-operable),
// checkboxes, a style select and buttons, each marked with data-control for tests.

import { announcement, holding, numbersIn, numberTables, regionOf } from "./a11y.js";
import { pageStyle, watchPageStyle } from "./page.js";
import { markupOf } from "./parts.js";

export { markupOf }; // parts.js's, for the explorers

const SVG_NS = "http://www.w3.org/2000/svg";
// JupyterLab and Notebook 7 (Lumino) match their keyboard shortcuts (arrow keys, Home, End, ...)
// against the focused element unless it carries this attribute: it keeps the keys for the control.
const OWN_KEYS = { "data-lm-suppress-shortcuts": "true" };

/** Make an HTML element with attributes and children. */
export function html(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) node.setAttribute(key, String(value));
  }
  node.append(...children);
  return node;
}

/** Style that hides an element from the eye but not from screen readers. */
const VISUALLY_HIDDEN = {
  position: "absolute",
  width: "1px",
  height: "1px",
  overflow: "hidden",
  clipPath: "inset(50%)",
  whiteSpace: "nowrap",
};
// The smallest text an explorer draws is 12 units of its viewBox; a panel is never drawn narrower
// than 11/12 of its width, rounded up with a pixel to spare (its text never below 11 px): where
// the page is narrower, the panel scrolls sideways by itself.
const MIN_SCALE = 11 / 12;

/**
 * The explorer's root: <div class="attnlib-explorer attnlib-KIND">, a region named "Explorer: LABEL",
 * holding a controls area, a message line, the picture, the numbers it draws as tables (visually
 * hidden) and a polite live region that says in one sentence what a move of a control changed
 * (a11y.announcement).
 *
 * The explorer draws into `svg` (a viewBox of width × height units, hidden); each draw is shown as
 * one SVG per region of `regions` ({at: [x, y, w, h], name}; by default the whole of `svg`'s
 * viewBox, which the explorer may change), each
 * an image with a <title> and <desc>, side by side while they fit and stacked below each other
 * where they do not. Each element drawn goes to the region that holds the centre of its box; a
 * region grows to hold its texts whole (a label drawn across its edge is not cut).
 * `say(before, after)` makes the live region's sentence from the numbers drawn before and after a
 * move (by default a11y.announcement: the number that moved most).
 *
 * An explorer whose panels are wider than a phone can show (see `narrowWhen`) has a narrow drawing
 * too: `reshape(width, height, regions)` sets the viewBox and regions that the next draw fills.
 *
 * A redraw keeps the nodes shown: where the new drawing has the same elements as the last one,
 * only the attributes and texts that differ are changed (patchChildren), and neither the regions
 * nor the texts they grow to hold are measured again (a patched text keeps its panel's box). The
 * tables and the sentence follow once the reader pauses (250 ms after the last redraw), so that a
 * slider held down redraws only its picture. Instead of setting
 * `svg.innerHTML`, an explorer may call the returned `draw(parts)` with its markup in parts (a
 * list of strings): a move then parses, out of the page, only the parts whose markup changed, and
 * patches them into the nodes shown.
 */
export function explorerRoot(el, kind, width, height, label, regions = null, say = announcement) {
  const controls = html("div", { class: "attnlib-controls" });
  const message = html("div", { class: "attnlib-message", role: "status" });
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("aria-hidden", "true");
  Object.assign(svg.style, { position: "absolute", visibility: "hidden", width: `${width}px`, left: "0", top: "0" });
  const pictures = html("div", { class: "attnlib-pictures" });
  Object.assign(pictures.style, { display: "flex", flexWrap: "wrap", gap: "4px 8px", alignItems: "flex-start" });
  const numbers = html("div", { class: "attnlib-numbers" });
  Object.assign(numbers.style, VISUALLY_HIDDEN);
  const live = html("div", { class: "attnlib-announce", "aria-live": "polite" });
  Object.assign(live.style, VISUALLY_HIDDEN);
  // a landmark named by what it shows, so that a screen reader's list of regions reaches it
  const root = html(
    "div",
    { class: `attnlib-explorer attnlib-${kind}`, role: "region", "aria-label": `Explorer: ${label}` },
    controls,
    message,
    pictures,
    numbers,
    live,
    svg,
  );
  Object.assign(root.style, {
    position: "relative",
    padding: "6px",
    boxSizing: "border-box",
    maxWidth: "100%",
    fontFamily: "DejaVu Sans, Verdana, sans-serif",
    fontSize: "14px",
  });
  el.replaceChildren(root);
  const id = `attnlib-${kind}-${Math.random().toString(36).slice(2, 10)}`;
  let said = null; // the numbers last announced
  let timer = null;
  let moved = false; // a redraw is announced only where the reader moved a control (not a theme change)
  let drawings = null; // the <g> of each picture shown, kept from draw to draw
  let images = null; // the <svg> of each picture shown
  let shownKey = null; // the regions those pictures were made for
  let shownBox = null; // the viewBox of svg they were made from
  // for a drawing of that signature: the region of each element, and each region's box grown to hold its texts
  let layout = { signature: null, where: [], boxes: [] };
  const grownTo = new Map(); // each region's box as grown to hold its texts so far
  const tables = tableUpdater(numbers, label);
  let shape = regions; // the regions of the drawing now (null: the whole of svg's viewBox)
  // The numbers as tables and the sentence of a move: once the reader pauses (250 ms after the
  // last redraw), so that a slider held down redraws its picture alone.
  const speak = () => {
    const drawn = numbersIn(pictures);
    tables(numberTables(drawn));
    const sentence = say(said, drawn);
    said = drawn;
    if (moved) live.textContent = sentence || "No number shown changed.";
    moved = false;
  };
  let waiting = 0; // the frame that looks again whether the explorer is in the page
  const present = () => {
    if (!svg.firstChild) return;
    // JupyterLab and Notebook 7 may render a widget before its output area puts it in the page,
    // where every box measures 0: every element would go to the first panel, and that layout be
    // kept for the drawing's signature. Place the drawing once the explorer is in the page.
    if (!svg.isConnected) {
      waiting ||= requestAnimationFrame(() => {
        waiting = 0;
        present();
      });
      return;
    }
    const { x: vx, y: vy, width: vw, height: vh } = svg.viewBox.baseVal;
    const shown = shape ?? [{ at: [vx, vy, vw, vh], name: label }];
    const items = [...svg.children];
    // Which region each element goes to, from its box, and the box of each region grown to hold
    // its texts: measured (a layout of the hidden SVG) only for a drawing of a new signature (the
    // sequence of elements drawn and the regions), else the same as for the last drawing of that
    // signature.
    const key = JSON.stringify(shown);
    shownBox = svg.getAttribute("viewBox");
    const signature = `${key}|${items.map((item) => item.tagName).join(" ")}`;
    if (signature !== layout.signature) {
      const at = shown.map((r) => r.at);
      const texts = shown.map(() => []); // the boxes of the texts of each region, as drawn (rotated labels too)
      const where = items.map((item) => {
        const measured = item.getBBox && (shown.length > 1 || item.tagName === "text");
        const box = measured ? item.getBBox() : { x: 0, y: 0, width: 0, height: 0 };
        const k = shown.length === 1 ? 0 : regionOf(at, box.x + box.width / 2, box.y + box.height / 2);
        if (item.tagName === "text") texts[k].push(drawnBox(item, box));
        return k;
      });
      // grown, never shrunk, while the region stays: a panel does not change size as a label
      // changes; measured with the regions, so that a patch keeps the boxes of its signature
      const boxes = shown.map(({ at: region }, k) => {
        const name = `${k} ${region.join(" ")}`;
        const grown = holding(grownTo.get(name) ?? region, texts[k]);
        grownTo.set(name, grown);
        return grown;
      });
      layout = { signature, where, boxes };
    }
    const groups = shown.map(() => []);
    items.forEach((item, i) => groups[layout.where[i]].push(item));
    if (drawings && key === shownKey) {
      // the same pictures: only what changed is changed in them, their nodes kept
      drawings.forEach((drawing, k) => patchChildren(drawing, groups[k]));
      images.forEach((image, k) => fit(image, layout.boxes[k]));
    } else {
      drawings = [];
      images = [];
      shownKey = key;
      pictures.replaceChildren(...shown.map(({ name }, k) => picture(layout.boxes[k], name, k, shown.length, groups[k])));
    }
    svg.replaceChildren();
    observer.takeRecords(); // the emptying of svg is no new drawing
    partNodes = null;
    if (partCounts) {
      // the nodes shown for each part of draw(parts), in the order drawn
      const children = drawings.map((drawing) => drawing.children);
      const next = drawings.map(() => 0);
      const shownItems = layout.where.map((k) => children[k][next[k]++]);
      let start = 0;
      partNodes = partCounts.map((count) => shownItems.slice(start, (start += count)));
      partCounts = null;
    }
    drawn();
  };
  // after a redraw: the tables now on the first, else once the reader pauses
  const drawn = () => {
    if (said === null) {
      said = numbersIn(pictures);
      tables(numberTables(said));
      return;
    }
    clearTimeout(timer);
    timer = setTimeout(speak, 250);
  };
  let lastParts = null; // the markup (or key) of each part last drawn with draw(parts)
  let partCounts = null; // the number of elements of each part, until present() has placed them
  let partNodes = null; // the elements shown for each part
  let lastElements = null; // the markup of each of those elements, where the nodes are what it made
  const scratch = document.createElementNS(SVG_NS, "svg");
  const parse = (markup) => {
    scratch.innerHTML = markup;
    return [...scratch.children];
  };
  /**
   * Draw a picture given as parts of markup (their concatenation is the whole picture): the parts
   * whose markup is the same as in the last draw are left alone; in the others, as long as each
   * still makes as many elements, only the elements whose markup changed are parsed and patched
   * into the nodes shown; else the whole picture is drawn anew into `svg`. A part may also be an updatable part ({key, markup,
   * update}; see markupOf): where its key is the last draw's, `update(nodes)` sets what changed
   * on the elements shown for it, with no markup made or parsed.
   */
  const draw = (parts) => {
    const keys = parts.map(partKey);
    if (partNodes && lastParts.length === parts.length && svg.getAttribute("viewBox") === shownBox) {
      // each changed part's elements, as markup (null: the part is the same, or updated in place)
      const elements = parts.map((part, i) => (keys[i] === lastParts[i] ? null : topElements(markupOf(part))));
      if (elements.every((e, i) => e === null || e.length === partNodes[i].length)) {
        const changed = []; // [part, element] of each element whose markup changed
        const markup = [];
        elements.forEach((e, i) => {
          if (e === null) {
            if (typeof parts[i] !== "string") {
              parts[i].update(partNodes[i]);
              lastElements[i] = null; // the nodes are no longer what any markup made
            }
            return;
          }
          e.forEach((m, k) => {
            if (lastElements[i]?.[k] !== m) {
              changed.push([i, k]);
              markup.push(m);
            }
          });
          lastElements[i] = e;
        });
        const fresh = parse(markup.join(""));
        if (fresh.length === changed.length) {
          changed.forEach(([i, k], c) => {
            const o = partNodes[i][k];
            const f = fresh[c];
            if (o.nodeName === f.nodeName) patchElement(o, f);
            else {
              o.replaceWith(f);
              partNodes[i][k] = f;
            }
          });
          lastParts = keys;
          drawn();
          return;
        }
      }
    }
    const markups = parts.map(markupOf);
    const nodes = markups.map(parse);
    lastParts = keys;
    lastElements = markups.map(topElements);
    partCounts = nodes.map((n) => n.length);
    partNodes = null;
    svg.replaceChildren(...nodes.flat());
  };
  const picture = (at, name, k, count, items) => {
    const image = document.createElementNS(SVG_NS, "svg");
    fit(image, at);
    image.setAttribute("role", "img");
    image.setAttribute("aria-labelledby", `${id}-title-${k}`);
    image.setAttribute("aria-describedby", `${id}-desc-${k}`);
    image.setAttribute("font-family", "DejaVu Sans, Verdana, sans-serif");
    Object.assign(image.style, { display: "block", maxWidth: "100%", height: "auto" });
    const title = document.createElementNS(SVG_NS, "title");
    title.id = `${id}-title-${k}`;
    title.textContent = name;
    const desc = document.createElementNS(SVG_NS, "desc");
    desc.id = `${id}-desc-${k}`;
    desc.textContent = `Part ${k + 1} of ${count} of the picture: ${label}. Its numbers are in the tables after it.`;
    // what is drawn is out of the accessibility tree: the image is its title and description,
    // its numbers are in the tables
    const drawing = document.createElementNS(SVG_NS, "g");
    drawing.setAttribute("aria-hidden", "true");
    drawing.append(...items);
    drawings.push(drawing);
    images.push(image);
    image.append(title, desc, drawing);
    const frame = html("div", { class: "attnlib-panel" }, image);
    Object.assign(frame.style, { maxWidth: "100%", minWidth: "0", overflowX: "auto", flex: "0 1 auto" });
    return frame;
  };
  /** Draw from now on into a viewBox of `w` × `h` units cut into `into` (as `regions`), where that is new. */
  const reshape = (w, h, into) => {
    if (svg.getAttribute("viewBox") === `0 0 ${w} ${h}` && JSON.stringify(into) === JSON.stringify(shape)) return;
    svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
    svg.style.width = `${w}px`;
    shape = into;
    partNodes = null; // the next draw(parts) draws anew, into the new regions
  };
  /**
   * Whether the explorer must draw narrow: a panel `widest` units wide would not show whole in the
   * pictures' width with its text at 11 px or more (see MIN_SCALE). Returns that answer as a
   * function of no argument, cheap to call in every redraw: the width is measured now and on each
   * resize of the pictures (a window resized, a phone turned, the explorer first laid out), never
   * in a move, which would make the page lay itself out in the middle of a redraw. `redraw` is
   * called again whenever a resize changes the answer. Before the explorer is laid out (no width
   * yet) the answer is false.
   */
  const narrowWhen = (widest, redraw) => {
    const measured = () => pictures.clientWidth > 0 && Math.ceil(widest * MIN_SCALE) + 1 > pictures.clientWidth;
    let narrow = measured();
    new ResizeObserver(() => {
      if (measured() === narrow) return;
      narrow = !narrow;
      redraw();
    }).observe(pictures);
    return () => narrow;
  };
  const observer = new MutationObserver(present);
  observer.observe(svg, { childList: true });
  for (const event of ["input", "change", "click"]) controls.addEventListener(event, () => (moved = true));
  return { root, controls, message, svg, draw, reshape, narrowWhen };
}

/**
 * The markup of each top-level element of `markup` (made by svg.js: text and attribute values
 * escaped, so that every "<" opens or closes a tag); text between them is left out.
 */
export function topElements(markup) {
  const found = [];
  let depth = 0;
  let start = 0;
  for (let at = markup.indexOf("<"); at !== -1; at = markup.indexOf("<", at + 1)) {
    const end = markup.indexOf(">", at);
    if (end === -1) throw new Error(`unclosed tag in ${markup.slice(at, at + 40)}`);
    if (markup[at + 1] === "/") {
      depth -= 1;
      if (depth === 0) found.push(markup.slice(start, end + 1));
    } else if (markup[end - 1] === "/") {
      if (depth === 0) found.push(markup.slice(at, end + 1));
    } else {
      if (depth === 0) start = at;
      depth += 1;
    }
    at = end;
  }
  return found;
}

/** What draw(parts) compares a part by: a string's markup, an updatable part's key (set apart). */
function partKey(part) {
  return typeof part === "string" ? part : `\u0000${part.key}`;
}

/**
 * Make `parent`'s children the nodes `fresh` (new nodes, not in the document) while keeping the
 * nodes it has: where a child has the same kind and name as its fresh counterpart (at the same
 * place), only its attributes and text that differ are set (recursively); elsewhere the fresh node
 * takes its place; children beyond the fresh ones go, fresh ones beyond the old are added.
 * What the page shows is then `fresh`, and the browser restyles only what changed.
 */
export function patchChildren(parent, fresh) {
  const old = parent.childNodes;
  const common = Math.min(old.length, fresh.length);
  for (let i = 0; i < common; i += 1) {
    const o = old[i];
    const f = fresh[i];
    if (o.nodeType !== f.nodeType || o.nodeName !== f.nodeName) parent.replaceChild(f, o);
    else if (o.nodeType === 1) patchElement(o, f);
    else if (o.nodeValue !== f.nodeValue) o.nodeValue = f.nodeValue;
  }
  while (old.length > fresh.length) parent.lastChild.remove();
  if (fresh.length > common) parent.append(...fresh.slice(common));
}

/** Give the element `o` the attributes and children of `f` (same name), keeping its nodes. */
function patchElement(o, f) {
  const attrs = f.attributes;
  for (let i = 0; i < attrs.length; i += 1) {
    const { name, value } = attrs[i];
    if (o.getAttribute(name) !== value) o.setAttribute(name, value);
  }
  if (o.attributes.length !== attrs.length) {
    for (const { name } of [...o.attributes]) if (!f.hasAttribute(name)) o.removeAttribute(name);
  }
  if (o.firstChild || f.firstChild) patchChildren(o, [...f.childNodes]);
}

/**
 * The function that shows numberTables' tables in `container`: where the tables have the same
 * captions, headers and sizes as those shown, only the cells whose text changed are set.
 */
function tableUpdater(container, label) {
  let shape = null;
  let cells = [];
  return (tables) => {
    const now = JSON.stringify(tables.map((t) => [t.caption, t.corner, t.columns, t.rows.map((r) => [r.header, r.cells.length])]));
    if (now !== shape) {
      shape = now;
      const built = tables.map((t) => tableOf(t, label));
      container.replaceChildren(...built.map((b) => b.table));
      cells = built.flatMap((b) => b.cells);
      return;
    }
    let k = 0;
    for (const t of tables) {
      for (const r of t.rows) {
        for (const text of r.cells) {
          if (cells[k].textContent !== text) cells[k].textContent = text;
          k += 1;
        }
      }
    }
  };
}

/** The box of an SVG element `item` whose own box is `box`, through its transform (a rotated label). */
function drawnBox(item, box) {
  const m = item.transform?.baseVal?.consolidate()?.matrix;
  if (!m) return box;
  const corners = [
    [box.x, box.y],
    [box.x + box.width, box.y],
    [box.x, box.y + box.height],
    [box.x + box.width, box.y + box.height],
  ].map(([px, py]) => [m.a * px + m.c * py + m.e, m.b * px + m.d * py + m.f]);
  const xs = corners.map((c) => c[0]);
  const ys = corners.map((c) => c[1]);
  return { x: Math.min(...xs), y: Math.min(...ys), width: Math.max(...xs) - Math.min(...xs), height: Math.max(...ys) - Math.min(...ys) };
}

/**
 * Show the box `at` ([x, y, w, h] of the drawing) in the picture `image`: its viewBox, and its
 * width (w px, never below MIN_SCALE of it); nothing is written where it shows that box already.
 */
function fit(image, [x, y, w, h]) {
  const box = `${x} ${y} ${w} ${h}`;
  if (image.getAttribute("viewBox") === box) return;
  image.setAttribute("viewBox", box);
  Object.assign(image.style, { width: `${w}px`, minWidth: `${Math.ceil(w * MIN_SCALE) + 1}px` });
}

/** An HTML table of numberTables' kind, with a caption, column headers and row headers; and its cells. */
function tableOf({ caption, corner, columns, rows }, label) {
  const head = html("tr", {}, html("th", { scope: "col" }, corner), ...columns.map((c) => html("th", { scope: "col" }, c)));
  const cells = [];
  const body = rows.map((r) => {
    const tds = r.cells.map((c) => html("td", {}, c));
    cells.push(...tds);
    return html("tr", {}, html("th", { scope: "row" }, r.header), ...tds);
  });
  const table = html("table", {}, html("caption", {}, `${label}: ${caption}`), html("thead", {}, head), html("tbody", {}, ...body));
  return { table, cells };
}

/**
 * Bind an explorer's picture to its model: call `redraw()` now and on every change of the traits
 * `names` (anywidget's "change:NAME" events). Returns the function that unbinds it, which is what
 * render() returns (anywidget calls it when the view goes).
 */
export function bind(model, names, redraw) {
  const events = names.map((name) => `change:${name}`);
  events.forEach((event) => model.on(event, redraw));
  const unwatch = watchPageStyle(redraw);
  redraw();
  return () => {
    events.forEach((event) => model.off(event, redraw));
    unwatch();
  };
}

/** A function that sets traits of the model and sends them to Python: send({ d_k: 4 }). */
export function sender(model) {
  return (changes) => {
    model.set(changes);
    model.save_changes();
  };
}

// The models whose style the reader chose in their style select (which then wins over the page).
const chosen = new WeakSet();

/**
 * The colours an explorer draws with (its "themes" trait at a style): the page's mode where the
 * page has one (pageStyle), unless the reader chose a style in the explorer's style select; else
 * the model's "style_name".
 */
export function themeOf(model) {
  return model.get("themes")[styleNameOf(model)];
}

/** The name of the style an explorer draws in ("light" or "dark"): see themeOf. */
export function styleNameOf(model) {
  const page = chosen.has(model) ? null : pageStyle();
  return page ?? model.get("style_name");
}

/** Colour the root for a theme (the style's background and text). */
export function applyTheme(root, theme) {
  // only where the theme changed: a new inline style restyles everything inside the root
  if (applied.get(root) === theme) return;
  applied.set(root, theme);
  root.style.background = theme.background;
  root.style.color = theme.text;
}

// The theme each root was last coloured for.
const applied = new WeakMap();

/**
 * A labelled slider: <label>text <input type="range" data-control=name aria-label=...> readout</label>.
 * `onInput(value)` runs inside the input event with the slider's number. Where the readout is not
 * the slider's own number (an index, a log scale) or a `unit` is given, aria-valuetext says the
 * readout and its unit ("4 keys per block").
 */
export function slider({ name, label, ariaLabel, min, max, step, value, format, onInput, unit = "", width = "180px" }) {
  const input = html("input", {
    ...OWN_KEYS,
    type: "range",
    "data-control": name,
    "aria-label": ariaLabel ?? label,
    min,
    max,
    step,
  });
  input.value = String(value);
  Object.assign(input.style, { width, maxWidth: "100%", minHeight: "24px", margin: "0", flex: "0 1 auto" });
  const readout = html("output", { class: "attnlib-readout" });
  readout.style.display = "inline-block";
  readout.style.minWidth = "3.5em";
  readout.style.fontFamily = "monospace";
  const labelNode = html("label", { class: "attnlib-slider" }, `${label} `, input, " ", readout);
  Object.assign(labelNode.style, { display: "inline-flex", flexWrap: "wrap", alignItems: "center", gap: "0 6px", maxWidth: "100%", marginRight: "10px" });
  // each write only where it changes something: a redraw shows every slider's value again
  const show = (v) => {
    const shown = format(v);
    if (readout.textContent !== shown) readout.textContent = shown;
    if (unit || shown !== String(v)) {
      const said = unit ? `${shown} ${unit}` : shown;
      if (input.getAttribute("aria-valuetext") !== said) input.setAttribute("aria-valuetext", said);
    }
  };
  show(Number(input.value));
  input.addEventListener("input", () => {
    const v = Number(input.value);
    show(v);
    onInput(v);
  });
  return {
    node: labelNode,
    input,
    /** Move the slider to v (the browser snaps it to the step) and show v itself. */
    set(v) {
      if (input.value !== String(v)) input.value = String(v);
      show(v);
    },
  };
}

/** A labelled checkbox; `onChange(checked)` runs inside its change event. */
export function checkbox({ name, label, checked, onChange }) {
  const input = html("input", { ...OWN_KEYS, type: "checkbox", "data-control": name });
  Object.assign(input.style, { width: "24px", height: "24px", margin: "0 4px 0 0", verticalAlign: "middle" });
  input.checked = Boolean(checked);
  input.addEventListener("change", () => onChange(input.checked));
  const node = html("label", {}, input, ` ${label}`);
  node.style.marginRight = "10px";
  node.style.whiteSpace = "nowrap";
  return { node, input };
}

/**
 * The light/dark select of `model`; `onChange(style)` runs inside its change event. Once used, the
 * style chosen wins over the page's mode (themeOf).
 */
export function styleSelect({ model, value, onChange }) {
  const select = html(
    "select",
    { ...OWN_KEYS, "data-control": "style", "aria-label": "style" },
    html("option", { value: "light" }, "light"),
    html("option", { value: "dark" }, "dark"),
  );
  select.value = value;
  select.style.minHeight = "24px";
  select.addEventListener("change", () => {
    chosen.add(model);
    onChange(select.value);
  });
  const node = html("label", {}, "style ", select);
  node.style.marginRight = "10px";
  return { node, select };
}

/** A button; `onClick()` runs inside its click event. */
export function button({ name, label, onClick }) {
  const node = html("button", { ...OWN_KEYS, type: "button", "data-control": name }, label);
  node.addEventListener("click", onClick);
  Object.assign(node.style, { marginRight: "10px", minHeight: "24px", minWidth: "24px" });
  return node;
}

/** A row of controls. */
export function row(...nodes) {
  const node = html("div", { class: "attnlib-row" }, ...nodes);
  Object.assign(node.style, { display: "flex", flexWrap: "wrap", alignItems: "center", gap: "4px 0", margin: "2px 0" });
  return node;
}

/** Decimals of a slider step (0.05 -> 2), for its readout. */
export function stepDecimals(step) {
  const text = String(step);
  return text.includes(".") ? text.split(".")[1].length : 0;
}

/**
 * An x and a y slider per token for the 2D embeddings in model's "embeddings" trait
 * (data-control "x-I", "y-I"), appended to `controls` one row per token. A move sends the new
 * embeddings with `send`. Returns `{ set(embeddings) }`, which moves the sliders to the trait's
 * new value.
 */
export function embeddingSliders(model, controls, tokens, send) {
  const step = model.get("step");
  const decimals = stepDecimals(step);
  const setEmbedding = (i, j, value) => {
    const X = model.get("embeddings").map((r) => r.slice());
    X[i][j] = value;
    send({ embeddings: X });
  };
  const sliders = tokens.map((token, i) => {
    const pair = ["x", "y"].map((axis, j) =>
      slider({
        name: `${axis}-${i}`,
        label: axis,
        ariaLabel: `${axis} of token ${i + 1}, ${token}`,
        min: model.get("value_min"),
        max: model.get("value_max"),
        step,
        value: model.get("embeddings")[i][j],
        format: (v) => v.toFixed(decimals),
        onInput: (v) => setEmbedding(i, j, v),
      }),
    );
    const name = html("b", {}, token);
    name.style.display = "inline-block";
    name.style.minWidth = "90px";
    controls.append(row(name, ...pair.map((s) => s.node)));
    return pair;
  });
  return {
    set(embeddings) {
      embeddings.forEach((xy, i) => sliders[i].forEach((s, j) => s.set(xy[j])));
    },
  };
}

/**
 * What an explorer of 2D embeddings draws from: `tokens`, `embeddings`, the sliders' `valueMin`
 * and `valueMax`, and the traits `names` by their own names (the playground's W_q, W_k, W_v, d_k
 * and causal; the two-head explorer's W_q, W_k, W_v and W_o).
 */
export function embeddingState(model, names) {
  return {
    tokens: model.get("tokens"),
    embeddings: model.get("embeddings"),
    valueMin: model.get("value_min"),
    valueMax: model.get("value_max"),
    ...Object.fromEntries(names.map((name) => [name, model.get(name)])),
  };
}
