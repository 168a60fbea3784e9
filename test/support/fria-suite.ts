import { createHash } from 'node:crypto';
import { type Registered, TestContext } from './app.js';

export const FRIA = '/api/v1/fria';

export interface Fria {
  id: string;
  organizationId: string;
  systemName: string;
  purpose: string | null;
  identifiedRisks: Record<string, unknown>[];
  status: string;
  chainHash: string | null;
  approvedBy: string | null;
  approvedAt: string | null;
  completeness: number;
  [key: string]: unknown;
}

/**
 * The expected anchor, written out independently of the implementation: keys in RFC 8785 order (all ASCII, so
 * plain sort), no whitespace, absent fields null.
 */
export function expectedHash(contents: Record<string, unknown>): string {
  const fields = [
    'affectedPersons',
    'complaintsMechanism',
    'deployerProfileId',
    'durationOfUse',
    'humanOversightSummary',
    'identifiedRisks',
    'purpose',
    'systemName',
    'usageContext',
  ];
  const sortKeys = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sortKeys)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
          )
        : value;
  const body = Object.fromEntries(
    fields.map((f) => [f, sortKeys(contents[f] ?? (f === 'identifiedRisks' ? [] : null))]),
  );
  return createHash('sha256').update(JSON.stringify(body)).digest('hex');
}

/** An organization on the governance plan (friaWizard) with one user of each role. */
export async function friaOrganization(ctx: TestContext, name: string) {
  const owner: Registered = await ctx.register({ organizationName: name });
  await ctx.setPlan(owner.organization.id, 'governance');
  const admin = await ctx.addMember(owner.organization.id, 'admin');
  const member = await ctx.addMember(owner.organization.id, 'member');
  const viewer = await ctx.addMember(owner.organization.id, 'viewer');
  return { owner, admin, member, viewer, organizationId: owner.organization.id };
}

export async function createFria(
  ctx: TestContext,
  token: string,
  body: Record<string, unknown>,
): Promise<Fria> {
  const res = await ctx.post(FRIA, { token, body });
  if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode} ${res.body}`);
  return res.json().data;
}

export async function move(ctx: TestContext, token: string, id: string, status: string) {
  return ctx.post(`${FRIA}/${id}/transition`, { token, body: { status } });
}

/** Brings a fresh assessment to `status` through allowed moves (as the owner). */
export async function friaIn(
  ctx: TestContext,
  token: string,
  status: string,
  name = 'System',
): Promise<Fria> {
  const fria = await createFria(ctx, token, { systemName: name });
  const path: Record<string, string[]> = {
    draft: [],
    review: ['review'],
    approved: ['review', 'approved'],
    archived: ['archived'],
  };
  for (const step of path[status]!) {
    const res = await move(ctx, token, fria.id, step);
    if (res.statusCode !== 200) throw new Error(`move failed: ${res.statusCode} ${res.body}`);
  }
  return { ...fria, status };
}
