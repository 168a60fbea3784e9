// Builds the production artefact by following the Dockerfile, on a machine without a Docker engine: every
// instruction of the build stages runs as written, in a folder that stands for the stage's filesystem, on the
// Node.js line its `FROM node:<line>-…` names (from the npm registry's `node` package, tools/runtimes/node.sh).
// The final stage is assembled the same way (its COPY --from, WORKDIR, ENV, USER, HEALTHCHECK, CMD), except its
// RUN instructions, which change the machine itself (Debian packages, a system user): the packages it installs
// are checked to be installed here instead, and the rest are listed as not run. So a change to the Dockerfile
// is what CI's artefact smoke tests (tools/artefact/smoke.mjs).
//
//   node tools/artefact/dockerfile.mjs build <out>    builds into <out>; prints the final stage as JSON
//   node tools/artefact/dockerfile.mjs packages       prints the Debian packages the final stage installs
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The Dockerfile's instructions: `{ op, args, line }`, comments dropped and `\` continuations joined. */
export function parseDockerfile(text) {
  const instructions = [];
  let pending = '';
  let startLine = 0;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trimEnd();
    if (!pending && (line.trim() === '' || line.trimStart().startsWith('#'))) return;
    if (pending && line.trimStart().startsWith('#')) return; // a comment inside a continued instruction
    if (!pending) startLine = index + 1;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      return;
    }
    const whole = (pending + line).trim();
    pending = '';
    const match = /^([A-Za-z]+)\s+([\s\S]*)$/.exec(whole);
    if (!match) throw new Error(`Dockerfile line ${startLine}: cannot read "${whole}"`);
    instructions.push({ op: match[1].toUpperCase(), args: match[2].trim(), line: startLine });
  });
  if (pending) throw new Error('Dockerfile: the last instruction ends with a line continuation');
  return instructions;
}

/** The options each instruction may carry here; any other (`--chown`, `--chmod`, `--mount`, …) stops the build. */
const KNOWN_OPTIONS = { COPY: ['from'], HEALTHCHECK: ['interval', 'timeout', 'start-period', 'retries'] };

/** Splits `--flag=value` options off the front of an instruction's arguments. */
function flags(ins) {
  const options = {};
  let rest = ins.args;
  for (let m = /^--([a-z-]+)(?:=(\S+))?\s*/.exec(rest); m; m = /^--([a-z-]+)(?:=(\S+))?\s*/.exec(rest)) {
    if (!(KNOWN_OPTIONS[ins.op] ?? []).includes(m[1])) {
      throw new Error(`Dockerfile line ${ins.line}: ${ins.op} --${m[1]} is not followed by this builder`);
    }
    options[m[1]] = m[2] ?? true;
    rest = rest.slice(m[0].length);
  }
  return { options, rest };
}

/** A Docker duration (`30s`, `1m30s`, `500ms`) in milliseconds. */
export function durationMs(text) {
  let total = 0;
  for (const [, n, unit] of String(text).matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(n) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit];
  }
  return total;
}

/** Shell-like words: spaces separate, quotes group (ENV, COPY's shell form). */
function words(text) {
  const out = [];
  let current = '';
  let quote = '';
  let started = false;
  for (const ch of text) {
    if (quote) {
      if (ch === quote) quote = '';
      else current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      started = true;
    } else if (/\s/.test(ch)) {
      if (started || current) out.push(current);
      current = '';
      started = false;
    } else {
      current += ch;
    }
  }
  if (started || current) out.push(current);
  return out;
}

/** A CMD or HEALTHCHECK CMD: the exec form (a JSON array) as is, the shell form through `/bin/sh -c`. */
function commandOf(text) {
  return text.startsWith('[') ? JSON.parse(text) : ['/bin/sh', '-c', text];
}

/**
 * The `.dockerignore` patterns as one test of a context-relative path: Docker's rules (Go's filepath.Match per
 * segment: `*`, `?`, `[…]`; `**` any number of folders), a path left out when it or a folder above it matches; no
 * `!` exceptions.
 */
