// The windowed-sinc resampling kernel shared by mic-worklet.js and player-worklet.js.
// Worklet modules share one global scope but not their top-level bindings, so the
// page loads this module first and the two processors read it from globalThis.

// Nearest-phase lookup: 128 phases keep the timing error far below one
// output sample, which is inaudible and irrelevant to speech recognition.
const PHASES = 128;

// Windowed-sinc kernels for every fractional phase of the output position, so
// the resampler handles non-integer ratios (44100 / 16000) as well as 3:1.
function kernelTable(half, cutoff) {
  const taps = 2 * half;
  const table = new Float32Array((PHASES + 1) * taps);
  for (let p = 0; p <= PHASES; p++) {
    const frac = p / PHASES;
    let sum = 0;
    for (let k = 0; k < taps; k++) {
      const x = k - half + 1 - frac;
      const arg = 2 * cutoff * x;
      const sinc = arg === 0 ? 1 : Math.sin(Math.PI * arg) / (Math.PI * arg);
      const w = Math.abs(x) >= half ? 0
        : 0.42 + 0.5 * Math.cos((Math.PI * x) / half) + 0.08 * Math.cos((2 * Math.PI * x) / half);
      table[p * taps + k] = sinc * w;
      sum += sinc * w;
    }
    // Unity gain at DC for every phase, or the phases would ripple audibly.
    for (let k = 0; k < taps; k++) table[p * taps + k] /= sum;
  }
  return table;
}

globalThis.labResampler = { PHASES, kernelTable };
