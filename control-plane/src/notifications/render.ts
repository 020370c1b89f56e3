/**
 * The words of every notification: a report's and a failed job's subject, plain text, HTML and chat
 * message, from the figures and the settings. Everything that comes from users or agents (table
 * names, job errors) goes through `html` (escaped) or `chatText`.
 *
 * - Theme: `email_theme` picks the palette of the HTML part (`data-theme` names it).
 * - Links: built on `console_public_url`; when it is unset no part carries a link and the report
 *   says how to set it (`NO_LINKS_NOTE`).
 */
import type { Config } from "../config/definitions.ts";
import type { Job, NotificationContent } from "../db/schema.ts";
import type { ReportFigures } from "./figures.ts";
import { chatText, type Html, html } from "./template.ts";

export type ReportPeriod = "daily" | "weekly";

export const NO_LINKS_NOTE =
  "This report has no links: set console_public_url (PUT /api/v1/config) to the console's address to have them.";

const PALETTES = {
  Light: { background: "#ffffff", text: "#111827", muted: "#6b7280", accent: "#2563eb", rule: "#e5e7eb" },
  Dark: { background: "#111827", text: "#f9fafb", muted: "#9ca3af", accent: "#60a5fa", rule: "#374151" },
} as const;

/** `https://console.example.com` + `/jobs/x`, or undefined when the setting is unset. */
function link(values: Config, path: string): string | undefined {
  const base = values.console_public_url;
  return base ? `${base.replace(/\/+$/, "")}${path}` : undefined;
}

const number = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });
const usd = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" });

