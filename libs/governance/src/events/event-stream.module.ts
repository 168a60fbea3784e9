import { Module } from '@nestjs/common';
import { ApiKeysModule, IdentityCoreModule } from '#identity';
import { EventStreamController } from './event-stream.controller.js';
import { EventStreamGateway } from './event-stream.gateway.js';
import { EventStreamHub } from './event-stream.hub.js';

/** The live event stream: SSE at /events/stream and a WebSocket at /events/ws, authenticated by stream tokens. */
@Module({
  imports: [ApiKeysModule, IdentityCoreModule],
  controllers: [EventStreamController],
  providers: [EventStreamHub, EventStreamGateway],
  exports: [EventStreamHub],
})
export class EventStreamModule {}
