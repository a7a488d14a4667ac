// Progressive enhancement only: every page works without it.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // A header checkbox selects every checkbox of its name on the page.
  for (const all of document.querySelectorAll("input[data-select-all]")) {
    const name = all.dataset.selectAll;
    all.addEventListener("change", () => {
      for (const box of document.querySelectorAll(`input[type=checkbox][name="${name}"]`)) {
        box.checked = all.checked;
      }
    });
  }
  // Ask before a button that deletes or hides.
  for (const button of document.querySelectorAll("button[data-confirm]")) {
    button.addEventListener("click", (event) => {
      if (!window.confirm(button.dataset.confirm)) event.preventDefault();
    });
  }
});
