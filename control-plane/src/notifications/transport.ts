/**
 * How notifications leave the control plane. Email goes through a `Mailer` the runtime provides
 * (SMTP with nodemailer on Node, `adapter/node-smtp.ts`; an HTTP email API on Workers,
 * `httpEmailApi` below); chat messages are a JSON POST to each webhook, on both runtimes.
 *
 * Failures are thrown as `DeliveryError` whose message names no URL, address list or credential:
 * it is stored in the outbox row and shown to Admins.
 */

export interface EmailMessage {
  to: string[];
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  /** Where mail goes, for logs: host and port or the API's origin, never a credential. */
  readonly describe: string;
  send(message: EmailMessage): Promise<void>;
}

export class DeliveryError extends Error {}

/** How long a webhook or email API may take to answer. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** Why a fetch failed, without its URL: the error's code or name. */
function reachError(err: unknown): string {
  const cause = (err as { cause?: { code?: string } }).cause;
  if (cause?.code) return cause.code;
  return err instanceof Error ? err.name : "error";
}

/** POSTs `body` as JSON; any answer but 2xx is a `DeliveryError` naming the status only. */
export async function postJson(
  fetcher: typeof fetch,
  what: string,
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<void> {
  let res: Response;
  try {
    res = await fetcher(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
      redirect: "manual",
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
  } catch (err) {
    throw new DeliveryError(`${what} could not be reached (${reachError(err)})`);
  }
  await res.body?.cancel();
  if (res.status < 200 || res.status > 299) throw new DeliveryError(`${what} answered HTTP ${res.status}`);
}

export interface HttpEmailApiSettings {
  /** The API's endpoint: it receives `{from, to, subject, text, html}` as JSON. */
  url: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token: string;
  from: string;
}

/**
 * A mailer for an HTTP email API that takes one JSON POST per message (Workers cannot speak SMTP):
 * `{"from", "to": [...], "subject", "text", "html"}` with a bearer token. Resend's `/emails`
 * endpoint reads exactly this; other providers sit behind a small relay.
 */
export function httpEmailApi(settings: HttpEmailApiSettings, fetcher?: typeof fetch): Mailer {
  return {
    describe: `HTTP email API at ${new URL(settings.url).origin}`,
    send: (m) =>
      postJson(
        // The global fetch as it is when sending, not when the mailer was made.
        fetcher ?? fetch,
        "the email API",
        settings.url,
        { from: settings.from, to: m.to, subject: m.subject, text: m.text, html: m.html },
        { authorization: `Bearer ${settings.token}` },
      ),
  };
}

/** The webhook's URL as a fingerprint: what an outbox row keeps instead of the URL. */
export async function webhookFingerprint(url: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(url));
  return Array.from(new Uint8Array(digest).slice(0, 12), (b) => b.toString(16).padStart(2, "0")).join("");
}
