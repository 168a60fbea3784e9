import { LEGACY_SUNSET } from '#platform';

const DAY_MS = 86_400_000;
/**
 * Notice promised before the legacy notes routes stop: at least 90 days (docs/compliance-officers.md,
 * "Compliance mapping"; legacy-sunset.spec.ts).
 */
export const LEGACY_NOTES_NOTICE_DAYS = 90;

/**
 * The Sunset of the legacy mapping-notes routes: the date the unversioned mount retires, so clients plan one
 * migration date, unless that is less than 90 days away; then midnight UTC 91 days after today's, which is more
 * than 90 days ahead whatever the time of day.
 */
export function legacyNotesSunset(now: Date): Date {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  const earliest = today + (LEGACY_NOTES_NOTICE_DAYS + 1) * DAY_MS;
  return new Date(Math.max(LEGACY_SUNSET.getTime(), earliest));
}
