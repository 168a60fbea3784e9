import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { type CacheProvider, type Profile, SAML, ValidateInResponseTo } from '@node-saml/node-saml';
import { DOMParser, type Element } from '@xmldom/xmldom';
import { isEmail } from 'class-validator';
import { and, eq, gt, lt } from 'drizzle-orm';
import {
  type Actor,
  APP_CONFIG,
  type AppConfig,
  AppError,
  AuditLog,
  Clock,
  deleteInBatches,
  ErrorCode,
  isObjectId,
  JobScheduler,
  type RequestMeta,
  safeEqual,
  sha256Hex,
  TransactionHost,
} from '#platform';
import { OrganizationsRepository } from '../organizations/organizations.repository.js';
import { SessionService } from '../sessions/session.service.js';
import { SessionsRepository } from '../sessions/sessions.repository.js';
import { UsersRepository } from '../users/users.repository.js';
import { GROUPS_MAX } from './role-mapping.js';
import {
  inflateRedirectMessage,
  REDIRECT_SIG_ALGS,
  redirectParams,
  signedRedirectOctets,
} from './saml-redirect-binding.js';
import type { SignInOutcome } from './sign-in-hand-off.js';
import type { SsoSettings, StoredSamlSettings } from './sso-config.types.js';
import { SsoFailure, SsoSignIn } from './sso-sign-in.js';
import { samlAssertions, samlRequests, type SamlRequestRow } from './sso.schema.js';
import { normaliseEmail } from '../users/email-address.js';

/**
 * An AuthnRequest's answer may come this long after it was sent (test/sso-saml.e2e-spec.ts); a LogoutRequest's too.
 */
export const SAML_REQUEST_TTL_MS = 10 * 60_000;
/** The clock skew tolerated on an assertion's time window. */
const CLOCK_SKEW_MS = 60_000;
/** An assertion is refused this long after its IssueInstant whatever its NotOnOrAfter says... */
const MAX_ASSERTION_AGE_MS = 24 * 3_600_000;
/** ...so its id is remembered this long, which covers every assertion that could still be accepted. */
const ASSERTION_ID_TTL_MS = MAX_ASSERTION_AGE_MS + 2 * CLOCK_SKEW_MS;
/** Largest SAML message read (the form itself is bounded at 5 MB). */
const MESSAGE_MAX_CHARS = 5 * 1024 * 1024;
/**
 * Largest logout message, decoded, and its elements at most: real ones are a few kilobytes, and node-saml checks a
 * LogoutRequest's signature with an XPath search whose cost grows with the square of the document.
 */
const LOGOUT_MAX_BYTES = 64 * 1024;
const LOGOUT_MAX_ELEMENTS = 200;
/** An IdP-initiated LogoutRequest is accepted this long after its IssueInstant (and once: its id is kept). */
const LOGOUT_REQUEST_MAX_AGE_MS = SAML_REQUEST_TTL_MS;
/** An XML ID as this service and the IdPs write them (InResponseTo names one of ours). */
const XML_ID = /^[A-Za-z_][\w.-]{0,127}$/;
const NAME_ID_MAX = 512;
const PURGE_INTERVAL_MS = 3_600_000;
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
/** Where an IdP may put the e-mail when the NameID is not one: `email`, then the usual claim and OID names. */
const EMAIL_ATTRIBUTES = [
  'email',
  'mail',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
  'urn:oid:0.9.2342.19200300.100.1.3',
];
const NAME_ATTRIBUTES = ['name', 'displayName', 'http://schemas.microsoft.com/identity/claims/displayname'];
/** Organizations tried at most for one IdP-initiated LogoutRequest. */
const LOGOUT_CANDIDATES_MAX = 10;

/**
 * A refusal of the public routes that take an organization id (initiate, metadata) is answered no sooner than this
 * after the request reached the service: an unknown organization costs one query, one with OIDC three, and the
 * difference should not tell a stranger which ids exist or how they sign in.
 */
const PUBLIC_REFUSAL_MS = 40;
/** Every refusal of initiate and metadata is this one (the same status and body whatever the reason). */
const noSaml = () => new AppError(404, ErrorCode.NOT_FOUND, 'This organization does not sign in with SAML');

/** What node-saml's request cache starts from: the browser of a new AuthnRequest, or the request already read. */
interface CacheOptions {
  browserHash?: string | null;
  known?: SamlRequestRow;
}

