import { type CatalogueClause, clause } from './clause.js';

/** EU AI Act: the obligations a provider or deployer of a high-risk system attests. */
export const EU_AI_ACT: readonly CatalogueClause[] = [
  clause('art-4', 'AI literacy', 'Training records showing staff who run AI systems understand them.'),
  clause(
    'art-9',
    'Risk management system',
    'A maintained risk register covering the whole system life cycle.',
  ),
  clause(
    'art-10',
    'Data and data governance',
    'Dataset documentation: origin, relevance, bias checks and gaps.',
  ),
  clause(
    'art-11',
    'Technical documentation',
    'Up-to-date technical file describing design, purpose and testing.',
  ),
  clause('art-12', 'Record-keeping', 'Automatic logs of system operation kept for the required period.'),
  clause(
    'art-13',
    'Transparency to deployers',
    'Instructions for use stating capabilities, limits and oversight needs.',
  ),
  clause('art-14', 'Human oversight', 'Review queues, escalation paths and the ability to stop the system.'),
  clause(
    'art-15',
    'Accuracy, robustness and cybersecurity',
    'Test results on accuracy and resilience, with security reviews.',
  ),
  clause(
    'art-17',
    'Quality management system',
    'Documented procedures for design, testing, changes and complaints.',
  ),
  clause(
    'art-26',
    'Deployer obligations',
    'Use per instructions, assigned overseers, input data checks and logs kept.',
  ),
  clause(
    'art-27',
    'Fundamental rights impact assessment',
    'A completed FRIA before first use, updated when facts change.',
  ),
  clause(
    'art-43',
    'Conformity assessment',
    'The conformity assessment outcome and declaration for the system.',
  ),
  clause('art-49', 'Registration', 'Proof of registration in the EU database before placing on the market.'),
  clause(
    'art-72',
    'Post-market monitoring',
    'A monitoring plan and the data collected on performance in use.',
  ),
  clause(
    'art-73',
    'Serious-incident reporting',
    'An incident procedure and records of reports made to authorities.',
  ),
];
