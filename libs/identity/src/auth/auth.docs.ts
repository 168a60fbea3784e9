import { getSchemaPath } from '@nestjs/swagger';
import type { EndpointDoc } from '#platform';
import { SSO_REQUIRED } from './auth.errors.js';
import { LoginResultDto, MfaChallengeDto } from './dto/auth.dto.js';

/** The OpenAPI text of the sign-up and sign-in routes (auth.controller.ts), kept out of the controller. */

/** A login answer: `{token, user}`, or the MFA challenge when the user has MFA enabled. */
export const LOGIN_RESPONSE = {
  responses: [
    {
      status: 200,
      description: '`{token, user}`, or `{mfaRequired: true, tempToken}` when the user has MFA enabled',
      schema: {
        type: 'object',
        properties: {
          success: { type: 'boolean', enum: [true] },
          data: {
            oneOf: [{ $ref: getSchemaPath(LoginResultDto) }, { $ref: getSchemaPath(MfaChallengeDto) }],
          },
        },
      },
    },
  ],
  models: [LoginResultDto, MfaChallengeDto],
} satisfies Pick<EndpointDoc, 'responses' | 'models'>;

export const AUTH_DOCS = {
  register:
    'Creates the user, an organization on the default plan with the user as owner, and a session. Writes `auth.register`.',
  login:
    'Writes `auth.login` with `metadata.method = "password"`. The session opens in the oldest active membership ' +
    'whose organization does not enforce SSO for the address. When every one does, 403 `SSO_REQUIRED`, except ' +
    'for an owner with TOTP: the break-glass path answers the MFA step, and `mfa/login` writes ' +
    '`auth.sso_break_glass` and mails the other owners.',
  logout: 'Blacklists the caller’s jti for its remaining lifetime. Writes `auth.logout`.',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const AUTH_ERRORS = {
  register: { 409: 'EMAIL_IN_USE (the e-mail address is already registered)' },
  login: {
    401:
      'INVALID_CREDENTIALS (wrong e-mail or password, same body either way), ACCOUNT_DEACTIVATED (no active ' +
      'membership), ORGANIZATION_DELETED (every active membership is in a deleted organization)',
    403: SSO_REQUIRED,
  },
} as const;
