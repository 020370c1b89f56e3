/**
 * A small browser for single sign-on tests: keeps cookies per host, follows redirects and submits
 * the one form of an HTML page (an IdP's login or consent form, a SAML auto-post form), as a user
 * clicking through would. Requests to `local` (the control plane's origin) go to the app in
 * process; everything else goes over the network (a provider on loopback).
 *
 * Cookies keep their SameSite rule as browsers apply it to top-level navigations: a request is
 * cross-site when the page that started the navigation (the form's page; a redirect keeps it) is on
 * another site (scheme and host); then Strict cookies stay home and Lax ones (the default) ride GETs
 * only, so an IdP's cross-site POST carries none.
 */

export interface BrowserOptions {
  /** The control plane's origin, and how to reach the app there. */
  local: { origin: string; request: (path: string, init: RequestInit) => Promise<Response> };
  /** Values for the text inputs of forms, by name (`login`, `password`). */
  fill?: Record<string, string>;
  /** Rewrites a URL before it is requested (tampering with a request on the way). */
  rewrite?: (url: URL) => URL | Promise<URL>;
}

export interface Visit {
  url: URL;
  response: Response;
  body: string;
}

type SameSite = "strict" | "lax" | "none";

export class Browser {
  private readonly jar = new Map<string, Map<string, { value: string; sameSite: SameSite }>>();

  constructor(private readonly options: BrowserOptions) {}

  /**
   * Requests `url` and goes on through redirects and forms until a response that is neither, or
   * until `stop` says so for a URL about to be requested (which is then returned unrequested).
   */
  async navigate(
    start: string,
    stop: (url: URL) => boolean = () => false,
    init: { method?: string; form?: URLSearchParams; from?: string } = {},
  ): Promise<{ stoppedAt?: URL; last: Visit }> {
    let url = new URL(start);
    let method = init.method ?? "GET";
    let form = init.form;
    /** The page that started this navigation; none for one the user started (same-site). */
    let initiator = init.from ? new URL(init.from) : undefined;
    for (let hop = 0; hop < 30; hop++) {
      url = (await this.options.rewrite?.(url)) ?? url;
      if (stop(url)) return { stoppedAt: url, last: { url, response: new Response(), body: "" } };
      const response = await this.request(url, method, form, initiator);
      const body = await response.text();
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && location) {
        url = new URL(location, url);
        method = "GET";
        form = undefined;
        continue;
      }
      const next = response.status === 200 ? formOf(body, this.options.fill ?? {}) : undefined;
      if (!next) return { last: { url, response, body } };
      initiator = url;
      url = new URL(next.action, url);
      method = "POST";
      form = next.fields;
    }
    throw new Error(`too many hops, last at ${url}`);
  }

  private async request(
    url: URL,
    method: string,
    form?: URLSearchParams,
    initiator?: URL,
  ): Promise<Response> {
    const headers = new Headers({ accept: "text/html" });
    const crossSite = !!initiator && siteOf(initiator) !== siteOf(url);
    const sent = [...(this.jar.get(url.host) ?? [])].filter(
      ([, c]) => !crossSite || c.sameSite === "none" || (c.sameSite === "lax" && method === "GET"),
    );
    if (sent.length > 0) headers.set("cookie", sent.map(([k, c]) => `${k}=${c.value}`).join("; "));
    if (form) headers.set("content-type", "application/x-www-form-urlencoded");
    const init: RequestInit = {
      method,
      headers,
      redirect: "manual",
      ...(form ? { body: form.toString() } : {}),
    };
    const response =
      url.origin === this.options.local.origin
        ? await this.options.local.request(url.pathname + url.search, init)
        : await fetch(url, init);
    // Node and workerd both have getSetCookie; the Workers type definitions lack it.
    const setCookies = (response.headers as Headers & { getSetCookie(): string[] }).getSetCookie();
    for (const line of setCookies) this.store(url.host, line);
    return response;
  }

  private store(host: string, line: string): void {
    const [pair = "", ...attributes] = line.split(";");
    const at = pair.indexOf("=");
    const name = pair.slice(0, at).trim();
    const value = pair.slice(at + 1).trim();
    const cookies = this.jar.get(host) ?? new Map<string, { value: string; sameSite: SameSite }>();
    const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === "";
    const sameSite = attributes
      .map((a) => /^\s*samesite=(strict|lax|none)\s*$/i.exec(a)?.[1]?.toLowerCase())
      .find(Boolean) as SameSite | undefined;
    if (expired) cookies.delete(name);
    else cookies.set(name, { value, sameSite: sameSite ?? "lax" });
    this.jar.set(host, cookies);
  }
}

/** A URL's site as SameSite sees it: scheme and host, any port (the registrable domain, for tests). */
const siteOf = (url: URL) => `${url.protocol}//${url.hostname}`;

const decode = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

/** The first form of a page: its action and fields (hidden values kept, text inputs filled). */
function formOf(html: string, fill: Record<string, string>) {
  const form = /<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form?.[1]) return undefined;
  const fields = new URLSearchParams();
  for (const input of (form[2] ?? "").matchAll(/<input([^>]*)>/gi)) {
    const attrs = input[1] ?? "";
    const name = /name="([^"]*)"/.exec(attrs)?.[1];
    if (!name) continue;
    const value = /value="([^"]*)"/.exec(attrs)?.[1];
    fields.set(name, fill[name] ?? (value !== undefined ? decode(value) : ""));
  }
  return { action: decode(form[1]), fields };
}
