// Playback of 16 kHz speech sent by the server, one utterance after another,
// at whatever rate the AudioContext runs. It counts what it actually played of
// each utterance, because the server only credits the caller with having heard
// what came out of the speaker, and a barge-in must cut the audio at once.

const IN_RATE = 16000;
const { PHASES, kernelTable } = globalThis.labResampler;
// A 4 ms fade-out on a stop: long enough to avoid a click, well inside one
// render quantum, so the cut is still "immediate".
const FADE_SAMPLES = Math.min(128, Math.round(sampleRate * 0.004));

class LabPlayerProcessor extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const opts = (options && options.processorOptions) || {};
    // The scripted caller's player plays the same way but is never reported.
    this.reports = opts.report !== false;
    // With no end-of-utterance marker on the wire, a drained utterance only
    // counts as finished once no more of it has arrived for this long; a
    // sentence synthesized late must not split one utterance into two reports.
    this.graceS = (opts.graceMs ?? 500) / 1000;

    this.step = IN_RATE / sampleRate;
    this.half = Math.ceil(8 * Math.max(1, this.step));
    this.taps = 2 * this.half;
    this.kernels = kernelTable(this.half, (0.45 * Math.min(IN_RATE, sampleRate)) / IN_RATE);

    // Received audio on one global 16 kHz timeline: buf[0] is sample bufStart,
    // and t is the (fractional) read position on that timeline.
    this.buf = new Float32Array(IN_RATE * 4);
    this.bufStart = 0;
    this.len = 0;
    this.t = 0;
    this.segments = []; // {id, start, len}, in play order
    this.stats = new Map(); // id -> {received, played}; insertion order = arrival order
    this.pending = null; // {id, at}: drained, waiting out the grace period
    this.playing = false;
    this.tail = null; // the fade rendered when a stop arrived

    this.port.onmessage = (event) => {
      const msg = event.data;
      if (msg.type === "chunk") this.append(msg.id, msg.samples);
      else if (msg.type === "stop") this.stop(msg.id);
    };
  }

  get end() {
    return this.bufStart + this.len;
  }

  append(id, samples) {
    if (this.pending) {
      const waiting = this.pending.id;
      this.pending = null;
      if (waiting !== id) this.finish(waiting);
    }
    // After a drain the read position may have overshot the last sample; new
    // audio starts exactly where the old ended.
    if (this.t > this.end) this.t = this.end;
    this.compact();
    if (this.len + samples.length > this.buf.length) {
      const grown = new Float32Array(Math.max(this.buf.length * 2, this.len + samples.length));
      grown.set(this.buf.subarray(0, this.len));
      this.buf = grown;
    }
    const start = this.end;
    this.buf.set(samples, this.len);
    this.len += samples.length;
    const last = this.segments[this.segments.length - 1];
    if (last && last.id === id && last.start + last.len === start) last.len += samples.length;
    else this.segments.push({ id, start, len: samples.length });
    const stat = this.stats.get(id) || { received: 0, played: 0 };
    stat.received += samples.length;
    this.stats.set(id, stat);
  }

  // Drop history the kernel can no longer reach.
  compact() {
    const keepFrom = Math.floor(this.t) - this.half;
    const drop = Math.min(keepFrom - this.bufStart, this.len);
    if (drop > 0) {
      this.buf.copyWithin(0, drop, this.len);
      this.bufStart += drop;
      this.len -= drop;
    }
  }

  sampleAt(t) {
    const base = Math.floor(t);
    const k0 = Math.round((t - base) * PHASES) * this.taps;
    const { buf, kernels, taps, len } = this;
    let n = base - this.half + 1 - this.bufStart;
    let acc = 0;
    for (let k = 0; k < taps; k++, n++) {
      if (n >= 0 && n < len) acc += buf[n] * kernels[k0 + k];
    }
    return acc;
  }

  stop(id) {
    // What each utterance got to play, counted before the fade (the fade is
    // a few milliseconds that the listener does not take in as words).
    const reached = Math.floor(this.t);
    const utterances = [];
    for (const [uid, stat] of this.stats) {
      let played = stat.played;
      for (const seg of this.segments) {
        if (seg.id === uid) played += Math.max(0, Math.min(reached - seg.start, seg.len));
      }
      utterances.push({ id: uid, played, total: stat.received });
    }
    if (this.t < this.end) {
      this.tail = new Float32Array(FADE_SAMPLES);
      for (let i = 0; i < FADE_SAMPLES && this.t < this.end; i++) {
        this.tail[i] = this.sampleAt(this.t) * (1 - i / FADE_SAMPLES);
        this.t += this.step;
      }
    }
    // Flush everything buffered at once: nothing queued survives a barge-in.
    this.t = Math.ceil(this.t);
    this.bufStart = this.t;
    this.len = 0;
    this.segments = [];
    this.stats.clear();
    this.pending = null;
    if (this.reports) this.port.postMessage({ type: "stopped", id, utterances });
  }

  finish(id) {
    const stat = this.stats.get(id);
    if (!stat) return;
    this.stats.delete(id);
    if (this.reports) {
      this.port.postMessage({ type: "finished", id, played: stat.played, total: stat.received });
    }
  }

  settle() {
    while (this.segments.length && this.segments[0].start + this.segments[0].len <= this.t) {
      const seg = this.segments.shift();
      const stat = this.stats.get(seg.id);
      if (stat) stat.played += seg.len;
      if (this.segments.some((s) => s.id === seg.id)) continue;
      // Another utterance already follows, so this one cannot grow any more.
      if (this.segments.length) this.finish(seg.id);
      else this.pending = { id: seg.id, at: currentTime };
    }
    if (this.pending && currentTime - this.pending.at >= this.graceS) {
      const { id } = this.pending;
      this.pending = null;
      this.finish(id);
    }
    const playing = this.t < this.end;
    if (playing !== this.playing) {
      this.playing = playing;
      const id = playing && this.segments.length ? this.segments[0].id : null;
      this.port.postMessage({ type: playing ? "started" : "idle", id });
    }
  }

  process(_inputs, outputs) {
    const out = outputs[0][0];
    let i = 0;
    if (this.tail) {
      out.set(this.tail.subarray(0, out.length));
      i = Math.min(this.tail.length, out.length);
      this.tail = null;
    }
    for (; i < out.length && this.t < this.end; i++) {
      out[i] = this.sampleAt(this.t);
      this.t += this.step;
    }
    out.fill(0, i);
    for (let c = 1; c < outputs[0].length; c++) outputs[0][c].set(out);
    this.settle();
    return true;
  }
}

registerProcessor("lab-player", LabPlayerProcessor);
