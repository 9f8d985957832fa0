// The recording's playhead over the run: every transcript turn, gate decision and event-log row
// whose time on the run clock (ms since run.started, the recording's sample 0) has passed is
// marked .played, and the latest of each list .at-playhead. A recording the reader picks from
// disk plays only once its SHA-256 matches the digest the log names.
"use strict";

(() => {
  const follow = () => {
    const audio = document.getElementById("recording");
    const box = document.getElementById("recording-box");
    // A live run's player arrives with its end (swapped in over the socket): set it up once.
    if (!audio || !box || !box.dataset.eventClock || audio.dataset.playhead) return;
    audio.dataset.playhead = "on";
    const clock = JSON.parse(box.dataset.eventClock);
    const output = document.createElement("output");
    output.id = "playhead";
    output.setAttribute("aria-live", "off");
    audio.after(output);

    // Each list's rows and the event each stands for.
    const lists = () => [
      [...document.querySelectorAll("#transcript .turn[id^='tr-']")].map((row) => [row, row.id.slice(3)]),
      [...document.querySelectorAll("#decisions .decision")].map((row) => {
        const ref = row.querySelector("a.ref");
        return [row, ref ? ref.getAttribute("href").slice(1) : ""];
      }),
      [...document.querySelectorAll("#event-log li[id]")].map((row) => [row, row.id]),
    ];

    const update = () => {
      const ms = Math.round(audio.currentTime * 1000);
      if (ms > 0) document.body.classList.add("playhead-moved");
      let latest = null;
      for (const rows of lists()) {
        let last = null;
        for (const [row, id] of rows) {
          const at = clock[id];
          const passed = at !== undefined && at <= ms;
          row.classList.toggle("played", passed);
          row.classList.remove("at-playhead");
          if (passed) last = [row, id, at];
        }
        if (last) {
          last[0].classList.add("at-playhead");
          if (!latest || last[2] > latest[2]) latest = last;
        }
      }
      output.dataset.ms = String(ms);
      output.textContent = latest ? `${ms} ms · last event ${latest[1]}` : `${ms} ms`;
    };
    for (const name of ["timeupdate", "seeked", "play", "loadedmetadata"]) {
      audio.addEventListener(name, update);
    }
    update();

    const picker = document.getElementById("recording-file");
    const check = document.getElementById("recording-check");
    const digest = document.getElementById("recording-digest");
    if (!picker || !check || !digest) return;
    picker.addEventListener("change", async () => {
      const file = picker.files && picker.files[0];
      if (!file) return;
      if (!(window.crypto && crypto.subtle)) {
        check.textContent = "This browser cannot compute SHA-256 here (it needs HTTPS), so the file is not played.";
        return;
      }
      const hash = await crypto.subtle.digest("SHA-256", await file.arrayBuffer());
      const hex = [...new Uint8Array(hash)].map((b) => b.toString(16).padStart(2, "0")).join("");
      if (hex !== digest.textContent.trim()) {
        check.textContent = `Not this run's recording: its SHA-256 is ${hex}.`;
        check.className = "warning";
        return;
      }
      check.textContent = "Matches the digest recording.closed names.";
      check.className = "";
      audio.src = URL.createObjectURL(file);
    });
  };
  follow();
  document.addEventListener("htmx:wsAfterMessage", follow);
})();
