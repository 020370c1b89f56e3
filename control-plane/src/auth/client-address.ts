/**
 * Which address a request comes from, for the login throttle. Each runtime entry passes its own
 * way of telling to `buildApp`:
 *
 * - Node: the TCP peer's address. `X-Forwarded-For` is ignored unless `LAKESMITH_TRUST_PROXY_HOPS`
 *   says how many reverse proxies of our own stand in front; then the address that the outermost of
 *   them saw is used (the hops-th entry from the right), and entries a client wrote itself are not.
 * - Workers: `CF-Connecting-IP`, which Cloudflare's edge sets on every request and clients cannot
 *   override; `X-Forwarded-For` is ignored.
 * - Without one (an app built for `app.request` in tests), every caller counts as one client.
 */
import type { Context } from "hono";

export type ClientAddress = (c: Context) => string | undefined;

/**
 * The client address from a socket's peer address and, behind `trustedHops` proxies of our own,
 * the `X-Forwarded-For` they appended to.
 *
 * @example
 * clientFromForwarded("10.0.0.2", "198.51.100.9, 203.0.113.7", 1); // "203.0.113.7"
 */
export function clientFromForwarded(
  peer: string | undefined,
  forwardedFor: string | undefined,
  trustedHops: number,
): string | undefined {
  if (trustedHops > 0 && forwardedFor) {
    const hops = forwardedFor
      .split(",")
      .map((entry) => entry.trim())
      .filter(Boolean);
    const client = hops[Math.max(0, hops.length - trustedHops)];
    if (client) return unmapIpv4(client);
  }
  return peer === undefined ? undefined : unmapIpv4(peer);
}

/** `::ffff:203.0.113.7`, as a dual-stack socket reports an IPv4 peer, is `203.0.113.7`. */
function unmapIpv4(address: string): string {
  return address.toLowerCase().startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}
