import { Inject, Injectable } from '@nestjs/common';
import type { Profile } from '@node-saml/node-saml';
import { isEmail } from 'class-validator';
import {
  type Actor,
  APP_CONFIG,
  type AppConfig,
  AuditLog,
  Clock,
  type RequestMeta,
  TransactionHost,
} from '#platform';
import { OrganizationsRepository } from '../organizations/organizations.repository.js';
import { SessionService } from '../sessions/session.service.js';
import { SessionsRepository } from '../sessions/sessions.repository.js';
import { normaliseEmail } from '../users/email-address.js';
import { UsersRepository } from '../users/users.repository.js';
import { SamlAssertionsRepository } from './saml-assertions.repository.js';
import {
  inflateRedirectMessage,
  REDIRECT_SIG_ALGS,
  redirectParams,
  signedRedirectOctets,
} from './saml-redirect-binding.js';
import {
  ASSERTION_ID_TTL_MS,
  CLOCK_SKEW_MS,
  SAML_REQUEST_TTL_MS,
  SamlServiceProvider,
} from './saml-service-provider.js';
import {
  decodeEnvelope,
  EMAIL_FORMAT,
  type Envelope,
  envelopeOf,
  issuerOf,
  LOGOUT_MAX_BYTES,
  logoutSucceeded,
  XML_ID,
} from './saml-xml.js';
import type { StoredSamlSettings } from './sso-config.types.js';
import type { SamlRequestRow } from './sso.schema.js';

/** An IdP-initiated LogoutRequest is accepted this long after its IssueInstant (and once: its id is kept). */
const LOGOUT_REQUEST_MAX_AGE_MS = SAML_REQUEST_TTL_MS;
/** Organizations tried at most for one IdP-initiated LogoutRequest. */
const LOGOUT_CANDIDATES_MAX = 10;

/** A SAML message refused before a session could be touched: the callback answers 400 (logout) or sso_failed. */
export class SamlRefusal extends Error {}

/**
 * SAML single logout, with the organization's service provider (SamlServiceProvider): the caller's session is
 * revoked and a LogoutRequest built for the IdP; the IdP's signed LogoutResponse ends it (HTTP-POST or
 * HTTP-Redirect); an IdP-initiated signed LogoutRequest revokes the user's sessions in the organization.
 * See docs/identity-administrators.md, "Single sign-on: SAML sign-in and single logout";
 * test/sso-saml-logout-redirect.e2e-spec.ts.
 */
@Injectable()
export class SamlLogoutService {
  constructor(
    private readonly sp: SamlServiceProvider,
    private readonly assertions: SamlAssertionsRepository,
    private readonly sessions: SessionsRepository,
    private readonly sessionService: SessionService,
    private readonly users: UsersRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    @Inject(APP_CONFIG)
    private readonly config: Pick<AppConfig, 'appUrl'>,
  ) {}

  /**
   * `POST /auth/saml/logout/initiate`: revokes the caller's session at once; the IdP's logout URL with a
   * LogoutRequest for the SAML session, or `APP_URL/login?logout=1` when the session was not opened by SAML or the
   * organization has no logout URL.
   */
  async initiate(actor: Actor, meta: RequestMeta): Promise<{ redirectUrl: string }> {
    const done = { redirectUrl: `${this.config.appUrl}/login?logout=1` };
    const session = actor.jti ? await this.sessions.findByJti(actor.jti) : undefined;
    await this.tx.run(async () => {
      await this.sessionService.revokeCurrent(actor);
      await this.audit.record(
        actor,
        'auth.logout',
        { type: 'user', id: actor.userId ?? null },
        { sso: 'saml', initiatedBy: 'sp' },
        meta,
      );
    });
    const found = await this.sp.samlSettings(actor.organizationId);
    if (!found?.saml.logoutUrl || !session?.samlNameId) return done;
    const redirectUrl = await this.sp.provider(actor.organizationId, found.saml, 'logout').getLogoutUrlAsync(
      {
        issuer: this.sp.entityId(actor.organizationId),
        nameID: session.samlNameId,
        nameIDFormat: session.samlNameIdFormat ?? EMAIL_FORMAT,
        ...(session.samlSessionIndex ? { sessionIndex: session.samlSessionIndex } : {}),
      },
      '',
      {},
    );
    return { redirectUrl };
  }

