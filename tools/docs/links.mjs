#!/usr/bin/env node
// Checks every relative link and anchor of README.md and docs/*.md: the file or folder a link names must exist, and
// an anchor (`page.md#section`, `#section`) must be the GitHub slug of a heading of that page.
//
//   node tools/docs/links.mjs            # or: node tools/docs/links.mjs README.md docs/operators.md
//
// Links are inline Markdown links and images (`[text](target)`, `![alt](src)`) and HTML `href`/`src` attributes,
// outside code blocks and code spans. Absolute URLs (`https:`, `mailto:` …) are not fetched. Slugs follow GitHub's
// rule: the heading's text without its Markdown, lower-cased, every character other than a letter, a digit, a space,
// `-` or `_` dropped, spaces turned into `-`, and `-1`, `-2` … added to repeated slugs.
//
// Without file arguments it also checks the references that the code, the tests, CI and ARCHITECTURE.md make to the
// pages in prose, `docs/<page>.md, "<heading>"` (or `docs/<page>.md, section "<heading>"`, a comment's line break
// allowed in between): the page must exist and have a heading with exactly that text. References to sections of the
// README that moved (`README, "<heading>"`) are reported as stale.
//
// It also checks that every test file that the code, the tests, CI and the pages name (`test/<name>.e2e-spec.ts`,
// `test/medium/<name>.medium-spec.ts`, a `*` standing for any part of a name: `test/sso-saml-*.e2e-spec.ts`) exists,
// so that a comment does not keep pointing at a file that was split or renamed.
//
// Exit code 0 when nothing is broken or stale, 1 otherwise. CI runs it with the lint.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');

function defaultFiles() {
  const docs = join(root, 'docs');
  return [
    join(root, 'README.md'),
    join(root, 'ARCHITECTURE.md'),
    ...readdirSync(docs)
      .filter((name) => name.endsWith('.md'))
      .sort()
      .map((name) => join(docs, name)),
  ];
}

/** The Markdown without fenced code blocks (each replaced by blank lines, so line numbers stay). */
function withoutFences(markdown) {
  let fence = null;
  return markdown.split('\n').map((line) => {
    const match = /^\s*(```+|~~~+)/.exec(line);
    if (fence) {
      if (match && match[1][0] === fence[0] && match[1].length >= fence.length) fence = null;
      return '';
    }
    if (match) {
      fence = match[1];
      return '';
    }
    return line;
  });
}

/** GitHub's anchor for a heading's text. */
export function slug(heading) {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // HTML tags
    .replace(/[`*_~]/g, (c) => (c === '_' ? '_' : '')); // emphasis and code marks (underscores stay)
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

const anchorCache = new Map();
/** The anchors of a Markdown file: its headings' slugs, repeated ones numbered, and explicit `id`/`name` attributes. */
function anchors(file) {
  if (anchorCache.has(file)) return anchorCache.get(file);
  const found = new Set();
  const counts = new Map();
  for (const line of withoutFences(readFileSync(file, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]);
      const n = counts.get(base) ?? 0;
      counts.set(base, n + 1);
      found.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) found.add(m[1]);
  }
  anchorCache.set(file, found);
  return found;
}

/**
 * Every link target of a text (its fenced blocks blanked), outside code spans, with the line it starts on. Links may
 * run across a line break, as wrapped text does, and so may code spans.
 */
function targets(text) {
  const code = text.replace(/`[^`]*`/g, (span) => ' '.repeat(span.length));
  const lineOf = (offset) => code.slice(0, offset).split('\n').length;
  const out = [];
  for (const m of code.matchAll(/!?\[([^\][]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
    out.push({ line: lineOf(m.index), target: m[2] });
  for (const m of code.matchAll(/\s(?:href|src)="([^"]+)"/g))
    out.push({ line: lineOf(m.index), target: m[1] });
  return out;
}

const files =
  process.argv.slice(2).length > 0 ? process.argv.slice(2).map((f) => resolve(f)) : defaultFiles();
const broken = [];
const stale = [];
let checked = 0;
for (const file of files) {
  const text = withoutFences(readFileSync(file, 'utf8')).join('\n');
  for (const { line, target } of targets(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …
    checked++;
    const where = `${relative(root, file)}:${line}`;
    const [path, anchor] = target.split('#', 2);
    const resolved = path ? resolve(dirname(file), decodeURI(path)) : file;
    const fromRoot = relative(root, resolved);
    if (!existsSync(resolved)) {
      broken.push({ where, target, reason: 'no such file' });
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
      broken.push({ where, target, reason: 'an anchor into something that is not a Markdown page' });
      continue;
    }
    if (!anchors(resolved).has(decodeURIComponent(anchor))) {
      broken.push({ where, target, reason: `no heading with the anchor #${anchor} in ${fromRoot}` });
    }
  }
}

