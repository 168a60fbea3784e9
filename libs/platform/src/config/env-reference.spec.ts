import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { envSchemaDefaults } from './app-config.js';
import { ENV_REFERENCE, renderConfigurationReference } from './env-reference.js';

describe('the configuration reference', () => {
  it("states each schema default as the schema has it", () => {
    const defaults = envSchemaDefaults();
    expect(Object.keys(defaults).length).toBeGreaterThan(40);
    const wrong = Object.entries(defaults)
      .filter(([name, value]) => ENV_REFERENCE[name as keyof typeof ENV_REFERENCE].default !== `\`${String(value)}\``)
      .map(([name, value]) => `${name}: documented ${ENV_REFERENCE[name as keyof typeof ENV_REFERENCE].default}, schema ${String(value)}`);
    expect(wrong).toEqual([]);
  });

  it('is what docs/configuration.md holds (npm run docs:config writes it)', () => {
    const file = readFileSync(new URL('../../../../docs/configuration.md', import.meta.url), 'utf8');
    expect(file).toBe(renderConfigurationReference());
  });

  it('lists every variable once, and the secrets as secret', () => {
    const text = renderConfigurationReference();
    for (const name of Object.keys(ENV_REFERENCE)) {
      expect(text.split(`| \`${name}\` |`).length - 1, name).toBe(1);
    }
    expect(text).toMatch(/\| `JWT_SECRET` \| [^|]+ \| yes \|/);
    expect(text).toMatch(/\| `SHUTDOWN_TIMEOUT_MS` \| `10000` \|/);
  });
});
