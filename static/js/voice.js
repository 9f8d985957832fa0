// The voice side of a run page: microphone → 16 kHz PCM16 frames over the
// run's WebSocket, agent and scripted-caller speech from the server played
// back, barge-in stops, and "played" reports of what the caller really heard.
//
// Wire format (binary; text frames stay htmx's HTML fragments):
//   browser → server: 640 bytes = 320 samples of 16 kHz mono PCM16 LE (20 ms)
//   server → browser: [kind u8][utterance event id, 8 ASCII][PCM16 LE 16 kHz]
//     kind 1 agent audio, 2 stop (barge-in, no payload), 3 scripted caller audio
"use strict";

// htmx's ws extension reads this when it creates the socket, which happens in
// htmx's DOMContentLoaded handler; deferred scripts run before that event.
if (window.htmx) window.htmx.config.wsBinaryType = "arraybuffer";

(() => {
  const RATE = 16000;
  const FRAME_BYTES = 640;
  const HEADER_BYTES = 9;
  const KIND_AGENT = 1;
  const KIND_STOP = 2;
  const KIND_CALLER = 3;
  // About -34 dBFS: above a quiet room with noise suppression on, below speech.
  const SPEAKING_RMS = 0.02;
  // Short pauses between words should not flicker the indicator.
  const SPEAKING_HANGOVER_MS = 300;
  // See player-worklet.js: how long a drained utterance may still grow.
  const GRACE_MS = 500;
  // Past this much unsent audio (~4 s) the link is not keeping up; dropping
  // frames beats sending stale speech that the server would refuse as too fast.
  const MAX_BUFFERED_BYTES = 128 * 1024;
  // Close codes after which htmx's ws extension reconnects by itself.
  const RECONNECTING_CODES = [1006, 1011, 1012, 1013];

  const scriptUrl = document.currentScript ? document.currentScript.src : location.href;

  const lab = {
    state: "off", // off | starting | listening | denied | no-microphone | unsupported | error | ended
    framesSent: 0,
    framesDropped: 0,
    utterancesPlayed: 0, // "played" reports sent, cut ones included
    reports: [], // every "played" report sent, in order
    chunksReceived: { agent: 0, caller: 0 },
    stopsReceived: 0,
    level: 0,
    youSpeaking: false,
    agentSpeaking: false,
    audio: "none", // the AudioContext's state, "none" before one exists
    sampleRate: null,
    socketOpen: false,
  };
  window.labVoice = lab;

  let wrapper = null; // htmx's socket wrapper: its send() queues while reconnecting
  let socket = null; // the raw WebSocket, only to read readyState and bufferedAmount
  const outbox = []; // reports made before any socket was seen

  let ctx = null;
  let audioReady = null; // Promise<{agent, caller}> once the worklets are loaded
  let audioBroken = false; // the worklets could not load: nothing will ever play
  let players = null;
  const backlog = { agent: [], caller: [] }; // messages for players still loading
  const reported = new Set();
  // Agent audio that arrived while no AudioContext existed: never heard.
  const unheard = new Map(); // id -> {total, timer}
  let blobChain = Promise.resolve();

  let mic = null; // {stream, source, node, sink}
  let lastLoudAt = 0;

  const el = {};

  function setStatus(text, tone = "info") {
    if (!el.status) return;
    el.status.textContent = text;
    el.status.dataset.tone = tone;
  }

  function setState(state) {
    lab.state = state;
    if (el.panel) el.panel.dataset.micState = state;
    if (el.start) {
      el.start.disabled = state === "starting" || state === "ended";
      el.start.hidden = state === "listening";
    }
    if (el.stop) el.stop.hidden = state !== "listening";
  }

  function setIndicator(node, key, active) {
    if (lab[key] === active) return;
    lab[key] = active;
    if (node) node.dataset.active = String(active);
  }

  function workletUrl(file) {
    return new URL(file, scriptUrl).href;
  }

  // ---- socket -------------------------------------------------------------

  function socketUsable() {
    return wrapper && socket && socket.readyState === WebSocket.OPEN;
  }

  function sendJson(message) {
    const text = JSON.stringify(message);
    if (wrapper) wrapper.send(text);
    else outbox.push(text);
  }

  function sendFrame(pcm) {
    if (pcm.byteLength !== FRAME_BYTES || !socketUsable() || socket.bufferedAmount > MAX_BUFFERED_BYTES) {
      lab.framesDropped += 1;
      return;
    }
    wrapper.sendImmediately(pcm);
    lab.framesSent += 1;
  }

  document.addEventListener("htmx:wsOpen", (event) => {
    wrapper = event.detail.socketWrapper;
    socket = event.detail.event && event.detail.event.target;
    // Belt and braces in case the socket was made before the config was set.
    if (socket && "binaryType" in socket) socket.binaryType = "arraybuffer";
    lab.socketOpen = true;
    while (outbox.length) wrapper.send(outbox.shift());
  });

  document.addEventListener("htmx:wsClose", (event) => {
    lab.socketOpen = false;
    const code = event.detail.event && event.detail.event.code;
    if (RECONNECTING_CODES.includes(code)) return;
    if (lab.state === "ended") return; // said already, calmly
    // The run is over (or refused us): release the microphone.
    if (mic) {
      stopMic();
      setStatus("The connection to this run closed, so the microphone was turned off.");
    }
    if (el.start) el.start.disabled = true;
  });

  // run.js: only the driving window may send audio; a watching one releases the mic
  // (a reconnecting one keeps it: frames wait until the socket is back).
  document.addEventListener("lab:role", (event) => {
    const role = event.detail.role;
    if (role === "ended") {
      // The call is over: one calm state, whichever window this is.
      stopMic();
      if (el.start) el.start.disabled = true;
      if (el.callStart) el.callStart.disabled = true;
      setIndicator(el.agent, "agentSpeaking", false);
      setState("ended");
      setStatus("The call has ended.");
      return;
    }
    if (["driver", "connecting"].includes(role) || !mic) return;
    stopMic();
    setStatus("This window no longer drives the run, so the microphone was turned off.");
  });

  document.addEventListener("htmx:wsBeforeMessage", (event) => {
    const message = event.detail.message;
    if (typeof message === "string") return; // HTML fragments are htmx's to swap
    event.preventDefault();
    if (event.detail.socketWrapper) wrapper = event.detail.socketWrapper;
    if (message instanceof ArrayBuffer) {
      onBinary(message);
    } else if (message instanceof Blob) {
      // Only if binaryType was still "blob": keep the arrival order anyway.
      blobChain = blobChain.then(() => message.arrayBuffer()).then(onBinary, () => {});
    }
  });

  // ---- server audio -------------------------------------------------------

  function onBinary(buffer) {
    if (buffer.byteLength < HEADER_BYTES) return;
    const bytes = new Uint8Array(buffer);
    // The server pads short ids (the scripted caller's "caller") with spaces.
    const id = String.fromCharCode(...bytes.subarray(1, HEADER_BYTES)).replace(/[\s\0]+$/, "");
    switch (bytes[0]) {
      case KIND_AGENT:
        lab.chunksReceived.agent += 1;
        agentChunk(id, pcmToFloat(buffer));
        break;
      case KIND_STOP:
        lab.stopsReceived += 1;
        agentStop(id);
        break;
      case KIND_CALLER:
        lab.chunksReceived.caller += 1;
        toPlayer("caller", { type: "chunk", id, samples: pcmToFloat(buffer) });
        break;
      default:
        break; // a newer server's kind: ignoring it keeps older pages working
    }
  }

  function pcmToFloat(buffer) {
    // The payload starts at an odd offset, so an Int16Array view is impossible,
    // and DataView states the byte order instead of trusting the platform's.
    const count = (buffer.byteLength - HEADER_BYTES) >> 1;
    const view = new DataView(buffer, HEADER_BYTES, count * 2);
    const samples = new Float32Array(count);
    for (let i = 0; i < count; i++) samples[i] = view.getInt16(2 * i, true) / 32768;
    return samples;
  }

  function toPlayer(which, message) {
    const transfer = message.samples ? [message.samples.buffer] : [];
    if (players) players[which].port.postMessage(message, transfer);
    else if (audioReady && !audioBroken) backlog[which].push(message);
    // Otherwise nothing can play it: scripted-caller audio is simply not heard.
  }

  function agentChunk(id, samples) {
    if (!samples.length) return;
    if (!audioReady || audioBroken || unheard.has(id)) {
      noteUnheard(id, samples.length);
      return;
    }
    toPlayer("agent", { type: "chunk", id, samples });
  }

  function agentStop(id) {
    setIndicator(el.agent, "agentSpeaking", false);
    flushUnheard();
    if (audioReady && !audioBroken) toPlayer("agent", { type: "stop", id });
    else if (!reported.has(id)) report(id, 0, 0);
  }

  function noteUnheard(id, count) {
    for (const other of unheard.keys()) if (other !== id) settleUnheard(other);
    const entry = unheard.get(id) || { total: 0, timer: 0 };
    entry.total += count;
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => settleUnheard(id), GRACE_MS);
    unheard.set(id, entry);
    if (!ctx) setStatus("Agent audio is arriving but the page may not play sound yet: click Start microphone or Play the scripted caller to hear it.");
  }

  function settleUnheard(id) {
    const entry = unheard.get(id);
    if (!entry) return;
    clearTimeout(entry.timer);
    unheard.delete(id);
    report(id, 0, entry.total);
  }

  function flushUnheard() {
    for (const id of [...unheard.keys()]) settleUnheard(id);
  }

  function report(id, playedSamples, totalSamples) {
    if (reported.has(id)) return; // once per utterance, whatever arrives later
    reported.add(id);
    const message = {
      action: "played",
      utterance_event_id: id,
      played_ms: Math.round((playedSamples * 1000) / RATE),
      total_ms: Math.round((totalSamples * 1000) / RATE),
    };
    lab.utterancesPlayed += 1;
    lab.reports.push(message);
    sendJson(message);
  }

  function onAgentMessage(event) {
    const msg = event.data;
    switch (msg.type) {
      case "started":
        setIndicator(el.agent, "agentSpeaking", true);
        break;
      case "idle":
        setIndicator(el.agent, "agentSpeaking", false);
        break;
      case "finished":
        report(msg.id, msg.played, msg.total);
        break;
      case "stopped":
        for (const u of msg.utterances) report(u.id, u.played, u.total);
        // Stopped before any of its audio arrived: nothing of it was heard.
        if (msg.id && !reported.has(msg.id)) report(msg.id, 0, 0);
        break;
      default:
        break;
    }
  }

  // ---- the audio context --------------------------------------------------

  // Must run inside a user gesture: browsers keep a context made without one
  // suspended, and resume() also needs the gesture.
  function ensureAudio() {
    if (!ctx) {
      const Context = window.AudioContext || window.webkitAudioContext;
      if (!Context) {
        setStatus("This browser cannot play or capture audio here. The typed box still works.", "error");
        return null;
      }
      ctx = new Context({ latencyHint: "interactive" });
      lab.sampleRate = ctx.sampleRate;
      lab.audio = ctx.state;
      ctx.addEventListener("statechange", () => {
        lab.audio = ctx.state;
      });
      if (!ctx.audioWorklet) {
        setStatus("This browser has no AudioWorklet (it needs HTTPS or localhost), so voice is unavailable. The typed box still works.", "error");
        audioBroken = true;
        audioReady = Promise.reject(new Error("no AudioWorklet"));
        audioReady.catch(() => {});
        return audioReady;
      }
      // The shared kernel must be in the worklet scope before either processor loads.
      audioReady = ctx.audioWorklet
        .addModule(workletUrl("resample-kernel.js"))
        .then(() =>
          Promise.all([
            ctx.audioWorklet.addModule(workletUrl("mic-worklet.js")),
            ctx.audioWorklet.addModule(workletUrl("player-worklet.js")),
          ]),
        )
        .then(makePlayers);
      audioReady.catch((error) => {
        audioBroken = true;
        flushBacklog();
        setStatus(`The audio engine failed to load (${error.message}). The typed box still works.`, "error");
      });
    }
    if (ctx.state === "suspended") ctx.resume().catch(() => {});
    return audioReady;
  }

  // The worklets failed after audio was queued for them: account for it as unheard.
  function flushBacklog() {
    backlog.caller.length = 0;
    for (const message of backlog.agent.splice(0)) {
      if (message.type === "chunk") noteUnheard(message.id, message.samples.length);
      else {
        flushUnheard();
        if (!reported.has(message.id)) report(message.id, 0, 0);
      }
    }
  }

  function makePlayers() {
    const make = (report) => {
      const node = new AudioWorkletNode(ctx, "lab-player", {
        numberOfInputs: 0,
        numberOfOutputs: 1,
        outputChannelCount: [1],
        processorOptions: { report, graceMs: GRACE_MS },
      });
      node.connect(ctx.destination);
      return node;
    };
    players = { agent: make(true), caller: make(false) };
    players.agent.port.onmessage = onAgentMessage;
    for (const which of ["agent", "caller"]) {
      for (const message of backlog[which].splice(0)) {
        players[which].port.postMessage(message, message.samples ? [message.samples.buffer] : []);
      }
    }
    return players;
  }

  // ---- microphone ---------------------------------------------------------

  function micFailure(error) {
    const typed = "You can still type in the “Say to the agent” box.";
    switch (error && error.name) {
      case "NotAllowedError":
      case "SecurityError":
        setState("denied");
        setStatus(`Microphone access was denied, so the agent cannot hear you. ${typed} To talk instead, allow the microphone in the browser's site settings and press Start microphone again.`, "error");
        break;
      case "NotFoundError":
      case "OverconstrainedError":
        setState("no-microphone");
        setStatus(`No microphone was found. ${typed}`, "error");
        break;
      case "NotReadableError":
      case "AbortError":
        setState("error");
        setStatus(`The microphone could not be opened (another application may be using it). ${typed}`, "error");
        break;
      default:
        setState("error");
        setStatus(`The microphone could not be started (${(error && error.message) || error}). ${typed}`, "error");
    }
  }

  async function startMic() {
    if (mic || lab.state === "starting") return;
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      setState("unsupported");
      setStatus("This page cannot use a microphone here (browsers allow it only over HTTPS or on localhost). You can still type in the “Say to the agent” box.", "error");
      return;
    }
    // Before any await, while the click still counts as a gesture.
    const ready = ensureAudio();
    if (!ready) {
      setState("unsupported");
      return;
    }
    setState("starting");
    setStatus("Asking for the microphone…");
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({
        audio: { echoCancellation: true, noiseSuppression: true, channelCount: 1 },
      });
    } catch (error) {
      micFailure(error);
      return;
    }
    try {
      await ready;
      const source = ctx.createMediaStreamSource(stream);
      // channelCount 1 + "speakers" makes the engine down-mix a stereo device.
      const node = new AudioWorkletNode(ctx, "lab-mic", {
        numberOfInputs: 1,
        numberOfOutputs: 1,
        outputChannelCount: [1],
        channelCount: 1,
        channelCountMode: "explicit",
        channelInterpretation: "speakers",
      });
      // A node nobody listens to may not be pulled; a muted path keeps it running.
      const sink = ctx.createGain();
      sink.gain.value = 0;
      source.connect(node).connect(sink).connect(ctx.destination);
      node.port.onmessage = onMicMessage;
      mic = { stream, source, node, sink };
      for (const track of stream.getAudioTracks()) {
        track.addEventListener("ended", () => {
          if (!mic) return;
          stopMic();
          setStatus("The microphone stopped (unplugged or turned off). The typed box still works.", "error");
        });
      }
      setState("listening");
      setStatus(lab.socketOpen
        ? "Listening: your microphone goes to the agent as you speak."
        : "Microphone on; waiting for the connection to the run.");
    } catch (error) {
      for (const track of stream.getTracks()) track.stop();
      micFailure(error);
    }
  }

  function stopMic() {
    if (!mic) return;
    const { stream, source, node, sink } = mic;
    mic = null;
    node.port.postMessage({ type: "close" });
    source.disconnect();
    node.disconnect();
    sink.disconnect();
    for (const track of stream.getTracks()) track.stop();
    setIndicator(el.you, "youSpeaking", false);
    lab.level = 0;
    if (el.meter) el.meter.value = 0;
    setState("off");
    setStatus("Microphone off. The typed box still works.");
  }

  function onMicMessage(event) {
    const msg = event.data;
    if (msg.type === "frame") {
      sendFrame(msg.pcm);
    } else if (msg.type === "level") {
      lab.level = msg.rms;
      // A -60..0 dBFS scale: linear RMS would leave speech at the bottom.
      const db = 20 * Math.log10(Math.max(msg.rms, 1e-6));
      if (el.meter) el.meter.value = Math.min(1, Math.max(0, (db + 60) / 60));
      const now = performance.now();
      if (msg.rms >= SPEAKING_RMS) lastLoudAt = now;
      setIndicator(el.you, "youSpeaking", now - lastLoudAt < SPEAKING_HANGOVER_MS);
    }
  }

  // ---- page wiring --------------------------------------------------------

  // "Start the call": the click makes (or resumes) the AudioContext first, then
  // connects the run's socket, so the greeting that follows is heard from its first word.
  function startCall() {
    const section = document.getElementById("run");
    // Not data-ws-connect: htmx reads data-* attributes as its own and would connect at once.
    if (!section || !section.dataset.callUrl || !window.htmx) return;
    ensureAudio();
    section.setAttribute("ws-connect", section.dataset.callUrl);
    delete section.dataset.callUrl;
    window.htmx.process(section);
    if (el.callStart) el.callStart.closest("#call-start-box").hidden = true;
  }

  function init() {
    el.panel = document.getElementById("voice-panel");
    el.start = document.getElementById("mic-start");
    el.stop = document.getElementById("mic-stop");
    el.meter = document.getElementById("mic-meter");
    el.you = document.getElementById("you-speaking");
    el.agent = document.getElementById("agent-speaking");
    el.status = document.getElementById("voice-status");
    el.callStart = document.getElementById("call-start");
    setState(lab.state);
    if (el.callStart) el.callStart.addEventListener("click", startCall);
    if (el.start) el.start.addEventListener("click", startMic);
    if (el.stop) el.stop.addEventListener("click", stopMic);
    // Typed turns and the scripted caller get spoken answers too, so those
    // clicks are the gesture that lets the page play sound. Capture phase:
    // this runs before htmx sends the form.
    document.addEventListener("submit", (event) => {
      if (event.target.closest && event.target.closest("#play-form, #say-form")) ensureAudio();
    }, true);
    // Any later gesture revives a context the browser suspended.
    for (const type of ["pointerdown", "keydown"]) {
      document.addEventListener(type, () => {
        if (ctx && ctx.state === "suspended") ctx.resume().catch(() => {});
      }, true);
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