/** A SAML message refused before a session could be touched: the callback answers 400 (logout) or sso_failed. */
export class SamlRefusal extends Error {}

/** The root of a SAML message, read before its signature is checked, only to find whose it is. */
interface Envelope {
  root: string;
  inResponseTo: string | null;
  destination: string | null;
  nameId: string | null;
  id: string | null;
  issueInstant: string | null;
  /** The parsed root element (for reading the root's direct children once the message is verified). */
  root_: Element;
}

/** The trimmed text of the first direct child element `localName` of `parent`, or undefined. */
function childElement(parent: Element, localName: string): Element | undefined {
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === 1 && (node as Element).localName === localName) return node as Element;
  }
  return undefined;
}
const hasControlCharacter = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 0x20) return true;
  return false;
};
const childText = (parent: Element, localName: string): string | undefined =>
  childElement(parent, localName)?.textContent?.trim();

type XmlNode = Record<string, unknown> & { $?: Record<string, string>; _?: string };

/** The first child element `name` of an xml2js node, and the text or attributes of nodes. */
const child = (node: unknown, name: string): XmlNode | undefined => {
  const list = (node as Record<string, unknown> | undefined)?.[name];
  return Array.isArray(list) ? (list[0] as XmlNode) : undefined;
};
const children = (node: unknown, name: string): XmlNode[] => {
  const list = (node as Record<string, unknown> | undefined)?.[name];
  return Array.isArray(list) ? (list as XmlNode[]) : [];
};

/** An attribute's values as strings (a single value or a list), bounded. */
function attributeValues(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list.filter((v): v is string => typeof v === 'string').slice(0, GROUPS_MAX);
}

/**
 * SAML 2.0 single sign-on and single logout with `@node-saml/node-saml`, one service provider per
 * organization (entity id `PUBLIC_URL/api/v1/auth/saml/metadata/:orgId`, one ACS for all).
 *
 * - AuthnRequests go out on the HTTP-Redirect binding (signed when `SAML_SP_SIGNING_KEY` is set); their ids are
 *   rows of `saml_requests` for 10 minutes.
 * - A response names its organization through InResponseTo: the row gives the organization, whose certificate,
 *   audience and issuer then check it. A signed response or a signed assertion is required (node-saml verifies the
 *   signature over the very element it then reads, which defeats signature wrapping); the time window with a
 *   minute of skew; the audience; the signed assertion's Recipient and InResponseTo; the response's Destination.
 *   The request row is taken and the assertion id recorded in one transaction, so each is accepted once across
 *   replicas.
 * - Encrypted assertions are decrypted with `SAML_SP_DECRYPTION_KEY` (the metadata then advertises its certificate).
 * - Single logout: the caller's session is revoked and a LogoutRequest built for the IdP; the IdP's signed
 *   LogoutResponse ends it; an IdP-initiated signed LogoutRequest revokes the user's sessions in the organization.
 * See docs/identity-administrators.md, "Single sign-on: SAML sign-in and single logout"; test/sso-saml.e2e-spec.ts.
 */
@Injectable()
export class SamlLoginService implements OnModuleInit {
  constructor(
    private readonly signIns: SsoSignIn,
    private readonly sessions: SessionsRepository,
    private readonly sessionService: SessionService,
    private readonly users: UsersRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly scheduler: JobScheduler,
    @Inject(APP_CONFIG)
    private readonly config: Pick<AppConfig, 'appUrl' | 'publicUrl' | 'samlSp'>,
  ) {}

  onModuleInit(): void {
    this.scheduler.register({
      name: 'saml-requests-purge',
      intervalMs: PURGE_INTERVAL_MS,
      run: async () => {
        const now = this.clock.now();
        const requests = await deleteInBatches(
          this.tx.db,
          samlRequests,
          samlRequests.id,
          lt(samlRequests.expiresAt, now),
          1000,
        );
        const assertions = await deleteInBatches(
          this.tx.db,
          samlAssertions,
          samlAssertions.assertionId,
          lt(samlAssertions.expiresAt, now),
          1000,
        );
        return requests + assertions;
      },
    });
  }

  get acsUrl(): string {
    return `${this.config.publicUrl}/api/v1/auth/saml/callback`;
  }

