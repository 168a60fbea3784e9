import { LEGACY_SUNSET, MIGRATION_GUIDE_PATH } from '../http/versioning.js';

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

export const COMPLIANCE_NOTES_GUIDE_PATH = '/docs/migrations/compliance-mapping-notes';

/** The note named by the `Link` header of the legacy compliance mapping-notes routes. */
export const COMPLIANCE_NOTES_GUIDE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Migrating from compliance mapping-notes to the mapping</title></head>
<body>
<h1>Migrating from <code>/compliance/mapping-notes</code> to <code>/compliance/mapping</code></h1>
<p>The legacy routes keep one free-text string per clause. The structured mapping keeps, per clause, a status
(<code>covered</code>, <code>partial</code>, <code>gap</code>, <code>not-applicable</code>), the evidence text, references to
FRIAs, policies and audit entries, and who reviewed it when; it also reports the coverage of each framework.</p>
<h2>What to change</h2>
<ol>
<li>Read <code>GET /api/v1/compliance/mapping?framework=</code> instead of <code>GET /api/v1/compliance/mapping-notes</code>:
the old strings are the notes' <code>evidence</code>.</li>
<li>Write one clause at a time with <code>PATCH /api/v1/compliance/mapping</code>
<code>{framework, clauseId, status, evidence, evidenceRefs}</code> instead of <code>PUT /api/v1/compliance/mapping-notes</code>.
Copy each legacy string into <code>evidence</code> once; the legacy map is not migrated for you.</li>
</ol>
<h2>Timeline</h2>
<p>The legacy routes answer with <code>Deprecation: true</code> and a <code>Sunset</code> date at least 90 days ahead, never
earlier than ${sunset}.</p>
</body></html>
`;

/** Every migration note served under /docs/migrations, as static pages. */
export const MIGRATION_GUIDES: readonly { path: string; html: string }[] = [
  { path: MIGRATION_GUIDE_PATH, html: MIGRATION_GUIDE_HTML },
  { path: COMPLIANCE_NOTES_GUIDE_PATH, html: COMPLIANCE_NOTES_GUIDE_HTML },
];
