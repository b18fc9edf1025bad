// Copied to _static/vendor/ by tools/build_book.py and loaded between require.js and the widget
// manager on the book's pages with explorers: require.js takes anywidget's front end (the AMD
// module that the explorers' widget state names) from the copy next to this file, not from a CDN.
require.config({
  paths: { anywidget: new URL("anywidget/index", document.currentScript.src).href },
});
