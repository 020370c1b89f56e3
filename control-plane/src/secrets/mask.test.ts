import { describe, expect, it } from "vitest";
import { MASK, maskText, maskValue, unmaskValue } from "./mask.ts";

const SLACK_A = "https://hooks.slack.com/services/T0001/B0001/aaaaaaaaaaaaaaaaaaaaWXYZ";
const SLACK_B = "https://hooks.slack.com/services/T0001/B0002/bbbbbbbbbbbbbbbbbbbbQRST";
const TEAMS = "https://contoso.webhook.office.com/webhookb2/1234/IncomingWebhook/abcd/efgh";

describe("masking", () => {
  it("keeps a URL's scheme and host and the last 4 characters of a long path", () => {
    expect(maskText(SLACK_A)).toBe(`https://hooks.slack.com/${MASK}WXYZ`);
    expect(maskText(TEAMS)).toBe(`https://contoso.webhook.office.com/${MASK}efgh`);
  });

  it("shows nothing of a short path, of credentials in a URL, or of short text", () => {
    expect(maskText("https://user:pass@example.com:8443/x")).toBe(`https://example.com:8443/${MASK}`);
    expect(maskText("short-token")).toBe(MASK);
    expect(maskText("a-long-api-token-0123456789")).toBe(`${MASK}6789`);
  });

  it("masks a list element by element and leaves null alone", () => {
    expect(maskValue([SLACK_A, TEAMS])).toEqual([maskText(SLACK_A), maskText(TEAMS)]);
    expect(maskValue(null)).toBeNull();
  });
});

describe("unmasking", () => {
  const stored = [SLACK_A, SLACK_B, TEAMS];

  it("reads an unchanged masked list back as the stored list", () => {
    expect(unmaskValue(maskValue(stored), stored, "urls")).toEqual({ value: stored });
  });

  it("lets a masked list be reordered, shortened and extended", () => {
    const sent = [maskText(TEAMS), maskText(SLACK_A), "https://new.example.com/hook"];
    expect(unmaskValue(sent, stored, "urls")).toEqual({
      value: [TEAMS, SLACK_A, "https://new.example.com/hook"],
    });
  });

  it("gives two elements with one mask the stored elements in stored order", () => {
    const twins = [
      "https://hooks.slack.com/services/one/aaaaaaaaaaaaSAME",
      "https://hooks.slack.com/services/two/bbbbbbbbbbbbSAME",
    ];
    const sent = maskValue(twins);
    expect(sent[0]).toBe(sent[1]);
    expect(unmaskValue(sent, twins, "urls")).toEqual({ value: twins });
  });

  it("refuses a masked element that stands for nothing stored, naming its position", () => {
    const sent = [maskText(SLACK_A), `https://hooks.slack.com/${MASK}NOPE`];
    expect(unmaskValue(sent, stored, "urls")).toEqual({
      problems: [{ path: "urls.1", message: expect.stringContaining("matches no stored value") }],
    });
    expect(unmaskValue([maskText(SLACK_A), maskText(SLACK_A)], stored, "urls")).toMatchObject({
      problems: [{ path: "urls.1" }],
    });
  });

  it("reads a single masked text back as the stored text", () => {
    expect(unmaskValue(maskText("a-long-api-token-0123456789"), "a-long-api-token-0123456789", "t")).toEqual({
      value: "a-long-api-token-0123456789",
    });
    expect(unmaskValue("replacement", "a-long-api-token-0123456789", "t")).toEqual({ value: "replacement" });
  });
});
