// The list button in the article's header opens the page's table of contents. The theme listens only to the
// first `.secondary-toggle` on the page (the one in the top bar, which the book theme hides), so the others
// pass their click on to it.
document.addEventListener("DOMContentLoaded", () => {
  const [listened, ...others] = document.querySelectorAll(".secondary-toggle");
  for (const button of others) {
    button.addEventListener("click", (event) => {
      event.preventDefault();
      event.stopPropagation();
      listened.click();
    });
  }
});
