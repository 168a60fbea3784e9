import type { ApiHeaderOptions } from '@nestjs/swagger';

/**
 * The OpenAPI text of the compliance mapping routes (compliance-mapping.controller.ts, legacy-notes.controller.ts),
 * kept out of the controllers.
 */

const DEPRECATION =
  ' Deprecated: answered with `Deprecation: true`, a `Sunset` date at least 90 days ahead (2027-04-12 unless ' +
  'that is nearer) and `Link: <…/docs/migrations/compliance-mapping-notes>; rel="deprecation"`. Use ' +
  '`/compliance/mapping`.';

export const COMPLIANCE_MAPPING_DOCS = {
  catalogue:
    'Any role; plan feature complianceMapping (403 UPGRADE_REQUIRED otherwise). The clauses of iso-42001 ' +
    '(default, 18 clauses), eu-ai-act or nist-rmf, each with a paraphrased title, one line of guidance and the ' +
    'default status `gap`. 400 VALIDATION_ERROR for an unknown framework.',
  crosswalk:
    'Any role; plan feature complianceMapping. Themes (impact assessment, risk management, data governance, ' +
    'documentation and records, transparency, human oversight, accuracy, monitoring and incidents, management ' +
    'system, governance and literacy, third parties) relating clauses of iso-42001, eu-ai-act and nist-rmf, ' +
    'each clause with its title and the organization’s current status (`gap` and `noted: false` without a ' +
    'note), so one piece of evidence can be seen against all three. The themes are product data, our reading.',
  get:
    'Any role; plan feature complianceMapping. The notes written for the framework (default iso-42001), in ' +
    'catalogue order, and the coverage rollup: clauses without a note count as gaps; percent = (covered + ' +
    'partial / 2) / (total − notApplicable) × 100, one decimal, 0 when every clause is not-applicable. ' +
    '400 VALIDATION_ERROR for an unknown framework.',
  update:
    'Owner or admin; plan feature complianceMapping. Creates or updates the note of one clause (idempotent: ' +
    'repeating the same body changes nothing but the review stamp). `status` is `gap` on the first write and ' +
    'unchanged when omitted later; `evidence` (≤ 4,000 characters) and `evidenceRefs` (≤ 20, replacing the ' +
    'list) are unchanged when omitted. Stamps reviewedAt, reviewedBy and a copy of the caller’s e-mail. Every ' +
    'evidence reference must name a FRIA, policy, audit entry or incident of the organization. Audited and published as `compliance.mapping.updated`. 400 ' +
    'VALIDATION_ERROR for an unknown framework, a clauseId outside its catalogue, bounds, or a missing ' +
    'reference (details name `evidenceRefs[i]`).',
} as const;

export const LEGACY_NOTES_DOCS = {
  read:
    'Any role; plan feature complianceMapping. `{notes: {clauseId: text}}` for the framework (default ' +
    'iso-42001): the structured notes’ evidence, with the legacy strings merged over them. 400 ' +
    'VALIDATION_ERROR for an unknown framework.' +
    DEPRECATION,
  replace:
    'Owner or admin; plan feature complianceMapping. Replaces the framework’s legacy map (default iso-42001) ' +
    'and nothing else: the structured notes are untouched. Keys must be clause ids of the framework, values ' +
    'strings of at most 4,000 characters (400 VALIDATION_ERROR with details `notes.<clauseId>` otherwise). ' +
    'Audited `compliance.mapping_notes.updated`. Answers the merged view, like the GET.' +
    DEPRECATION,
} as const;

/** The legacy read documents its `Sunset` answer header as a header parameter, as it always has. */
export const LEGACY_NOTES_HEADERS: readonly ApiHeaderOptions[] = [
  { name: 'Sunset', required: false, description: 'Response header: the retirement date.' },
];
