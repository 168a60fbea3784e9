import { describe, expect, it } from 'vitest';
import { parseScimFilter } from './parser.js';
import { ALL_IDS, ATTRIBUTES, memoryIds, useFixtureDatabase } from './shared.fixture.js';
import { compileScimFilter } from './to-sql.js';

// The rows each filter selects from the fixture users, in SQL on PGlite and in memory: both give the expected ids.
describe('against PostgreSQL (PGlite)', () => {
  const sqlIds = useFixtureDatabase();

  const not = (ids: number[]) => ALL_IDS.filter((id) => !ids.includes(id));

  it.each([
    ['userName eq "ALICE"', [1]],
    ['userName eq "émile"', [5]],
    ['userName ne "alice"', not([1])],
    ['externalId eq "ext-001"', []],
    ['externalId eq "EXT-001"', [1]],
    ['externalId ne "EXT-001"', not([1])],
    ['displayName co "100%"', [3]],
    ['displayName co "%"', [3]],
    ['userName co "_"', [3]],
    ['emails.value co "%x_"', [8]],
    [String.raw`userName co "\\"`, [4]],
    [String.raw`userName sw "DAVE\\"`, [4]],
    [`displayName co "o'b"`, [2]],
    [String.raw`displayName co "\"z\""`, [6]],
    ['name.familyName eq "σίσυφοσ"', [6]],
    ['name.familyName sw "σί"', [6]],
    ['name.familyName ew "SZ"', [8]],
    ['name.familyName sw "ł"', [8]],
    ['emails.value ew "EXAMPLE.COM"', [1, 3, 6, 7, 8]],
    ['emails sw "bob@example"', [2]],
    ['userName gt "d"', [4, 5, 6, 7, 8]],
    ['userName lt "c"', [1, 2]],
    ['userName le "bob"', [1, 2]],
    ['userName ge "eve"', [5, 6, 7, 8]],
    ['active eq true', [1, 3, 5, 7]],
    ['active eq false', [2, 6, 8]],
    ['active ne true', [2, 4, 6, 8]],
    ['active ne false', [1, 3, 4, 5, 7]],
    ['active pr', not([4])],
    ['active eq null', [4]],
    ['displayName pr', [1, 2, 3, 4, 5, 6]],
    ['externalId pr', [1, 2, 4, 6, 7]],
    ['externalId eq null', [3, 5, 8]],
    ['externalId ne null', [1, 2, 4, 6, 7]],
    ['meta.created eq "2024-01-01T00:00:00Z"', [1, 6]],
    ['meta.created eq "2024-01-01T01:00:00+01:00"', [1, 6]],
    ['meta.created gt "2024-01-01T00:00:00Z"', [2, 4, 7]],
    ['meta.created ge "2024-01-01T00:00:00.000Z"', [1, 2, 4, 6, 7]],
    ['meta.created lt "2024-01-01T00:00:00Z"', [3, 5]],
    ['meta.created le "2023-12-31T23:59:59.5Z"', [3, 5]],
    ['meta.created ne "2024-01-01T00:00:00Z"', [2, 3, 4, 5, 7, 8]],
    ['meta.lastModified pr', [1, 3, 4, 5, 7]],
    ['not (meta.lastModified pr)', [2, 6, 8]],
    ['userName eq "alice" or userName eq "bob" and active eq true', [1]],
    ['(userName eq "alice" or userName eq "bob") and active eq false', [2]],
    ['not (active eq true) and emails.value co "example.com"', [6, 8]],
    ['not (displayName co "o")', [1, 4, 7, 8]],
    ['not (externalId eq "EXT-004")', not([4])],
    ['emails[value ew "example.com" and type eq "work"]', [1, 3, 6, 7, 8]],
    ['emails[type eq "home"]', []],
    ['EMAILS[VALUE SW "ALICE"]', [1]],
    ['urn:ietf:params:scim:schemas:core:2.0:User:name.givenName eq "dave"', [4]],
    ['name.givenName eq null', [7]],
    ['USERNAME EQ "bob" OR DisplayName Co "zola"', [2, 5]],
  ])('%s', async (filter, expected) => {
    const node = parseScimFilter(filter);
    const ids = await sqlIds(compileScimFilter(node, ATTRIBUTES));
    expect(ids).toEqual(expected);
    expect(memoryIds(node)).toEqual(expected);
  });
});
