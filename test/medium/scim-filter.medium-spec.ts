import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScimPrincipal, ScimTokensService } from '../../libs/identity/src/scim/scim-tokens.service.js';
import { ScimUsersService } from '../../libs/identity/src/scim/scim-users.service.js';
import { TEST_META } from '../support/builders.js';
import { MediumContext } from '../support/medium.js';

/*
 * The SCIM filter's compiled SQL on a real database, through ScimUsersService.list and its repository (the members
 * directory joined with scim_identities): which users each filter returns. The expectations are computed from the
 * users this file creates (`Person`, below), with RFC 7643's case rules written into each predicate.
 */

const T0 = '2031-03-01T09:00:00.000Z';
const HOUR = 3_600_000;
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

/** A user as the filters see it: what this file wrote, and when. */
interface Person {
  org: string;
  key: string;
  id: string;
  /** As SCIM shows it: the sign-in address, lower-cased. */
  userName: string;
  displayName: string;
  givenName: string | null;
  familyName: string | null;
  externalId: string | null;
  /** What `emails.value` compares: the primary work address the IdP wrote, else the userName. */
  contact: string;
  active: boolean;
  created: Date;
  lastModified: Date;
}

/** The users provisioned in each organization: the same values, under the organization's own domain. */
interface Seed {
  key: string;
  displayName?: string;
  name?: { givenName: string; familyName: string };
  externalId?: string;
  /** The local part of a work address written as the primary e-mail, in the case written. */
  workEmail?: string;
}

const SEEDS: Seed[] = [
  {
    key: 'alice',
    name: { givenName: 'Alice', familyName: 'Liddell' },
    externalId: 'EXT-001',
    workEmail: 'Alice.Work',
  },
  { key: 'bob', name: { givenName: 'Bob', familyName: "O'Brien" }, externalId: 'ext-002' },
  { key: 'carol_smith', displayName: 'Carol 100% Smith', name: { givenName: 'Carol', familyName: 'Smith' } },
  // Values that a `%` or `_` read as a wildcard would match as well.
  { key: 'erin', displayName: 'Erin 1000 Smith' },
  { key: 'dave', displayName: 'Dave_Ops', externalId: 'EXT-004' },
  { key: 'dan', displayName: 'DaveXOps' },
  { key: 'frank', displayName: 'Frank \\ Root', workEmail: 'Frank.Desk' },
];

interface Org {
  key: string;
  domain: string;
  principal: ScimPrincipal;
}

