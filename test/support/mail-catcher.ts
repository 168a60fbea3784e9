import { SMTPServer } from 'smtp-server';

export interface CaughtMail {
  from: string;
  to: string[];
  raw: string;
  subject: string;
  /** The raw message with quoted-printable soft breaks and escapes undone, for matching links. */
  decoded: string;
}

function decodeQuotedPrintable(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** A real SMTP server on a free local port, started by a test; it keeps every message it receives. */
export class MailCatcher {
  readonly messages: CaughtMail[] = [];
  private server!: SMTPServer;
  port = 0;
  /** When set, every delivery is refused with a 451 (to test the outbox's retries). */
  refuse = false;

  static async start(): Promise<MailCatcher> {
    const catcher = new MailCatcher();
    catcher.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onMailFrom(_address, _session, callback) {
        if (catcher.refuse) {
          const err = new Error('Temporarily unavailable') as Error & { responseCode: number };
          err.responseCode = 451;
          callback(err);
          return;
        }
        callback();
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const decoded = decodeQuotedPrintable(raw);
          catcher.messages.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw,
            subject: /^Subject: (.*)$/m.exec(decoded)?.[1]?.trim() ?? '',
            decoded,
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => catcher.server.listen(0, '127.0.0.1', resolve));
    catcher.port = (catcher.server.server.address() as { port: number }).port;
    return catcher;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** Waits (polling, up to `timeoutMs`) for a message to `to` that satisfies `match`. */
  async waitFor(
    to: string,
    match: (m: CaughtMail) => boolean = () => true,
    timeoutMs = 5000,
  ): Promise<CaughtMail> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find((m) => m.to.includes(to.toLowerCase()) && match(m));
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`No mail to ${to} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** The token in the first link of `mail` whose path contains `pathPart` (for example "/reset-password/"). */
  static tokenFrom(mail: CaughtMail, pathPart: string): string {
    const escaped = pathPart.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    const match = new RegExp(`${escaped}([A-Za-z0-9_-]{20,})`).exec(mail.decoded);
    if (!match) throw new Error(`No token after ${pathPart} in mail "${mail.subject}"`);
    return match[1]!;
  }

  forRecipient(to: string): CaughtMail[] {
    return this.messages.filter((m) => m.to.includes(to.toLowerCase()));
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
