import dns2 from 'dns2';

const { Packet } = dns2;

/**
 * A real DNS server for tests, on 127.0.0.1 (UDP, a free port): the service resolves through it with
 * `SSO_DNS_SERVERS`. TXT records are set and removed per name while it runs.
 */
export class TestDns {
  private readonly txt = new Map<string, string[]>();

  private constructor(
    private readonly server: ReturnType<typeof dns2.createServer>,
    readonly address: string,
  ) {}

  static async start(): Promise<TestDns> {
    const holder: { dns?: TestDns } = {};
    const server = dns2.createServer({
      udp: true,
      handle: (request, send) => {
        const response = Packet.createResponseFromRequest(request);
        for (const question of request.questions) {
          const values =
            question.type === Packet.TYPE.TXT ? holder.dns?.txt.get(question.name.toLowerCase()) : undefined;
          for (const data of values ?? []) {
            const answer = {
              name: question.name,
              type: Packet.TYPE.TXT,
              class: Packet.CLASS.IN,
              ttl: 1,
              data,
            };
            response.answers.push(answer as unknown as (typeof response.answers)[number]);
          }
        }
        send(response);
      },
    });
    const addresses = (await server.listen({ udp: { port: 0, address: '127.0.0.1' } })) as {
      udp: { port: number };
    };
    holder.dns = new TestDns(server, `127.0.0.1:${addresses.udp.port}`);
    return holder.dns;
  }

  setTxt(name: string, ...values: string[]): void {
    this.txt.set(name.toLowerCase(), values);
  }

  removeTxt(name: string): void {
    this.txt.delete(name.toLowerCase());
  }

  async stop(): Promise<void> {
    await this.server.close();
  }
}
