// A reviewer's script: it follows the organization's live event stream and decides each flagged trace that
// arrives in the review queue by a rule. Refunds up to REFUND_LIMIT_EUR are approved, larger ones rejected;
// anything else is left in the queue for a person.
//
//   GOVERNANCE_TOKEN=… node examples/review-from-stream.ts
//
// GOVERNANCE_TOKEN is a session token of an owner, admin or member (viewers may read the queue but not decide):
// the stream is opened with a single-use stream token that only a session can mint. REFUND_LIMIT_EUR defaults to
// 100. LAST_EVENT_ID resumes after that event (the script prints the id to resume from when it stops).
// REVIEW_LIMIT stops it after that many decisions; otherwise it runs until Ctrl-C.
import { createGovernanceClient, isGovernanceError } from '@governance/client';

const baseUrl = process.env.GOVERNANCE_URL ?? 'http://localhost:3000';
const token = process.env.GOVERNANCE_TOKEN;
if (!token) {
  console.error('GOVERNANCE_TOKEN is not set (see examples/README.md)');
  process.exit(2);
}
const client = createGovernanceClient({ baseUrl, credentials: { jwt: token } });
const refundLimit = Number(process.env.REFUND_LIMIT_EUR ?? 100);
const decisionLimit = Number(process.env.REVIEW_LIMIT ?? Infinity);

// Ctrl-C (or a process manager's SIGTERM) ends the stream's iteration cleanly rather than killing the script
// between a decision and its log line.
const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
process.once('SIGTERM', () => stop.abort());

type ToolCall = { name: string; arguments?: { amount?: number } };
let decisions = 0;
/** Review items this script has seen: an item can come both from the backlog and from the stream's replay. */
const seen = new Set<string>();

/** Reads the trace behind a review item and decides it, if the rule covers it. */
async function review(itemId: string, traceId: string): Promise<void> {
  if (seen.has(itemId)) return;
  seen.add(itemId);
  // The event carries the outcome, not the contents: what the agent wanted to do is on the trace.
  const trace = await client.get('/api/v1/traces/{id}', { params: { path: { id: traceId } } });
  // Null once the person's content was erased (`erasedAt` set): a person decides then.
  const toolCalls = (trace.outputDecision?.toolCalls ?? []) as ToolCall[];
  const refund = toolCalls.find((call) => call.name === 'issue_refund');
  if (!refund) {
    console.log(`item ${itemId}: not a refund ("${trace.outputDecision?.action}") → left for a person`);
    return;
  }
  const amount = Number(refund.arguments?.amount ?? 0);
  const decision = amount <= refundLimit ? 'approve' : 'reject';
  const notes = `Refund of ${amount} EUR: ${decision === 'approve' ? 'within' : 'over'} the ${refundLimit} EUR limit.`;
  try {
    await client.post('/api/v1/review-queue/{id}/decision', {
      params: { path: { id: itemId } },
      body: { decision, notes },
    });
    decisions += 1;
    console.log(`item ${itemId}: ${decision} (${notes})`);
  } catch (err) {
    // Another reviewer (or feedback on the trace) got there first: the decision is one conditional update on the
    // service, so exactly one wins and the others get ALREADY_DECIDED.
    if (!isGovernanceError(err, 'ALREADY_DECIDED')) throw err;
    console.log(`item ${itemId}: already decided by someone else`);
  }
}

// 1. The stream, opened first. What is flagged from the moment it is open arrives on it; what was flagged before is
//    in the pending backlog (read next). Opened after the backlog instead, anything flagged in between would be in
//    neither. Over SSE the service answers only once it listens for the organization's events: `onOpen` says the
//    stream is open. Events that arrive while the backlog is decided wait in the stream, unread, until step 3 (if
//    they pile up, the service drops the stream and the subscription resumes after the last event it handed out).
//    The subscription reconnects by itself after a drop (a deploy, a network blip, a slow reader dropped by the
//    service), asking for a fresh stream token and resuming after the last event it handed out, so no event is lost
//    or seen twice. LAST_EVENT_ID does the same across restarts of this script.
let markOpen = () => {};
const opened = new Promise<void>((resolve) => (markOpen = resolve));
const subscription = client.events.subscribe({
  lastEventId: process.env.LAST_EVENT_ID || undefined,
  signal: stop.signal,
  onOpen: () => markOpen(),
});
const events = subscription[Symbol.asyncIterator]();
// Asking for the first event connects; it resolves with that event, or when the iteration ends (Ctrl-C).
const first = events.next();
// Open, or ended before it opened; refused credentials throw here.
await Promise.race([opened, first]);

// 2. The backlog: what was flagged while no reviewer was listening. The pages are read first and decided after,
//    because deciding an item takes it out of the pending list and would shift the pages being read. An item may
//    come both from here and from the stream: `review` decides it once.
const backlog = [];
const pending = client.paginate('/api/v1/review-queue', { params: { query: { status: 'pending' } } });
for await (const item of pending) backlog.push(item);
for (const item of backlog) {
  if (decisions >= decisionLimit) break;
  await review(item.id, item.traceId);
}

// 3. The stream: what was flagged since it opened (first), then as it happens.
if (decisions < decisionLimit && !stop.signal.aborted) {
  const after = process.env.LAST_EVENT_ID ? ` (resumed after event ${process.env.LAST_EVENT_ID})` : '';
  console.log(`listening for flagged traces${after}`);
  for (let next = await first; !next.done; next = await events.next()) {
    const event = next.value;
    if (event.type === 'trace.flagged' && event.data.reviewItemId) {
      await review(event.data.reviewItemId, event.data.traceId);
    }
    if (decisions >= decisionLimit) break;
  }
}
subscription.close();
await events.return?.();
console.log(`stopped after ${decisions} decision(s); resume with LAST_EVENT_ID=${subscription.lastEventId}`);
