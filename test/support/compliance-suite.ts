import { eq } from 'drizzle-orm';
import { newId } from '#platform';
import { friaAssessments } from '../../libs/compliance/src/fria/fria.schema.js';
import { complianceMappingNotes } from '../../libs/compliance/src/mapping/compliance-mapping.schema.js';
import type { Registered, TestContext } from './app.js';

export const CATALOGUE = '/api/v1/compliance/catalogue';
export const MAPPING = '/api/v1/compliance/mapping';
export const CROSSWALK = '/api/v1/compliance/crosswalk';

/** A new organization on the governance plan, which has complianceMapping. */
export async function governanceOrg(ctx: TestContext, name: string): Promise<Registered> {
  const org = await ctx.register({ organizationName: name });
  await ctx.setPlan(org.organization.id, 'governance');
  return org;
}

export function patchMapping(ctx: TestContext, token: string, body: Record<string, unknown>) {
  return ctx.patch(MAPPING, { token, body });
}

/** A draft FRIA row of the organization, inserted directly: the mapping only needs it to exist. */
export async function insertFria(ctx: TestContext, organizationId: string): Promise<string> {
  const id = newId();
  const now = ctx.clock.now();
  await ctx.db.db.insert(friaAssessments).values({
    id,
    organizationId,
    systemName: 'Credit scoring',
    status: 'draft',
    createdAt: now,
    updatedAt: now,
  });
  return id;
}

/** The organization's stored notes, whatever the API says. */
export async function notesOf(ctx: TestContext, organizationId: string) {
  return ctx.db.db
    .select()
    .from(complianceMappingNotes)
    .where(eq(complianceMappingNotes.organizationId, organizationId));
}

export const MAPPING_NOTES = '/api/v1/compliance/mapping-notes';
