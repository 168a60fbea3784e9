import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  DATABASE,
  type DatabaseHandle,
  InvalidatedCache,
  type PiiEntity,
  type PiiMaskingSetting,
  TransactionHost,
} from '#platform';
import { OrganizationsService, PII_MASKING_CHANGED_CHANNEL } from '#identity';
import { maskJson, type MaskOptions, maskText } from '../pii/index.js';
import { SubjectKeys } from '../subjects/subject-key.js';

/** The content of a trace that masking rewrites: everything the client sent about the decision. */
export interface MaskableContent {
  inputContext: object;
  outputDecision: object;
  metadata: object;
  rationale: string | null;
}

/** What masking did to one trace: its content, and how many values of each type it masked. */
export type MaskedContent<C extends MaskableContent> = C & { piiMasked: Partial<Record<PiiEntity, number>> };

/** A cached setting; `off` is cached too (InvalidatedCache keeps no null). */
type Cached = { options: MaskOptions } | { options: null };

/**
 * Masking of personal data at ingestion (docs/data-protection.md, "Masking at ingestion"): the organization's
 * `piiMasking` setting, kept per organization in an `InvalidatedCache` that identity's PATCH /organizations/current
 * invalidates on every replica (`PII_MASKING_CHANGED_CHANNEL`), and the masking of a trace's content under it. The
 * ingestion pipeline evaluates policies on the original and stores, hashes, indexes and publishes only what this
 * returns.
 */
@Injectable()
export class PiiMasking implements OnModuleInit, OnModuleDestroy {
  private readonly cache: InvalidatedCache<Cached>;

  constructor(
    private readonly organizations: OrganizationsService,
    private readonly keys: SubjectKeys,
    tx: TransactionHost,
    @Inject(DATABASE) handle: DatabaseHandle,
  ) {
    this.cache = new InvalidatedCache(PII_MASKING_CHANGED_CHANNEL, handle, tx);
  }

  onModuleInit(): Promise<void> {
    return this.cache.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.cache.stop();
  }

  /**
   * A free text written about one of the organization's traces (a reviewer's notes, a CPI verdict's notes and
   * corrected decision) as the service stores it: masked as the trace's content is, when the organization masks.
   */
  async maskedText(organizationId: string, text: string): Promise<string>;
  async maskedText(organizationId: string, text: string | null): Promise<string | null>;
  async maskedText(organizationId: string, text: string | null): Promise<string | null> {
    if (text === null || text.length === 0) return text;
    const options = await this.optionsFor(organizationId);
    return options ? maskText(text, options, {}) : text;
  }

  /** The masking options in force for the organization's next trace, or null when masking is off. */
  async optionsFor(organizationId: string): Promise<MaskOptions | null> {
    const cached = await this.cache.get(organizationId, async () => ({
      options: optionsOf(await this.organizations.piiMaskingOf(organizationId), () =>
        this.keys.maskKeyOf(organizationId),
      ),
    }));
    return cached?.options ?? null;
  }
}

function optionsOf(setting: PiiMaskingSetting | null, key: () => Uint8Array): MaskOptions | null {
  if (!setting || setting.entities.length === 0) return null;
  return {
    entities: new Set(setting.entities),
    mode: setting.mode,
    key: setting.mode === 'hash' ? key() : new Uint8Array(),
  };
}

/**
 * The content with every value of the masked types replaced (`<IBAN>`, or `<IBAN:…>` in hash mode); objects that
 * hold nothing to mask are returned as they came.
 */
export function maskContent<C extends MaskableContent>(content: C, options: MaskOptions): MaskedContent<C> {
  const piiMasked: Partial<Record<PiiEntity, number>> = {};
  return {
    ...content,
    inputContext: maskJson(content.inputContext, options, piiMasked),
    outputDecision: maskJson(content.outputDecision, options, piiMasked),
    metadata: maskJson(content.metadata, options, piiMasked),
    rationale: content.rationale === null ? null : maskText(content.rationale, options, piiMasked),
    piiMasked,
  };
}
