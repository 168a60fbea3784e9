/**
 * The error code of each error answer being sent, by reply, for the refusal count: the renderers (the global filter,
 * the early answers) note it, since a body does not always carry it (a SCIM error body has no `code`). Only error
 * answers are noted, so a successful request costs nothing here; an entry goes with its reply.
 */
const codes = new WeakMap<object, string>();

export function noteErrorCode(reply: object, code: string): void {
  codes.set(reply, code);
}

export function notedErrorCode(reply: object): string | undefined {
  return codes.get(reply);
}
