import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import {
  APP_CONFIG,
  type AppConfig,
  AppError,
  Clock,
  DomainEvents,
  JobScheduler,
  Metrics,
  newId,
  type Page,
  type PaginationQueryDto,
  pageRequest,
  scrapeCache,
  toPage,
  TransactionHost,
} from '#platform';
import type { Gauge } from 'prom-client';
import { AuditErrorCode } from './audit.errors.js';
import { AuditRepository } from './audit.repository.js';
import { AuditService } from './audit.service.js';
import { AuditSigner } from './audit-signer.js';
import { type AuditCheckpointDto, type AuditPublicKeysDto, toCheckpointResponse } from './dto/audit.dto.js';
import { createPublicKey } from 'node:crypto';

/** How often the scheduler looks for chain heads due a checkpoint. */
export const CHECKPOINT_JOB_INTERVAL_MS = 60_000;
/** Organizations signed per pass (the next pass takes the rest). */
const CHECKPOINTS_PER_PASS = 500;

/**
 * Signed checkpoints: an organization's chain head, verified from the last verified prefix
 * and then signed with the operator's Ed25519 key, kept, and sent as the `audit.checkpoint` event to webhooks and
 * streams so that customers hold copies the operator cannot change. Signed on demand, and by a job every
 * AUDIT_CHECKPOINT_INTERVAL_ENTRIES entries or AUDIT_CHECKPOINT_INTERVAL_MINUTES minutes, whichever comes first.
 * See docs/compliance-officers.md, "Audit log"; test/audit-checkpoints.e2e-spec.ts.
 */
@Injectable()
export class AuditCheckpointsService implements OnModuleInit {
  private readonly logger = new Logger('AuditCheckpoints');
  private readonly checkpointAge: Gauge;

  constructor(
    private readonly repo: AuditRepository,
    private readonly audit: AuditService,
    private readonly signer: AuditSigner,
    private readonly events: DomainEvents,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly scheduler: JobScheduler,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'auditCheckpointInterval'>,
    metrics: Metrics,
  ) {
    this.checkpointAge = metrics.gauge({
      name: 'governance_audit_checkpoint_age_seconds',
      help: 'Seconds since the newest signed audit checkpoint of any organization (absent when none exists)',
      collect: scrapeCache(() => this.readCheckpointAge(), {
        now: () => this.clock.nowMs(),
        onError: (err) =>
          this.logger.warn(
            { err },
            'The newest audit checkpoint could not be read; its age keeps its last value',
          ),
      }),
    });
    // Absent, rather than 0, until a checkpoint is found.
    this.checkpointAge.remove();
  }

  onModuleInit(): void {
    this.scheduler.register({
      name: 'audit-checkpoints',
      intervalMs: CHECKPOINT_JOB_INTERVAL_MS,
      mode: 'once-per-period',
      run: () => this.signDue(),
    });
  }

  /**
   * Verifies the chain up to its head (from the verified prefix) and signs that head. A chain that does not verify
   * is not signed: a checkpoint vouches for every entry up to it. A head already signed with the current key
   * answers its existing checkpoint.
   */
  async checkpoint(organizationId: string): Promise<AuditCheckpointDto> {
    const verified = await this.audit.chainHead(organizationId);
    if (!verified.valid) {
      throw AppError.conflict(
        `The audit chain does not verify (entry ${verified.brokenAt?.sequence}: ${verified.brokenAt?.reason}); ` +
          'it is not signed',
        AuditErrorCode.AUDIT_CHAIN_INVALID,
      );
    }
    if (!verified.head) {
      throw AppError.conflict('The audit chain has no entries yet', AuditErrorCode.AUDIT_CHAIN_INVALID);
    }
    const createdAt = this.clock.now();
    const claims = {
      organizationId,
      sequence: verified.head.sequence,
      hash: verified.head.hash,
      createdAt: createdAt.toISOString(),
      keyId: this.signer.keyId,
    };
    const row = { id: newId(createdAt.getTime()), ...claims, createdAt, signature: this.signer.sign(claims) };
    return this.tx.run(async () => {
      const stored = await this.repo.insertCheckpoint(row);
      const checkpoint = toCheckpointResponse(stored.row);
      if (stored.created) {
        await this.events.publish([{ organizationId, type: 'audit.checkpoint', data: { ...checkpoint } }]);
      }
      return checkpoint;
    });
  }

  async list(organizationId: string, query: PaginationQueryDto): Promise<Page<AuditCheckpointDto>> {
    const page = pageRequest(query, { limit: 50, max: 200 });
    const { rows, total } = await this.repo.listCheckpoints(organizationId, page);
    return toPage(rows.map(toCheckpointResponse), total, page);
  }

  /** Every key that has signed checkpoints, as PEM and JWK, with its id (its RFC 7638 thumbprint). */
  async publicKeys(): Promise<AuditPublicKeysDto> {
    const rows = await this.repo.signingKeys();
    return {
      keys: rows.map((row) => {
        const key = createPublicKey(row.publicKeyPem);
        const { kty, crv, x } = key.export({ format: 'jwk' });
        return {
          keyId: row.keyId,
          algorithm: 'Ed25519' as const,
          publicKeyPem: row.publicKeyPem,
          jwk: { kty: kty!, crv: crv!, x: x!, kid: row.keyId, alg: 'EdDSA', use: 'sig' },
          createdAt: row.createdAt.toISOString(),
          current: row.keyId === this.signer.keyId,
        };
      }),
    };
  }

  /** The checkpoint age gauge's value, read at scrape time (at most every 5 s). */
  private async readCheckpointAge(): Promise<void> {
    const newest = await this.repo.newestCheckpointAt();
    if (newest) this.checkpointAge.set(Math.max(0, this.clock.nowMs() - newest.getTime()) / 1000);
    else this.checkpointAge.remove();
  }

  /** One pass of the job: signs the heads that are due; returns how many were signed. */
  async signDue(): Promise<number> {
    const { entries, minutes } = this.config.auditCheckpointInterval;
    const due = await this.repo.dueForCheckpoint(this.clock.now(), entries, minutes, CHECKPOINTS_PER_PASS);
    let signed = 0;
    for (const organizationId of due) {
      try {
        await this.checkpoint(organizationId);
        signed += 1;
      } catch (err) {
        this.logger.warn({ err, organizationId }, 'Audit checkpoint not signed; retried at the next run');
      }
    }
    return signed;
  }
}
