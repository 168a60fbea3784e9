import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * The ids the examples name (agents, traces, policies, …): 24 lower-case hex characters, as every id. A client
 * replaces them with its own; `test/openapi-examples.e2e-spec.ts` replaces them with real objects of its
 * organization, then sends every example to the running service.
 */
export const EXAMPLE_IDS = {
  agent: '661f0c2a9b1e4c0012345678',
  trace: '6620b3d1a7c4e90012ab34cd',
  reviewItem: '6620b3d2f1e8a70012ab9f01',
  policy: '661f0d4e8a2b3c0012345abc',
  integration: '6621a0f3c2d1e40012cd5678',
  organization: '65f1c0ffee0000000000abcd',
  session: '6622c4e5f6a7b80012ef9012',
  user: '65f1c0ffee00000000001234',
} as const;

const SIGNED_FORM_NOTE =
  'A real message is the IdP’s signed XML, deflated (Redirect) or not (POST), then base64.';

/** A GenAI chat span in OTLP/JSON, as OpenTelemetry instrumentations of LLM clients export it. */
const OTLP_CHAT_SPAN = {
  resourceSpans: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'support-triage-bot' } }] },
      scopeSpans: [
        {
          scope: { name: 'opentelemetry.instrumentation.openai', version: '0.48.0' },
          spans: [
            {
              traceId: '5b8efff798038103d269b633813fc60c',
              spanId: 'eee19b7ec3c1b174',
              name: 'chat gpt-4o',
              kind: 3,
              startTimeUnixNano: '1750000000000000000',
              endTimeUnixNano: '1750000001250500000',
              attributes: [
                { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
                { key: 'gen_ai.provider.name', value: { stringValue: 'openai' } },
                { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4o' } },
                { key: 'gen_ai.usage.input_tokens', value: { intValue: '97' } },
                { key: 'gen_ai.usage.output_tokens', value: { intValue: '52' } },
                {
                  key: 'gen_ai.input.messages',
                  value: {
                    stringValue: JSON.stringify([
                      {
                        role: 'user',
                        parts: [{ type: 'text', content: 'Can I get a refund for order 4411?' }],
                      },
                    ]),
                  },
                },
                {
                  key: 'gen_ai.output.messages',
                  value: {
                    stringValue: JSON.stringify([
                      {
                        role: 'assistant',
                        finish_reason: 'stop',
                        parts: [
                          { type: 'text', content: 'Order 4411 qualifies: I have started the refund.' },
                        ],
                      },
                    ]),
                  },
                },
              ],
              status: { code: 1 },
            },
          ],
        },
      ],
    },
  ],
};

const RISK = {
  title: 'Unfair refusal of credit',
  description: 'The model may score applicants from some postcodes lower for reasons unrelated to solvency.',
  likelihood: 'medium',
  severity: 'high',
  affectedRights: ['Non-discrimination (Charter art. 21)'],
  mitigation: 'Quarterly bias audit by postcode; every refusal reviewed by a credit officer.',
  residualRisk: 'low',
};

/**
 * One realistic request body per operation that takes one, by operationId: the document shows it as the
 * media type's `example`, and `withRequestExamples` refuses an operation with a body but no example here.
 */
