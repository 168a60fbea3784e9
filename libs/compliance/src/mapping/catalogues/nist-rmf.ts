import { type CatalogueClause, clause } from './clause.js';

/** NIST AI RMF 1.0: the categories of its four functions. */
export const NIST_RMF: readonly CatalogueClause[] = [
  clause(
    'GOVERN-1',
    'Policies and processes for AI risk',
    'Documented AI risk policies that are in force and reviewed.',
  ),
  clause('GOVERN-2', 'Accountability structures', 'Named roles and training for those who manage AI risk.'),
  clause(
    'GOVERN-3',
    'Workforce diversity and inclusion',
    'Evidence that diverse perspectives inform AI risk decisions.',
  ),
  clause('GOVERN-4', 'Risk-aware culture', 'Practices that encourage reporting and discussing AI risks.'),
  clause(
    'GOVERN-5',
    'Engagement with AI actors',
    'Channels to gather and act on feedback from affected parties.',
  ),
  clause('GOVERN-6', 'Third-party risk', 'Policies and checks for third-party data, models and software.'),
  clause(
    'MAP-1',
    'Context is established',
    'Documented intended purpose, users, setting and expected impacts.',
  ),
  clause('MAP-2', 'System categorization', 'A record of the tasks, methods and limits of the system.'),
  clause(
    'MAP-3',
    'Capabilities, benefits and costs',
    'Analysis of benefits against potential costs and harms.',
  ),
  clause('MAP-4', 'Risks of components', 'Risk mapping for each component, including third-party parts.'),
  clause(
    'MAP-5',
    'Impacts on people and society',
    'Assessed likelihood and size of impacts on individuals and groups.',
  ),
  clause(
    'MEASURE-1',
    'Methods and metrics',
    'Chosen metrics for identified risks and how they are measured.',
  ),
  clause(
    'MEASURE-2',
    'Trustworthiness evaluation',
    'Test and evaluation results for validity, safety, bias and privacy.',
  ),
  clause(
    'MEASURE-3',
    'Tracking risks over time',
    'Ongoing monitoring of identified and emerging risks in use.',
  ),
  clause('MEASURE-4', 'Feedback on measurement', 'Review of whether the measurements remain effective.'),
  clause(
    'MANAGE-1',
    'Risk prioritization and response',
    'Decisions on which risks to treat, accept or avoid, with reasons.',
  ),
  clause(
    'MANAGE-2',
    'Maximizing benefits, minimizing harms',
    'Plans and resources to sustain value and reduce negative impact.',
  ),
  clause('MANAGE-3', 'Third-party risk management', 'Monitoring of third-party resources and their risks.'),
  clause(
    'MANAGE-4',
    'Response, recovery and communication',
    'Incident response, recovery plans and communication records.',
  ),
];
