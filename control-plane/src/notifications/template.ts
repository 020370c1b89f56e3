/**
 * The templates' one escaping rule. `html` is a tagged template whose interpolated values are
 * escaped unless they are themselves `html` results, so a table name, a job error or an address
 * can never open a tag in an email; lists of fragments are joined. `chatText` escapes the three
 * characters Slack-compatible chat reads as markup.
 *
 * @example html`<td>${table.name}</td>` // a name `<b>` becomes `&lt;b&gt;`
 */

/** Markup that is already safe: the result of `html`. */
export class Html {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function fragment(value: unknown): string {
  if (value instanceof Html) return value.markup;
  if (Array.isArray(value)) return value.map(fragment).join("");
  if (value === null || value === undefined || value === false) return "";
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? "";
  values.forEach((value, i) => {
    out += fragment(value) + (strings[i + 1] ?? "");
  });
  return new Html(out);
}

/** Text for a Slack-compatible `text` field: `&`, `<` and `>` are its only markup characters. */
export function chatText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
