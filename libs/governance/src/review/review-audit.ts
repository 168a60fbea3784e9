/**
 * The audit entry's form of a review outcome. Notes a person wrote about a decision (a reviewer's, or a CPI
 * verdict's) may quote the data of the person the decision is about; the audit chain cannot be erased without
 * breaking it, so its entries record only whether there were notes. The notes themselves stay on the review item,
 * the feedback row and the event, which a subject's erasure reaches (docs/data-protection.md, "What erasure
 * removes").
 */
export function auditDetailsOf(details: Record<string, unknown>): Record<string, unknown> {
  const { notes, ...rest } = details;
  return { ...rest, hasNotes: typeof notes === 'string' && notes.length > 0 };
}
