// Sets up an organization for the other examples, with the typed client, and prints the variables they read as
// shell `export` lines: an agent and its key, a read-only workspace key, a policy that flags and one that blocks,
// and, when WEBHOOK_URL is set, a webhook to it (examples/webhook-receiver.ts) with its signing secret.
//
//   export GOVERNANCE_TOKEN=…   # an owner's or admin's session token (examples/README.md shows how to get one)
//   eval "$(node examples/setup.ts)"
//
// Each key and secret is shown once by the service (only its hash is stored), so this is the moment to keep it. The
// lines it prints are secrets: evaluate them (or store them in a secret store), do not paste them into logs.
// Run it again and it creates a new agent and keys, and leaves the policies that exist already.
import { createGovernanceClient } from '@governance/client';

const baseUrl = process.env.GOVERNANCE_URL ?? 'http://localhost:3000';
const token = process.env.GOVERNANCE_TOKEN;
if (!token) {
  console.error(
    'GOVERNANCE_TOKEN is not set: sign in (or register) and export the token (see examples/README.md)',
  );
  process.exit(2);
}
const client = createGovernanceClient({ baseUrl, credentials: { jwt: token } });

// The agent whose decisions are governed. Its key (svc_agent_…) is what the agent itself holds: it can send
// traces for this agent and nothing else.
const agent = await client.post('/api/v1/agents', {
  body: { name: 'support-agent', description: 'The agent of examples/agent-decisions.ts and otel-agent.ts.' },
});

// A workspace key for reading traces. Read-only, because reading is all the examples do with it: a leaked key
// then cannot change anything.
const readKey = await client.post('/api/v1/auth/keys', {
  body: { name: 'examples (read-only)', scope: { readOnly: true } },
});

// Policies: any matching block policy blocks; otherwise any matching flag policy flags for a human.
const existing = new Set<string>();
for await (const policy of client.paginate('/api/v1/policies')) existing.add(policy.name);
if (!existing.has('Low confidence')) {
  // A template: flags any decision whose confidence is below 0.5.
  await client.post('/api/v1/policies', { body: { templateId: 'low-confidence' } });
}
if (!existing.has('Destructive tool calls')) {
  await client.post('/api/v1/policies', {
    body: {
      name: 'Destructive tool calls',
      outcome: 'block',
      conditions: [{ field: 'toolCalls.name', operator: 'matches', value: '^(delete|drop|wipe)_' }],
    },
  });
}

const exports: Record<string, string> = {
  GOVERNANCE_URL: baseUrl,
  GOVERNANCE_AGENT_KEY: agent.apiKey,
  GOVERNANCE_API_KEY: readKey.key,
};

// The service refuses webhook URLs on loopback and private networks unless it runs with
// WEBHOOK_ALLOW_PRIVATE_NETWORKS=true (its guard against server-side request forgery).
if (process.env.WEBHOOK_URL) {
  const webhook = await client.post('/api/v1/webhooks', {
    body: {
      url: process.env.WEBHOOK_URL,
      events: ['trace.flagged', 'trace.blocked', 'review.completed', 'review.escalated', 'webhook.test'],
      description: 'examples/webhook-receiver.ts',
    },
  });
  exports.WEBHOOK_SECRET = webhook.secret;
  exports.WEBHOOK_ID = webhook.id;
}

// Each value single-quoted for the shell (a ' inside written as '\''), so that `eval` takes it as it is, whatever it
// holds. These lines are secrets: the keys act as the agent and the workspace, the webhook secret signs deliveries.
// Evaluate them, or put them in a secret store; keep them out of logs, shell history and version control.
const shellQuoted = (value: string) => `'${value.replaceAll("'", "'\\''")}'`;
for (const [name, value] of Object.entries(exports)) console.log(`export ${name}=${shellQuoted(value)}`);
console.error(
  `set up agent ${agent.id} ("${agent.name}") with its policies; the export lines are its settings, and secrets`,
);
