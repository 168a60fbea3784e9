// An agent that asks the governance service before it acts: it sends each decision it is about to carry out as a
// trace, and acts on the verdict. Approved: it proceeds. Flagged: it waits for a human to review the decision and
// then proceeds or refuses as they decided. Blocked: it refuses.
//
//   GOVERNANCE_AGENT_KEY=svc_agent_… GOVERNANCE_API_KEY=svc_live_… node examples/agent-decisions.ts
//
// GOVERNANCE_AGENT_KEY sends the traces (they are recorded for that agent). GOVERNANCE_API_KEY, a workspace key
// (read-only is enough), reads a flagged trace's status while the agent waits: an agent key may write traces but
// not read them. REVIEW_TIMEOUT_MS (default 10 minutes) bounds the wait, even while the service does not answer;
// REVIEW_POLL_MS (default 2 s) paces it.
// The verdicts come from the organization's policies; examples/setup.ts creates a flag policy (confidence below
// 0.5) and a block policy (tool calls named delete_…, drop_… or wipe_…), which the three decisions below meet.
import { createGovernanceClient, GovernanceError } from '@governance/client';

const baseUrl = process.env.GOVERNANCE_URL ?? 'http://localhost:3000';
const agent = createGovernanceClient({ baseUrl, credentials: { apiKey: required('GOVERNANCE_AGENT_KEY') } });
const reader = createGovernanceClient({ baseUrl, credentials: { apiKey: required('GOVERNANCE_API_KEY') } });
const reviewTimeoutMs = Number(process.env.REVIEW_TIMEOUT_MS ?? 600_000);
const pollMs = Number(process.env.REVIEW_POLL_MS ?? 2000);

type ToolCall = { name: string; arguments: Record<string, unknown> };
/** What the agent is about to do: the trace describes it, `run` does it. */
interface Decision {
  task: string;
  prompt: string;
  text: string;
  toolCall: ToolCall;
  /** The model's own confidence, when it gives one; without it the service estimates one from the text. */
  confidence?: number;
  run: () => string;
}

const decisions: Decision[] = [
  {
    task: 'answer a question about returns',
    prompt: 'How long do I have to return a pair of shoes?',
    text: 'You can return them within 30 days of delivery, unworn, with the receipt.',
    toolCall: { name: 'send_reply', arguments: { ticket: 'T-311' } },
    confidence: 0.93,
    run: () => 'replied to ticket T-311',
  },
  {
    task: 'refund a parcel the customer says never arrived',
    prompt: 'My order A-1042 never arrived. I want my 480 EUR back.',
    text: 'Refund 480 EUR for order A-1042: the tracking shows no delivery scan.',
    toolCall: { name: 'issue_refund', arguments: { orderId: 'A-1042', amount: 480, currency: 'EUR' } },
    confidence: 0.42, // unsure: the carrier may still deliver
    run: () => 'refunded 480 EUR for order A-1042',
  },
  {
    task: 'close a customer account on request',
    prompt: 'Please delete my account and everything you have on me.',
    text: 'Deleting customer C-77 and all their orders.',
    toolCall: { name: 'delete_customer', arguments: { customerId: 'C-77', cascade: true } },
    confidence: 0.88,
    run: () => 'deleted customer C-77',
  },
];

for (const decision of decisions) {
  console.log(`→ ${decision.task}`);
  // Ask first. The trace is the record of what the agent wanted to do and why; the verdict says whether it may.
  // sendTrace sends an Idempotency-Key and retries network errors and 503s with it: the decision is stored once.
  const result = await agent.sendTrace({
    inputContext: { prompt: decision.prompt },
    outputDecision: { action: decision.toolCall.name, text: decision.text, toolCalls: [decision.toolCall] },
    confidence: decision.confidence,
  });

  switch (result.verdict) {
    case 'approved':
      console.log(`  approved → proceeding: ${decision.run()}`);
      break;
    case 'blocked': {
      // Stored as blocked, with the policies that blocked it: the agent must not act, and should tell the user.
      const policies = result.matchedPolicies.map((p) => `"${p.name}"`).join(', ');
      console.log(`  blocked by ${policies} → refusing: ${decision.toolCall.name} is not allowed`);
      break;
    }
    case 'flagged': {
      // A person decides. The agent holds the action (not the whole process, in a real agent: it would park the
      // task and pick it up again) until the review changes the trace's status.
      console.log(`  flagged (review item ${result.reviewItemId}) → waiting for a human review`);
      const status = await reviewOutcome(result.trace.id);
      if (status === 'approved') console.log(`  review approved → proceeding: ${decision.run()}`);
      else if (status === 'blocked') console.log(`  review rejected → refusing: ${decision.task}`);
      else if (status === null) console.log('  no answer from the service in time → not proceeding');
      else console.log(`  no approval (the trace is ${status}) → not proceeding`);
      break;
    }
  }
}

/**
 * The trace's status once a reviewer has decided: `approved` (approve) or `blocked` (reject); `flagged` if nobody
 * decided in time; null if the service did not answer in time. An escalated item stays `flagged` until an owner or
 * admin decides it, so the wait goes on. The wait ends at the deadline whatever happens: each read is bounded by
 * what is left of it, and the deadline is checked after every read, answered or not, so a service that stays down
 * does not keep the agent waiting forever.
 */
async function reviewOutcome(traceId: string): Promise<string | null> {
  const deadline = Date.now() + reviewTimeoutMs;
  let status: string | null = null;
  for (;;) {
    const left = deadline - Date.now();
    try {
      const trace = await reader.get('/api/v1/traces/{id}', {
        params: { path: { id: traceId } },
        signal: AbortSignal.timeout(Math.max(1, Math.min(left, 10_000))),
      });
      status = trace.status;
      if (status !== 'flagged') return status;
    } catch (err) {
      // The service restarting, briefly unavailable or slow is no reason to give up the wait (the deadline is); a
      // refusal (a wrong key, a trace it cannot see) is.
      if (!isTransient(err)) throw err;
    }
    if (Date.now() >= deadline) return status;
    await new Promise((resolve) => setTimeout(resolve, Math.min(pollMs, Math.max(0, deadline - Date.now()))));
  }
}

/** A failure another look may not meet: the network, a timeout, the service unavailable or rate limiting. */
function isTransient(err: unknown): boolean {
  if (err instanceof GovernanceError) return err.status >= 500 || err.status === 408 || err.status === 429;
  // fetch's network failure (TypeError) and the per-read timeout (AbortSignal.timeout's TimeoutError).
  return err instanceof TypeError || (err instanceof DOMException && err.name === 'TimeoutError');
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is not set (see examples/README.md)`);
    process.exit(2);
  }
  return value;
}
