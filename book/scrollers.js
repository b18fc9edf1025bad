// A wide part of a page that scrolls sideways by itself (book.css: a displayed formula or a table
// wider than the text column) must be reachable by keyboard, so that the arrow keys can scroll it
// (WCAG 2.1.1). Formulas are kept out of the Tab order (MathJax's inTabOrder: false), and a table of
// numbers holds nothing focusable: each one that overflows gets a Tab stop, and loses it when it
// fits again. An explorer's box is left alone: its sliders are focusable already.
const SCROLLERS = 'mjx-container[display="true"], article table:not(.attnlib-explorer table)';
const madeFocusable = new WeakSet();

function update(element) {
  if (element.scrollWidth > element.clientWidth + 1) {
    if (!element.hasAttribute("tabindex")) {
      element.tabIndex = 0;
      madeFocusable.add(element);
    }
  } else if (madeFocusable.has(element)) {
    element.removeAttribute("tabindex");
    madeFocusable.delete(element);
  }
}

function watch() {
  const observer = new ResizeObserver((entries) => entries.forEach((entry) => update(entry.target)));
  document.querySelectorAll(SCROLLERS).forEach((element) => observer.observe(element));
}

// after the page's scripts have run and MathJax (where the page loads it) has typeset it
window.addEventListener("load", () => (window.MathJax?.startup?.promise ?? Promise.resolve()).then(watch));
