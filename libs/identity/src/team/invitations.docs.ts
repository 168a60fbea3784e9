import { getSchemaPath } from '@nestjs/swagger';
import { type EndpointDoc, objectIdParam } from '#platform';
import { MfaChallengeDto } from '../auth/dto/auth.dto.js';
import { AcceptedInvitationDto } from './dto/invitation.dto.js';

/** The OpenAPI text of the invitation routes (invitations.controller.ts), kept out of the controller. */

export const INVITATION_ID = objectIdParam('id', 'Invitation id');
export const INVITATION_TOKEN = { name: 'token', description: 'The token from the invitation e-mail link.' };

const NOT_FOUND = {
  404: 'NOT_FOUND (no pending invitation with this id in the caller’s organization: unknown, revoked or accepted)',
};
const ALREADY_MEMBER =
  'VALIDATION_ERROR (invalid body; with `reason: "ALREADY_MEMBER"` when the e-mail is a member or has a pending, ' +
  'unexpired invitation)';
const OWNER_INVITE = { 403: 'FORBIDDEN (role lacks permission; only an owner may invite an owner)' };

/** An accept answer: the session, or the MFA challenge when the existing account has MFA enabled. */
export const ACCEPT_RESPONSE = {
  responses: [
    {
      status: 200,
      description:
        '`{token, user, organization, role}`, or `{mfaRequired: true, tempToken}` when the existing account has ' +
        'MFA enabled (finish with `/auth/mfa/login`; the session opens in the inviting organization)',
      schema: {
        type: 'object',
        properties: {
          success: { type: 'boolean', enum: [true] },
          data: {
            oneOf: [{ $ref: getSchemaPath(AcceptedInvitationDto) }, { $ref: getSchemaPath(MfaChallengeDto) }],
          },
        },
      },
    },
  ],
  models: [AcceptedInvitationDto, MfaChallengeDto],
} satisfies Pick<EndpointDoc, 'responses' | 'models'>;

export const INVITATION_DOCS = {
  create:
    'Owner or admin; only an owner may invite with role `owner`. Role defaults to `member`. The invitation ' +
    'expires 7 days after creation. The token is only e-mailed, as the link `APP_URL/invite/<token>`; the ' +
    'response never carries it. Writes `team.invite.created`.',
  list:
    'Owner or admin. Pending invitations that have not expired, newest first. Paginated: limit default 50, ' +
    'max 100.',
  revoke:
    'Owner or admin. The invitation is kept, revoked: validating its token answers `reason: "revoked"` and ' +
    'accepting it answers 404. Writes `team.invite.revoked`.',
  resend:
    'Owner or admin (an owner for an invitation with role `owner`). Mails the same token again and resets the ' +
    'expiry to 7 days from now; a pending invitation that has already expired can be resent. A revoked or ' +
    'accepted invitation is 404. Writes `team.invite.resent`.',
  validate:
    'Public. `{valid: true, organizationName, role, inviterEmail}`, or `{valid: false, reason}` with reason ' +
    '`expired`, `revoked`, `used` or `not_found` (an invalid token never reveals the organization).',
  accept:
    'The token is the credential for the mailbox only, so what else is needed depends on the ' +
    'account the invited address has:\n\n' +
    '- **none**: `{name, password}` (password policy applies) create it;\n' +
    '- **an account whose address was proven** (`emailVerifiedAt`: a confirmed sign-up, a magic link, a reset, ' +
    'an earlier invitation, a verified social address): be signed in as that account (`Authorization: Bearer`, ' +
    'a session not scoped to another organization’s SSO) or send its `password`; else 401. `name` is not used;\n' +
    '- **an account whose address was never proven** (a registration nobody confirmed, an account an IdP or ' +
    'SCIM created): the token is the proof. `{name, password}` are required and replace the account’s name and ' +
    'password; its TOTP and any social or SSO link are removed, and every session and outstanding e-mailed token ' +
    'of it is revoked.\n\n' +
    'A password sent is always checked (a wrong one is 401 INVALID_CREDENTIALS). Creates the membership with ' +
    'the invited role, marks the invitation accepted (single use), writes `team.invite.accepted` (`newUser`, ' +
    '`claimed`) and opens a session in the inviting organization (`auth.login` with method `invite`). An account ' +
    'with MFA enabled gets `{mfaRequired, tempToken}` instead, to finish with `/auth/mfa/login`. When the ' +
    'organization enforces its SSO for the invited address, the membership is created and the answer is 403 ' +
    '`SSO_REQUIRED`: the new member signs in through the IdP.',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const INVITATION_ERRORS = {
  create: { 400: ALREADY_MEMBER, ...OWNER_INVITE },
  notFound: NOT_FOUND,
  resend: {
    ...NOT_FOUND,
    ...OWNER_INVITE,
    400: 'VALIDATION_ERROR with `reason: "ALREADY_MEMBER"` (the e-mail became a member or was invited again)',
  },
  accept: {
    400:
      'VALIDATION_ERROR (name or password missing or invalid for a new or unproven account; with ' +
      '`reason: "ALREADY_MEMBER"` when the account is already a member), INVITE_ALREADY_USED, INVITE_EXPIRED',
    401:
      'UNAUTHORIZED (the address has a proven account and the caller neither is signed in as it nor sent its ' +
      'password; or an invalid bearer), INVALID_CREDENTIALS (wrong password), ACCOUNT_DEACTIVATED',
    403:
      'REAUTHENTICATION_REQUIRED (the session was opened by another organization’s SSO); SSO_REQUIRED (joined; ' +
      'the organization enforces SSO for the address, `details.ssoUrl` is where sign-in starts)',
    404: 'NOT_FOUND (unknown or revoked invitation)',
    409: 'EMAIL_IN_USE (an account for the e-mail was created at the same moment; retry)',
  },
} as const;
