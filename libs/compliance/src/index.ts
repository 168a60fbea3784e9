export * from './fria/fria.module.js';
export * from './mapping/compliance-mapping.module.js';
export * from './incidents/incidents.module.js';
export { FriaRepository } from './fria/fria.repository.js';
export * from './reports/reports.module.js';
export * from './alerts/alerts.module.js';
export * from './explanations/explanations.module.js';
export * from './subject-reports/subject-reports.module.js';
