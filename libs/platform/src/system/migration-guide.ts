import { LEGACY_SUNSET } from '../http/versioning.js';

const sunset = LEGACY_SUNSET.toISOString().slice(0, 10);

/** The migration guide named by the legacy mount's `Link` header; served as a static page. */
export const MIGRATION_GUIDE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Migrating from /api to /api/v1</title></head>
<body>
<h1>Migrating from unversioned <code>/api</code> routes to <code>/api/v1</code></h1>
<p>Every endpoint is served at <code>/api/v1/&lt;resource&gt;</code>. The unversioned mount
<code>/api/&lt;resource&gt;</code> runs the same handlers and returns the same payloads, with the headers
<code>Deprecation: true</code>, <code>Sunset: ${LEGACY_SUNSET.toUTCString()}</code> and a <code>Link</code> to this page.</p>
<h2>What to change</h2>
<ol>
<li>Replace the base URL <code>https://&lt;host&gt;/api</code> with <code>https://&lt;host&gt;/api/v1</code>. Paths, bodies,
query parameters and responses are otherwise identical.</li>
<li>Optionally pin the wire contract with <code>X-Svc-Version: YYYY-MM-DD</code>; <code>GET /api/v1/versions</code> lists the
versions, their status, sunset dates and limits. Without the header the latest version applies.</li>
<li>Read <code>X-Svc-API-Version</code> and <code>X-Svc-Version</code> on responses to confirm what served you.</li>
</ol>
<h2>Timeline</h2>
<p>From ${sunset} (00:00 UTC) the unversioned routes answer <code>410 Gone</code>.</p>
</body></html>
`;
