// Microphone capture for the lab: the context's input at whatever rate the
// device runs (44.1 kHz, 48 kHz, ...) becomes 16 kHz mono PCM16 in frames of
// exactly 320 samples (20 ms), the unit the server's VAD and pacing count in.

const OUT_RATE = 16000;
const FRAME_SAMPLES = 320;
// A level every 50 ms is smooth enough for a meter without flooding the port.
const LEVEL_SAMPLES = OUT_RATE / 20;
const { PHASES, kernelTable } = globalThis.labResampler;

class Resampler {
  constructor(inRate, outRate) {
    this.step = inRate / outRate;
    this.passthrough = inRate === outRate;
    // Cut below the lower Nyquist so nothing above 8 kHz folds back into speech.
    const cutoff = (0.45 * Math.min(inRate, outRate)) / inRate;
    this.half = Math.ceil(8 * Math.max(1, this.step));
    this.taps = 2 * this.half;
    this.kernels = kernelTable(this.half, cutoff);
    this.buf = new Float32Array(this.taps + 1024);
    // Start with a history of silence so the first output needs no special case.
    this.len = this.half;
    this.pos = this.half;
  }

  push(input, emit) {
    if (this.passthrough) {
      for (let i = 0; i < input.length; i++) emit(input[i]);
      return;
    }
    if (this.len + input.length > this.buf.length) {
      const grown = new Float32Array(this.len + input.length + 1024);
      grown.set(this.buf.subarray(0, this.len));
      this.buf = grown;
    }
    this.buf.set(input, this.len);
    this.len += input.length;
    const { buf, kernels, taps, half } = this;
    while (Math.floor(this.pos) + half < this.len) {
      const base = Math.floor(this.pos);
      const k0 = Math.round((this.pos - base) * PHASES) * taps;
      let acc = 0;
      for (let k = 0, n = base - half + 1; k < taps; k++, n++) acc += buf[n] * kernels[k0 + k];
      emit(acc);
      this.pos += this.step;
    }
    const drop = Math.floor(this.pos) - half + 1;
    if (drop > 0) {
      buf.copyWithin(0, drop, this.len);
      this.len -= drop;
      this.pos -= drop;
    }
  }
}

class LabMicProcessor extends AudioWorkletProcessor {
  constructor() {
    super();
    this.alive = true;
    this.resampler = new Resampler(sampleRate, OUT_RATE);
    this.frame = new Int16Array(FRAME_SAMPLES);
    this.filled = 0;
    this.sumSquares = 0;
    this.levelCount = 0;
    this.mono = new Float32Array(128);
    this.emit = (sample) => this.take(sample);
    this.port.onmessage = (event) => {
      if (event.data && event.data.type === "close") this.alive = false;
    };
  }

  take(sample) {
    const s = sample > 1 ? 1 : sample < -1 ? -1 : sample;
    this.frame[this.filled++] = Math.round(s < 0 ? s * 32768 : s * 32767);
    this.sumSquares += s * s;
    if (++this.levelCount === LEVEL_SAMPLES) {
      this.port.postMessage({ type: "level", rms: Math.sqrt(this.sumSquares / LEVEL_SAMPLES) });
      this.sumSquares = 0;
      this.levelCount = 0;
    }
    if (this.filled === FRAME_SAMPLES) {
      const pcm = this.frame.buffer;
      this.port.postMessage({ type: "frame", pcm }, [pcm]);
      this.frame = new Int16Array(FRAME_SAMPLES);
      this.filled = 0;
    }
  }

  process(inputs) {
    if (!this.alive) return false;
    const channels = inputs[0];
    // No channels means nothing is connected (yet): there is no audio to send.
    if (!channels || channels.length === 0) return true;
    let mono = channels[0];
    if (channels.length > 1) {
      if (this.mono.length !== mono.length) this.mono = new Float32Array(mono.length);
      this.mono.fill(0);
      for (const channel of channels) {
        for (let i = 0; i < channel.length; i++) this.mono[i] += channel[i] / channels.length;
      }
      mono = this.mono;
    }
    this.resampler.push(mono, this.emit);
    return true;
  }
}

registerProcessor("lab-mic", LabMicProcessor);