  get logoutCallbackUrl(): string {
    return `${this.config.publicUrl}/api/v1/auth/saml/logout/callback`;
  }

  entityId(organizationId: string): string {
    return `${this.config.publicUrl}/api/v1/auth/saml/metadata/${organizationId}`;
  }

  /** The organization's SAML settings when it may sign in with SAML now, else undefined. */
  async samlSettings(
    organizationId: string,
  ): Promise<{ settings: SsoSettings; saml: StoredSamlSettings } | undefined> {
    const settings = await this.signIns.usable(organizationId);
    if (settings?.config.provider !== 'saml' || !settings.config.saml) return undefined;
    return { settings, saml: settings.config.saml };
  }

  /**
   * The SAML settings of an organization for a public route, or the one refusal: an unknown, malformed or deleted
   * organization, one without SSO or without the plan's `sso`, and one with OIDC all get the same 404, no sooner than
   * PUBLIC_REFUSAL_MS after the call, so that neither the answer nor its time tells them apart.
   */
  private async publicSamlSettings(
    organizationId: string,
  ): Promise<{ settings: SsoSettings; saml: StoredSamlSettings }> {
    const started = performance.now();
    const found = isObjectId(organizationId) ? await this.samlSettings(organizationId) : undefined;
    if (found) return found;
    const wait = started + PUBLIC_REFUSAL_MS - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    throw noSaml();
  }

  /** `POST /auth/saml/initiate`: the entry point with an AuthnRequest; 404 for an organization without SAML. */
  async initiate(organizationId: string): Promise<{ redirectUrl: string; binding: string }> {
    const found = await this.publicSamlSettings(organizationId);
    return this.authorizeUrl(organizationId, found.saml);
  }

  /**
   * The IdP's entry point carrying a deflated AuthnRequest whose id is kept 10 minutes, with the browser binding to
   * set as the `svc_saml_binding` cookie (its hash is kept with the request).
   */
  async authorizeUrl(
    organizationId: string,
    saml: StoredSamlSettings,
  ): Promise<{ redirectUrl: string; binding: string }> {
    const binding = randomBytes(32).toString('base64url');
    const redirectUrl = await this.provider(organizationId, saml, 'authn', {
      browserHash: sha256Hex(binding),
    }).getAuthorizeUrlAsync('', undefined, {});
    return { redirectUrl, binding };
  }

  /** The SP metadata of an organization with SAML; the same 404 as initiate otherwise (malformed ids included). */
  async metadata(organizationId: string): Promise<string> {
    const found = await this.publicSamlSettings(organizationId);
    const { decryption, signing } = this.config.samlSp;
    return this.provider(organizationId, found.saml, 'authn').generateServiceProviderMetadata(
      decryption?.cert ?? null,
      signing?.cert ?? null,
    );
  }

