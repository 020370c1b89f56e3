/**
 * Email over SMTP on Node, with nodemailer. The server comes from the environment
 * (`LAKESMITH_SMTP_URL`, or `LAKESMITH_SMTP_HOST`/`_PORT`/`_USER`/`_PASSWORD`, and
 * `LAKESMITH_SMTP_FROM`); without a host there is no mailer and email rows wait for one, saying
 * why. Errors are rethrown as `DeliveryError` with the password and user scrubbed out.
 */
import nodemailer from "nodemailer";
import { DeliveryError, type Mailer } from "../notifications/transport.ts";

export interface SmtpSettings {
  /** `smtp://user:pass@host:587` or `smtps://...`; wins over the separate fields. */
  url?: string | undefined;
  host?: string | undefined;
  port?: number | undefined;
  user?: string | undefined;
  password?: string | undefined;
  from: string;
}

/** A mailer for `settings`, or undefined when no server is configured. */
export function smtpMailer(settings: SmtpSettings): Mailer | undefined {
  if (!settings.url && !settings.host) return undefined;
  const url = settings.url ? new URL(settings.url) : undefined;
  const host = url?.hostname ?? (settings.host as string);
  const secure = url ? url.protocol === "smtps:" : settings.port === 465;
  const port = url?.port ? Number(url.port) : (settings.port ?? (secure ? 465 : 587));
  const user = url ? decodeURIComponent(url.username) : settings.user;
  const pass = url ? decodeURIComponent(url.password) : settings.password;
  const transport = nodemailer.createTransport({
    host,
    port,
    secure,
    ...(user ? { auth: { user, pass: pass ?? "" } } : {}),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  });
  const secrets = [pass, user, settings.url].filter((s): s is string => !!s);
  return {
    describe: `SMTP server ${host}:${port}`,
    async send(m) {
      try {
        await transport.sendMail({
          from: settings.from,
          to: m.to,
          subject: m.subject,
          text: m.text,
          html: m.html,
        });
      } catch (err) {
        let message = `SMTP: ${err instanceof Error ? err.message : String(err)}`;
        for (const secret of secrets) message = message.split(secret).join("***");
        throw new DeliveryError(message);
      }
    },
  };
}
