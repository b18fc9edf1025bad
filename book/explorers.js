// The explorers of a book page, drawn from the widget state that the page holds, with no kernel and
// no widget manager. tools/build_book.py copies this module to _static/vendor/ and myst-nb loads it
// on the pages that hold widget state (nb_ipywidgets_js in _config.yml).
//
// Each explorer is an anywidget: its stored state carries its front end, an ES module (`_esm`)
// whose `render({ model, el })` draws it into `el` and listens to `model`. The model here is what
// anywidget hands that module: `get`, `set` (one name and value, or an object of them), `on` and
// `off` for "change:NAME" events, and `save_changes`, which has nowhere to send the changes. As in
// a notebook, each explorer is drawn into a `div.widget-subarea` put before its view's script.
const STATE = "application/vnd.jupyter.widget-state+json";
const VIEW = "application/vnd.jupyter.widget-view+json";

class Model {
  constructor(state) {
    this.state = { ...state };
    this.listeners = new Map();
  }

  get(name) {
    return this.state[name];
  }

  set(name, value) {
    const changes = typeof name === "string" ? { [name]: value } : name;
    const changed = Object.keys(changes).filter(
      (key) => JSON.stringify(changes[key]) !== JSON.stringify(this.state[key]),
    );
    Object.assign(this.state, changes);
    for (const key of changed) {
      for (const callback of this.listeners.get(`change:${key}`) ?? []) callback(this, changes[key]);
    }
  }

  on(event, callback) {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), callback]);
  }

  off(event, callback) {
    this.listeners.set(
      event,
      (this.listeners.get(event) ?? []).filter((listener) => listener !== callback),
    );
  }

  save_changes() {}
}

async function draw(view, models) {
  const { model_id: id } = JSON.parse(view.textContent);
  const stored = models[id];
  if (!stored?.state?._esm) {
    throw new Error(`widget ${id} is not an anywidget with its ES module in the page`);
  }
  const url = URL.createObjectURL(new Blob([stored.state._esm], { type: "text/javascript" }));
  const widget = (await import(url)).default;
  URL.revokeObjectURL(url);
  const el = document.createElement("div");
  el.className = "widget-subarea";
  view.before(el);
  const model = new Model(stored.state);
  await widget.render({ model, el });
}

/**
 * A link to each explorer drawn, next to the page's "Skip to main content" (the theme's first Tab
 * stop, shown where it has the focus): "Skip to the explorer: LABEL". Each explorer is a region
 * named "Explorer: LABEL" (attention_lessons/kit/widgets/js/controls.js); the link moves the focus to it, and
 * the next Tab reaches its first control.
 */
function skipLinks(roots) {
  const first = document.getElementById("pst-skip-link");
  const links = roots.map((root, k) => {
    root.id ||= `explorer-${k + 1}`;
    root.tabIndex = -1;
    const name = (root.getAttribute("aria-label") ?? "Explorer").replace(/^Explorer/, "the explorer");
    const link = document.createElement("a");
    link.href = `#${root.id}`;
    link.textContent = `Skip to ${name}`;
    const holder = document.createElement("div");
    holder.className = first?.className ?? "skip-link";
    holder.append(link);
    return holder;
  });
  if (first) first.after(...links);
  else document.body.prepend(...links);
}

const [state] = document.querySelectorAll(`script[type="${STATE}"]`);
const models = JSON.parse(state.textContent).state;
const drawn = [...document.querySelectorAll(`script[type="${VIEW}"]`)].map((view) =>
  draw(view, models).catch((error) => console.error("explorer not drawn:", error)),
);
Promise.all(drawn).then(() => skipLinks([...document.querySelectorAll(".attnlib-explorer")]));
