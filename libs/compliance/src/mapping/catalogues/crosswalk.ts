import type { Framework } from '../compliance-mapping.schema.js';

/** A theme relating clauses of the three frameworks, so one piece of evidence can be seen against all of them. */
export interface CrosswalkTheme {
  themeId: string;
  title: string;
  clauses: Readonly<Record<Framework, readonly string[]>>;
}

/** Product data: our reading of where the frameworks ask for the same kind of evidence. */
export const CROSSWALK: readonly CrosswalkTheme[] = [
  {
    themeId: 'impact-assessment',
    title: 'Impact assessment',
    clauses: {
      'iso-42001': ['6.1.4', '8.4', 'A.5'],
      'eu-ai-act': ['art-27'],
      'nist-rmf': ['MAP-1', 'MAP-5'],
    },
  },
  {
    themeId: 'risk-management',
    title: 'Risk management',
    clauses: {
      'iso-42001': ['6', '8'],
      'eu-ai-act': ['art-9'],
      'nist-rmf': ['GOVERN-1', 'MAP-4', 'MANAGE-1', 'MANAGE-2'],
    },
  },
  {
    themeId: 'data-governance',
    title: 'Data governance',
    clauses: {
      'iso-42001': ['A.7'],
      'eu-ai-act': ['art-10'],
      'nist-rmf': ['MAP-2', 'MEASURE-2'],
    },
  },
  {
    themeId: 'documentation-records',
    title: 'Documentation and records',
    clauses: {
      'iso-42001': ['7', 'A.6'],
      'eu-ai-act': ['art-11', 'art-12'],
      'nist-rmf': ['MAP-2', 'MEASURE-1'],
    },
  },
  {
    themeId: 'transparency',
    title: 'Transparency and information',
    clauses: {
      'iso-42001': ['A.8'],
      'eu-ai-act': ['art-13'],
      'nist-rmf': ['GOVERN-5', 'MAP-3'],
    },
  },
  {
    themeId: 'human-oversight',
    title: 'Human oversight and use',
    clauses: {
      'iso-42001': ['A.9'],
      'eu-ai-act': ['art-14', 'art-26'],
      'nist-rmf': ['GOVERN-3', 'MANAGE-2'],
    },
  },
  {
    themeId: 'accuracy-robustness',
    title: 'Accuracy, robustness and security',
    clauses: {
      'iso-42001': ['8', '9'],
      'eu-ai-act': ['art-15'],
      'nist-rmf': ['MEASURE-2', 'MEASURE-4'],
    },
  },
  {
    themeId: 'monitoring-incidents',
    title: 'Monitoring and incidents',
    clauses: {
      'iso-42001': ['9', '10'],
      'eu-ai-act': ['art-72', 'art-73'],
      'nist-rmf': ['MEASURE-3', 'MANAGE-4'],
    },
  },
  {
    themeId: 'management-system',
    title: 'Quality and management system',
    clauses: {
      'iso-42001': ['4', '5', 'A.2'],
      'eu-ai-act': ['art-17', 'art-43', 'art-49'],
      'nist-rmf': ['GOVERN-1', 'GOVERN-4'],
    },
  },
  {
    themeId: 'governance-literacy',
    title: 'Governance roles and AI literacy',
    clauses: {
      'iso-42001': ['A.3', 'A.4', '7'],
      'eu-ai-act': ['art-4'],
      'nist-rmf': ['GOVERN-2', 'GOVERN-3'],
    },
  },
  {
    themeId: 'third-parties',
    title: 'Suppliers and third parties',
    clauses: {
      'iso-42001': ['A.10'],
      'eu-ai-act': ['art-26'],
      'nist-rmf': ['GOVERN-6', 'MANAGE-3'],
    },
  },
];