/** Bytes in binary units: `1.5 GiB`. */
export function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${number.format(value)} ${units[unit]}`;
}

export const formatUsd = (amount: number) => usd.format(amount);

function page(values: Config, title: string, body: Html): Html {
  const p = PALETTES[values.email_theme];
  return html`<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body data-theme="${values.email_theme.toLowerCase()}" style="margin:0;padding:24px;background:${p.background};color:${p.text};font-family:Helvetica,Arial,sans-serif"><h1 style="font-size:20px;color:${p.accent}">${title}</h1>${body}<hr style="border:none;border-top:1px solid ${p.rule}"><p style="color:${p.muted};font-size:12px">Lakesmith</p></body></html>`;
}

/** The lines of a report, shared by its text, HTML and chat parts. */
function reportLines(f: ReportFigures): [string, string][] {
  const c = f.crunch;
  const d = f.dollars;
  return [
    ["Crunch jobs", `${c.jobs} on ${c.tables} table(s)`],
    [
      "Data reduction (DRR)",
      c.drrPercent === null ? "n/a (nothing rewritten)" : `${number.format(c.drrPercent)}%`,
    ],
    [
      "Bytes saved",
      `${formatBytes(c.bytesSaved)} (${formatBytes(c.bytesBefore)} -> ${formatBytes(c.bytesAfter)})`,
    ],
    ["Dollars saved per month", `${formatUsd(d.perMonth)} at ${formatUsd(d.effectiveRate)} per GB-month`],
    ...(d.projected !== null
      ? ([[`Projected over ${d.projectionMonths} months`, formatUsd(d.projected)]] as [string, string][])
      : []),
    ["Deletions pending", `${f.deletions.pendingFiles} file(s), ${formatBytes(f.deletions.pendingBytes)}`],
    ["Deletions done", `${f.deletions.deletedFiles} file(s), ${formatBytes(f.deletions.deletedBytes)}`],
    ["Failures needing attention", String(f.failures.count)],
  ];
}

export function renderReport(period: ReportPeriod, f: ReportFigures, values: Config): NotificationContent {
  const title = `Lakesmith ${period} report: ${f.from.toISOString().slice(0, 16)}Z to ${f.to.toISOString().slice(0, 16)}Z`;
  const lines = reportLines(f);
  const dashboard = link(values, "/");
  const jobLink = (id: string) => link(values, `/jobs/${encodeURIComponent(id)}`);
  const failures = f.failures.latest.map((x) => ({ ...x, href: jobLink(x.jobId) }));
  const p = PALETTES[values.email_theme];

  const text = [
    title,
    "",
    ...lines.map(([k, v]) => `${k}: ${v}`),
    ...(f.crunch.top.length
      ? [
          "",
          "Tables that saved most:",
          ...f.crunch.top.map((t) => `  ${t.name}: ${formatBytes(t.bytesSaved)}`),
        ]
      : []),
    ...(failures.length
      ? [
          "",
          "Failed jobs:",
          ...failures.map(
            (x) => `  ${x.kind} ${x.jobId}: ${x.error ?? "no error given"}${x.href ? ` (${x.href})` : ""}`,
          ),
        ]
      : []),
    "",
    dashboard ? `Console: ${dashboard}` : NO_LINKS_NOTE,
  ].join("\n");

  const body = html`<table style="border-collapse:collapse">${lines.map(
    ([k, v]) =>
      html`<tr><td style="padding:4px 16px 4px 0;color:${p.muted}">${k}</td><td style="padding:4px 0">${v}</td></tr>`,
  )}</table>${
    f.crunch.top.length
      ? html`<h2 style="font-size:16px">Tables that saved most</h2><ul>${f.crunch.top.map((t) => html`<li>${t.name}: ${formatBytes(t.bytesSaved)}</li>`)}</ul>`
      : ""
  }${
    failures.length
      ? html`<h2 style="font-size:16px">Failed jobs</h2><ul>${failures.map(
          (x) =>
            html`<li>${x.href ? html`<a style="color:${p.accent}" href="${x.href}">${x.kind} ${x.jobId}</a>` : `${x.kind} ${x.jobId}`}: ${x.error ?? "no error given"}</li>`,
        )}</ul>`
      : ""
  }<p>${dashboard ? html`<a style="color:${p.accent}" href="${dashboard}">Open the console</a>` : NO_LINKS_NOTE}</p>`;

  const summary = `*${chatText(title)}*\n${lines.map(([k, v]) => `${chatText(k)}: ${chatText(v)}`).join("\n")}${dashboard ? `\n<${dashboard}|Open the console>` : ""}`;
  return {
    subject: `Lakesmith ${period} report: ${formatBytes(f.crunch.bytesSaved)} saved, ${f.failures.count} failure(s)`,
    text,
    html: page(values, title, body).markup,
    chat: { text: summary, blocks: [{ type: "section", text: { type: "mrkdwn", text: summary } }] },
  };
}

export function renderFailure(job: Job, values: Config): NotificationContent {
  const href = link(values, `/jobs/${encodeURIComponent(job.id)}`);
  const title = `Job failed: ${job.kind} ${job.id}`;
  const fields: [string, string][] = [
    ["Kind", job.kind],
    ["Job", job.id],
    ...(job.tableId ? ([["Table", job.tableId]] as [string, string][]) : []),
    ["Attempts", `${job.attempt} of ${job.maxAttempts}`],
    ["Finished", (job.finishedAt ?? job.updatedAt ?? new Date(0)).toISOString()],
    ["Error", job.error ?? "no error given"],
  ];
  const text = [
    title,
    "",
    ...fields.map(([k, v]) => `${k}: ${v}`),
    "",
    href ? `Details: ${href}` : NO_LINKS_NOTE,
  ].join("\n");
  const body = html`<table>${fields.map(([k, v]) => html`<tr><td style="padding:4px 16px 4px 0">${k}</td><td>${v}</td></tr>`)}</table><p>${
    href ? html`<a href="${href}">Open the job</a>` : NO_LINKS_NOTE
  }</p>`;
  const chat = `:x: *${chatText(title)}*\n${chatText(job.error ?? "no error given")}${href ? `\n<${href}|Open the job>` : ""}`;
  return {
    subject: `Lakesmith: ${job.kind} job ${job.id} failed`,
    text,
    html: page(values, title, body).markup,
    chat: { text: chat, blocks: [{ type: "section", text: { type: "mrkdwn", text: chat } }] },
  };
}
