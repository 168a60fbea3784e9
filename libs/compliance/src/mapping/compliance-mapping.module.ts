import { Module } from '@nestjs/common';

/** Clause attestations against ISO/IEC 42001, the EU AI Act and the NIST AI RMF, with their catalogues. */
@Module({})
export class ComplianceMappingModule {}
