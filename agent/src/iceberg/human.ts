/**
 * Values as people read them, the way Iceberg's reference implementation (Java) prints a partition
 * value into a data file path: `Double.toString`, `BigDecimal.toString`, `LocalDate`, `LocalTime`,
 * `LocalDateTime` and UTC `OffsetDateTime` (`Z`) `toString`, base64 for bytes, `null` for null.
 * pyiceberg differs in two places: zoned timestamps end in `+00:00` and seconds are always written.
 */
import { formatDate, formatTime, formatTimestamp } from "./calendar.ts";
import type { PrimitiveType } from "./schema.ts";
import type { IcebergDecimal, IcebergValue } from "./values.ts";

const MICROS = 1_000_000n;
const NANOS = 1_000_000_000n;

/** The human string of one value of `type` (what an identity partition puts in a path). */
export function humanValue(type: PrimitiveType, value: IcebergValue | null): string {
  if (value === null) return "null";
  if (type.kind === "decimal") return decimalString(value as IcebergDecimal);
  if (type.kind === "fixed") return (value as Buffer).toString("base64");
  switch (type.name) {
    case "float":
      return javaFloatString(value as number, true);
    case "double":
      return javaFloatString(value as number, false);
    case "date":
      return formatDate(value as number);
    case "time":
      return formatTime(value as bigint, MICROS);
    case "timestamp":
      return formatTimestamp(value as bigint, MICROS);
    case "timestamptz":
      return `${formatTimestamp(value as bigint, MICROS)}Z`;
    case "timestamp_ns":
      return formatTimestamp(value as bigint, NANOS);
    case "timestamptz_ns":
      return `${formatTimestamp(value as bigint, NANOS)}Z`;
    case "binary":
      return (value as Buffer).toString("base64");
    default:
      return String(value);
  }
}

/** Java's `BigDecimal.toString`: plain unless the exponent is positive or below -6 (`1E-11`). */
export function decimalString({ unscaled, scale }: IcebergDecimal): string {
  const sign = unscaled < 0n ? "-" : "";
  const digits = (unscaled < 0n ? -unscaled : unscaled).toString();
  const adjusted = digits.length - 1 - scale;
  if (scale >= 0 && adjusted >= -6) {
    if (scale === 0) return sign + digits;
    const padded = digits.padStart(scale + 1, "0");
    return `${sign}${padded.slice(0, -scale)}.${padded.slice(-scale)}`;
  }
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${mantissa}E${adjusted >= 0 ? "+" : ""}${adjusted}`;
}

/** Java's `Float.toString`/`Double.toString`: shortest digits, `42.0`, `1.0E7`, `1.0E-4`. */
export function javaFloatString(value: number, float32: boolean): string {
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value > 0 ? "Infinity" : "-Infinity";
  if (value === 0) return Object.is(value, -0) ? "-0.0" : "0.0";
  const shortest = float32 ? shortestFloat32(value) : value;
  const [mantissa, exp] = Math.abs(shortest).toExponential().split("e") as [string, string];
  const digits = mantissa.replace(".", "");
  const exponent = Number(exp);
  const sign = value < 0 ? "-" : "";
  const magnitude = Math.abs(value);
  if (magnitude >= 1e-3 && magnitude < 1e7) {
    if (exponent < 0) return `${sign}0.${"0".repeat(-exponent - 1)}${digits}`;
    const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, "0");
    return `${sign}${whole}.${digits.slice(exponent + 1) || "0"}`;
  }
  return `${sign}${digits[0]}.${digits.slice(1) || "0"}E${exponent}`;
}

/** The double with the fewest significant digits that rounds to the same float32. */
function shortestFloat32(value: number): number {
  for (let p = 1; p < 10; p++) {
    const candidate = Number(value.toPrecision(p));
    if (Math.fround(candidate) === value) return candidate;
  }
  return value;
}
