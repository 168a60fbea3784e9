import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { flushTracing } from './tracing.js';

/**
 * Exports the spans still buffered when the application closes: Nest ends the process right after its shutdown
 * hooks, before the SDK's next scheduled export. Nothing to do when tracing is off.
 */
@Injectable()
export class TracingFlush implements OnApplicationShutdown {
  onApplicationShutdown(): Promise<void> {
    return flushTracing();
  }
}
