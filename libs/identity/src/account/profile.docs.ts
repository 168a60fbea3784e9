import type { ApiResponseOptions } from '@nestjs/swagger';
import { SSO_REQUIRED } from '../auth/auth.errors.js';
import { PREFERENCES_MAX_BYTES, PREFERENCES_MAX_DEPTH } from './preferences-merge.js';
import { LOGIN_ACTIVITY_PAGE } from './profile.service.js';

/** The OpenAPI text of the profile routes (profile.controller.ts), kept out of the controller. */

const PREFERENCES_SCHEMA = {
  type: 'object',
  additionalProperties: true,
  example: { notifications: { weeklyDigest: false }, theme: 'dark' },
} as const;

/** The preferences, free-form, in the success envelope. */
const preferencesAnswer = (description: string): ApiResponseOptions[] => [
  {
    status: 200,
    description,
    schema: {
      type: 'object',
      properties: { success: { type: 'boolean', enum: [true] }, data: PREFERENCES_SCHEMA },
    },
  },
];

/** A JSON Merge Patch of the preferences. */
export const PREFERENCES_BODY = { schema: PREFERENCES_SCHEMA };

export const PROFILE_RESPONSES = {
  preferences: preferencesAnswer('`{success: true, data: <preferences object>}`'),
  updatePreferences: preferencesAnswer('`{success: true, data: <merged preferences>}`'),
};

export const PROFILE_DOCS = {
  organizations: 'Organizations with an active membership of the caller, oldest membership first.',
  switchOrganization:
    'Mints a token bound to an organization where the caller’s membership is active; the presented token stays ' +
    'valid. Writes `auth.org_switched` in the target organization; its id is the new session id.',
  updateProfile:
    '`locale` is a BCP 47 tag (stored in canonical form), `timezone` an IANA zone name. Writes `user.profile_updated` ' +
    'when something changes.',
  updatePreferences:
    'The body is a JSON Merge Patch (RFC 7396): members merge recursively, `null` removes a member, other values ' +
    `replace. Patch and result are each limited to ${PREFERENCES_MAX_BYTES} bytes of JSON and ${PREFERENCES_MAX_DEPTH} ` +
    'levels of nesting. Returns the merged preferences. Writes `user.preferences_updated` naming the members touched.',
  loginActivity: `Successful and failed logins on the caller’s account, newest first; limit default ${LOGIN_ACTIVITY_PAGE.limit}, at most ${LOGIN_ACTIVITY_PAGE.max} (larger values are clamped).`,
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const PROFILE_ERRORS = {
  switchOrganization: {
    403:
      `FORBIDDEN (the presented session came through another organization’s SSO); ${SSO_REQUIRED}: into an ` +
      'organization that enforces SSO for the caller’s address',
    404: 'NOT_FOUND (unknown organization, or no active membership of the caller in it)',
  },
} as const;
