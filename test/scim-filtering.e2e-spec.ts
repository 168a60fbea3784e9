import { describe, expect, it } from 'vitest';
import { expectScimError, patchOp, scimOrganization, scimUser } from './support/scim.js';
import { scimSuite } from './support/scim-suite.js';

/*
 * SCIM filters over HTTP (RFC 7644 §3.4.2.2): every operator, and, or, not and parentheses with RFC precedence, case
 * rules, schema URNs and value paths, and 400 invalidFilter for what does not parse or compile. The filter's grammar
 * and SQL are tested in libs/identity/src/scim/scim-filter/ and test/medium/scim-filter.medium-spec.ts.
 */

describe('SCIM 2.0', () => {
  const s = scimSuite({ freshWindows: true });

  describe('Users', () => {
    it('filters with every operator, and, or, not and parentheses, with RFC precedence', async () => {
      const f = await scimOrganization(s.ctx, 'Filters');
      const mk = async (userName: string, extra: Record<string, unknown>) => {
        const res = await f.client.post('/Users', scimUser(userName, extra));
        expect(res.statusCode, res.body).toBe(201);
        return res.json().id as string;
      };
      await mk('alice@f.example', { externalId: 'A-1', name: { givenName: 'Alice', familyName: 'Smith' } });
      await mk('bob@f.example', { externalId: 'B-2', name: { givenName: 'Bob', familyName: 'Jones' } });
      const carol = await mk('carol@g.example', { name: { givenName: 'Carol', familyName: 'Smithers' } });
      await f.client.patch(`/Users/${carol}`, patchOp({ op: 'replace', path: 'active', value: false }));
      const q = async (expression: string) => {
        const res = await f.client.get(`/Users?filter=${encodeURIComponent(expression)}`);
        expect(res.statusCode, `${expression}: ${res.body}`).toBe(200);
        return (res.json().Resources as { userName: string }[])
          .map((r) => r.userName)
          .filter((u) => !u.includes('user-'))
          .sort();
      };
      expect(await q('userName eq "ALICE@f.example"')).toEqual(['alice@f.example']);
      expect(await q('userName ne "alice@f.example" and userName ew "example" and active eq true')).toEqual([
        'bob@f.example',
      ]);
      expect(await q('name.familyName co "mith"')).toEqual(['alice@f.example', 'carol@g.example']);
      expect(await q('userName sw "b"')).toEqual(['bob@f.example']);
      expect(await q('emails.value ew "@g.example"')).toEqual(['carol@g.example']);
      expect(await q('externalId pr')).toEqual(['alice@f.example', 'bob@f.example']);
      expect(await q('externalId eq "a-1"')).toEqual([]); // externalId is case-exact
      expect(await q('userName gt "bob@f.example" and userName lt "d"')).toEqual(['carol@g.example']);
      expect(await q('userName ge "bob@f.example" and userName le "bob@f.example"')).toEqual([
        'bob@f.example',
      ]);
      expect(await q('active eq false')).toEqual(['carol@g.example']);
      expect(await q('meta.created ge "2000-01-01T00:00:00Z" and name.givenName eq "bob"')).toEqual([
        'bob@f.example',
      ]);
      expect(await q('meta.lastModified lt "2000-01-01T00:00:00Z"')).toEqual([]);
      // and binds tighter than or; not and parentheses.
      expect(await q('name.givenName eq "Carol" or name.givenName eq "Alice" and active eq false')).toEqual([
        'carol@g.example',
      ]);
      expect(await q('(name.givenName eq "Carol" or name.givenName eq "Alice") and active eq true')).toEqual([
        'alice@f.example',
      ]);
      expect(await q('not (name.familyName co "mith") and externalId pr')).toEqual(['bob@f.example']);
      expect(await q('USERNAME EQ "bob@f.example"')).toEqual(['bob@f.example']);
      expect(await q('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "bob@f.example"')).toEqual([
        'bob@f.example',
      ]);
      expect(await q('emails[value eq "alice@f.example"]')).toEqual(['alice@f.example']);
      for (const bad of [
        'userName eq',
        'userName zz "a"',
        'nickName eq "x"',
        'userName eq "a" and',
        '(userName eq "a"',
        'userName eq "unterminated',
        'active co true',
        'meta.created gt "yesterday"',
        'userName eq "a") or (',
        'x'.repeat(5000),
      ]) {
        expectScimError(await f.client.get(`/Users?filter=${encodeURIComponent(bad)}`), 400, 'invalidFilter');
      }
    });
  });
});
