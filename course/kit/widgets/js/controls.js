// The controls every explorer builds: a root <div>, labelled native sliders (keyboard-operable),
// checkboxes, a style select and buttons, each marked with data-control for tests.

import { announcement, holding, numbersIn, numberTables, regionOf } from "./a11y.js";
import { pageStyle, watchPageStyle } from "./page.js";

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
  const grownTo = new Map(); // each region's box as grown to hold its texts so far
  const present = () => {
    if (!svg.firstChild) return;
    const { x: vx, y: vy, width: vw, height: vh } = svg.viewBox.baseVal;
    const shown = regions ?? [{ at: [vx, vy, vw, vh], name: label }];
    const groups = shown.map(() => []);
    const texts = shown.map(() => []); // the boxes of the texts of each region, as drawn (rotated labels too)
    for (const item of [...svg.children]) {
      const box = item.getBBox ? item.getBBox() : { x: 0, y: 0, width: 0, height: 0 };
      const at = shown.map((r) => r.at);
      const k = shown.length === 1 ? 0 : regionOf(at, box.x + box.width / 2, box.y + box.height / 2);
      groups[k].push(item);
      if (item.tagName === "text") texts[k].push(drawnBox(item, box));
    }
    pictures.replaceChildren(
      ...shown.map(({ at: region, name }, k) => {
        const picture = document.createElementNS(SVG_NS, "svg");
        // grown, never shrunk, while the region stays: a panel does not change size as a label changes
        const key = `${k} ${region.join(" ")}`;
        const at = holding(grownTo.get(key) ?? region, texts[k]);
        grownTo.set(key, at);
        const [x, y, w, h] = at;
        picture.setAttribute("viewBox", `${x} ${y} ${w} ${h}`);
        picture.setAttribute("role", "img");
        picture.setAttribute("aria-labelledby", `${id}-title-${k}`);
        picture.setAttribute("aria-describedby", `${id}-desc-${k}`);
        picture.setAttribute("font-family", "DejaVu Sans, Verdana, sans-serif");
        Object.assign(picture.style, { display: "block", width: `${w}px`, maxWidth: "100%", minWidth: `${Math.ceil(w * MIN_SCALE) + 1}px`, height: "auto" });
        const title = document.createElementNS(SVG_NS, "title");
        title.id = `${id}-title-${k}`;
        title.textContent = name;
        const desc = document.createElementNS(SVG_NS, "desc");
        desc.id = `${id}-desc-${k}`;
        desc.textContent = `Part ${k + 1} of ${shown.length} of the picture: ${label}. Its numbers are in the tables after it.`;
        // what is drawn is out of the accessibility tree: the image is its title and description,
        // its numbers are in the tables
        const drawing = document.createElementNS(SVG_NS, "g");
        drawing.setAttribute("aria-hidden", "true");
        drawing.append(...groups[k]);
        picture.append(title, desc, drawing);
        const frame = html("div", { class: "attnlib-panel" }, picture);
        Object.assign(frame.style, { maxWidth: "100%", minWidth: "0", overflowX: "auto", flex: "0 1 auto" });
        return frame;
      }),
    );
    const drawn = numbersIn(pictures);
    numbers.replaceChildren(...numberTables(drawn).map((t) => tableOf(t, label)));
    if (said === null) {
      said = drawn;
      return;
    }
    clearTimeout(timer);
    timer = setTimeout(() => {
      const sentence = say(said, drawn);
      said = drawn;
      if (moved) live.textContent = sentence || "No number shown changed.";
      moved = false;
    }, 250);
  };
  new MutationObserver(present).observe(svg, { childList: true });
  for (const event of ["input", "change", "click"]) controls.addEventListener(event, () => (moved = true));
  return { root, controls, message, svg };
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

/** An HTML table of numberTables' kind, with a caption, column headers and row headers. */
function tableOf({ caption, corner, columns, rows }, label) {
  const head = html("tr", {}, html("th", { scope: "col" }, corner), ...columns.map((c) => html("th", { scope: "col" }, c)));
  const body = rows.map((r) => html("tr", {}, html("th", { scope: "row" }, r.header), ...r.cells.map((c) => html("td", {}, c))));
  return html("table", {}, html("caption", {}, `${label}: ${caption}`), html("thead", {}, head), html("tbody", {}, ...body));
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
  root.style.background = theme.background;
  root.style.color = theme.text;
}

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
  const show = (v) => {
    readout.textContent = format(v);
    if (unit || format(v) !== String(v)) input.setAttribute("aria-valuetext", unit ? `${format(v)} ${unit}` : format(v));
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
      input.value = String(v);
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
