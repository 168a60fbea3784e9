import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsISO8601, IsOptional } from 'class-validator';

export class ComplianceReportQueryDto {
  @ApiPropertyOptional({
    format: 'date-time',
    description: 'Start of the period (inclusive). Default: 30 days before `to`.',
  })
  @IsOptional()
  @IsISO8601({ strict: true })
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'End of the period (exclusive). Default: now.' })
  @IsOptional()
  @IsISO8601({ strict: true })
  to?: string;
}
