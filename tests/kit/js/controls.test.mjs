// The model binding every explorer's render() uses (attention_lessons/kit/widgets/js/controls.js), on a stand-in
// for anywidget's model: the on/off/get/set/save_changes it calls.
import { test } from "node:test";
import assert from "node:assert/strict";
import { bind, embeddingState, sender, themeOf, topElements } from "../../../attention_lessons/kit/widgets/js/controls.js";
import { element, heatmap, text } from "../../../attention_lessons/kit/widgets/js/svg.js";

/** A model with anywidget's event methods: traits in a Map, listeners per event name. */
function fakeModel(traits) {
  const values = new Map(Object.entries(traits));
  const listeners = new Map();
  const saved = [];
  return {
    saved,
    listeners,
    get: (name) => values.get(name),
    set(changes) {
      for (const [name, value] of Object.entries(changes)) {
        values.set(name, value);
        (listeners.get(`change:${name}`) ?? []).forEach((f) => f());
      }
    },
    save_changes: () => saved.push(Object.fromEntries(values)),
    on: (event, f) => listeners.set(event, [...(listeners.get(event) ?? []), f]),
    off: (event, f) => listeners.set(event, (listeners.get(event) ?? []).filter((g) => g !== f)),
  };
}

test("bind redraws now and on every change of the named traits only, until unbound", () => {
  const model = fakeModel({ d_k: 2, causal: false, tokens: ["a"] });
  let draws = 0;
  const unbind = bind(model, ["d_k", "causal"], () => {
    draws += 1;
  });
  assert.equal(draws, 1);
  model.set({ d_k: 4 });
  model.set({ causal: true });
  model.set({ tokens: ["b"] }); // not bound
  assert.equal(draws, 3);
  unbind();
  model.set({ d_k: 8 });
  assert.equal(draws, 3);
  assert.deepEqual([...model.listeners.values()].flat(), []);
});

test("sender sets the traits and sends them once; themeOf reads the current style's colours", () => {
  const themes = { light: { background: "#ffffff" }, dark: { background: "#111111" } };
  const model = fakeModel({ d_k: 2, style_name: "light", themes });
  const send = sender(model);
  send({ d_k: 16, style_name: "dark" });
  assert.equal(model.get("d_k"), 16);
  assert.equal(model.saved.length, 1);
  assert.deepEqual(themeOf(model), themes.dark);
});

test("embeddingState reads what the playground and the two-head explorer draw from, by trait name", () => {
  const traits = { tokens: ["a", "b"], embeddings: [[0, 1], [1, 0]], value_min: -2, value_max: 3, W_q: [[1, 0], [0, 1]], d_k: 4 };
  const model = fakeModel({ ...traits, W_o: [[9]] });
  assert.deepEqual(embeddingState(model, ["W_q", "d_k"]), {
    tokens: traits.tokens,
    embeddings: traits.embeddings,
    valueMin: -2,
    valueMax: 3,
    W_q: traits.W_q,
    d_k: 4,
  });
});

test("topElements cuts markup into its top-level elements, nested ones kept inside", () => {
  const parts = [
    element("rect", { x: 1, y: 2, fill: "#ffffff" }),
    element("g", { "data-hatch": "" }, element("line", { x1: 0 }) + element("line", { x1: 6 })),
    text(3, 4, "a < b & \"c\" > d"),
    '<circle r="2"/>',
    element("text", {}, element("tspan", { "font-weight": "bold" }, "x") + "y"),
  ];
  assert.deepEqual(topElements(parts.join("")), parts);
  assert.deepEqual(topElements(""), []);
  const theme = { background: "#ffffff", grid: "#cccccc", tick: "#333333", text: "#222222", edge: "#000000", annotationDark: "#000000", annotationLight: "#ffffff" };
  const map = heatmap({ x: 0, y: 0, size: 100 }, [[1, -Infinity], [0.5, 2]], { rowLabels: ["a", "b"], colLabels: ["a", "b"], title: "t", table: ["#000000", "#ffffff"], quantity: "q", theme });
  assert.equal(topElements(map).join(""), map); // nothing between the elements of a drawing
  assert.throws(() => topElements("<rect x=\"1\""), /unclosed tag/);
});