describe('SCIM filters compiled to SQL, through ScimUsersService on the database', () => {
  let ctx: MediumContext;
  let service: ScimUsersService;
  let acme: Org;
  let globex: Org;
  const people: Person[] = [];

  /** An organization, its owner as a Person, and the SCIM principal its token resolves to. */
  async function organization(key: string): Promise<Org> {
    const domain = `${key}.example`;
    const created = ctx.clock.now();
    const org = await ctx.newOrganization({
      organizationName: key,
      name: 'Olga Owner',
      email: `owner@${domain}`,
    });
    const { token } = await ctx.service(ScimTokensService).rotate(org.owner, TEST_META);
    const principal = await ctx.service(ScimTokensService).resolve(token);
    if (!principal) throw new Error('The SCIM token did not resolve');
    people.push({
      org: key,
      key: 'owner',
      id: org.owner.userId,
      userName: `owner@${domain}`,
      displayName: 'Olga Owner',
      givenName: null,
      familyName: null,
      externalId: null,
      contact: `owner@${domain}`,
      active: true,
      created,
      lastModified: created,
    });
    return { key, domain, principal };
  }

  async function provision(org: Org, seed: Seed): Promise<void> {
    const userName = `${seed.key}@${org.domain}`;
    const work = seed.workEmail && `${seed.workEmail}@${org.domain.toUpperCase()}`;
    const created = await service.create(
      org.principal,
      {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User', ENTERPRISE],
        userName,
        active: true,
        ...(seed.displayName ? { displayName: seed.displayName } : {}),
        ...(seed.name ? { name: seed.name } : {}),
        ...(seed.externalId ? { externalId: seed.externalId } : {}),
        // A home address besides the work one: filters compare the work address only.
        ...(work
          ? {
              emails: [
                { value: work, type: 'work', primary: true },
                { value: `${seed.key}@home.example`, type: 'home' },
              ],
            }
          : {}),
      },
      TEST_META,
    );
    const now = ctx.clock.now();
    people.push({
      org: org.key,
      key: seed.key,
      id: created.id as string,
      userName,
      displayName: seed.displayName ?? `${seed.name!.givenName} ${seed.name!.familyName}`,
      givenName: seed.name?.givenName ?? null,
      familyName: seed.name?.familyName ?? null,
      externalId: seed.externalId ?? null,
      contact: work ?? userName,
      active: true,
      created: now,
      lastModified: now,
    });
  }

  const person = (org: Org, key: string) => people.find((p) => p.org === org.key && p.key === key)!;
  const iso = (date: Date) => date.toISOString();
  /** The same instant written with a +02:00 offset. */
  const plusTwo = (date: Date) => `${new Date(date.getTime() + 2 * HOUR).toISOString().slice(0, 19)}+02:00`;

  beforeAll(async () => {
    ctx = await MediumContext.create({ now: T0 });
    service = ctx.service(ScimUsersService);
    acme = await organization('acme');
    ctx.clock.advance(HOUR);
    globex = await organization('globex');
    // One user an hour, the organizations in turn, so that every creation time is distinct.
    for (const seed of SEEDS) {
      for (const org of [acme, globex]) {
        ctx.clock.advance(HOUR);
        await provision(org, seed);
      }
    }
    // A day later Bob is deactivated: his lastModified moves, nobody else's does.
    ctx.clock.advance(24 * HOUR);
    for (const org of [acme, globex]) {
      const bob = person(org, 'bob');
      await service.patch(
        org.principal,
        bob.id,
        {
          schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
          Operations: [{ op: 'replace', path: 'active', value: false }],
        },
        TEST_META,
      );
      bob.active = false;
      bob.lastModified = ctx.clock.now();
    }
  });

  afterAll(async () => ctx?.close());

  /** The ids the service returns for a filter in an organization, with totalResults checked against them. */
  async function returned(org: Org, filter: string): Promise<string[]> {
    const page = await service.list(org.principal, { filter, count: '200' });
    const ids = (page.Resources as { id: string }[]).map((r) => r.id).sort();
    expect(page.totalResults, filter).toBe(ids.length);
    return ids;
  }

  /**
   * The filter returns, in each organization, exactly its own people the predicate holds for. Over both, that must
   * be some people but not all, so that a filter ignored or inverted would fail.
   */
  async function expectFilter(filter: string, predicate: (p: Person) => boolean): Promise<void> {
    const selected = people.filter(predicate).length;
    expect(selected, `${filter} selects nobody`).toBeGreaterThan(0);
    expect(selected, `${filter} selects everybody`).toBeLessThan(people.length);
    for (const org of [acme, globex]) {
      const expected = people
        .filter((p) => p.org === org.key && predicate(p))
        .map((p) => p.id)
        .sort();
      expect(await returned(org, filter), `${org.key}: ${filter}`).toEqual(expected);
    }
  }

  /** The filter returns nobody in either organization. */
  async function expectNobody(filter: string): Promise<void> {
    for (const org of [acme, globex])
      expect(await returned(org, filter), `${org.key}: ${filter}`).toEqual([]);
  }

  it('shows each user with the values and times this file compares them against', async () => {
    expect(people).toHaveLength(2 * (SEEDS.length + 1));
    for (const org of [acme, globex]) {
      const page = await service.list(org.principal, { count: '200' });
      const listed = page.Resources as {
        id: string;
        userName: string;
        displayName: string;
        externalId?: string;
        active: boolean;
        meta: { created: string; lastModified: string };
      }[];
      const own = people.filter((p) => p.org === org.key);
      expect(listed.map((u) => u.id).sort()).toEqual(own.map((p) => p.id).sort());
      for (const p of own) {
        const user = listed.find((u) => u.id === p.id)!;
        expect(user, p.key).toMatchObject({
          userName: p.userName,
          displayName: p.displayName,
          active: p.active,
          meta: { created: iso(p.created), lastModified: iso(p.lastModified) },
        });
        expect(user.externalId ?? null, p.key).toBe(p.externalId);
      }
    }
  });

  it('applies eq, ne, co, sw, ew and pr to strings', async () => {
    await expectFilter('userName eq "bob@acme.example"', (p) => p.userName === 'bob@acme.example');
    await expectFilter('userName eq "bob@globex.example"', (p) => p.userName === 'bob@globex.example');
    await expectFilter('externalId ne "EXT-001"', (p) => p.externalId !== 'EXT-001');
    await expectFilter('name.familyName co "mit"', (p) => !!p.familyName?.toLowerCase().includes('mit'));
    await expectFilter('userName sw "da"', (p) => p.userName.startsWith('da'));
    await expectFilter('displayName ew "smith"', (p) => p.displayName.toLowerCase().endsWith('smith'));
    await expectFilter('externalId pr', (p) => !!p.externalId);
    await expectFilter('name.givenName pr', (p) => !!p.givenName);
    await expectFilter('externalId eq null', (p) => !p.externalId);
    await expectFilter('active eq false', (p) => !p.active);
    await expectFilter('active ne false', (p) => p.active);
  });

  it('compares userName, displayName, names and e-mails case-insensitively, externalId case-exactly (RFC 7643)', async () => {
    await expectFilter(
      'userName eq "ALICE@Acme.Example"',
      (p) => p.userName.toLowerCase() === 'alice@acme.example',
    );
    await expectFilter('displayName eq "dave_ops"', (p) => p.displayName.toLowerCase() === 'dave_ops');
    await expectFilter('name.givenName eq "CAROL"', (p) => p.givenName?.toLowerCase() === 'carol');
    await expectFilter(
      'emails.value eq "alice.work@acme.example"',
      (p) => p.contact.toLowerCase() === 'alice.work@acme.example',
    );
    await expectFilter('userName sw "ALI"', (p) => p.userName.toLowerCase().startsWith('ali'));
    await expectFilter('externalId eq "EXT-001"', (p) => p.externalId === 'EXT-001');
    await expectFilter('externalId eq "ext-002"', (p) => p.externalId === 'ext-002');
    await expectFilter('externalId sw "ext-"', (p) => !!p.externalId?.startsWith('ext-'));
    await expectNobody('externalId eq "ext-001"');
    await expectNobody('externalId eq "EXT-002"');
    // Attribute names, operators and keywords are case-insensitive (RFC 7644 §3.4.2.2).
    await expectFilter(
      'USERNAME EQ "dan@acme.example" OR NAME.FAMILYNAME Eq "liddell"',
      (p) => p.userName === 'dan@acme.example' || p.familyName?.toLowerCase() === 'liddell',
    );
    await expectFilter(
      'urn:ietf:params:scim:schemas:core:2.0:User:userName eq "frank@globex.example"',
      (p) => p.userName === 'frank@globex.example',
    );
  });

  it('matches %, _ and \\ literally in co, sw and ew', async () => {
    await expectFilter('displayName co "100%"', (p) => p.displayName.includes('100%'));
    expect(people.some((p) => p.displayName.includes('1000'))).toBe(true);
    await expectFilter('displayName co "%"', (p) => p.displayName.includes('%'));
    await expectFilter('displayName ew "% smith"', (p) => p.displayName.toLowerCase().endsWith('% smith'));
    await expectFilter('displayName sw "dave_"', (p) => p.displayName.toLowerCase().startsWith('dave_'));
    expect(people.some((p) => p.displayName === 'DaveXOps')).toBe(true);
    await expectFilter('displayName co "_"', (p) => p.displayName.includes('_'));
    await expectFilter('userName co "_"', (p) => p.userName.includes('_'));
    await expectFilter('displayName co "\\\\"', (p) => p.displayName.includes('\\'));
    await expectFilter('displayName co "\\\\ r"', (p) => p.displayName.toLowerCase().includes('\\ r'));
    await expectNobody('displayName co "\\\\%"');
    await expectNobody('displayName sw "%"');
    await expectNobody('displayName ew "_"');
  });

  it('compares meta.created as instants with gt, ge, lt, le, eq and ne, whatever the offset', async () => {
    const carol = person(acme, 'carol_smith').created;
    await expectFilter(`meta.created gt "${iso(carol)}"`, (p) => p.created > carol);
    await expectFilter(`meta.created ge "${iso(carol)}"`, (p) => p.created >= carol);
    await expectFilter(`meta.created lt "${iso(carol)}"`, (p) => p.created < carol);
    await expectFilter(`meta.created le "${iso(carol)}"`, (p) => p.created <= carol);
    await expectFilter(`meta.created eq "${iso(carol)}"`, (p) => p.created.getTime() === carol.getTime());
    await expectFilter(`meta.created eq "${plusTwo(carol)}"`, (p) => p.created.getTime() === carol.getTime());
    await expectFilter(`meta.created ne "${plusTwo(carol)}"`, (p) => p.created.getTime() !== carol.getTime());
    // One millisecond either side of an instant.
    const before = new Date(carol.getTime() - 1);
    const after = new Date(carol.getTime() + 1);
    await expectFilter(
      `meta.created gt "${iso(before)}" and meta.created lt "${iso(after)}"`,
      (p) => p.created > before && p.created < after,
    );
    await expectNobody(`meta.created gt "${iso(new Date(Date.parse(T0) + 365 * 24 * HOUR))}"`);
  });

  it('compares meta.lastModified, which a later change moves', async () => {
    const bob = person(acme, 'bob');
    expect(bob.lastModified.getTime()).toBeGreaterThan(bob.created.getTime());
    const lastCreation = new Date(Math.max(...people.map((p) => p.created.getTime())));
    await expectFilter(`meta.lastModified gt "${iso(lastCreation)}"`, (p) => p.lastModified > lastCreation);
    await expectFilter(
      `meta.lastModified ge "${iso(bob.lastModified)}"`,
      (p) => p.lastModified >= bob.lastModified,
    );
    await expectFilter(
      `meta.lastModified lt "${iso(bob.lastModified)}"`,
      (p) => p.lastModified < bob.lastModified,
    );
    await expectFilter(
      `meta.lastModified le "${plusTwo(lastCreation)}"`,
      (p) => p.lastModified <= lastCreation,
    );
    await expectFilter(
      `meta.lastModified gt "${iso(bob.created)}" and meta.created le "${iso(bob.created)}"`,
      (p) => p.lastModified > bob.created && p.created <= bob.created,
    );
  });

  it('combines comparisons with and, or and not; and binds tighter than or unless grouped', async () => {
    const a = (p: Person) => p.userName.startsWith('a');
    const b = (p: Person) => p.userName.startsWith('b');
    await expectFilter(
      'userName sw "a" or userName sw "b" and active eq true',
      (p) => a(p) || (b(p) && p.active),
    );
    await expectFilter(
      '(userName sw "a" or userName sw "b") and active eq false',
      (p) => (a(p) || b(p)) && !p.active,
    );
    await expectFilter('not (externalId pr)', (p) => !p.externalId);
    await expectFilter(
      'not (displayName co "smith" or displayName co "ops") and name.givenName pr',
      (p) => !/smith|ops/i.test(p.displayName) && !!p.givenName,
    );
    await expectFilter(
      'not (not (active eq true)) and (externalId sw "EXT" or (displayName co "\\\\" and userName sw "f"))',
      (p) =>
        p.active &&
        (!!p.externalId?.startsWith('EXT') || (p.displayName.includes('\\') && p.userName.startsWith('f'))),
    );
  });

  it('filters emails[...] value paths against the work address, the written one or else the userName', async () => {
    await expectFilter(
      'emails[value eq "ALICE.WORK@acme.example"]',
      (p) => p.contact.toLowerCase() === 'alice.work@acme.example',
    );
    await expectFilter('emails[type eq "work" and value sw "frank.desk@"]', (p) =>
      p.contact.toLowerCase().startsWith('frank.desk@'),
    );
    await expectFilter(
      'emails[type eq "work"].value eq "DAVE@acme.example"',
      (p) => p.contact.toLowerCase() === 'dave@acme.example',
    );
    await expectFilter(
      'emails[value ew "@acme.example"] and not (emails[value sw "owner"])',
      (p) => p.contact.toLowerCase().endsWith('@acme.example') && !p.contact.startsWith('owner'),
    );
    await expectFilter('emails.value co ".work@"', (p) => p.contact.toLowerCase().includes('.work@'));
    // The home addresses written beside the work ones are not what the filters compare.
    await expectNobody('emails[value ew "@home.example"]');
    await expectNobody('emails[type eq "home"]');
  });

  it('never returns another organization’s users, though they match the filter there', async () => {
    const ownIds = (org: Org) => people.filter((p) => p.org === org.key).map((p) => p.id);
    const filters = [
      'userName pr',
      'displayName co "smith"',
      'externalId eq "EXT-001"',
      'emails[type eq "work"]',
      `meta.created ge "${T0}"`,
      'not (userName eq "nobody@acme.example")',
    ];
    for (const filter of filters) {
      const inAcme = await returned(acme, filter);
      const inGlobex = await returned(globex, filter);
      expect(inAcme.length, filter).toBeGreaterThan(0);
      expect(inGlobex.length, filter).toBeGreaterThan(0);
      expect(
        inAcme.filter((id) => inGlobex.includes(id)),
        filter,
      ).toEqual([]);
      expect(
        inAcme.every((id) => ownIds(acme).includes(id)),
        filter,
      ).toBe(true);
      expect(
        inGlobex.every((id) => ownIds(globex).includes(id)),
        filter,
      ).toBe(true);
    }
    // An address of the other organization, by userName or e-mail, is nobody here.
    expect(await returned(acme, 'userName eq "alice@globex.example"')).toEqual([]);
    expect(await returned(acme, 'emails[value eq "Alice.Work@globex.example"]')).toEqual([]);
    expect(await returned(globex, 'userName eq "alice@globex.example"')).toEqual([
      person(globex, 'alice').id,
    ]);
  });
});
