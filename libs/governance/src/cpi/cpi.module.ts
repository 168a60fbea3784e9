import { Module } from '@nestjs/common';

/** Human feedback on traces (POST /cpi/ingest) and the compliance-performance rollups (GET /cpi, /cpi/analytics). */
@Module({})
export class CpiModule {}