export const REQUEST_EXAMPLES: Readonly<Record<string, unknown>> = {
  // Auth
  register: {
    name: 'Ada Lovelace',
    email: 'ada@analytical-engines.example',
    password: 'Correct-Horse-9',
    organizationName: 'Analytical Engines Ltd',
  },
  login: { email: 'ada@analytical-engines.example', password: 'Correct-Horse-9' },
  requestSignup: {
    name: 'Grace Hopper',
    email: 'grace@compilers.example',
    password: 'Correct-Horse-9',
    organizationName: 'Compilers Inc',
  },
  completeSignup: { token: 'k3YwqL0rQ9uE2tVb7sXn1mJcH4pZa8dG' },
  forgotPassword: { email: 'ada@analytical-engines.example' },
  resetPassword: { token: 'p9FhT2wLx6VqR1nKc8YbJ3mZs5dGa0eU', password: 'New-Secret-123' },
  changePassword: { currentPassword: 'Correct-Horse-9', newPassword: 'New-Secret-123' },
  requestMagicLink: { email: 'ada@analytical-engines.example' },
  verifyMagicLink: { token: 'Qm4xW8sZ2kLp7VtN1cRj5HbYf9gDa3eU' },
  enableMfa: { code: '492039' },
  disableMfa: { code: 'a7k2-9xq4' },
  loginWithMfa: {
    code: '492039',
    tempToken:
      'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI2NWYxYzBmZmVlMDAwMDAwMDAwMDEyMzQiLCJwdXJwb3NlIjoibWZhIn0.' +
      'Yk2p9sQx4Lr7VtN1cRj5HbYf9gDa3eUo8wZm2kLp7Vs',
  },
  generateBackupCodes: { code: '492039' },
  createApiKey: { name: 'CI pipeline', scope: { agentIds: [EXAMPLE_IDS.agent], readOnly: false } },
  updateApiKey: { name: 'CI pipeline (read only)', scope: { readOnly: true } },
  revokeSession: { sessionId: EXAMPLE_IDS.session },
  setSessionTimeout: { sessionTimeout: '8h' },
  switchOrganization: { organizationId: EXAMPLE_IDS.organization },
  updateProfile: { name: 'Ada King', locale: 'en-GB', timezone: 'Europe/London' },
  updatePreferences: {
    theme: 'dark',
    notifications: { weeklyDigest: false },
    dashboard: { pinnedAgents: null },
  },

  // Organizations and team
  updateCurrentOrganization: { name: 'Analytical Engines Ltd', traceRetentionDays: 365 },
  deleteCurrentOrganization: { confirmName: 'Analytical Engines Ltd' },
  changeMemberRole: { role: 'admin' },
  suspendMember: { isActive: false },
  createInvitation: { email: 'grace@analytical-engines.example', role: 'member' },
  acceptInvitation: { name: 'Grace Hopper', password: 'Correct-Horse-9' },

  // SSO and SAML
  replaceSsoConfig: {
    provider: 'oidc',
    emailDomains: ['analytical-engines.example'],
    requireMfaEvenWithSso: false,
    roleMappingRules: [
      { pattern: '^governance-admins$', role: 'admin' },
      { pattern: '^governance-reviewers$', role: 'viewer' },
    ],
    oidc: {
      issuer: 'https://login.analytical-engines.example/',
      clientId: 'governance-service',
      clientSecret: 'Wq8~vX2nR5tLk9Zp3Yb7Hc1Jd4Fg6Ms0',
      scopes: ['openid', 'email', 'profile', 'groups'],
      groupsClaim: 'groups',
    },
  },
  claimSsoDomain: { domain: 'analytical-engines.example' },
  initiateSso: { email: 'ada@analytical-engines.example' },
  initiateSaml: { organizationId: EXAMPLE_IDS.organization },
  handleSamlCallback: {
    SAMLResponse:
      'PHNhbWxwOlJlc3BvbnNlIHhtbG5zOnNhbWxwPSJ1cm46b2FzaXM6bmFtZXM6dGM6U0FNTDoyLjA6cHJvdG9jb2wiLz4=',
    RelayState: 'b3f1c9e2a4d5',
  },
  handleSamlLogoutCallback: {
    SAMLResponse:
      'PHNhbWxwOkxvZ291dFJlc3BvbnNlIHhtbG5zOnNhbWxwPSJ1cm46b2FzaXM6bmFtZXM6dGM6U0FNTDoyLjA6cHJvdG9jb2wiLz4=',
    RelayState: 'b3f1c9e2a4d5',
  },

  // SCIM
  scimCreateUser: {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    userName: 'grace.hopper@analytical-engines.example',
    externalId: '00u1ab2cd3EF4gh5i6j7',
    name: { givenName: 'Grace', familyName: 'Hopper' },
    displayName: 'Grace Hopper',
    active: true,
    emails: [{ value: 'grace.hopper@analytical-engines.example', type: 'work', primary: true }],
    groups: [{ display: 'governance-reviewers' }],
  },
  scimReplaceUser: {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    userName: 'grace.hopper@analytical-engines.example',
    externalId: '00u1ab2cd3EF4gh5i6j7',
    name: { givenName: 'Grace', familyName: 'Hopper' },
    displayName: 'Rear Admiral Grace Hopper',
    active: true,
    emails: [{ value: 'grace.hopper@analytical-engines.example', type: 'work', primary: true }],
  },
  scimPatchUser: {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [
      { op: 'replace', path: 'displayName', value: 'Grace B. Hopper' },
      { op: 'replace', path: 'active', value: false },
    ],
  },
  scimPatchGroup: {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'add', path: 'members', value: [{ value: EXAMPLE_IDS.user }] }],
  },

  // Agents, policies, traces
  createAgent: { name: 'Support triage bot', description: 'Routes incoming tickets to the right queue.' },
  updateAgent: { name: 'Support triage bot v2', description: 'Routes tickets and drafts first answers.' },
  createPolicy: {
    name: 'No card numbers in answers',
    description: 'Blocks answers that read out a payment card number.',
    outcome: 'block',
    match: 'any',
    conditions: [
      { field: 'outputDecision.text', operator: 'matches', value: '\\b(?:\\d[ -]?){13,16}\\b' },
      { field: 'inputContext.prompt', operator: 'contains', value: 'card number' },
    ],
    agentIds: [EXAMPLE_IDS.agent],
    priority: 10,
    isActive: true,
  },
  updatePolicy: {
    description: 'Flags low-confidence refunds for review instead of blocking them.',
    outcome: 'flag',
    match: 'all',
    conditions: [
      { field: 'outputDecision.action', operator: 'equals', value: 'issue_refund' },
      { field: 'confidence', operator: 'lt', value: 0.7 },
    ],
    priority: 20,
  },
  ingestTrace: {
    agentId: EXAMPLE_IDS.agent,
    inputContext: {
      prompt: 'Can I get a refund for order 4411? It arrived broken.',
      systemPrompt: 'You are the support assistant of an online shop. Refunds above 200 EUR need a human.',
      context: { customerTier: 'gold', orderTotalEur: 89.9 },
      conversationId: 'conv-2026-04-11-0042',
    },
    outputDecision: {
      action: 'issue_refund',
      text: 'I am sorry about that: order 4411 qualifies, and I have started a full refund of 89.90 EUR.',
      actionObject: { orderId: '4411', amountEur: 89.9 },
      rationale: 'Damaged on arrival, below the 200 EUR limit, customer in good standing.',
      alternatives: ['offer_replacement'],
      toolCalls: [{ name: 'lookup_order', arguments: { orderId: '4411' } }],
    },
    metadata: { model: 'gpt-4o', promptTokens: 412, completionTokens: 58 },
    confidence: 0.92,
  },
  exportOtlpTraces: OTLP_CHAT_SPAN,
  purgeTraces: {
    before: '2025-01-01T00:00:00Z',
    agentId: EXAMPLE_IDS.agent,
    status: 'approved',
    dryRun: true,
  },

  // Review
  decideReviewItems: {
    decision: 'approve',
    notes: 'Checked against the refund policy: all within limits.',
    ids: [EXAMPLE_IDS.reviewItem],
  },
  decideReviewItem: { decision: 'reject', notes: 'The customer’s order was already refunded once.' },
  assignReviewItem: { assignedTo: EXAMPLE_IDS.user },

  // Webhooks, CPI, integrations
  createWebhook: {
    url: 'https://hooks.analytical-engines.example/governance',
    events: ['trace.flagged', 'review.completed', 'alert.triggered'],
    filterAgentId: EXAMPLE_IDS.agent,
    description: 'The on-call channel’s relay',
  },
  updateWebhook: {
    events: ['trace.flagged', 'trace.blocked', 'review.completed'],
    filterAgentId: null,
    isActive: true,
  },
  rotateWebhookSecret: { gracePeriodSeconds: 86400 },
  ingestCpiFeedback: {
    traceId: EXAMPLE_IDS.trace,
    action: 'correct',
    correctedDecision: { decision: 'offer_replacement', confidence: 0.95 },
    feedbackNotes: 'The customer asked for a replacement, not a refund.',
    userEmail: 'ada@analytical-engines.example',
  },
  confirmIntegrationRecipient: { token: 'r7VbX2qL9mT4wZk1cN8hJ5sYf3dGa6eP' },
  createIntegration: {
    type: 'email',
    name: 'Compliance team',
    config: { recipients: ['compliance@analytical-engines.example', 'ada@analytical-engines.example'] },
  },
  updateIntegration: {
    name: 'Compliance team and DPO',
    config: { recipients: ['compliance@analytical-engines.example', 'dpo@analytical-engines.example'] },
  },

  // Compliance
  createFria: {
    systemName: 'Credit scoring model v3',
    deployerProfileId: 'retail-lending',
    purpose: 'Scores consumer credit applications to prioritise them for a credit officer.',
    affectedPersons: 'Applicants for consumer credit in the EU, about 40,000 a year.',
    usageContext: 'Decision support only: a credit officer takes every decision.',
    durationOfUse: 'From May 2026, reviewed yearly.',
    identifiedRisks: [RISK],
    humanOversightSummary:
      'Every refusal is read and signed by a credit officer, who may overrule the score.',
    complaintsMechanism:
      'Applicants may contest a decision through the bank’s complaints desk within 30 days.',
  },
  updateFria: {
    usageContext: 'Decision support for credit officers; never used to refuse without a human decision.',
    identifiedRisks: [
      RISK,
      { title: 'Opaque reasons', severity: 'medium', mitigation: 'Reason codes shown.' },
    ],
  },
  transitionFria: { status: 'review' },
  updateComplianceMapping: {
    framework: 'iso-42001',
    clauseId: '6.1.4',
    status: 'partial',
    evidence: 'Impact assessment of the credit model done; the support bot’s is scheduled for June.',
    evidenceRefs: [{ type: 'policy', id: EXAMPLE_IDS.policy }],
  },
  replaceLegacyMappingNotes: {
    framework: 'iso-42001',
    notes: {
      '6.1.4': 'Impact assessment done for the credit model.',
      '8.4': 'Yearly, by the risk committee.',
    },
  },
  createIncident: {
    title: 'Refunds issued twice for the same order',
    description: 'The support bot issued a second refund when a customer repeated the request.',
    category: 'other',
    agentId: EXAMPLE_IDS.agent,
    traceId: EXAMPLE_IDS.trace,
    awareAt: '2026-04-10T08:30:00Z',
  },
  updateIncident: { status: 'reported', reportedAt: '2026-04-11T09:00:00Z' },
  createScheduledReport: {
    name: 'Weekly governance digest',
    frequency: 'weekly',
    recipients: ['compliance@analytical-engines.example', 'cto@analytical-engines.example'],
    includeMetrics: true,
    includeTopAgents: true,
    includeAlerts: true,
    includeLowConf: false,
    isActive: true,
  },
  updateScheduledReport: {
    frequency: 'monthly',
    recipients: ['board@analytical-engines.example'],
    includeLowConf: true,
  },
  createAlert: {
    name: 'Refund bot blocks',
    metric: 'block_rate',
    agentId: EXAMPLE_IDS.agent,
    comparison: 'gt',
    threshold: 0.2,
    windowMinutes: 60,
    integrationIds: [EXAMPLE_IDS.integration],
    isActive: true,
  },
  updateAlert: { threshold: 0.3, windowMinutes: 120, agentId: null },
};

