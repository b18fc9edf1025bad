// Copied to _static/vendor/ by tools/build_book.py and loaded between require.js and the widget
// manager on the book's pages with explorers, so that require.js resolves, next to this file:
// - anywidget, the AMD module that the explorers' widget state names (not from a CDN);
// - the widget manager's own modules, whose folder is where it loads its Font Awesome files from
//   (else they are looked for under the page's folder).
{
  const here = (path) => new URL(path, document.currentScript.src).href;
  require.config({
    paths: {
      anywidget: here("anywidget/index"),
      "@jupyter-widgets/html-manager/dist": here("html-manager"),
    },
  });
}
