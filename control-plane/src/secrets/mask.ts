/**
 * How secrets look on the wire: masked for everyone, Admins included, yet recognisable, and how a
 * masked value sent back is read.
 *
 * - An http(s) URL keeps its scheme and host: `https://hooks.slack.com/••••`. Other text is `••••`.
 * - The last 4 characters follow the mask when the hidden part (a URL's path, query and fragment, or
 *   the whole text) has at least 16, so two webhooks on one host can be told apart.
 * - A list is masked element by element; null stays null.
 * - Unmasking a list: an element equal to the mask of a stored element stands for that element (the
 *   first not yet taken, in stored order), so a list read from GET can be sent back with elements
 *   removed, reordered or added. An element that contains `••••` but matches no stored element is
 *   refused; any other element is a new value.
 */
import type { FieldError } from "../http/problem.ts";

export const MASK = "••••";
const TAIL = 4;
const MIN_HIDDEN_FOR_TAIL = 16;

/** A secret's shape: text, a list of text, or unset. */
export type SecretValue = string | readonly string[] | null;

/** The wire form of one secret string. */
export function maskText(value: string): string {
  const url = httpUrl(value);
  const hidden = url ? `${url.pathname}${url.search}${url.hash}`.replace(/^\//, "") : value;
  const tail = hidden.length >= MIN_HIDDEN_FOR_TAIL ? hidden.slice(-TAIL) : "";
  return url ? `${url.protocol}//${url.host}/${MASK}${tail}` : `${MASK}${tail}`;
}

/** The wire form of a secret value. */
export function maskValue<V extends SecretValue>(value: V): V {
  if (value === null) return value;
  if (typeof value === "string") return maskText(value) as V;
  if (Array.isArray(value)) return value.map(maskText) as unknown as V;
  throw new Error("Only text, lists of text and null can be secret.");
}

/**
 * The value to store for `sent`, given what is stored now: masks resolved back to the stored text.
 * Returns the problems instead when a masked element matches nothing stored.
 *
 * @example unmaskValue(["https://hooks.slack.com/••••wxyz", "https://new.example/hook"], stored, "chat_webhook_urls")
 */
export function unmaskValue<V extends SecretValue>(
  sent: V,
  stored: SecretValue,
  path: string,
): { value: V } | { problems: FieldError[] } {
  if (sent === null) return { value: sent };
  const storedList = stored === null ? [] : typeof stored === "string" ? [stored] : [...stored];
  const taken = new Set<number>();
  const problems: FieldError[] = [];
  const resolve = (element: string, at: string): string => {
    if (!element.includes(MASK)) return element;
    const index = storedList.findIndex((s, i) => !taken.has(i) && maskText(s) === element);
    if (index < 0) {
      problems.push({
        path: at,
        message: `is masked but matches no stored value (it changed since you read it?); send the full value, or the mask exactly as GET returned it`,
      });
      return element;
    }
    taken.add(index);
    return storedList[index] as string;
  };
  const value =
    typeof sent === "string" ? resolve(sent, path) : sent.map((e, i) => resolve(e, `${path}.${i}`));
  return problems.length > 0 ? { problems } : { value: value as V };
}

function httpUrl(value: string): URL | undefined {
  if (!/^https?:\/\//i.test(value)) return undefined;
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}