export function dockerignore(text) {
  const patterns = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  if (patterns.some((p) => p.startsWith('!'))) throw new Error('.dockerignore: exceptions (!) are not followed here');
  const segment = (seg) =>
    seg
      .split(/(\*|\?|\[[^\]]*\])/)
      .map((part) => {
        if (part === '*') return '[^/]*';
        if (part === '?') return '[^/]';
        if (part.startsWith('[') && part.endsWith(']') && part.length > 2) return `[${part.slice(1, -1).replace(/^\^/, '^').replace(/\\/g, '\\\\')}]`;
        return part.replace(/[.+^${}()|[\]\\]/g, '\\$&');
      })
      .join('');
  const regexes = patterns.map((p) => {
    const segments = p.replace(/^\/+|\/+$/g, '').split('/').filter((x) => x && x !== '.');
    const source = segments.map((seg) => (seg === '**' ? '(?:[^/]+/)*' : `${segment(seg)}/`)).join('');
    return new RegExp(`^${source.replace(/\/$/, '').replace(/\(\?:\[\^\/\]\+\/\)\*$/, '.*')}$`);
  });
  return (path) => {
    const parts = path.split('/');
    return parts.some((_, i) => regexes.some((r) => r.test(parts.slice(0, i + 1).join('/'))));
  };
}

