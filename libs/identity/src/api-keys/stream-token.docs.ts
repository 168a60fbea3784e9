/** The OpenAPI text of the stream-token route (stream-token.controller.ts), kept out of the controller. */

export const STREAM_TOKEN_DOCS = {
  issue:
    'Any role, user session only. 201: each call creates a new single-use token, valid 60 seconds, bound to the ' +
    'caller and the active organization. Present it as `?token=` when opening `GET /events/stream`; a JWT never ' +
    'travels in a URL.',
} as const;
