import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import {
  type Actor,
  actionMail,
  APP_CONFIG,
  type AppConfig,
  AppError,
  AuditLog,
  Clock,
  DnsResolver,
  JobScheduler,
  MailService,
  type RequestMeta,
  safeEqual,
  TransactionHost,
} from '#platform';
import { MembersRepository } from '../organizations/members.repository.js';
import { challengeRecordName, domainRefusal } from './domain-policy.js';
import { type SsoDomainDto, toSsoDomainResponse } from './dto/sso-domain.dto.js';
import { SsoDomainsRepository } from './sso-domains.repository.js';
import { SsoErrorCode } from './sso.errors.js';
import type { SsoDomainClaimRow } from './sso.schema.js';

const DAY_MS = 86_400_000;
/** A verified domain is looked up again once a day. */
export const DOMAIN_RECHECK_AGE_MS = DAY_MS;
/** A verified domain whose record has been missing this long stops routing (`failing`). */
export const DOMAIN_GRACE_MS = 7 * DAY_MS;
/** How often the re-check job looks for domains due, and how many it takes per run. */
const RECHECK_INTERVAL_MS = 3_600_000;
const RECHECK_BATCH = 200;
/** Claims an organization may hold at once (what `GET /sso/domains` lists in full). */
export const CLAIMS_MAX = 50;
export const DOMAIN_RECHECK_JOB = 'sso-domain-recheck';

const invalid = (field: string, message: string) => AppError.validation(message, [{ field, message }]);

/**
 * E-mail domains proven by DNS. An owner claims a domain and publishes the TXT record the claim
 * names; verification looks it up (through `SSO_DNS_SERVERS` when set) and, the first time it is found for any
 * organization, makes the domain that organization's: only then does it route sign-in, provision accounts or
 * enforce anything. Several organizations may hold pending claims on one domain. A verified domain is re-checked
 * daily; missing for 7 days, it becomes `failing`, stops routing, and the owners are told.
 * See docs/identity-administrators.md, "Proving a domain by DNS"; test/sso-domains.e2e-spec.ts.
 */
@Injectable()
export class SsoDomainsService implements OnModuleInit {
  private readonly logger = new Logger('SsoDomains');
  private readonly dns: DnsResolver;

  constructor(
    private readonly domains: SsoDomainsRepository,
    private readonly members: MembersRepository,
    private readonly mail: MailService,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly scheduler: JobScheduler,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'ssoDnsServers' | 'appUrl'>,
  ) {
    this.dns = new DnsResolver(config.ssoDnsServers);
  }

  onModuleInit(): void {
    this.scheduler.register({
      name: DOMAIN_RECHECK_JOB,
      intervalMs: RECHECK_INTERVAL_MS,
      mode: 'once-per-period',
      run: () => this.recheckDue(),
    });
  }

  async list(actor: Actor): Promise<SsoDomainDto[]> {
    return (await this.domains.claims(actor.organizationId)).map(toSsoDomainResponse);
  }

  /** `POST /sso/domains`: a pending claim (or the organization's existing one), with the record to publish. */
  claim(actor: Actor, domain: string, meta: RequestMeta): Promise<SsoDomainDto> {
    const refusal = domainRefusal(domain);
    if (refusal) return Promise.reject(invalid('domain', refusal));
    return this.tx.run(async () => {
      await this.audit.lockOrganization(actor.organizationId);
      const existing = await this.domains.claim(actor.organizationId, domain);
      if (existing) return toSsoDomainResponse(existing);
      if ((await this.domains.claims(actor.organizationId)).length >= CLAIMS_MAX) {
        throw invalid('domain', `An organization holds at most ${CLAIMS_MAX} domain claims; drop one first`);
      }
      const claim = await this.domains.addClaim(this.pendingClaim(actor.organizationId, domain));
      await this.audit.record(actor, 'sso.domain.claimed', { type: 'sso_domain', id: domain }, {}, meta);
      return toSsoDomainResponse(claim);
    });
  }

