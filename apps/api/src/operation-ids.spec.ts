import { describe, expect, it } from 'vitest';
import { DOCUMENTED_EVENT_TYPES, webhookOperationId } from './openapi-events.js';
import { OPERATION_IDS, operationIdOf } from './operation-ids.js';

describe('operation ids', () => {
  const ids = Object.values(OPERATION_IDS);

  it('are camelCase names a generated client can call', () => {
    expect(ids.filter((id) => !/^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)*$/.test(id))).toEqual([]);
  });

  it('are unique, also against the webhooks’ operation ids', () => {
    const all = [...ids, ...DOCUMENTED_EVENT_TYPES.map(webhookOperationId)];
    expect(all.filter((id, i) => all.indexOf(id) !== i)).toEqual([]);
  });

  it('start with scim for the SCIM routes, and only there', () => {
    const wrong = Object.entries(OPERATION_IDS).filter(
      ([key, id]) => key.startsWith('Scim_') !== id.startsWith('scim'),
    );
    expect(wrong).toEqual([]);
  });

  it('are keyed by the Nest key, <controller without Controller>_<method>', () => {
    expect(operationIdOf('AgentsController', 'list')).toBe('listAgents');
    expect(operationIdOf('ScimController', 'listUsers')).toBe('scimListUsers');
    expect(operationIdOf('EventStream', 'websocket')).toBe('streamEventsWebSocket');
  });

  it('refuses a route that has no name, so that none ships without one', () => {
    expect(() => operationIdOf('AgentsController', 'archive')).toThrow(/Agents_archive has no operationId/);
    expect(() => operationIdOf('AgentsController', 'list', 'v2')).toThrow(/Agents_list_v2/);
    expect(() => operationIdOf('Object', 'toString')).toThrow(/no operationId/);
  });

  it('names webhooks after their event', () => {
    expect(webhookOperationId('compliance.mapping.updated')).toBe('complianceMappingUpdatedWebhook');
  });
});
