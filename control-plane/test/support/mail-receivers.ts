/**
 * Loopback receivers for notification tests: a real SMTP server (`smtp-server`) whose received
 * messages are parsed with `mailparser`, and an HTTP webhook receiver that answers 500 to its
 * first `failFirst` requests and 200 after.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  /** The SMTP envelope's recipients. */
  rcptTo: string[];
  parsed: ParsedMail;
}

/** With `refuseLogins`, the server asks for a login and refuses every one. */
export async function startSmtpReceiver(options: { refuseLogins?: boolean } = {}) {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: !options.refuseLogins,
    allowInsecureAuth: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onAuth(_auth, _session, callback) {
      callback(new Error("Invalid username or password"));
    },
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (parsed) => {
          mails.push({ rcptTo: session.envelope.rcptTo.map((r) => r.address), parsed });
          callback();
        },
        (err: Error) => callback(err),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function startWebhookReceiver(failFirst = 0) {
  const requests: { path: string; status: number; body: Record<string, unknown> }[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      const status = requests.length < failFirst ? 500 : 200;
      requests.push({ path: req.url ?? "", status, body: JSON.parse(body) });
      res.writeHead(status).end(status === 200 ? "ok" : "try later");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    requests,
    /** Requests answered 200. */
    accepted: () => requests.filter((r) => r.status === 200),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