  /**
   * `PUT /sso/config`'s `emailDomains`: new domains become pending claims, and pending claims on domains no longer
   * listed are dropped. A proven (verified or failing) claim stays until `DELETE /sso/domains/:domain`: a form that
   * sends an older list never undoes a DNS proof. In the caller's transaction.
   */
  async sync(organizationId: string, wanted: readonly string[]): Promise<void> {
    for (const domain of wanted) {
      const refusal = domainRefusal(domain);
      if (refusal) throw invalid('emailDomains', refusal);
    }
    await this.domains.dropPendingClaimsExcept(organizationId, wanted);
    const held = (await this.domains.claims(organizationId)).map((c) => c.domain);
    const added = wanted.filter((d) => !held.includes(d));
    if (held.length + added.length > CLAIMS_MAX) {
      throw invalid('emailDomains', `An organization holds at most ${CLAIMS_MAX} domain claims`);
    }
    for (const domain of added) await this.domains.addClaim(this.pendingClaim(organizationId, domain));
  }

  /** Drops every claim of the organization and its routing (`DELETE /sso/config`). In the caller's transaction. */
  async dropAll(organizationId: string): Promise<void> {
    await this.domains.dropClaimsExcept(organizationId, []);
  }

  /**
   * `POST /sso/domains/:domain/verify`: looks the record up now. Found: the domain is the organization's, unless
   * another organization verified it first (409 SSO_DOMAIN_TAKEN). Not found: 400 DOMAIN_NOT_VERIFIED naming the
   * record to publish.
   */
  async verify(actor: Actor, domain: string, meta: RequestMeta): Promise<SsoDomainDto> {
    const organizationId = actor.organizationId;
    const claim = await this.domains.claim(organizationId, domain);
    if (!claim) throw AppError.notFound('Domain claim');
    const found = await this.lookup(claim);
    const now = this.clock.now();
    if (found !== true) {
      await this.domains.updateClaim(organizationId, domain, { lastCheckedAt: now });
      const record = challengeRecordName(domain);
      // One answer whether the record is absent or the lookup failed: how a name resolves is not told.
      throw new AppError(
        400,
        SsoErrorCode.DOMAIN_NOT_VERIFIED,
        `No TXT record at ${record} was found holding this claim's value; publish it and verify again`,
        { extra: { record: { type: 'TXT', name: record, value: claim.challenge } } },
      );
    }
    return this.tx.run(async () => {
      await this.audit.lockOrganization(organizationId);
      // The lookup ran outside the lock: the claim may have been dropped (DELETE, PUT) or verified meanwhile.
      const current = await this.domains.claim(organizationId, domain);
      if (!current || current.challenge !== claim.challenge) throw AppError.notFound('Domain claim');
      if (!(await this.domains.route(organizationId, domain, now))) {
        throw AppError.conflict(
          `The e-mail domain ${domain} was verified by another organization first`,
          SsoErrorCode.SSO_DOMAIN_TAKEN,
        );
      }
      const verified: Partial<SsoDomainClaimRow> = {
        status: 'verified',
        verifiedAt: current.status === 'pending' || !current.verifiedAt ? now : current.verifiedAt,
        lastCheckedAt: now,
        missingSince: null,
        updatedAt: now,
      };
      await this.domains.updateClaim(organizationId, domain, verified);
      if (current.status !== 'verified') {
        await this.audit.record(actor, 'sso.domain.verified', { type: 'sso_domain', id: domain }, {}, meta);
      }
      return toSsoDomainResponse({ ...current, ...verified });
    });
  }

  /** `DELETE /sso/domains/:domain`: the claim and its routing go; 404 when the organization has no claim there. */
  drop(actor: Actor, domain: string, meta: RequestMeta): Promise<void> {
    return this.tx.run(async () => {
      await this.audit.lockOrganization(actor.organizationId);
      if (!(await this.domains.dropClaim(actor.organizationId, domain))) {
        throw AppError.notFound('Domain claim');
      }
      await this.audit.record(actor, 'sso.domain.removed', { type: 'sso_domain', id: domain }, {}, meta);
    });
  }