/** Notes shown beside an example, for bodies whose real values come from elsewhere. */
const EXAMPLE_NOTES: Readonly<Record<string, string>> = {
  handleSamlCallback: SIGNED_FORM_NOTE,
  handleSamlLogoutCallback: SIGNED_FORM_NOTE,
};

/** Media types that take an example: JSON, SCIM JSON and form posts (not protobuf bytes). */
const EXAMPLE_MEDIA = /^(application\/([a-z.+-]+\+)?json|application\/x-www-form-urlencoded)$/;

/**
 * Puts each operation's example (`REQUEST_EXAMPLES`) on its request body's media types. Throws for a body without
 * an example, and for an example of no operation, so the table and the routes stay in step.
 */
export function withRequestExamples(document: OpenAPIObject): OpenAPIObject {
  const used = new Set<string>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, value] of Object.entries(item)) {
      const operation = value as {
        operationId?: string;
        requestBody?: { content?: Record<string, { example?: unknown; schema?: { description?: string } }> };
      };
      if (!operation?.requestBody?.content) continue;
      const id = operation.operationId ?? '';
      if (!Object.hasOwn(REQUEST_EXAMPLES, id)) {
        throw new Error(
          `${method.toUpperCase()} ${path} (${id}) takes a body with no example: add one to REQUEST_EXAMPLES ` +
            '(apps/api/src/openapi-examples.ts)',
        );
      }
      used.add(id);
      for (const [mediaType, media] of Object.entries(operation.requestBody.content)) {
        if (EXAMPLE_MEDIA.test(mediaType)) media.example = REQUEST_EXAMPLES[id];
      }
      const note = EXAMPLE_NOTES[id];
      if (note) {
        const body = operation.requestBody as { description?: string };
        body.description = body.description ? `${body.description} ${note}` : note;
      }
    }
  }
  const unused = Object.keys(REQUEST_EXAMPLES).filter((id) => !used.has(id));
  if (unused.length > 0) throw new Error(`Examples of no operation with a body: ${unused.join(', ')}`);
  return document;
}
