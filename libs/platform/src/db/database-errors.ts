/**
 * What a database failure says about the request that met it. The query builder wraps driver errors as their `cause`;
 * node-postgres and PGlite both give PostgreSQL's SQLSTATE as `code`, with a `severity`.
 */

/** The SQLSTATE of a database error anywhere in its cause chain. */
export function sqlState(err: unknown): string | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const { code, severity } = e as { code?: unknown; severity?: unknown };
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && typeof severity === 'string') return code;
  }
  return undefined;
}

/**
 * The SQLSTATEs that say the database could not serve the request now, not that the request is wrong: another try
 * may well succeed. Connection exceptions (08), a serialization failure or deadlock (40001, 40P01), insufficient
 * resources (53: `too many clients`, disk full, out of memory), a lock not available under lock_timeout (55P03), a
 * statement cancelled (57014, statement_timeout) and the server shutting down or starting (57P01 to 57P03).
 */
const UNAVAILABLE_STATES = /^(08...|40001|40P01|53...|55P03|57014|57P0[123])$/;

/**
 * node-postgres's own errors, without a SQLSTATE: a pool that could not connect in time, a connection that broke (and
 * a query sent on it afterwards, such as the ROLLBACK of the transaction it was in), a pool or client already closed
 * by a shutdown.
 */
const DRIVER_UNAVAILABLE = [
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
  'Connection terminated unexpectedly',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
];

/** Socket-level errors a database client met (see markConnectionError). */
const connectionErrors = new WeakSet<Error>();

/**
 * Marks `err` as the database's connection failing when it is one of Node.js's system errors (ECONNREFUSED,
 * ECONNRESET, ENOTFOUND, ETIMEDOUT, EPIPE…): the database client calls this on what its connect and query give
 * back, so that the same codes from an outbound HTTP call are not taken for the database's. Returns `err`.
 */
export function markConnectionError<T>(err: T): T {
  if (err instanceof Error) {
    const { code, syscall } = err as { code?: unknown; syscall?: unknown };
    if (typeof code === 'string' && /^E[A-Z0-9_]+$/.test(code) && typeof syscall === 'string') {
      connectionErrors.add(err);
    }
  }
  return err;
}

/**
 * Whether `err` is the database being unable to serve now (see UNAVAILABLE_STATES; a connection refused, reset or
 * not resolved, see markConnectionError; a pool timeout), rather than a fault of ours.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const state = sqlState(err);
  if (state !== undefined) return UNAVAILABLE_STATES.test(state);
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (connectionErrors.has(e) || DRIVER_UNAVAILABLE.includes(e.message)) return true;
  }
  return false;
}
