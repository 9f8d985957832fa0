// Small conveniences around htmx's ws extension on the run page.
document.addEventListener("htmx:wsAfterSend", (event) => {
  const form = event.detail.elt;
  if (form && form.id === "say-form") form.reset();
});
document.addEventListener("htmx:wsAfterMessage", () => {
  for (const id of ["transcript", "decisions"]) {
    const box = document.getElementById(id);
    if (box) box.scrollTop = box.scrollHeight;
  }
  const verdict = document.getElementById("verdict");
  if (verdict && verdict.dataset.final === "true") {
    document.querySelectorAll("form[ws-send] button, form[ws-send] input").forEach((el) => {
      el.disabled = true;
    });
  }
});
document.addEventListener("htmx:wsClose", () => {
  const notice = document.getElementById("notice");
  if (notice && !notice.textContent.trim()) {
    notice.className = "notice info";
    notice.textContent = "The connection to this run is closed.";
  }
});
