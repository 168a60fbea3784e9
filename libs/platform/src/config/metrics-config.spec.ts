import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './app-config.js';

const env = (vars: Record<string, string> = {}) => ({
  DATA_DIR: mkdtempSync(join(tmpdir(), 'cfg-')),
  ...vars,
});
const TOKEN = 'm'.repeat(32);

describe('the metrics settings', () => {
  it('expose nothing by default, and bind a metrics port to loopback unless told otherwise', () => {
    expect(loadConfig(env()).metrics).toEqual({
      enabled: true,
      port: undefined,
      host: '127.0.0.1',
      token: undefined,
    });
    expect(
      loadConfig(env({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0', METRICS_TOKEN: TOKEN })).metrics,
    ).toEqual({
      enabled: true,
      port: 9464,
      host: '0.0.0.0',
      token: TOKEN,
    });
  });

  it.each([
    ['METRICS_PORT', 'ninety'],
    ['METRICS_PORT', '0'],
    ['METRICS_PORT', '65536'],
    ['METRICS_PORT', '3000'],
    ['METRICS_TOKEN', 'm'.repeat(31)],
    ['METRICS_TOKEN', `${'m'.repeat(32)} with spaces`],
    ['METRICS_TOKEN', `${'m'.repeat(32)}é`],
    ['METRICS', 'no'],
  ])('stop the start-up naming %s when it is %s', (name, value) => {
    expect(() => loadConfig(env({ [name]: value }))).toThrow(ConfigError);
    expect(() => loadConfig(env({ [name]: value }))).toThrow(name);
  });

  it('take METRICS_PORT beside a PORT of its own', () => {
    expect(loadConfig(env({ PORT: '8080', METRICS_PORT: '3000' })).metrics.port).toBe(3000);
  });

  it('turn collection off with METRICS=off, which refuses a port or a token that would serve nothing', () => {
    expect(loadConfig(env({ METRICS: 'off' })).metrics.enabled).toBe(false);
    for (const name of ['METRICS_PORT', 'METRICS_TOKEN']) {
      const vars = { METRICS: 'off', [name]: name === 'METRICS_PORT' ? '9464' : TOKEN };
      expect(() => loadConfig(env(vars))).toThrow(ConfigError);
      expect(() => loadConfig(env(vars))).toThrow(`${name}: serves metrics, which METRICS=off does not collect`);
    }
  });
});
