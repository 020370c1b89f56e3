/**
 * `npm run bench:screen`: starts the appliance (CPU execution provider) in a child process with a
 * throwaway license and loads it with autocannon: 1 KB texts, every classification type, every
 * bias and toxicity type, numbered redaction. Prints requests/s, p50 and p99 latency and the
 * execution provider the server reported. The appliance and the license's temporary folder are
 * gone when it ends, however it ends (also on an error or Ctrl-C).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { base, en, Faker } from "@faker-js/faker";
import autocannon from "autocannon";
import { issueLicense } from "../src/license/license.ts";

const PORT = Number(process.env.BENCH_PORT ?? 18080);
const DURATION = Number(process.env.BENCH_SECONDS ?? 15);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 4);
const PROVIDER = process.env.SCREEN_EXECUTION_PROVIDER ?? "cpu";
/** Linux's USER_HZ: /proc reports CPU time in these ticks. */
const CLOCK_TICKS = 100;

/** Roughly 1 KB of customer-service text with names, contacts and numbers in it. */
function texts(count: number): string[] {
  const f = new Faker({ locale: [en, base], seed: 7 });
  return Array.from({ length: count }, () => {
    let text = "";
    while (text.length < 1000) {
      text += f.helpers.arrayElement([
        () => `Hello, my name is ${f.person.fullName()} and I need help with my account. `,
        () =>
          `Please send the statement to ${f.internet.email()} or call me at ${f.phone.number({ style: "national" })}. `,
        () =>
          `My card ${f.finance.creditCardNumber("visa")} was charged twice on ${f.date.recent().toDateString()}. `,
        () =>
          `${f.company.catchPhrase()} is what ${f.company.name()} promised, but the delivery never came. `,
        () => `I moved to ${f.location.streetAddress()} in ${f.location.city()} last month. `,
        () => `${f.person.firstName()} from the support team said it would be fixed by Friday. `,
        () => `${f.hacker.phrase()} `,
      ])();
    }
    return text.slice(0, 1024);
  });
}

async function waitForHealth(): Promise<{ executionProvider: string }> {
  for (let i = 0; i < 120; i++) {
    try {
      const res = await fetch(`http://127.0.0.1:${PORT}/health`);
      if (res.ok) return (await res.json()) as { executionProvider: string };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error("the appliance did not start within 30 s");
}

let server: ChildProcess | undefined;
const dir = mkdtempSync(join(tmpdir(), "screen-bench-"));
process.on("exit", () => {
  server?.kill("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});
process.once("SIGINT", () => process.exit(130));
process.once("SIGTERM", () => process.exit(143));
const vendor = generateKeyPairSync("ed25519");
const licensePath = join(dir, "screen.lic");
writeFileSync(
  licensePath,
  issueLicense(vendor.privateKey.export({ type: "pkcs8", format: "pem" }).toString(), {
    customer: "bench",
    expires: "2099-12-31",
    features: ["screen", "reveal"],
    issuedAt: new Date().toISOString(),
  }),
);

try {
  server = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: join(import.meta.dirname, ".."),
    env: {
      ...process.env,
      PORT: String(PORT),
      HOST: "127.0.0.1",
      SCREEN_LICENSE_PATH: licensePath,
      SCREEN_LICENSE_PUBLIC_KEY: vendor.publicKey.export({ type: "spki", format: "pem" }).toString(),
      SCREEN_EXECUTION_PROVIDER: PROVIDER,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const health = await waitForHealth();
  const bodies = texts(50).map((data) =>
    JSON.stringify({
      data,
      classificationTypes: [
        "EMAIL",
        "PHONE_NUMBER",
        "PERSON_NAME",
        "CREDIT_CARD_NUMBER",
        "US_SOCIAL_SECURITY_NUMBER",
        "IP_ADDRESS",
        "IBAN_CODE",
        "STREET_ADDRESS",
        "DATE_OF_BIRTH",
      ].map((classificationType) => ({ classificationType, likelihoodType: "LIKELIHOOD_TYPE_POSSIBLE" })),
      transformationParams: { transformationType: "TRANSFORMATION_TYPE_NUMBERED" },
      biasTypes: ["RACE_ETHNICITY", "NATIONALITY_LOCATION", "APPEARANCE"],
      toxicityTypes: ["HATE", "PHYSICAL_SAFETY"],
    }),
  );
  let next = 0;
  const run = (duration: number) =>
    autocannon({
      url: `http://127.0.0.1:${PORT}`,
      connections: CONNECTIONS,
      duration,
      requests: [
        {
          method: "POST",
          path: "/screen",
          headers: { "content-type": "application/json" },
          setupRequest: (req) => ({ ...req, body: bodies[next++ % bodies.length] }),
        },
      ],
    });
  await run(3); // warm-up: JIT, ONNX Runtime allocations
  const cpuBefore = processCpuSeconds(server.pid);
  const result = await run(DURATION);
  const cpuAfter = processCpuSeconds(server.pid);
  const non2xx = result.non2xx + result.errors;
  console.log(`screening appliance benchmark: POST /screen, 1 KB texts, all detectors, numbered redaction`);
  console.log(
    `execution provider: ${health.executionProvider}; SCREEN_WORKERS=${process.env.SCREEN_WORKERS ?? "auto"}; host: ${cpus().length} cores, ${cpus()[0]?.model ?? "?"}`,
  );
  console.log(
    `${CONNECTIONS} connections for ${DURATION} s; ${result.requests.total} requests, ${non2xx} errors or non-2xx`,
  );
  console.log(`requests/s: ${result.requests.average.toFixed(0)}`);
  console.log(`latency p50: ${result.latency.p50} ms, p99: ${result.latency.p99} ms`);
  // The appliance's own CPU per request, all its processes and threads: steadier than requests/s on
  // a shared host.
  if (cpuBefore !== undefined && cpuAfter !== undefined && result.requests.total > 0)
    console.log(
      `appliance CPU per request: ${(((cpuAfter - cpuBefore) * 1000) / result.requests.total).toFixed(2)} ms`,
    );
  if (non2xx > 0) process.exitCode = 1;
} finally {
  await stop(server);
}

/**
 * User plus system CPU seconds so far of a process and its live descendants (the appliance's
 * worker processes), from /proc (Linux); undefined elsewhere.
 */
function processCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    let seconds = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/);
    for (const child of children.filter(Boolean)) seconds += processCpuSeconds(Number(child)) ?? 0;
    return seconds;
  } catch {
    return undefined;
  }
}

/** Ends the appliance and waits for it to exit. */
async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}
