/**
 * All environment configuration of the appliance, parsed once at start.
 */
import { z } from "zod";
import { BUILT_IN_LICENSE_PUBLIC_KEY } from "./license/public-key.ts";

/** A mounted model directory; empty means unset, so `-e VAR=` in a compose file turns it off. */
const optionalDirectory = z
  .string()
  .optional()
  .transform((v) => (v === "" ? undefined : v));

const Env = z.object({
  PORT: z.coerce.number().int().min(1).max(65535).default(8080),
  HOST: z.string().default("0.0.0.0"),
  SCREEN_LICENSE_PATH: z.string().default("/etc/screen/screen.lic"),
  SCREEN_LICENSE_PUBLIC_KEY: z.string().default(BUILT_IN_LICENSE_PUBLIC_KEY),
  /** Largest accepted request body in bytes; larger bodies get 413. */
  SCREEN_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  /**
   * Serving processes: a number, or `auto` for one per CPU the appliance may use (its cgroup quota
   * counts), one on CUDA. Each loads its own models.
   */
  SCREEN_WORKERS: z
    .string()
    .default("auto")
    .transform((value, ctx): number | "auto" => {
      if (value === "auto") return "auto";
      const count = Number(value);
      if (Number.isInteger(count) && count >= 1 && count <= 256) return count;
      ctx.addIssue({
        code: "custom",
        message: 'expected "auto" or a whole number of processes from 1 to 256',
      });
      return z.NEVER;
    }),
  /** `auto` tries CUDA and falls back to CPU; `cpu` skips the CUDA attempt. */
  SCREEN_EXECUTION_PROVIDER: z.enum(["auto", "cuda", "cpu"]).default("auto"),
  /** Folder holding the `.onnx` models; defaults to the models shipped in the package. */
  SCREEN_MODEL_DIR: z.string().optional(),
  /**
   * A Hugging Face token-classification model directory (ONNX export) that replaces the built-in
   * PERSON_NAME model; read offline at start. Empty means unset.
   */
  SCREEN_NER_MODEL_DIR: optionalDirectory,
  /**
   * Hugging Face text-classification model directories (ONNX exports) that replace the built-in
   * toxicity and bias models for the types their labels name; read offline at start.
   */
  SCREEN_TOXICITY_MODEL_DIR: optionalDirectory,
  SCREEN_BIAS_MODEL_DIR: optionalDirectory,
});
export type ScreenConfig = z.infer<typeof Env>;

export function parseConfig(env: Record<string, string | undefined>): ScreenConfig {
  const parsed = Env.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`invalid screening appliance configuration: ${problems}`);
  }
  return parsed.data;
}
