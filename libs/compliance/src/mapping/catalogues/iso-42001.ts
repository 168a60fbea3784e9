import { type CatalogueClause, clause } from './clause.js';

/** ISO/IEC 42001: the management-system clauses, the two impact-assessment sub-clauses, Annex A control groups. */
export const ISO_42001: readonly CatalogueClause[] = [
  clause(
    '4',
    'Organizational context',
    'A scope statement naming the AI systems, interested parties and their needs.',
  ),
  clause(
    '5',
    'Leadership and commitment',
    'A signed AI policy and named roles with authority over AI governance.',
  ),
  clause(
    '6',
    'Planning for risks and objectives',
    'A risk register and measurable AI objectives with owners.',
  ),
  clause(
    '6.1.4',
    'AI system impact assessment',
    'Completed impact assessments for each system in scope (e.g. a FRIA).',
  ),
  clause('7', 'Support and resources', 'Training records, competence matrix and controlled documentation.'),
  clause(
    '8',
    'Operational planning and control',
    'Runbooks and change records showing AI processes run as planned.',
  ),
  clause(
    '8.4',
    'Impact assessment in operation',
    'Impact assessments repeated at planned intervals or after changes.',
  ),
  clause('9', 'Performance evaluation', 'Monitoring metrics, internal audit reports and management reviews.'),
  clause('10', 'Improvement', 'Nonconformity records with corrective actions and their follow-up.'),
  clause('A.2', 'Policies for AI', 'An approved AI policy aligned with other organizational policies.'),
  clause('A.3', 'Internal organization', 'Assigned AI responsibilities and a way to report concerns.'),
  clause(
    'A.4',
    'Resources for AI systems',
    'An inventory of data, tooling, compute and people behind each system.',
  ),
  clause(
    'A.5',
    'Assessing impacts of AI systems',
    'A documented process and results for assessing impacts on people.',
  ),
  clause('A.6', 'AI system life cycle', 'Design, verification and release records for each system.'),
  clause('A.7', 'Data for AI systems', 'Data provenance, quality checks and preparation records.'),
  clause(
    'A.8',
    'Information for interested parties',
    'User-facing documentation and a channel to report adverse effects.',
  ),
  clause('A.9', 'Use of AI systems', 'Rules for responsible use and records of intended-use checks.'),
  clause(
    'A.10',
    'Third-party and customer relationships',
    'Supplier agreements and allocation of AI responsibilities.',
  ),
];