  /** The ACS: verifies the response and signs the user in, or throws SsoFailure. */
  async callback(
    form: URLSearchParams,
    binding: string | undefined,
    meta: RequestMeta,
  ): Promise<SignInOutcome> {
    const encoded = form.get('SAMLResponse');
    if (!encoded) throw new SsoFailure('no SAMLResponse');
    const envelope = this.envelope(encoded);
    if (envelope.root !== 'Response') throw new SsoFailure('not a SAML Response');
    if (!envelope.inResponseTo) throw new SsoFailure('unsolicited response (no InResponseTo)');
    const request = await this.pendingRequest(envelope.inResponseTo, 'authn');
    if (!request) throw new SsoFailure('unknown or expired InResponseTo');
    // Posted by the browser that started the sign-in (no login CSRF: someone else's response pushed to it).
    if (!binding || !request.browserHash || !safeEqual(sha256Hex(binding), request.browserHash)) {
      throw new SsoFailure('response posted from another browser');
    }
    const organizationId = request.organizationId;
    const found = await this.samlSettings(organizationId);
    if (!found) throw new SsoFailure('SSO is no longer configured with SAML');
    const { settings, saml } = found;
    if (envelope.destination !== null && envelope.destination !== this.acsUrl) {
      throw new SsoFailure('response sent to another Destination');
    }
    let profile: Profile | null;
    try {
      ({ profile } = await this.provider(organizationId, saml, 'authn', {
        known: request,
      }).validatePostResponseAsync({
        SAMLResponse: encoded,
      }));
    } catch (err) {
      throw new SsoFailure(`response refused: ${(err as Error).message.slice(0, 200)}`);
    }
    if (!profile) throw new SsoFailure('no assertion in the response');
    if (typeof profile.nameID !== 'string' || profile.nameID === '' || profile.nameID.length > NAME_ID_MAX) {
      throw new SsoFailure('assertion without a usable NameID');
    }
    // The verified assertion, as xml2js read it (the root element is not wrapped in a list).
    const assertion = (profile.getAssertion?.() as { Assertion?: XmlNode } | undefined)?.Assertion;
    const assertionId = assertion?.$?.ID;
    if (!assertion || !assertionId || assertionId.length > 256) throw new SsoFailure('assertion without ID');
    if (saml.idpIssuer && profile.issuer !== saml.idpIssuer)
      throw new SsoFailure('assertion of another issuer');
    this.checkSubjectConfirmation(assertion, envelope.inResponseTo);
    const email = this.emailOf(profile);
    const groups = attributeValues(this.attribute(profile, saml.groupsAttribute));
    const name =
      NAME_ATTRIBUTES.map((a) => this.attribute(profile, a)).find(
        (v): v is string => typeof v === 'string' && v.trim() !== '',
      ) ?? email.split('@')[0]!;

    await this.tx.run(async () => {
      // The request and the assertion, each once: concurrent replays find the row gone or the id taken.
      if (!(await this.takeRequest(request.id, organizationId, 'authn'))) {
        throw new SsoFailure('InResponseTo already answered');
      }
      const [recorded] = await this.tx.db
        .insert(samlAssertions)
        .values({
          organizationId,
          assertionId,
          expiresAt: new Date(this.clock.nowMs() + ASSERTION_ID_TTL_MS),
        })
        .onConflictDoNothing()
        .returning({ id: samlAssertions.assertionId });
      if (!recorded) throw new SsoFailure('assertion replayed');
    });
    return this.signIns.signIn(
      organizationId,
      'saml',
      settings,
      {
        email,
        name: name.trim().slice(0, 200),
        subject: `saml:${profile.nameID}`,
        groups,
        saml: {
          nameId: profile.nameID,
          nameIdFormat: profile.nameIDFormat?.slice(0, 256) ?? null,
          sessionIndex: profile.sessionIndex?.slice(0, 256) ?? null,
        },
      },
      meta,
    );
  }

