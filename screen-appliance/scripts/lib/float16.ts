/**
 * IEEE 754 half precision (binary16) for the models' embedding tables, which are stored as float16
 * in the ONNX files: half the bytes, and a relative rounding error of at most 2^-11, far below
 * what moves a score. Rules: round to nearest, ties to even (as hardware and ONNX Runtime's Cast
 * do); values beyond the float16 range are refused rather than turned into infinity; subnormals
 * are kept. Training rounds the table once (`roundToFloat16`) before it calibrates and tunes
 * thresholds, so the spec describes the exact model in the file.
 */

const buffer = new DataView(new ArrayBuffer(4));

/** The float16 bit pattern nearest to `value` (ties to even). */
export function float16Bits(value: number): number {
  buffer.setFloat32(0, value);
  const bits = buffer.getUint32(0);
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  const mantissa = bits & 0x7fffff;
  if (exponent === 0xff) throw new Error(`float16: ${value} is not a finite number`);
  const halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f) throw new Error(`float16: ${value} is beyond the float16 range (65504)`);
  if (halfExponent <= 0) {
    // Subnormal (or zero): the mantissa with its implicit 1, shifted into place, rounded.
    if (halfExponent < -10) return sign;
    const full = mantissa | 0x800000;
    const shift = 14 - halfExponent;
    const rounded = roundShift(full, shift);
    return sign | rounded;
  }
  // Normal: 10 mantissa bits, rounded; a carry out of the mantissa bumps the exponent.
  const rounded = roundShift(mantissa, 13);
  const result = (halfExponent << 10) + rounded;
  if (result >= 0x7c00) throw new Error(`float16: ${value} is beyond the float16 range (65504)`);
  return sign | result;
}

/** `value >> shift`, rounded to nearest with ties to even. */
function roundShift(value: number, shift: number): number {
  const kept = value >>> shift;
  const rest = value - kept * 2 ** shift;
  const half = 2 ** (shift - 1);
  return rest > half || (rest === half && (kept & 1) === 1) ? kept + 1 : kept;
}

/** The number a float16 bit pattern stands for. */
export function fromFloat16Bits(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** Rounds every value to the nearest float16, in place; returns the array. */
export function roundToFloat16(values: Float32Array): Float32Array {
  for (let i = 0; i < values.length; i++) values[i] = fromFloat16Bits(float16Bits(values[i] ?? 0));
  return values;
}

/**
 * The float16 bit patterns of `values`, which must already be float16 numbers (`roundToFloat16`):
 * a value that would change is refused, so a file never holds a model other than the one measured.
 */
export function exactFloat16(values: Float32Array): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i] ?? 0;
    const bits = float16Bits(v);
    if (fromFloat16Bits(bits) !== v)
      throw new Error(`float16: value ${v} at ${i} is not a float16 number; round the table first`);
    out[i] = bits;
  }
  return out;
}
