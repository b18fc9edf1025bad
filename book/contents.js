// The page's contents ("On this page") open from the article header's button wherever they are not
// a sidebar: below 1200 px on every page, and at any width on a page with an explorer (book.css).
// sphinx-book-theme 1.3 puts that button (a second .secondary-toggle) in the article header, but
// pydata-sphinx-theme 0.17 binds only the first, in the top header that the book theme hides: a
// click on the others is handed to that one, which opens the contents as a dialog.
const [bound, ...unbound] = document.querySelectorAll(".secondary-toggle");
for (const button of unbound) {
  button.addEventListener("click", (event) => {
    event.preventDefault();
    bound.click();
  });
}
