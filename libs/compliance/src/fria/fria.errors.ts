import { Logger } from '@nestjs/common';
import { AppError, moduleErrorCodes } from '#platform';

/** Error codes of FRIA, beside the generic ones in the platform. */
export const FriaErrorCode = moduleErrorCodes({
  /** A move the lifecycle (`canTransition`) does not allow from the current state (including to the same state). */
  FRIA_TRANSITION_FAILED: 'FRIA_TRANSITION_FAILED',
  FRIA_LIST_FAILED: 'FRIA_LIST_FAILED',
  FRIA_CREATE_FAILED: 'FRIA_CREATE_FAILED',
  FRIA_GET_FAILED: 'FRIA_GET_FAILED',
  FRIA_UPDATE_FAILED: 'FRIA_UPDATE_FAILED',
  FRIA_DELETE_FAILED: 'FRIA_DELETE_FAILED',
});

export type FriaErrorCodeName = (typeof FriaErrorCode)[keyof typeof FriaErrorCode];

declare module '#platform' {
  interface ModuleErrorCodes extends Record<FriaErrorCodeName, true> {}
}

const logger = new Logger('Fria');

/**
 * Runs one FRIA operation: an AppError passes through unchanged; anything else is unexpected, so it is logged
 * with its cause and answered as a 500 with the operation's code and a generic message (no internals leak).
 */
export async function friaOperation<T>(code: FriaErrorCodeName, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof AppError) throw error;
    logger.error(`${code}: ${error instanceof Error ? error.stack : String(error)}`);
    throw new AppError(500, code, 'The assessment operation failed unexpectedly', { cause: error });
  }
}
