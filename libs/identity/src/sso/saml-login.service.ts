import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Inject, Injectable } from '@nestjs/common';
import type { Profile } from '@node-saml/node-saml';
import {
  APP_CONFIG,
  type AppConfig,
  AppError,
  Clock,
  ErrorCode,
  isObjectId,
  type RequestMeta,
  safeEqual,
  sha256Hex,
  TransactionHost,
} from '#platform';
import { SamlAssertionsRepository } from './saml-assertions.repository.js';
import { ASSERTION_ID_TTL_MS, SamlServiceProvider } from './saml-service-provider.js';
import {
  assertionOf,
  attribute,
  attributeValues,
  checkSubjectConfirmation,
  decodeEnvelope,
  displayNameOf,
  emailOf,
  NAME_ID_MAX,
  SamlMessageError,
} from './saml-xml.js';
import type { SignInOutcome } from './sign-in-hand-off.js';
import type { SsoSettings, StoredSamlSettings } from './sso-config.types.js';
import { SsoFailure, SsoSignIn } from './sso-sign-in.js';

/**
 * A refusal of the public routes that take an organization id (initiate, metadata) is answered no sooner than this
 * after the request reached the service: an unknown organization costs one query, one with OIDC three, and the
 * difference should not tell a stranger which ids exist or how they sign in.
 */
const PUBLIC_REFUSAL_MS = 40;
/** Every refusal of initiate and metadata is this one (the same status and body whatever the reason). */
const noSaml = () => new AppError(404, ErrorCode.NOT_FOUND, 'This organization does not sign in with SAML');

/** What the XML helpers refuse is a failed sign-in, for their reason. */
function failing<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof SamlMessageError) throw new SsoFailure(err.message);
    throw err;
  }
}

/**
 * SAML 2.0 single sign-on with `@node-saml/node-saml`, one service provider per organization
 * (SamlServiceProvider); single logout is SamlLogoutService.
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
 * See docs/identity-administrators.md, "Single sign-on: SAML sign-in and single logout"; test/sso-saml-*.e2e-spec.ts.
 */
@Injectable()
export class SamlLoginService {
  constructor(
    private readonly signIns: SsoSignIn,
    private readonly sp: SamlServiceProvider,
    private readonly assertions: SamlAssertionsRepository,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    @Inject(APP_CONFIG)
    private readonly config: Pick<AppConfig, 'samlSp'>,
  ) {}

  /**
   * The SAML settings of an organization for a public route, or the one refusal: an unknown, malformed or deleted
   * organization, one without SSO or without the plan's `sso`, and one with OIDC all get the same 404, no sooner than
   * PUBLIC_REFUSAL_MS after the call, so that neither the answer nor its time tells them apart.
   */
  private async publicSamlSettings(
    organizationId: string,
  ): Promise<{ settings: SsoSettings; saml: StoredSamlSettings }> {
    const started = performance.now();
    const found = isObjectId(organizationId) ? await this.sp.samlSettings(organizationId) : undefined;
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
    const redirectUrl = await this.sp
      .provider(organizationId, saml, 'authn', { browserHash: sha256Hex(binding) })
      .getAuthorizeUrlAsync('', undefined, {});
    return { redirectUrl, binding };
  }

  /** The SP metadata of an organization with SAML; the same 404 as initiate otherwise (malformed ids included). */
  async metadata(organizationId: string): Promise<string> {
    const found = await this.publicSamlSettings(organizationId);
    const { decryption, signing } = this.config.samlSp;
    return this.sp
      .provider(organizationId, found.saml, 'authn')
      .generateServiceProviderMetadata(decryption?.cert ?? null, signing?.cert ?? null);
  }

  /** The ACS: verifies the response and signs the user in, or throws SsoFailure. */
  async callback(
    form: URLSearchParams,
    binding: string | undefined,
    meta: RequestMeta,
  ): Promise<SignInOutcome> {
    const encoded = form.get('SAMLResponse');
    if (!encoded) throw new SsoFailure('no SAMLResponse');
    const envelope = failing(() => decodeEnvelope(encoded));
    if (envelope.root !== 'Response') throw new SsoFailure('not a SAML Response');
    if (!envelope.inResponseTo) throw new SsoFailure('unsolicited response (no InResponseTo)');
    const inResponseTo = envelope.inResponseTo;
    const request = await this.sp.pendingRequest(inResponseTo, 'authn');
    if (!request) throw new SsoFailure('unknown or expired InResponseTo');
    // Posted by the browser that started the sign-in (no login CSRF: someone else's response pushed to it).
    if (!binding || !request.browserHash || !safeEqual(sha256Hex(binding), request.browserHash)) {
      throw new SsoFailure('response posted from another browser');
    }
    const organizationId = request.organizationId;
    const found = await this.sp.samlSettings(organizationId);
    if (!found) throw new SsoFailure('SSO is no longer configured with SAML');
    const { settings, saml } = found;
    if (envelope.destination !== null && envelope.destination !== this.sp.acsUrl) {
      throw new SsoFailure('response sent to another Destination');
    }
    let profile: Profile | null;
    try {
      ({ profile } = await this.sp
        .provider(organizationId, saml, 'authn', { known: request })
        .validatePostResponseAsync({ SAMLResponse: encoded }));
    } catch (err) {
      throw new SsoFailure(`response refused: ${(err as Error).message.slice(0, 200)}`);
    }
    if (!profile) throw new SsoFailure('no assertion in the response');
    const { nameID } = profile;
    if (typeof nameID !== 'string' || nameID === '' || nameID.length > NAME_ID_MAX) {
      throw new SsoFailure('assertion without a usable NameID');
    }
    const verified = assertionOf(profile);
    if (!verified) throw new SsoFailure('assertion without ID');
    if (saml.idpIssuer && profile.issuer !== saml.idpIssuer)
      throw new SsoFailure('assertion of another issuer');
    failing(() => checkSubjectConfirmation(verified.assertion, inResponseTo, this.sp.acsUrl));
    const email = failing(() => emailOf(profile));
    const groups = attributeValues(attribute(profile, saml.groupsAttribute));
    const name = displayNameOf(profile, email);

    await this.tx.run(async () => {
      // The request and the assertion, each once: concurrent replays find the row gone or the id taken.
      if (!(await this.sp.takeRequest(organizationId, request.id, 'authn'))) {
        throw new SsoFailure('InResponseTo already answered');
      }
      const expiresAt = new Date(this.clock.nowMs() + ASSERTION_ID_TTL_MS);
      if (!(await this.assertions.record(organizationId, verified.id, expiresAt))) {
        throw new SsoFailure('assertion replayed');
      }
    });
    return this.signIns.signIn(
      organizationId,
      'saml',
      settings,
      {
        email,
        name,
        subject: `saml:${nameID}`,
        groups,
        saml: {
          nameId: nameID,
          nameIdFormat: profile.nameIDFormat?.slice(0, 256) ?? null,
          sessionIndex: profile.sessionIndex?.slice(0, 256) ?? null,
        },
      },
      meta,
    );
  }
}
