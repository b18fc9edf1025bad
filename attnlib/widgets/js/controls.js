// The controls every explorer builds: a root <div>, labelled native sliders (keyboard-operable),
// checkboxes, a style select and buttons, each marked with data-control for tests.

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

/**
 * The explorer's root: <div class="attnlib-explorer attnlib-KIND"> holding a controls area,
 * a message line and the picture (<svg> with the given viewBox size and accessible label).
 */
export function explorerRoot(el, kind, width, height, label) {
  const controls = html("div", { class: "attnlib-controls" });
  const message = html("div", { class: "attnlib-message", role: "status" });
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", "100%");
  // a group, not an image: screen readers then read the numbers written in it
  svg.setAttribute("role", "group");
  svg.setAttribute("aria-label", label);
  svg.setAttribute("font-family", "DejaVu Sans, Verdana, sans-serif");
  svg.style.maxWidth = `${width}px`;
  svg.style.display = "block";
  const root = html("div", { class: `attnlib-explorer attnlib-${kind}` }, controls, message, svg);
  root.style.padding = "6px";
  root.style.fontFamily = "DejaVu Sans, Verdana, sans-serif";
  root.style.fontSize = "13px";
  el.replaceChildren(root);
  return { root, controls, message, svg };
}

/**
 * Bind an explorer's picture to its model: call `redraw()` now and on every change of the traits
 * `names` (anywidget's "change:NAME" events). Returns the function that unbinds it, which is what
 * render() returns (anywidget calls it when the view goes).
 */
export function bind(model, names, redraw) {
  const events = names.map((name) => `change:${name}`);
  events.forEach((event) => model.on(event, redraw));
  redraw();
  return () => events.forEach((event) => model.off(event, redraw));
}

/** A function that sets traits of the model and sends them to Python: send({ d_k: 4 }). */
export function sender(model) {
  return (changes) => {
    model.set(changes);
    model.save_changes();
  };
}

/** The colours of the model's current style (its "themes" trait at "style_name"). */
export function themeOf(model) {
  return model.get("themes")[model.get("style_name")];
}

/** Colour the root for a theme (the style's background and text). */
export function applyTheme(root, theme) {
  root.style.background = theme.background;
  root.style.color = theme.text;
}

/**
 * A labelled slider: <label>text <input type="range" data-control=name aria-label=...> readout</label>.
 * `onInput(value)` runs inside the input event with the slider's number.
 */
export function slider({ name, label, ariaLabel, min, max, step, value, format, onInput, width = "180px" }) {
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
  input.style.width = width;
  input.style.verticalAlign = "middle";
  const readout = html("output", { class: "attnlib-readout" });
  readout.style.display = "inline-block";
  readout.style.minWidth = "3.5em";
  readout.style.fontFamily = "monospace";
  const labelNode = html("label", { class: "attnlib-slider" }, `${label} `, input, " ", readout);
  labelNode.style.marginRight = "10px";
  labelNode.style.whiteSpace = "nowrap";
  const show = (v) => {
    readout.textContent = format(v);
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
  input.checked = Boolean(checked);
  input.addEventListener("change", () => onChange(input.checked));
  const node = html("label", {}, input, ` ${label}`);
  node.style.marginRight = "10px";
  node.style.whiteSpace = "nowrap";
  return { node, input };
}

/** The light/dark select; `onChange(style)` runs inside its change event. */
export function styleSelect({ value, onChange }) {
  const select = html(
    "select",
    { ...OWN_KEYS, "data-control": "style", "aria-label": "style" },
    html("option", { value: "light" }, "light"),
    html("option", { value: "dark" }, "dark"),
  );
  select.value = value;
  select.addEventListener("change", () => onChange(select.value));
  const node = html("label", {}, "style ", select);
  node.style.marginRight = "10px";
  return { node, select };
}

/** A button; `onClick()` runs inside its click event. */
export function button({ name, label, onClick }) {
  const node = html("button", { ...OWN_KEYS, type: "button", "data-control": name }, label);
  node.addEventListener("click", onClick);
  node.style.marginRight = "10px";
  return node;
}

/** A row of controls. */
export function row(...nodes) {
  const node = html("div", { class: "attnlib-row" }, ...nodes);
  node.style.margin = "2px 0";
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
