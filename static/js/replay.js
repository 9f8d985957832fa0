// Replays an imported report in the run panel. The page arrives showing the end state; each
// <template class="replay-step"> holds the fragments one event adds (the same out-of-band
// partials the live run page receives), and step 0 holds the checklist of an empty log.
(() => {
  const root = document.getElementById("replay");
  if (!root) return;
  const steps = [...root.querySelectorAll("template.replay-step")];
  const events = steps.length - 1;
  const output = document.getElementById("replay-position");
  if (!output) return;
  const button = (name) => document.getElementById(`replay-${name}`);
  const INTERVAL_MS = 600;
  let position = events;
  let timer = null;

  const show = () => {
    output.textContent = `event ${position} of ${events}`;
    button("play").disabled = timer !== null;
    button("pause").disabled = timer === null;
    button("step").disabled = position === events;
    button("end").disabled = position === events;
  };

  // hx-swap-oob="beforeend" appends the fragment's children; "true" replaces by id.
  const swap = (fragment) => {
    const target = document.getElementById(fragment.id);
    if (!target) return;
    if (fragment.getAttribute("hx-swap-oob") === "beforeend") {
      target.append(...fragment.childNodes);
    } else {
      target.replaceWith(fragment);
    }
  };

  const apply = (index) => {
    for (const fragment of [...steps[index].content.cloneNode(true).children]) swap(fragment);
  };

  const highlight = () => {
    document.querySelectorAll("#event-log li.current").forEach((li) => li.classList.remove("current"));
    const last = document.querySelector("#event-log li:last-child");
    if (last && position > 0) {
      last.classList.add("current");
      last.scrollIntoView({ block: "nearest" });
    }
  };

  const pause = () => {
    clearInterval(timer);
    timer = null;
    show();
  };

  const step = () => {
    if (position >= events) return pause();
    position += 1;
    apply(position);
    highlight();
    if (position === events) pause();
    show();
  };

  const reset = () => {
    pause();
    for (const id of ["transcript", "decisions", "event-log", "latency"]) {
      const box = document.getElementById(id);
      if (box) box.replaceChildren(); // a typed run's replay has no latency box
    }
    position = 0;
    apply(0);
    highlight();
    show();
  };

  button("play").addEventListener("click", () => {
    if (position === events) reset();
    timer = setInterval(step, INTERVAL_MS);
    step();
  });
  button("pause").addEventListener("click", pause);
  button("step").addEventListener("click", () => {
    pause();
    step();
  });
  button("reset").addEventListener("click", reset);
  button("end").addEventListener("click", () => {
    pause();
    while (position < events) step();
  });
  show();
})();
