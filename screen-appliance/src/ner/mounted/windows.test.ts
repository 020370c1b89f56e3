import { describe, expect, it } from "vitest";
import { planWindows } from "./windows.ts";

describe("sliding windows over long token sequences", () => {
  it("keeps every token from exactly one window, with context on both sides where the text has it", () => {
    const problems: string[] = [];
    for (let capacity = 1; capacity <= 20; capacity++) {
      const context = Math.min(64, Math.floor(capacity / 4));
      for (let count = 1; count <= 90; count++) {
        const keptBy = new Array<number>(count).fill(0);
        for (const w of planWindows(count, capacity)) {
          const at = `${count} tokens, capacity ${capacity}, window ${w.from}..${w.to}`;
          if (w.to - w.from > capacity || w.from > w.keepFrom || w.keepTo > w.to)
            problems.push(`${at}: bounds`);
          for (let t = w.keepFrom; t < w.keepTo; t++) {
            keptBy[t] = (keptBy[t] ?? 0) + 1;
            const left = t - w.from >= Math.min(context, t);
            const right = w.to - 1 - t >= Math.min(context, count - 1 - t);
            if (count > capacity && !(left && right)) problems.push(`${at}: token ${t} lacks context`);
          }
        }
        if (!keptBy.every((k) => k === 1))
          problems.push(`${count} tokens, capacity ${capacity}: kept ${keptBy}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("uses one window when the text fits, and refuses a window without room for tokens", () => {
    expect(planWindows(5, 510)).toEqual([{ from: 0, to: 5, keepFrom: 0, keepTo: 5 }]);
    expect(() => planWindows(5, 0)).toThrow("a window must hold at least one token");
  });
});
