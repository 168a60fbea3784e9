import { Controller, Get, Post } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { ApiProperty, DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiEnvelope, envelopeOf } from '#platform';

class GadgetDto {
  @ApiProperty() id: string;
}

@Controller('gadgets')
class GadgetsController {
  @Get()
  @ApiEnvelope(GadgetDto, { paginated: true })
  list() {}

  @Get('all')
  @ApiEnvelope(GadgetDto, { isArray: true })
  all() {}

  @Get('one')
  @ApiEnvelope(GadgetDto)
  one() {}

  @Post()
  @ApiEnvelope(GadgetDto, { status: 201 })
  create() {}

  @Post('nothing')
  @ApiEnvelope(null)
  nothing() {}
}

describe('ApiEnvelope', () => {
  let app: NestFastifyApplication;
  let document: OpenAPIObject;
  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ controllers: [GadgetsController] }).compile();
    app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
    await app.init();
    document = SwaggerModule.createDocument(app, new DocumentBuilder().setOpenAPIVersion('3.1.0').build());
  });
  afterAll(async () => app?.close());

  const schemaOf = (path: string, method: 'get' | 'post', status: string) =>
    (document.paths[path]![method]!.responses[status] as { content: Record<string, { schema: unknown }> })
      .content['application/json']!.schema;

  it('names each envelope after its model: Response, ListResponse, Page', () => {
    expect(schemaOf('/gadgets/one', 'get', '200')).toEqual({ $ref: '#/components/schemas/GadgetResponse' });
    expect(schemaOf('/gadgets/all', 'get', '200')).toEqual({
      $ref: '#/components/schemas/GadgetListResponse',
    });
    expect(schemaOf('/gadgets', 'get', '200')).toEqual({ $ref: '#/components/schemas/GadgetPage' });
    expect(document.components!.schemas!.GadgetPage).toEqual({
      type: 'object',
      properties: {
        success: { type: 'boolean', enum: [true] },
        data: { type: 'array', items: { $ref: '#/components/schemas/GadgetDto' } },
        pagination: { $ref: '#/components/schemas/PaginationDto' },
      },
      required: ['success', 'data', 'pagination'],
    });
  });

  it('makes the same envelope of the same model one schema, whatever the status', () => {
    expect(schemaOf('/gadgets', 'post', '201')).toEqual({ $ref: '#/components/schemas/GadgetResponse' });
    expect(envelopeOf(GadgetDto, 'one')).toBe(envelopeOf(GadgetDto, 'one'));
  });

  it('describes ApiEnvelope(null) as {success: true, data: null}', () => {
    expect(schemaOf('/gadgets/nothing', 'post', '200')).toEqual({
      $ref: '#/components/schemas/EmptyResponse',
    });
    expect(document.components!.schemas!.EmptyResponse).toMatchObject({
      properties: { success: { type: 'boolean', enum: [true] }, data: { type: 'null' } },
      required: ['success', 'data'],
    });
  });

  it('refuses two models whose envelopes would share a name', () => {
    const Other = { GadgetDto: class {} }.GadgetDto;
    expect(() => envelopeOf(Other, 'one')).toThrow(/Two envelopes would be named GadgetResponse/);
  });
});
