/**
 * How an SSO step that a browser is on answers a refusal: a small HTML page that says what went
 * wrong and links back to the console's login, with the refusal's status. Callers that do not ask
 * for HTML (API clients, tests) get the usual problem+json from the error handler instead.
 */
import type { Context } from "hono";
import { ApiError } from "../http/problem.ts";

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => ESCAPES[ch] ?? ch);

/** Rethrows `err`, or answers it as a page when the request prefers HTML and it is an `ApiError`. */
export function refusalPage(c: Context, err: unknown, loginUrl: string): Response {
  if (!(err instanceof ApiError) || !(c.req.header("accept") ?? "").includes("text/html")) throw err;
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign-in refused - Lakesmith</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}</style>
</head><body>
<h1>Sign-in refused</h1>
<p>${escapeHtml(err.message)}</p>
<p><a href="${escapeHtml(loginUrl)}">Back to the sign-in page</a></p>
</body></html>`;
  return c.html(html, err.status as 400);
}
