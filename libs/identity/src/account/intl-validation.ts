import { ValidateBy, type ValidationOptions } from 'class-validator';

/** Longest locale tag and zone name the users table stores (varchar 35 and 64). */
export const LOCALE_MAX_LENGTH = 35;
export const TIMEZONE_MAX_LENGTH = 64;

// IANA names are area/location paths of letters, digits, `_`, `-` and `+` ("Europe/Paris", "Etc/GMT+5",
// "UTC"); the shape check keeps out UTC offsets ("+01:00"), which newer engines accept as a time zone.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

/** The BCP 47 tag in canonical form ("en-us" → "en-US"), or undefined when the tag is not well-formed. */
export function canonicalLocale(value: string): string | undefined {
  if (value.length === 0 || value.length > LOCALE_MAX_LENGTH) return undefined;
  try {
    const [canonical] = Intl.getCanonicalLocales(value);
    return canonical && canonical.length <= LOCALE_MAX_LENGTH ? canonical : undefined;
  } catch {
    return undefined;
  }
}

let zoneSpellings: Map<string, string> | undefined;

/** The runtime's own spelling of a zone name it lists, looked up without regard to case. */
function listedSpelling(value: string): string | undefined {
  zoneSpellings ??= new Map(
    [...Intl.supportedValuesOf('timeZone'), 'UTC'].map((zone) => [zone.toLowerCase(), zone]),
  );
  return zoneSpellings.get(value.toLowerCase());
}

/**
 * The IANA time zone to store, or undefined when the time-zone database does not know the name. The name is
 * kept as given ("Asia/Kolkata", "US/Eastern"): the engine would resolve it to ICU's legacy canonical id
 * ("Asia/Calcutta", "America/New_York"), which would rename the user's choice. Only the letter case is
 * corrected, when the runtime lists the zone ("europe/paris" → "Europe/Paris").
 */
export function normaliseTimeZone(value: string): string | undefined {
  if (value.length > TIMEZONE_MAX_LENGTH || !ZONE_NAME.test(value)) return undefined;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
  } catch {
    return undefined;
  }
  return listedSpelling(value) ?? value;
}

export function IsBcp47Locale(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isBcp47Locale',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && canonicalLocale(value) !== undefined,
        defaultMessage: () => 'locale must be a BCP 47 language tag such as "en" or "de-CH"',
      },
    },
    options,
  );
}

export function IsIanaTimeZone(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isIanaTimeZone',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && normaliseTimeZone(value) !== undefined,
        defaultMessage: () => 'timezone must be an IANA time zone such as "Europe/Paris" or "UTC"',
      },
    },
    options,
  );
}
