#!/usr/bin/env node
// Checks that a documentation move lost nothing: every statement of an old README (the file given as argument) must
// still be found in README.md or in one of docs/*.md.
//
//   git show HEAD:README.md > old-readme.md && node tools/docs/nothing-lost.mjs old-readme.md
//
// The old file is split into units: each sentence of a paragraph or a list item, each table row, each line of a code
// block, and each heading. A unit is found when its text, with white space folded to single spaces, occurs in the
// new files with white space folded the same way. Before comparing, both sides lose what a move may change without
// changing a statement: list and quote markers at the start of a line, and link targets (`[text](target)` reads as
// `text`), so a section may become a list, a quote may lose its marker, and a cross-reference may point to the page a
// section moved to. A heading must be found as a heading (any level) with exactly its old text.
//
// Deliberate rewrites (a stale fact fixed) are listed in tools/docs/nothing-lost.rewrites.json as
// {"old": "<the old unit>", "new": "<text that must now be found instead>", "why": "..."}; each is reported, and its
// replacement must be present.
//
// Exit code 0 when nothing is missing, 1 otherwise, 2 on bad usage. --quiet prints only the summary line; --units
// lists every unit of the old file first (line, kind, text).
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const args = process.argv.slice(2);
const quiet = args.includes('--quiet');
const listUnits = args.includes('--units');
const oldPath = args.find((a) => !a.startsWith('--'));
if (!oldPath) {
  process.stderr.write('usage: node tools/docs/nothing-lost.mjs <old README> [--quiet]\n');
  process.exit(2);
}

/** The files a moved statement may be in: README.md and every docs/*.md. */
function newFiles() {
  const docs = join(root, 'docs');
  const pages = readdirSync(docs)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => join(docs, name));
  return [join(root, 'README.md'), ...pages];
}

const fold = (text) => text.replace(/\s+/g, ' ').trim();

/** Link targets dropped (`[text](target)` → `text`, images too), so a re-pointed link is the same statement. */
const unlink = (text) => text.replace(/!?\[([^\][]*)\]\((?:[^()\s]|\([^()\s]*\))*\)/g, '$1');

const LIST_MARKER = /^\s*(?:[-*+]|\d+\.)\s+/;
const QUOTE_MARKER = /^\s*>\s?/;

/** One line as prose: quote and list markers dropped. */
const prose = (line) => line.replace(QUOTE_MARKER, '').replace(LIST_MARKER, '');

/** Splits a paragraph's folded text into sentences. */
function sentences(text) {
  return text
    .split(/(?<=[.!?:;])\s+(?=[A-Z`*"([<0-9])/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** The units of a Markdown file: {line, kind, text} with text folded and unlinked. */
function units(markdown) {
  const lines = markdown.split('\n');
  const out = [];
  let fence = null;
  let block = null; // {line, parts}
  const flush = () => {
    if (!block) return;
    const text = fold(unlink(block.parts.join(' ')));
    for (const sentence of sentences(text)) out.push({ line: block.line, kind: 'sentence', text: sentence });
    block = null;
  };
  lines.forEach((raw, index) => {
    const line = index + 1;
    const fenceMatch = /^\s*(```+|~~~+)/.exec(raw);
    if (fence) {
      if (fenceMatch && fenceMatch[1][0] === fence[0] && fenceMatch[1].length >= fence.length) fence = null;
      else if (raw.trim()) out.push({ line, kind: 'code', text: fold(raw) });
      return;
    }
    if (fenceMatch) {
      flush();
      fence = fenceMatch[1];
      return;
    }
    const trimmed = prose(raw).trim();
    if (!trimmed) {
      flush();
      return;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(raw);
    if (heading) {
      flush();
      out.push({ line, kind: 'heading', text: fold(heading[2]) });
      return;
    }
    if (trimmed.startsWith('|')) {
      flush();
      if (/^\|[\s:|-]+\|?$/.test(trimmed)) return; // a table's separator row
      out.push({ line, kind: 'row', text: fold(unlink(trimmed)) });
      return;
    }
    // A list item starts a block of its own; its continuation lines join it.
    if (LIST_MARKER.test(raw.replace(QUOTE_MARKER, ''))) flush();
    if (!block) block = { line, parts: [] };
    block.parts.push(trimmed);
  });
  flush();
  return out;
}

/** The searchable text of the new files, and their headings. */
function corpus(files) {
  const texts = [];
  const headings = new Set();
  for (const file of files) {
    const markdown = readFileSync(file, 'utf8');
    for (const raw of markdown.split('\n')) {
      const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(raw);
      if (heading) headings.add(fold(heading[2]));
    }
    texts.push(fold(unlink(markdown.split('\n').map(prose).join('\n'))));
  }
  return { text: texts.join(' \u0000 '), headings };
}

const rewritesPath = join(here, 'nothing-lost.rewrites.json');
const rewrites = existsSync(rewritesPath) ? JSON.parse(readFileSync(rewritesPath, 'utf8')) : [];

const files = newFiles();
const { text, headings } = corpus(files);
const old = units(readFileSync(oldPath, 'utf8'));
if (listUnits) for (const u of old) process.stdout.write(`${u.line}\t${u.kind}\t${u.text}\n`);
const missing = [];
const rewritten = [];
const seen = new Set();
for (const unit of old) {
  const key = `${unit.kind}\u0000${unit.text}`;
  if (seen.has(key)) continue;
  seen.add(key);
  const found = unit.kind === 'heading' ? headings.has(unit.text) : text.includes(unit.text);
  if (found) continue;
  const rewrite = rewrites.find((r) => fold(unlink(r.old)) === unit.text);
  if (rewrite) {
    const present = text.includes(fold(unlink(rewrite.new)));
    rewritten.push({ ...unit, why: rewrite.why, present });
    if (!present) missing.push({ ...unit, note: 'listed as rewritten, but its replacement is not found' });
    continue;
  }
  missing.push(unit);
}

if (!quiet) {
  for (const r of rewritten)
    process.stdout.write(`rewritten  line ${r.line} (${r.kind}): ${r.text}\n           why: ${r.why}\n`);
  for (const m of missing)
    process.stdout.write(
      `MISSING    line ${m.line} (${m.kind}): ${m.text}${m.note ? `\n           ${m.note}` : ''}\n`,
    );
}
process.stdout.write(
  `nothing-lost: ${seen.size} units of ${oldPath} checked against ${files.length} files; ` +
    `${missing.length} missing, ${rewritten.length} deliberately rewritten\n`,
);
process.exit(missing.length === 0 ? 0 : 1);
