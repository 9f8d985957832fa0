// The flag queue: an action the server refused (400, 403, 409) still answers with the card,
// which says why; htmx would drop a 4xx answer, so swap these in like a 200.
"use strict";
document.addEventListener("htmx:beforeSwap", (event) => {
  const status = event.detail.xhr.status;
  if ((status === 400 || status === 403 || status === 409) && event.detail.target.closest(".queue-card")) {
    event.detail.shouldSwap = true;
    event.detail.isError = false;
  }
});