  /**
   * `POST /auth/saml/logout/callback`: the IdP's signed LogoutResponse (→ the dashboard's login page), or an
   * IdP-initiated signed LogoutRequest (the user's sessions in that organization revoked, then the IdP's logout URL
   * with a LogoutResponse). Anything unsigned, wrongly signed or unknown throws SamlRefusal.
   */
  async callback(form: URLSearchParams, meta: RequestMeta): Promise<{ redirectUrl: string }> {
    const response = form.get('SAMLResponse');
    const request = form.get('SAMLRequest');
    if (response) return this.logoutResponse(response);
    if (request) return this.logoutRequest(request, form.get('RelayState') ?? '', meta);
    throw new SamlRefusal('Neither SAMLResponse nor SAMLRequest');
  }

  /**
   * `GET /auth/saml/logout/callback`: the IdP's LogoutResponse on the HTTP-Redirect binding (Entra ID answers
   * SP-initiated logout so), signed in the query: `Signature` over `SAMLResponse=…[&RelayState=…]&SigAlg=…` exactly
   * as sent (SAML bindings §3.4.4.1), with the organization's IdP certificate. Then the same rules as the POST
   * binding. Unsigned, SHA-1, wrongly signed, unknown or malformed: SamlRefusal. An IdP-initiated LogoutRequest is
   * taken on the POST binding only.
   */
  async redirectCallback(rawQuery: string): Promise<{ redirectUrl: string }> {
    const params = refusing(() => redirectParams(rawQuery));
    if (params.has('SAMLRequest')) {
      throw new SamlRefusal('An IdP-initiated LogoutRequest is taken on the HTTP-POST binding only');
    }
    const response = params.get('SAMLResponse');
    const relayState = params.get('RelayState');
    const sigAlg = params.get('SigAlg');
    const signature = params.get('Signature');
    if (!response?.value) throw new SamlRefusal('No SAMLResponse');
    if (!sigAlg?.value || !signature?.value) throw new SamlRefusal('The LogoutResponse is not signed');
    if (!REDIRECT_SIG_ALGS.has(sigAlg.value)) {
      throw new SamlRefusal('SigAlg must be RSA-SHA256, RSA-SHA384 or RSA-SHA512');
    }
    const xml = refusing(() => inflateRedirectMessage(response.value, LOGOUT_MAX_BYTES));
    const envelope = refusing(() => envelopeOf(xml, LOGOUT_MAX_BYTES));
    const { request, found } = await this.logoutResponseContext(envelope);
    // node-saml checks the signature over the query it is given: only the signed parameters, raw, in the binding's
    // order (not the whole query, whose other parameters node-saml would match by substring).
    const signed = signedRedirectOctets(response, relayState, sigAlg);
    const provider = this.sp.provider(request.organizationId, found.saml, 'logout');
    await refusingAsync(() =>
      provider.validateRedirectAsync(
        {
          SAMLResponse: response.value,
          SigAlg: sigAlg.value,
          Signature: signature.value,
          ...(relayState ? { RelayState: relayState.value } : {}),
        },
        signed,
      ),
    );
    return this.acceptLogoutResponse(envelope, request, found);
  }

  private async logoutResponse(encoded: string): Promise<{ redirectUrl: string }> {
    const envelope = refusing(() => decodeEnvelope(encoded, LOGOUT_MAX_BYTES));
    const { request, found } = await this.logoutResponseContext(envelope);
    const provider = this.sp.provider(request.organizationId, found.saml, 'logout');
    await refusingAsync(() => provider.validatePostResponseAsync({ SAMLResponse: encoded }));
    return this.acceptLogoutResponse(envelope, request, found);
  }

  /** A LogoutResponse's request of this service and its organization's SAML settings, before its signature. */
  private async logoutResponseContext(envelope: Envelope) {
    if (envelope.root !== 'LogoutResponse' || !envelope.inResponseTo) {
      throw new SamlRefusal('Not a LogoutResponse to a request of this service');
    }
    const request = await this.sp.pendingRequest(envelope.inResponseTo, 'logout');
    if (!request) throw new SamlRefusal('Unknown or expired InResponseTo');
    const found = await this.sp.samlSettings(request.organizationId);
    if (!found) throw new SamlRefusal('The organization no longer signs in with SAML');
    if (envelope.destination !== this.sp.logoutCallbackUrl) {
      throw new SamlRefusal('LogoutResponse without this service as its Destination');
    }
    return { request, found };
  }

  /** A LogoutResponse whose signature was verified: a success, of the IdP, answering its request once. */
  private async acceptLogoutResponse(
    envelope: Envelope,
    request: SamlRequestRow,
    found: { saml: StoredSamlSettings },
  ): Promise<{ redirectUrl: string }> {
    // Signed as a whole (node-saml requires it for a LogoutResponse): its status and issuer can be read now.
    if (!logoutSucceeded(envelope)) throw new SamlRefusal('The IdP did not log out');
    if (found.saml.idpIssuer && issuerOf(envelope) !== found.saml.idpIssuer) {
      throw new SamlRefusal('LogoutResponse of another issuer');
    }
    if (!(await this.sp.takeRequest(request.organizationId, request.id, 'logout'))) {
      throw new SamlRefusal('InResponseTo already answered');
    }
    return { redirectUrl: `${this.config.appUrl}/login?logout=1` };
  }

