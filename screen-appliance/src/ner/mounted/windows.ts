/**
 * Sliding windows over a token sequence longer than the model's input. Each token is classified in
 * exactly one window, the one in which it sits in the kept middle part, so it always sees up to
 * `context` tokens on either side (a name on a window edge still sees its neighbours) and no token
 * is counted twice. Windows hold at most `capacity` tokens.
 */

export interface Window {
  /** Tokens fed to the model: [from, to). */
  from: number;
  to: number;
  /** Tokens whose predictions are kept from this window: [keepFrom, keepTo). */
  keepFrom: number;
  keepTo: number;
}

/** Context on each side: a quarter of the window, at most 64 tokens. */
export function planWindows(count: number, capacity: number): Window[] {
  if (capacity < 1) throw new Error(`a window must hold at least one token, not ${capacity}`);
  if (count <= capacity) return [{ from: 0, to: count, keepFrom: 0, keepTo: count }];
  const context = Math.min(64, Math.floor(capacity / 4));
  const keep = capacity - 2 * context;
  const windows: Window[] = [];
  for (let keepFrom = 0; keepFrom < count; keepFrom += keep) {
    const from = Math.max(0, keepFrom - context);
    const to = Math.min(count, from + capacity);
    windows.push({ from, to, keepFrom, keepTo: Math.min(count, keepFrom + keep) });
  }
  return windows;
}