/** The headings of a page, as written (Markdown kept). */
function headingTexts(file) {
  const found = new Set();
  for (const line of withoutFences(readFileSync(file, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) found.add(heading[1]);
  }
  return found;
}

let references = 0;
if (process.argv.slice(2).length === 0) {
  // Tracked and new files of the repository, outside the pages themselves and what is generated or vendored.
  const listed = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\n')
    .filter(
      (f) =>
        f &&
        !/^(node_modules|dist)\/|^docs\/|^tools\/docs\/|^README\.md$|openapi\.json$|package-lock\.json$/.test(
          f,
        ),
    )
    .filter((f) => /\.(ts|mjs|js|md|json|ya?ml|sh)$|^\.ci\/run$|Dockerfile$/.test(f));
  const readmeHeadings = headingTexts(join(root, 'README.md'));
  const everyFile = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((f) => f && existsSync(join(root, f)));
  const pages = ['README.md', 'ARCHITECTURE.md', ...readdirSync(join(root, 'docs')).map((p) => `docs/${p}`)];
  for (const name of [...listed, ...pages.filter((p) => p.endsWith('.md'))]) {
    const file = join(root, name);
    if (!existsSync(file) || statSync(file).isDirectory()) continue;
    const text = readFileSync(file, 'utf8');
    // eslint.rules.spec.ts lints code as if it were in files that do not exist.
    if (name === 'eslint.rules.spec.ts') continue;
    for (const m of text.matchAll(/\btest\/[\w*/.-]*?\.(?:e2e|medium)-spec\.ts(?![\w.])/g)) {
      references++;
      const glob = m[0]
        .replace(/[.]/g, '\\.')
        .replace(/\*\*\//g, '\0')
        .replace(/\*/g, '[^/]*')
        .replace(/\0/g, '(?:.*/)?');
      const pattern = new RegExp(`^${glob}$`);
      if (!everyFile.some((f) => pattern.test(f)))
        broken.push({
          where: `${name}:${text.slice(0, m.index).split('\n').length}`,
          target: m[0],
          reason: 'no such test file (split or renamed? name the files it became)',
        });
    }
  }
  for (const name of listed) {
    const file = join(root, name);
    if (!existsSync(file) || statSync(file).isDirectory()) continue;
    const text = readFileSync(file, 'utf8');
    const lineOf = (offset) => text.slice(0, offset).split('\n').length;
    // Between the page and the heading: a comma, spaces, and a comment's line break with its marker.
    for (const m of text.matchAll(/\bdocs\/([\w-]+\.md),?[\s*/#]+(?:section\s+)?"([^"]+)"/g)) {
      references++;
      const page = join(root, 'docs', m[1]);
      const where = `${name}:${lineOf(m.index)}`;
      const heading = m[2].replace(/\s*\n[\s*/#]*/g, ' ');
      if (!existsSync(page)) broken.push({ where, target: `docs/${m[1]}`, reason: 'no such page' });
      else if (!headingTexts(page).has(heading))
        broken.push({
          where,
          target: `docs/${m[1]}, "${heading}"`,
          reason: 'no heading with that text on the page',
        });
    }
    for (const m of text.matchAll(/\bREADME(?:\.md)?(?:,|'s)[\s*/#]+(?:section\s+)?"([^"]+)"/g)) {
      const heading = m[1].replace(/\s*\n[\s*/#]*/g, ' ');
      if (readmeHeadings.has(heading) || name.startsWith('packages/')) continue;
      references++;
      stale.push({ where: `${name}:${lineOf(m.index)}`, target: `README, "${heading}"` });
    }
  }
}

for (const b of broken) process.stdout.write(`BROKEN   ${b.where}: ${b.target}: ${b.reason}\n`);
for (const r of stale)
  process.stdout.write(
    `stale    ${r.where}: ${r.target}: the section is on a page of docs/ now (docs/README.md)\n`,
  );
process.stdout.write(
  `links: ${checked} relative links in ${files.length} files, ${references} references to pages from elsewhere; ` +
    `${broken.length} broken, ${stale.length} stale references to the README\n`,
);
process.exit(broken.length === 0 && stale.length === 0 ? 0 : 1);