  /**
   * `POST /auth/saml/logout/initiate`: revokes the caller's session at once; the IdP's logout URL with a
   * LogoutRequest for the SAML session, or `APP_URL/login?logout=1` when the session was not opened by SAML or the
   * organization has no logout URL.
   */
  async logoutInitiate(actor: Actor, meta: RequestMeta): Promise<{ redirectUrl: string }> {
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
    const found = await this.samlSettings(actor.organizationId);
    if (!found?.saml.logoutUrl || !session?.samlNameId) return done;
    const redirectUrl = await this.provider(actor.organizationId, found.saml, 'logout').getLogoutUrlAsync(
      {
        issuer: this.entityId(actor.organizationId),
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
  async logoutCallback(form: URLSearchParams, meta: RequestMeta): Promise<{ redirectUrl: string }> {
    const response = form.get('SAMLResponse');
    const request = form.get('SAMLRequest');
    if (response) return this.logoutResponse(response);
    if (request) return this.logoutRequest(request, form.get('RelayState') ?? '', meta);
    throw new SamlRefusal('Neither SAMLResponse nor SAMLRequest');
  }

  private async logoutResponse(encoded: string): Promise<{ redirectUrl: string }> {
    const envelope = this.refusing(() => this.envelope(encoded, LOGOUT_MAX_BYTES));
    const { request, found } = await this.logoutResponseContext(envelope);
    const provider = this.provider(request.organizationId, found.saml, 'logout');
    await this.refusingAsync(() => provider.validatePostResponseAsync({ SAMLResponse: encoded }));
    return this.acceptLogoutResponse(envelope, request, found);
  }

  /**
   * `GET /auth/saml/logout/callback`: the IdP's LogoutResponse on the HTTP-Redirect binding (Entra ID answers
   * SP-initiated logout so), signed in the query: `Signature` over `SAMLResponse=…[&RelayState=…]&SigAlg=…` exactly
   * as sent (SAML bindings §3.4.4.1), with the organization's IdP certificate. Then the same rules as the POST
   * binding. Unsigned, SHA-1, wrongly signed, unknown or malformed: SamlRefusal. An IdP-initiated LogoutRequest is
   * taken on the POST binding only.
   */
  async logoutRedirect(rawQuery: string): Promise<{ redirectUrl: string }> {
    const params = this.refusing(() => redirectParams(rawQuery));
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
    const xml = this.refusing(() => inflateRedirectMessage(response.value, LOGOUT_MAX_BYTES));
    const envelope = this.refusing(() => this.envelopeOf(xml, LOGOUT_MAX_BYTES));
    const { request, found } = await this.logoutResponseContext(envelope);
    // node-saml checks the signature over the query it is given: only the signed parameters, raw, in the binding's
    // order (not the whole query, whose other parameters node-saml would match by substring).
    const signed = signedRedirectOctets(response, relayState, sigAlg);
    const provider = this.provider(request.organizationId, found.saml, 'logout');
    await this.refusingAsync(() =>
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

  /** A LogoutResponse's request of this service and its organization's SAML settings, before its signature. */
  private async logoutResponseContext(envelope: Envelope) {
    if (envelope.root !== 'LogoutResponse' || !envelope.inResponseTo) {
      throw new SamlRefusal('Not a LogoutResponse to a request of this service');
    }
    const request = await this.pendingRequest(envelope.inResponseTo, 'logout');
    if (!request) throw new SamlRefusal('Unknown or expired InResponseTo');
    const found = await this.samlSettings(request.organizationId);
    if (!found) throw new SamlRefusal('The organization no longer signs in with SAML');
    if (envelope.destination !== this.logoutCallbackUrl) {
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
    // Signed as a whole (node-saml requires it for a LogoutResponse): its status and issuer can be read now, from
    // the root's own children (not from the signature's unsigned KeyInfo).
    const statusElement = childElement(envelope.root_, 'Status');
    const status = statusElement
      ? childElement(statusElement, 'StatusCode')?.getAttribute('Value')
      : undefined;
    if (status !== 'urn:oasis:names:tc:SAML:2.0:status:Success') {
      throw new SamlRefusal('The IdP did not log out');
    }
    const issuer = childText(envelope.root_, 'Issuer');
    if (found.saml.idpIssuer && issuer !== found.saml.idpIssuer) {
      throw new SamlRefusal('LogoutResponse of another issuer');
    }
    if (!(await this.takeRequest(request.id, request.organizationId, 'logout'))) {
      throw new SamlRefusal('InResponseTo already answered');
    }
    return { redirectUrl: `${this.config.appUrl}/login?logout=1` };
  }

  private async logoutRequest(
    encoded: string,
    relayState: string,
    meta: RequestMeta,
  ): Promise<{ redirectUrl: string }> {
    const envelope = this.refusing(() => this.envelope(encoded, LOGOUT_MAX_BYTES));
    if (envelope.root !== 'LogoutRequest' || !envelope.nameId || !envelope.id || !XML_ID.test(envelope.id)) {
      throw new SamlRefusal('Not a LogoutRequest with an ID and a NameID');
    }
    if (envelope.destination !== this.logoutCallbackUrl) {
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
      const found = await this.samlSettings(organizationId);
      if (!found) continue;
      const provider = this.provider(organizationId, found.saml, 'logout');
      let profile: Profile | null;
      try {
        ({ profile } = await provider.validatePostRequestAsync({ SAMLRequest: encoded }));
      } catch {
        continue; // not signed by this organization's IdP
      }
      if (!profile) continue;
      // Accepted once: the same signed LogoutRequest again (a captured one) is refused.
      const [recorded] = await this.tx.db
        .insert(samlAssertions)
        .values({
          organizationId,
          assertionId: `logout:${envelope.id}`,
          expiresAt: new Date(this.clock.nowMs() + ASSERTION_ID_TTL_MS),
        })
        .onConflictDoNothing()
        .returning({ id: samlAssertions.assertionId });
      if (!recorded) throw new SamlRefusal('LogoutRequest replayed');
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

  /** The signed assertion must have one bearer confirmation that is for this ACS and answers this request. */
  private checkSubjectConfirmation(assertion: XmlNode, inResponseTo: string): void {
    const bearer = children(child(assertion, 'Subject'), 'SubjectConfirmation').filter(
      (c) => c.$?.Method === 'urn:oasis:names:tc:SAML:2.0:cm:bearer',
    );
    const data = bearer.map((c) => child(c, 'SubjectConfirmationData')?.$).filter((d) => d !== undefined);
    if (data.length === 0) throw new SsoFailure('assertion without a bearer SubjectConfirmationData');
    if (!data.some((d) => d.Recipient === this.acsUrl && d.InResponseTo === inResponseTo)) {
      throw new SsoFailure('no bearer confirmation for this ACS and this request');
    }
  }

  /** The NameID when it is an e-mail address (its format says so, or it reads as one), else the `email` attribute. */
  private emailOf(profile: Profile): string {
    const fromNameId = profile.nameIDFormat === EMAIL_FORMAT || isEmail(profile.nameID) ? profile.nameID : '';
    const fromAttribute = EMAIL_ATTRIBUTES.map((a) => attributeValues(this.attribute(profile, a))[0]).find(
      (v) => v !== undefined,
    );
    const email = normaliseEmail(isEmail(fromNameId) ? fromNameId : (fromAttribute ?? ''));
    if (!isEmail(email) || email.length > 254) throw new SsoFailure('no usable email in the assertion');
    return email;
  }

  private attribute(profile: Profile, name: string): unknown {
    const attributes = profile.attributes as Record<string, unknown> | undefined;
    return attributes && Object.hasOwn(attributes, name) ? attributes[name] : undefined;
  }

  /**
   * The message's root element, its InResponseTo, Destination and NameID, read without trusting them: they only
   * choose the organization whose keys then verify the message. A DOCTYPE is refused (no entity tricks).
   */
  private envelope(encoded: string, maxBytes = MESSAGE_MAX_CHARS): Envelope {
    if (encoded.length > MESSAGE_MAX_CHARS || !/^[A-Za-z0-9+/=\r\n]+$/.test(encoded)) {
      throw new SsoFailure('the message is not base64');
    }
    return this.envelopeOf(Buffer.from(encoded, 'base64').toString('utf8'), maxBytes);
  }

  /** The envelope of a message's XML (HTTP-POST: decoded from base64; HTTP-Redirect: inflated). */
  private envelopeOf(xml: string, maxBytes: number): Envelope {
    if (xml.length > maxBytes) throw new SsoFailure('the message is too large');
    if (maxBytes < MESSAGE_MAX_CHARS && (xml.match(/</g)?.length ?? 0) > LOGOUT_MAX_ELEMENTS) {
      throw new SsoFailure('the message has too many elements');
    }
    const doc = this.parse(xml);
    const root = doc.documentElement;
    if (!root) throw new SsoFailure('empty message');
    const inResponseTo = root.getAttribute('InResponseTo') || null;
    if (inResponseTo !== null && !XML_ID.test(inResponseTo)) throw new SsoFailure('malformed InResponseTo');
    // Only the root's own children count: a NameID inside a signature's KeyInfo (unsigned) is not the subject.
    const nameId = root.localName === 'LogoutRequest' ? childText(root, 'NameID') : undefined;
    if (nameId !== undefined && (nameId.length > NAME_ID_MAX || hasControlCharacter(nameId))) {
      throw new SsoFailure('malformed NameID');
    }
    return {
      root: root.localName ?? '',
      inResponseTo,
      destination: root.getAttribute('Destination') || null,
      nameId: nameId || null,
      id: root.getAttribute('ID') || null,
      issueInstant: root.getAttribute('IssueInstant') || null,
      root_: root,
    };
  }

  private parse(xml: string) {
    if (/<!DOCTYPE/i.test(xml)) throw new SsoFailure('a DOCTYPE in a SAML message');
    try {
      return new DOMParser({
        onError: (level, message) => {
          if (level !== 'warning') throw new Error(message);
        },
      }).parseFromString(xml, 'text/xml');
    } catch (err) {
      throw new SsoFailure(`malformed XML: ${(err as Error).message.slice(0, 100)}`);
    }
  }

  /** The unexpired request row with this id, of this kind. */
  private async pendingRequest(id: string, kind: 'authn' | 'logout') {
    if (id.length > 128) return undefined;
    const [row] = await this.tx.db
      .select()
      .from(samlRequests)
      .where(
        and(
          eq(samlRequests.id, id),
          eq(samlRequests.kind, kind),
          gt(samlRequests.expiresAt, this.clock.now()),
        ),
      )
      .limit(1);
    return row;
  }

  /** Deletes the request row, reporting whether this call did (a request is answered once). */
  private async takeRequest(id: string, organizationId: string, kind: 'authn' | 'logout'): Promise<boolean> {
    const taken = await this.tx.db
      .delete(samlRequests)
      .where(
        and(
          eq(samlRequests.id, id),
          eq(samlRequests.organizationId, organizationId),
          eq(samlRequests.kind, kind),
          gt(samlRequests.expiresAt, this.clock.now()),
        ),
      )
      .returning({ id: samlRequests.id });
    return taken.length === 1;
  }

  /**
   * node-saml's request-id cache, backed by `saml_requests` and scoped to one organization and one kind: an id of
   * another organization is unknown here. Removal is left to `takeRequest`, which does it atomically once the
   * answer is accepted; the expiry is the row's, on this service's clock. node-saml asks for an id more than once
   * per response: the answer is remembered, starting from the row the caller already read (`known`).
   */
  private requestCache(
    organizationId: string,
    kind: 'authn' | 'logout',
    { browserHash = null, known }: CacheOptions,
  ): CacheProvider {
    const pending = new Map<string, boolean>();
    if (known) pending.set(known.id, known.organizationId === organizationId);
    return {
      saveAsync: async (key, value) => {
        const now = this.clock.now();
        await this.tx.db.insert(samlRequests).values({
          id: key,
          organizationId,
          kind,
          browserHash,
          expiresAt: new Date(now.getTime() + SAML_REQUEST_TTL_MS),
          createdAt: now,
        });
        return { value, createdAt: now.getTime() };
      },
      getAsync: async (key) => {
        let ok = pending.get(key);
        if (ok === undefined) {
          const row = await this.pendingRequest(key, kind);
          ok = row !== undefined && row.organizationId === organizationId;
          pending.set(key, ok);
        }
        // node-saml compares the value with its own (real) clock; the expiry that counts is the row's.
        return ok ? new Date().toISOString() : null;
      },
      removeAsync: async (key) => key,
    };
  }

  /** node-saml configured as this organization's service provider. */
  private provider(
    organizationId: string,
    saml: StoredSamlSettings,
    kind: 'authn' | 'logout',
    cache: CacheOptions = {},
  ): SAML {
    const { decryption, signing } = this.config.samlSp;
    return new SAML({
      issuer: this.entityId(organizationId),
      audience: this.entityId(organizationId),
      callbackUrl: this.acsUrl,
      entryPoint: saml.entryPoint,
      idpCert: saml.idpCertificate,
      ...(saml.idpIssuer ? { idpIssuer: saml.idpIssuer } : {}),
      logoutUrl: saml.logoutUrl ?? undefined,
      logoutCallbackUrl: this.logoutCallbackUrl,
      identifierFormat: EMAIL_FORMAT,
      // A signed response or a signed assertion: node-saml then requires the other only when the first is missing.
      wantAuthnResponseSigned: false,
      wantAssertionsSigned: false,
      acceptedClockSkewMs: CLOCK_SKEW_MS,
      maxAssertionAgeMs: MAX_ASSERTION_AGE_MS,
      // A LogoutResponse's InResponseTo is checked here against the row (node-saml reads it on Responses only).
      validateInResponseTo: kind === 'authn' ? ValidateInResponseTo.always : ValidateInResponseTo.never,
      requestIdExpirationPeriodMs: SAML_REQUEST_TTL_MS,
      cacheProvider: this.requestCache(organizationId, kind, cache),
      // The IdP decides how the user authenticates (passwordless, MFA); asking for a password context breaks it.
      disableRequestedAuthnContext: true,
      signatureAlgorithm: 'sha256',
      digestAlgorithm: 'sha256',
      ...(signing ? { privateKey: signing.key, publicCert: signing.cert } : {}),
      ...(decryption ? { decryptionPvk: decryption.key } : {}),
    });
  }

  private refusing<T>(run: () => T): T {
    try {
      return run();
    } catch (err) {
      throw new SamlRefusal((err as Error).message.slice(0, 200));
    }
  }

  private async refusingAsync<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw new SamlRefusal(`Refused: ${(err as Error).message.slice(0, 200)}`);
    }
  }
}
