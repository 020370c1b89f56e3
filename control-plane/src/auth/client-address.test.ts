import { describe, expect, it } from "vitest";
import { clientFromForwarded } from "./client-address.ts";

describe("clientFromForwarded", () => {
  it("uses the peer and ignores X-Forwarded-For when no proxy is trusted", () => {
    expect(clientFromForwarded("10.0.0.2", "198.51.100.9", 0)).toBe("10.0.0.2");
  });

  it("takes the entry the outermost trusted proxy appended, whatever the client wrote before it", () => {
    expect(clientFromForwarded("10.0.0.2", "1.1.1.1, 198.51.100.9, 203.0.113.7", 1)).toBe("203.0.113.7");
    expect(clientFromForwarded("10.0.0.2", "1.1.1.1, 198.51.100.9, 203.0.113.7", 2)).toBe("198.51.100.9");
  });

  it("falls back to the first entry when fewer proxies appended than declared, and to the peer without the header", () => {
    expect(clientFromForwarded("10.0.0.2", "203.0.113.7", 3)).toBe("203.0.113.7");
    expect(clientFromForwarded("10.0.0.2", undefined, 1)).toBe("10.0.0.2");
  });

  it("reads an IPv4 peer of a dual-stack socket as IPv4", () => {
    expect(clientFromForwarded("::ffff:203.0.113.7", undefined, 0)).toBe("203.0.113.7");
    expect(clientFromForwarded("2001:db8::1", undefined, 0)).toBe("2001:db8::1");
  });
});
