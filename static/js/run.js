// Small conveniences around htmx's ws extension on the run page.
//
// The server says who drives: the socket swaps in #controls with data-role (driver,
// watcher, shared, ended) and this keeps the rest of the page in step with it. htmx
// reconnects a dropped socket by itself (close codes 1006, 1011, 1012, 1013); the server
// then re-attaches this window (or lets it watch) and swaps in the whole panel again.
"use strict";

(() => {
  const RECONNECTING_CODES = [1006, 1011, 1012, 1013];
  const RECONNECTING = "Connection lost; reconnecting to the run…";
  let role = null;

  function setNotice(text, tone = "info") {
    const notice = document.getElementById("notice");
    if (!notice) return;
    notice.className = `notice ${tone}`;
    notice.textContent = text;
  }

  function setRole(next) {
    if (next === role || role === "ended") return; // ended is final: a closing socket says no more
    role = next;
    if (role === "ended") showEnded();
    document.querySelectorAll("fieldset.drive").forEach((set) => {
      set.disabled = role !== "driver";
    });
    // voice.js stops the microphone of a window that no longer drives.
    document.dispatchEvent(new CustomEvent("lab:role", { detail: { role } }));
  }

  // One calm ended state on every channel and tab: no leftover notice, no call to start.
  function showEnded() {
    const run = document.getElementById("run");
    if (run) run.dataset.ended = "true";
    setNotice("");
    const start = document.getElementById("call-start-box");
    if (start) start.hidden = true;
  }

  // While the agent speaks a typed line interrupts it: the box says so (#agent-state is
  // pushed from the server's speech timeline).
  function showAgentState() {
    const state = document.getElementById("agent-state");
    const box = document.getElementById("say-text");
    if (!box) return;
    const speaking = Boolean(state) && state.dataset.speaking === "true";
    box.dataset.bargeIn = String(speaking);
    box.placeholder = speaking
      ? "The agent is speaking: a line sent now interrupts it"
      : "e.g. I'd like Tuesday morning";
  }

  document.addEventListener("htmx:wsAfterSend", (event) => {
    const form = event.detail.elt;
    if (form && form.id === "say-form") form.reset();
  });

  document.addEventListener("htmx:wsOpen", () => {
    const notice = document.getElementById("notice");
    if (notice && notice.textContent === RECONNECTING) setNotice("");
  });

  document.addEventListener("htmx:wsAfterMessage", () => {
    for (const id of ["transcript", "decisions"]) {
      const box = document.getElementById(id);
      if (box) box.scrollTop = box.scrollHeight;
    }
    const controls = document.getElementById("controls");
    if (controls) setRole(controls.dataset.role);
    showAgentState();
  });

  document.addEventListener("htmx:wsClose", (event) => {
    const code = event.detail.event && event.detail.event.code;
    if (RECONNECTING_CODES.includes(code)) {
      // Nothing typed now could be sent; the server says who drives once it is back.
      setRole("connecting");
      setNotice(RECONNECTING);
      return;
    }
    if (role === "ended") return;
    setRole("closed");
    const notice = document.getElementById("notice");
    if (notice && !notice.textContent.trim()) setNotice("The connection to this run is closed.");
  });

  document.addEventListener("DOMContentLoaded", () => {
    const controls = document.getElementById("controls");
    if (controls && controls.dataset.role === "ended") setRole("ended");
  });

  // Back then Forward may show this page from the browser's memory: load it afresh.
  window.addEventListener("pageshow", (event) => {
    if (event.persisted) location.reload();
  });
})();
