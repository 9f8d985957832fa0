// The flag queue. An action the server refused (400, 403, 409) still answers with the card,
// which says why; htmx would drop a 4xx answer, so these swap in like a 200. The page says
// whether its socket is open, so a reader knows new flags will appear by themselves.
"use strict";
document.addEventListener("htmx:beforeSwap", (event) => {
  const status = event.detail.xhr.status;
  if ((status === 400 || status === 403 || status === 409) && event.detail.target.closest(".queue-card")) {
    event.detail.shouldSwap = true;
    event.detail.isError = false;
  }
});
for (const [name, live] of [["htmx:wsOpen", "true"], ["htmx:wsClose", "false"]]) {
  document.addEventListener(name, () => {
    const queue = document.getElementById("queue");
    if (queue) queue.dataset.live = live;
  });
}
// A (re)connecting socket sends every card newer than the page was drawn with, so a card that
// also came live is on the page twice: keep the one already there (it may hold a note being
// typed), drop the new copy on top.
document.addEventListener("htmx:wsAfterMessage", () => {
  const seen = new Set();
  const cards = Array.from(document.querySelectorAll("#queue-cards > .queue-card")).reverse();
  for (const card of cards) {
    if (seen.has(card.id)) card.remove();
    else seen.add(card.id);
  }
});