/** The build context: every file of the checkout, as `docker build .` sends it, less what `.dockerignore` leaves out. */
function contextFiles() {
  const file = join(ROOT, '.dockerignore');
  const ignored = dockerignore(existsSync(file) ? readFileSync(file, 'utf8') : '');
  const files = [];
  const walk = (rel) => {
    for (const entry of readdirSync(join(ROOT, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (ignored(path)) continue;
      if (entry.isDirectory()) walk(path);
      else files.push(path);
    }
  };
  walk('');
  return files;
}

/** Copies `from` to `to` as Docker's COPY does: a folder's contents into the destination folder. */
function copyInto(from, to, toIsFolder) {
  if (statSync(from).isDirectory()) {
    mkdirSync(to, { recursive: true });
    cpSync(from, to, { recursive: true, verbatimSymlinks: true });
  } else {
    const target = toIsFolder ? join(to, from.split('/').pop()) : to;
    mkdirSync(dirname(target), { recursive: true });
    cpSync(from, target);
  }
}

const NETWORK_ENV = /^(HOME|TMPDIR|LANG|npm_config_.*|NODE_EXTRA_CA_CERTS|SSL_CERT_(FILE|DIR)|(HTTPS?|NO|ALL)_PROXY|(https?|no|all)_proxy)$/;

const nodeLineOf = (image) => /^node:(\d+)(?:[.-]|$)/.exec(image)?.[1];

/** The Debian packages named by `apt-get install` in a RUN instruction. */
function aptPackages(run) {
  const packages = [];
  for (const segment of run.split(/&&|;|\|\|/)) {
    const tokens = segment.trim().split(/\s+/);
    const at = tokens.indexOf('install');
    if (tokens[0] === 'apt-get' && at > 0) packages.push(...tokens.slice(at + 1).filter((t) => !t.startsWith('-')));
  }
  return packages;
}

export function readStages(dockerfile = join(ROOT, 'Dockerfile')) {
  const stages = [];
  for (const ins of parseDockerfile(readFileSync(dockerfile, 'utf8'))) {
    if (ins.op === 'FROM') {
      const [image, as, name] = ins.args.split(/\s+/);
      stages.push({ image, name: as?.toUpperCase() === 'AS' ? name : String(stages.length), instructions: [] });
    } else {
      if (!stages.length) throw new Error(`Dockerfile line ${ins.line}: ${ins.op} before FROM`);
      stages.at(-1).instructions.push(ins);
    }
  }
  return stages;
}

/** The Debian packages the final stage installs. */
export function runtimePackages() {
  return readStages()
    .at(-1)
    .instructions.filter((i) => i.op === 'RUN')
    .flatMap((i) => aptPackages(i.args));
}

function nodeBin(line) {
  return execFileSync(join(ROOT, 'tools/runtimes/node.sh'), [line], { encoding: 'utf8' }).trim();
}

/**
 * Builds every stage into `<out>/<stage>` (the stage's root). Returns the final stage: its folder, working
 * directory, environment, user, health check, command, and the Node.js line its image names.
 */
export function build(out) {
  const stages = readStages();
  removeArtefact(out);
  mkdirSync(out, { recursive: true });
  const context = join(out, '.context');
  for (const file of contextFiles()) copyInto(join(ROOT, file), join(context, file), false);
  const built = new Map();
  let final;
  stages.forEach((stage, index) => {
    const last = index === stages.length - 1;
    const root = join(out, stage.name);
    const parent = built.get(stage.image);
    const state = parent
      ? { ...parent, env: { ...parent.env }, root }
      : { root, workdir: '/', env: {}, user: 'root', line: nodeLineOf(stage.image), image: stage.image };
    // A stage built on another starts from a copy of its files (hard links: later instructions add and remove
    // files, they do not write into the parent's).
    if (parent) execFileSync('cp', ['-al', parent.root, root]);
    else mkdirSync(root, { recursive: true });
    if (!state.line) throw new Error(`stage ${stage.name}: ${stage.image} is not a node:<line> image`);
    console.log(`# stage ${stage.name} FROM ${stage.image} (Node.js ${state.line})`);
    const at = (p) => join(root, p.startsWith('/') ? p : join(state.workdir, p));
    for (const ins of stage.instructions) {
      const { options, rest } = flags(ins);
      switch (ins.op) {
        case 'WORKDIR':
          state.workdir = resolve(state.workdir, rest);
          mkdirSync(at(state.workdir), { recursive: true });
          break;
        case 'ENV':
          for (const word of words(rest)) {
            const eq = word.indexOf('=');
            if (eq < 1) throw new Error(`Dockerfile line ${ins.line}: ENV takes key=value pairs`);
            state.env[word.slice(0, eq)] = word.slice(eq + 1);
          }
          break;
        case 'COPY': {
          const parts = words(rest);
          const dest = parts.pop();
          const source = options.from ? built.get(options.from)?.root : context;
          if (!source) throw new Error(`Dockerfile line ${ins.line}: no stage ${options.from}`);
          const toFolder = dest.endsWith('/') || parts.length > 1 || dest === '.';
          for (const src of parts) {
            const from = options.from ? join(source, src) : join(source, src === '.' ? '' : src);
            if (!existsSync(from)) throw new Error(`Dockerfile line ${ins.line}: COPY ${src}: not in the ${options.from ? `stage ${options.from}` : 'build context'}`);
            copyInto(from, at(dest), toFolder);
          }
          console.log(`COPY ${ins.args}`);
          break;
        }
        case 'RUN':
          if (last) {
            const packages = aptPackages(rest);
            if (packages.length) {
              const missing = packages.filter(
                (p) => spawnSync('dpkg-query', ['-W', '-f=${Status}', p], { encoding: 'utf8' }).stdout !== 'install ok installed',
              );
              if (missing.length) throw new Error(`the final stage installs ${missing.join(', ')}, which this machine lacks`);
              console.log(`RUN (checked: ${packages.join(', ')} installed here) ${rest}`);
            } else {
              const user = /\buseradd\b[^&;|]*?(?:--uid|-u)\s+(\d+)[^&;|]*?\s([a-z_][a-z0-9_-]*)\s*(?:$|&&|;)/.exec(rest);
              if (user) state.users = { ...state.users, [user[2]]: Number(user[1]), [user[1]]: Number(user[1]) };
              console.log(`RUN (not run here: it changes this machine's users or folders) ${rest}`);
            }
          } else {
            console.log(`RUN ${rest}`);
            const bin = nodeBin(state.line);
            if (/(^|[\s;&|(])\/(?!dev\/null)/.test(rest)) {
              throw new Error(`Dockerfile line ${ins.line}: RUN names an absolute path, which here would be this machine's`);
            }
            // The stage's environment, not CI's (NODE_OPTIONS, DATABASE_URL, …): only what reaches the registry
            // comes from outside, as a build's network settings would (HOME for npm's cache and configuration,
            // npm_config_*, proxies, the certificate authorities a proxy needs).
            const outside = Object.fromEntries(Object.entries(process.env).filter(([k]) => NETWORK_ENV.test(k)));
            const result = spawnSync('/bin/sh', ['-c', rest], {
              cwd: at(state.workdir),
              env: { ...outside, ...state.env, PATH: `${bin}:/usr/local/bin:/usr/bin:/bin` },
              stdio: 'inherit',
            });
            if (result.status !== 0) throw new Error(`Dockerfile line ${ins.line}: RUN exited ${result.status}`);
          }
          break;
        case 'USER':
          state.user = rest;
          break;
        case 'HEALTHCHECK': {
          const m = /^CMD\s+([\s\S]*)$/.exec(rest);
          state.healthcheck = m ? { options, command: commandOf(m[1]) } : undefined;
          break;
        }
        case 'CMD':
          state.cmd = commandOf(rest);
          break;
        case 'ENTRYPOINT':
          if (!rest.startsWith('[')) throw new Error(`Dockerfile line ${ins.line}: ENTRYPOINT in the shell form ignores CMD`);
          state.entrypoint = JSON.parse(rest);
          break;
        case 'STOPSIGNAL':
          state.stopSignal = rest;
          break;
        case 'EXPOSE':
        case 'VOLUME':
        case 'LABEL':
        case 'ARG':
          break;
        default:
          throw new Error(`Dockerfile line ${ins.line}: ${ins.op} is not followed by this builder`);
      }
    }
    built.set(stage.name, state);
    final = state;
  });
  rmSync(context, { recursive: true, force: true });
  for (const state of built.values()) if (state !== final) rmSync(state.root, { recursive: true, force: true });
  // The image's user: created by the final stage, and not root.
  const uid = final.users?.[final.user.split(':')[0]];
  if (uid === undefined || uid === 0) {
    throw new Error(`the final stage runs as ${final.user}, which is root or not a user it creates with useradd --uid`);
  }
  // The image's `node`, where the official images keep it.
  const nodeTarget = join(final.root, 'usr/local/bin/node');
  mkdirSync(dirname(nodeTarget), { recursive: true });
  cpSync(join(nodeBin(final.line), 'node'), nodeTarget);
  // The image's files belong to root, with the modes they had in the build; its user reads them as "other".
  // Every file must be readable by others (and every folder searchable), and nothing is left writable, so that a
  // service that writes under its root fails here as it would on a read-only root filesystem.
  const unreadable = readOnly(final.root);
  if (unreadable.length) {
    throw new Error(`the image's user cannot read ${unreadable.slice(0, 5).join(', ')}${unreadable.length > 5 ? ', …' : ''}`);
  }
  chmodSync(out, 0o755);
  const summary = {
    root: final.root,
    workdir: final.workdir,
    env: final.env,
    user: final.user,
    uid,
    line: final.line,
    healthcheck: final.healthcheck,
    entrypoint: final.entrypoint ?? [],
    cmd: final.cmd,
    stopSignal: final.stopSignal ?? 'SIGTERM',
  };
  writeFileSync(join(out, 'stage.json'), JSON.stringify(summary, null, 2));
  return summary;
}

/** Takes the write bits off everything under `dir`; returns what others cannot read (or search, for folders). */
function readOnly(dir, base = dir, unreadable = []) {
  const mode = statSync(dir).mode;
  if ((mode & 0o005) !== 0o005) unreadable.push(`${dir.slice(base.length) || '/'} (mode ${(mode & 0o777).toString(8)})`);
  chmodSync(dir, mode & 0o7555);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) readOnly(path, base, unreadable);
    else if (entry.isFile()) {
      const fileMode = statSync(path).mode;
      if ((fileMode & 0o004) === 0) unreadable.push(`${path.slice(base.length)} (mode ${(fileMode & 0o777).toString(8)})`);
      chmodSync(path, fileMode & 0o7555);
    }
  }
  return unreadable;
}

/** Makes a built artefact writable again, so that it can be removed by a user other than root. */
export function removeArtefact(out) {
  if (!existsSync(out)) return;
  execFileSync('chmod', ['-R', 'u+w', out]);
  rmSync(out, { recursive: true, force: true });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [command, out] = process.argv.slice(2);
  if (command === 'packages') console.log(runtimePackages().join(' '));
  else if (command === 'build' && out) console.log(JSON.stringify(build(resolve(out)), null, 2));
  else {
    console.error('usage: node tools/artefact/dockerfile.mjs build <out> | packages');
    process.exit(2);
  }
}
