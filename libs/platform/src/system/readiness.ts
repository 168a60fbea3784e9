import { Injectable } from '@nestjs/common';

/**
 * Whether this process takes new work: false from the moment it is asked to stop (SIGTERM), so that the readiness
 * probe answers 503 and the load balancer stops routing here while requests already routed are still served
 * (docs/operators.md, "Readiness, liveness and the drain").
 */
@Injectable()
export class Readiness {
  private stopping = false;

  get draining(): boolean {
    return this.stopping;
  }

  /** From now on the readiness probe fails; nothing else changes. Idempotent. */
  drain(): void {
    this.stopping = true;
  }
}
