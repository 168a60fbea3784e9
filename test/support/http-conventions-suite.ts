import { Body, Controller, Get, Module, Post } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsInt, IsString, Max, Min, ValidateNested } from 'class-validator';
import { Public } from '#platform';
import { TEST_PASSWORD, uniqueEmail } from './app.js';

// What the throwing route puts in its error: none of it may reach the client.
export const LEAKY_MESSAGE = 'boom with SELECT * FROM secret';
export const PROBE = '/api/v1/test-http-conventions';
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const JSON_HEADERS = { 'content-type': 'application/json' };
/** The HTTP conventions suites run at this fixed time. */
export const CONVENTIONS_SUITE_START = '2026-11-21T12:00:00.000Z';

class ProbeInnerDto {
  @IsString() label: string;
}

class ProbeBodyDto {
  @IsString() name: string;

  @IsInt() @Min(0) @Max(10) count: number;

  @ValidateNested() @Type(() => ProbeInnerDto) inner: ProbeInnerDto;
}

/** Test-only routes: one that fails unexpectedly, one that validates a nested DTO. */
@Controller('test-http-conventions')
class ConventionsProbeController {
  @Get('boom')
  @Public()
  boom(): never {
    throw new Error(LEAKY_MESSAGE);
  }

  @Post('echo')
  @Public()
  echo(@Body() dto: ProbeBodyDto): ProbeBodyDto {
    return dto;
  }
}

@Module({ controllers: [ConventionsProbeController] })
export class ConventionsProbeModule {}

export function validRegistration(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Ada Lovelace',
    email: uniqueEmail('conv'),
    password: TEST_PASSWORD,
    organizationName: 'Engines Ltd',
    ...overrides,
  };
}
