import { canonicalJson, sha256Hex } from '#platform';
import type { FriaRisk, FriaRow, FriaStatus, RiskLevel } from './fria.schema.js';

/**
 * The assessed contents: exactly what the anchored hash (`chainHash`) covers (docs/compliance-officers.md,
 * "Fundamental-rights impact assessments (FRIA)").
 */
export interface FriaContents {
  systemName: string;
  deployerProfileId: string | null;
  purpose: string | null;
  affectedPersons: string | null;
  usageContext: string | null;
  durationOfUse: string | null;
  identifiedRisks: FriaRisk[];
  humanOversightSummary: string | null;
  complaintsMechanism: string | null;
}

/** A risk row as sent: levels and affected rights may be left out and take their defaults. */
export interface FriaRiskInput {
  title: string;
  description?: string;
  likelihood?: RiskLevel;
  severity?: RiskLevel;
  affectedRights?: string[];
  mitigation?: string;
  residualRisk?: RiskLevel;
}

export const SYNTHETIC_RISK_TITLE = 'Identified risks';

export function contentsOf(row: FriaRow): FriaContents {
  return {
    systemName: row.systemName,
    deployerProfileId: row.deployerProfileId,
    purpose: row.purpose,
    affectedPersons: row.affectedPersons,
    usageContext: row.usageContext,
    durationOfUse: row.durationOfUse,
    identifiedRisks: row.identifiedRisks,
    humanOversightSummary: row.humanOversightSummary,
    complaintsMechanism: row.complaintsMechanism,
  };
}

/**
 * SHA-256 hex of the RFC 8785 canonical JSON of the contents. Absent optional members of a risk row are dropped
 * (as canonical JSON drops undefined), so the hash depends only on what is stored, not on key order.
 */
export function friaHash(contents: FriaContents): string {
  return sha256Hex(
    canonicalJson({
      systemName: contents.systemName,
      deployerProfileId: contents.deployerProfileId ?? null,
      purpose: contents.purpose ?? null,
      affectedPersons: contents.affectedPersons ?? null,
      usageContext: contents.usageContext ?? null,
      durationOfUse: contents.durationOfUse ?? null,
      identifiedRisks: contents.identifiedRisks,
      humanOversightSummary: contents.humanOversightSummary ?? null,
      complaintsMechanism: contents.complaintsMechanism ?? null,
    }),
  );
}

const COMPLETENESS_TEXT_FIELDS = [
  'systemName',
  'purpose',
  'affectedPersons',
  'usageContext',
  'durationOfUse',
  'humanOversightSummary',
  'complaintsMechanism',
] as const;

/**
 * Share (0–100, rounded) of the 8 assessed fields populated: the seven text fields that are not blank, and
 * identifiedRisks when it has a row. deployerProfileId is a reference, not an assessed field.
 * See docs/compliance-officers.md, "Fundamental-rights impact assessments (FRIA)"; fria.contents.spec.ts.
 */
export function completeness(contents: FriaContents): number {
  let populated = contents.identifiedRisks.length > 0 ? 1 : 0;
  for (const field of COMPLETENESS_TEXT_FIELDS) {
    const value = contents[field];
    if (typeof value === 'string' && value.trim() !== '') populated += 1;
  }
  return Math.round((populated / 8) * 100);
}

/** A risk row with its defaults applied (levels medium, no affected rights). */
export function withRiskDefaults(risk: FriaRiskInput): FriaRisk {
  const row: FriaRisk = {
    title: risk.title,
    likelihood: risk.likelihood ?? 'medium',
    severity: risk.severity ?? 'medium',
    affectedRights: risk.affectedRights ?? [],
    residualRisk: risk.residualRisk ?? 'medium',
  };
  if (risk.description !== undefined) row.description = risk.description;
  if (risk.mitigation !== undefined) row.mitigation = risk.mitigation;
  return row;
}

/** Whether the risks are exactly the one row the wizard fields collapse into. */
export function isSyntheticOnly(risks: FriaRisk[]): boolean {
  return risks.length === 1 && risks[0]!.title === SYNTHETIC_RISK_TITLE;
}

/**
 * The wizard's free-text fields collapsed into one risk row. In an update, a field not sent is kept from
 * the current synthetic row, when the current risks are exactly that row.
 * See docs/compliance-officers.md, "Fundamental-rights impact assessments (FRIA)"; fria.contents.spec.ts.
 */
export function collapseWizardRisks(
  risksIdentified: string | undefined,
  mitigations: string | undefined,
  current: FriaRisk[] = [],
): FriaRisk[] {
  const previous = isSyntheticOnly(current) ? current[0] : undefined;
  return [
    withRiskDefaults({
      title: SYNTHETIC_RISK_TITLE,
      description: risksIdentified ?? previous?.description,
      mitigation: mitigations ?? previous?.mitigation,
    }),
  ];
}

/**
 * The allowed moves (docs/compliance-officers.md, "Fundamental-rights impact assessments (FRIA)";
 * fria.contents.spec.ts); any other (including staying put) is refused.
 */
export function canTransition(from: FriaStatus, to: FriaStatus): boolean {
  if (from === to) return false;
  if (to === 'archived') return from !== 'archived';
  return (
    (from === 'draft' && to === 'review') ||
    (from === 'review' && (to === 'approved' || to === 'draft')) ||
    (from === 'approved' && to === 'draft')
  );
}