  private async logoutRequest(
    encoded: string,
    relayState: string,
    meta: RequestMeta,
  ): Promise<{ redirectUrl: string }> {
    const envelope = refusing(() => decodeEnvelope(encoded, LOGOUT_MAX_BYTES));
    if (envelope.root !== 'LogoutRequest' || !envelope.nameId || !envelope.id || !XML_ID.test(envelope.id)) {
      throw new SamlRefusal('Not a LogoutRequest with an ID and a NameID');
    }
    if (envelope.destination !== this.sp.logoutCallbackUrl) {
      throw new SamlRefusal('LogoutRequest without this service as its Destination');
    }
    const issued = envelope.issueInstant ? Date.parse(envelope.issueInstant) : Number.NaN;
    const now = Date.now(); // the IdP's clock is compared with the real one, as node-saml does
    if (
      Number.isNaN(issued) ||
      issued > now + CLOCK_SKEW_MS ||
      issued < now - LOGOUT_REQUEST_MAX_AGE_MS - CLOCK_SKEW_MS
    ) {
      throw new SamlRefusal('LogoutRequest outside its time window');
    }
    // The organizations this NameID may belong to: those of its SAML sessions, and those of the account it names.
    const candidates = new Set(
      await this.sessions.organizationsOfSamlNameId(envelope.nameId, this.clock.now()),
    );
    if (isEmail(envelope.nameId)) {
      const user = await this.users.findByEmail(normaliseEmail(envelope.nameId));
      if (user) {
        for (const m of await this.organizations.membershipsOf(user.id)) candidates.add(m.organizationId);
      }
    }
    for (const organizationId of [...candidates].sort().slice(0, LOGOUT_CANDIDATES_MAX)) {
      const found = await this.sp.samlSettings(organizationId);
      if (!found) continue;
      const provider = this.sp.provider(organizationId, found.saml, 'logout');
      let profile: Profile | null;
      try {
        ({ profile } = await provider.validatePostRequestAsync({ SAMLRequest: encoded }));
      } catch {
        continue; // not signed by this organization's IdP
      }
      if (!profile) continue;
      // Accepted once: the same signed LogoutRequest again (a captured one) is refused.
      const expiresAt = new Date(this.clock.nowMs() + ASSERTION_ID_TTL_MS);
      if (!(await this.assertions.record(organizationId, `logout:${envelope.id}`, expiresAt))) {
        throw new SamlRefusal('LogoutRequest replayed');
      }
      await this.revokeSamlUser(organizationId, profile, meta);
      if (!found.saml.logoutUrl) return { redirectUrl: `${this.config.appUrl}/login?logout=1` };
      const redirectUrl = await provider.getLogoutResponseUrlAsync(
        profile,
        relayState.slice(0, 1024),
        {},
        true,
      );
      return { redirectUrl };
    }
    throw new SamlRefusal('The LogoutRequest is not signed by the IdP of an organization of that user');
  }

  /** Every session of the users behind this NameID in the organization, revoked and audited. */
  private async revokeSamlUser(organizationId: string, profile: Profile, meta: RequestMeta): Promise<void> {
    const userIds = new Set(await this.sessions.usersOfSamlNameId(organizationId, profile.nameID));
    if (isEmail(profile.nameID)) {
      const user = await this.users.findByEmail(normaliseEmail(profile.nameID));
      if (user && (await this.organizations.membership(organizationId, user.id))) userIds.add(user.id);
    }
    for (const userId of userIds) {
      await this.tx.run(async () => {
        const count = await this.sessionService.revokeAllForUser(userId, { organizationId });
        await this.audit.record(
          { organizationId, actor: { type: 'system', id: 'saml-idp', email: null } },
          'auth.session_revoked',
          { type: 'user', id: userId },
          { all: true, count, sso: 'saml', initiatedBy: 'idp' },
          meta,
        );
      });
    }
  }
}

/** A message refused while it was read (the XML helpers, the redirect binding) is a refusal, for its reason. */
function refusing<T>(run: () => T): T {
  try {
    return run();
  } catch (err) {
    throw new SamlRefusal((err as Error).message.slice(0, 200));
  }
}

async function refusingAsync<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw new SamlRefusal(`Refused: ${(err as Error).message.slice(0, 200)}`);
  }
}
