/**
 * Reads the JSON body of `POST /screen` and `POST /reveal`. Whatever the appliance cannot read
 * exactly as sent is refused, never guessed at, since a guess silently changes what is screened:
 *
 * - 415 unless `Content-Type` is `application/json` (any case, parameters allowed). A charset other
 *   than UTF-8 is refused because JSON is UTF-8 only (RFC 8259 §8.1); `+json` types are refused
 *   because they name other formats (merge-patch, problem details); a `Content-Encoding` other than
 *   identity is refused because the appliance does not decompress.
 * - 422 on `(body)` for bytes that are not UTF-8 (decoding would swap them for U+FFFD) and text
 *   that is not JSON; 422 on the member's path for a name given twice in one object (`JSON.parse`
 *   would keep the last).
 * - 422 naming each field the schema refuses; an unknown field is named by its own path.
 */
import type { Context } from "hono";
import type { z } from "zod";
import { firstDuplicateName } from "./duplicate-names.ts";
import { ApiError, type FieldError } from "./problem.ts";

const JSON_MEDIA_TYPE = "application/json";

/**
 * The request body, checked against `schema`.
 *
 * @example
 * const request = await readJsonBody(c, ScreenRequest);
 */
export async function readJsonBody<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  requireJsonContentType(c.req.header("content-type"), c.req.header("content-encoding"));
  const json = parseJson(decodeUtf8(await c.req.arrayBuffer()));
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const errors = parsed.error.issues.flatMap(fieldErrors);
  throw new ApiError(422, errors.map((e) => `${e.path}: ${e.message}`).join("; "), errors);
}

function requireJsonContentType(contentType: string | undefined, contentEncoding: string | undefined): void {
  if (contentType === undefined || contentType.trim() === "") {
    throw new ApiError(
      415,
      `The request has no Content-Type; send the body as JSON with Content-Type: ${JSON_MEDIA_TYPE}.`,
    );
  }
  const [mediaType = "", ...parameters] = contentType.split(";");
  if (mediaType.trim().toLowerCase() !== JSON_MEDIA_TYPE) {
    throw new ApiError(
      415,
      `Content-Type ${contentType} is not accepted; send the body as JSON with Content-Type: ${JSON_MEDIA_TYPE}.`,
    );
  }
  for (const parameter of parameters) {
    const [name = "", value = ""] = parameter.split("=", 2).map((s) => s.trim().toLowerCase());
    const charset = value.replace(/^"(.*)"$/, "$1");
    if (name === "charset" && charset !== "utf-8" && charset !== "utf8") {
      throw new ApiError(
        415,
        `Content-Type ${contentType} is not accepted: JSON is always UTF-8, so send Content-Type: ${JSON_MEDIA_TYPE} (or ${JSON_MEDIA_TYPE}; charset=utf-8) with UTF-8 bytes.`,
      );
    }
  }
  if (contentEncoding !== undefined && contentEncoding.trim().toLowerCase() !== "identity") {
    throw new ApiError(
      415,
      `Content-Encoding ${contentEncoding} is not accepted; send the body uncompressed.`,
    );
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function decodeUtf8(bytes: ArrayBuffer): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw bodyError("The request body is not valid UTF-8.", "must be JSON encoded as UTF-8");
  }
}

function parseJson(text: string): unknown {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw bodyError(
      "The request body is not valid JSON.",
      `must be a JSON object (${(err as Error).message})`,
    );
  }
  const repeated = firstDuplicateName(text);
  if (repeated !== undefined) {
    throw new ApiError(422, `${repeated}: is given twice`, [
      { path: repeated, message: "is given twice; send each field once" },
    ]);
  }
  return json;
}

const bodyError = (detail: string, message: string) =>
  new ApiError(422, detail, [{ path: "(body)", message }]);

/** One issue as field errors; an unknown-keys issue names each unknown field by its own path. */
function fieldErrors(issue: z.core.$ZodIssue): FieldError[] {
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => ({
      path: [...issue.path, key].map(String).join("."),
      message: "is not a field of this request; check its spelling",
    }));
  }
  return [{ path: issue.path.map(String).join(".") || "(body)", message: issue.message }];
}
