import type { Server, Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import {
  createGovernanceClient,
  type GovernanceClient,
  type GovernanceClientOptions,
} from '@governance/client';
import { TEST_PASSWORD, type TestAppOptions, TestContext, uniqueEmail } from '../support/app.js';

/**
 * The service listening on a free local port, as the client meets it: real HTTP over TCP (the other suites use
 * Fastify's injection). The suites drive every flow through the client; the context is for set-up only (the
 * clock, a plan, which no route changes).
 */
export class ListeningService {
  private readonly sockets = new Set<Socket>();

  private constructor(
    readonly ctx: TestContext,
    readonly baseUrl: string,
  ) {
    (ctx.app.getHttpServer() as Server).on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  static async start(options: TestAppOptions = {}): Promise<ListeningService> {
    const ctx = await TestContext.create(options);
    await ctx.app.listen(0, '127.0.0.1');
    const { port } = ctx.app.getHttpServer().address() as AddressInfo;
    return new ListeningService(ctx, `http://127.0.0.1:${port}`);
  }

  /** A client of this service (anonymous unless credentials are given). */
  client(options: Omit<GovernanceClientOptions, 'baseUrl'> = {}): GovernanceClient {
    return createGovernanceClient({ baseUrl: this.baseUrl, ...options });
  }

  /** Cuts every open connection, as a network failure or a proxy's restart would (streams included). */
  dropConnections(): number {
    const count = this.sockets.size;
    for (const socket of this.sockets) socket.destroy();
    return count;
  }

  async close(): Promise<void> {
    this.dropConnections();
    await this.ctx.close();
  }
}

export interface SignedUp {
  client: GovernanceClient;
  token: string;
  email: string;
  userId: string;
  organizationId: string;
}

/** `POST /auth/register` through the client: a user, an organization they own, and a client with their session. */
export async function signUp(service: ListeningService, organizationName = 'Client Org'): Promise<SignedUp> {
  const email = uniqueEmail('client');
  const registered = await service.client().post('/api/v1/auth/register', {
    body: { name: 'Client User', email, password: TEST_PASSWORD, organizationName },
  });
  return {
    client: service.client({ credentials: { jwt: registered.token } }),
    token: registered.token,
    email,
    userId: registered.user.id,
    organizationId: registered.organization.id,
  };
}

/** Waits until `check` holds (polling), or fails naming `what`. */
export async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