  /** The daily re-check of verified and failing domains (a batch per run of the job). */
  async recheckDue(): Promise<number> {
    const now = this.clock.now();
    const due = await this.domains.dueForRecheck(
      new Date(now.getTime() - DOMAIN_RECHECK_AGE_MS),
      RECHECK_BATCH,
    );
    for (const claim of due) {
      try {
        await this.recheck(claim, await this.lookup(claim));
      } catch (err) {
        this.logger.warn({ err, domain: claim.domain }, 'SSO domain re-check failed');
      }
    }
    return due.length;
  }

  private async recheck(claim: SsoDomainClaimRow, found: boolean | undefined): Promise<void> {
    const { organizationId, domain } = claim;
    const now = this.clock.now();
    const system = { organizationId, actor: { type: 'system' as const, id: 'sso-domains', email: null } };
    await this.tx.run(async () => {
      await this.audit.lockOrganization(organizationId);
      // A lookup that failed (a timeout, a server error) proves nothing either way: only the check time moves.
      if (found === undefined) {
        await this.domains.updateClaim(organizationId, domain, { lastCheckedAt: now });
        return;
      }
      if (found) {
        const restored =
          claim.status === 'failing' && (await this.domains.route(organizationId, domain, now));
        await this.domains.updateClaim(organizationId, domain, {
          ...(restored ? { status: 'verified' as const } : {}),
          lastCheckedAt: now,
          missingSince: null,
          updatedAt: now,
        });
        if (restored)
          await this.audit.record(system, 'sso.domain.restored', { type: 'sso_domain', id: domain });
        return;
      }
      const missingSince = claim.missingSince ?? now;
      const expired =
        claim.status === 'verified' && now.getTime() - missingSince.getTime() >= DOMAIN_GRACE_MS;
      await this.domains.updateClaim(organizationId, domain, {
        ...(expired ? { status: 'failing' as const } : {}),
        lastCheckedAt: now,
        missingSince,
        updatedAt: now,
      });
      if (!expired) return;
      await this.domains.unroute(organizationId, domain);
      await this.audit.record(
        system,
        'sso.domain.failing',
        { type: 'sso_domain', id: domain },
        { missingSince: missingSince.toISOString(), record: challengeRecordName(domain) },
      );
      await this.mailOwners(organizationId, domain);
    });
  }

  private async mailOwners(organizationId: string, domain: string): Promise<void> {
    const record = challengeRecordName(domain);
    for (const to of await this.members.listEmailsByRoles(organizationId, ['owner'])) {
      await this.mail.send({
        to,
        organizationId,
        template: 'sso-domain-failing',
        ...actionMail({
          subject: `Single sign-on stopped for ${domain}`,
          greeting: 'Hello,',
          intro:
            `The DNS record that proves ${domain} belongs to your organization (TXT at ${record}) has been ` +
            'missing for 7 days, so addresses at that domain no longer sign in through your single sign-on. ' +
            'Publish the record again and verify the domain to restore it.',
          actionLabel: 'Open the SSO settings',
          actionUrl: `${this.config.appUrl}/settings/sso`,
          outro: 'You receive this because you are an owner of the organization.',
        }),
      });
    }
  }

  /** Whether a TXT record at the claim's name holds its value; undefined when the lookup itself failed. */
  private async lookup(claim: SsoDomainClaimRow): Promise<boolean | undefined> {
    try {
      const records = await this.dns.txt(challengeRecordName(claim.domain));
      return records.some((r) => r.length === claim.challenge.length && safeEqual(r, claim.challenge));
    } catch (err) {
      this.logger.warn({ domain: claim.domain, error: (err as Error).message }, 'SSO domain lookup failed');
      return undefined;
    }
  }

  private pendingClaim(organizationId: string, domain: string): SsoDomainClaimRow {
    const now = this.clock.now();
    return {
      organizationId,
      domain,
      challenge: randomBytes(32).toString('base64url'),
      status: 'pending',
      verifiedAt: null,
      lastCheckedAt: null,
      missingSince: null,
      createdAt: now,
      updatedAt: now,
    };
  }
}
