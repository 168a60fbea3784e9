import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { keepStringPrototypeFast } from './fast-string-prototype.js';

/**
 * Runs `body` in a child Node.js with V8's natives syntax (`%HasFastProperties`), the only way to read whether a
 * prototype is a fast object; `fast()` there says whether String.prototype is. Returns what the child printed.
 */
function inChild(body: string): unknown {
  const script = `
    import { createRequire } from 'node:module';
    const require = createRequire(${JSON.stringify(`${process.cwd()}/package.json`)});
    const fast = () => %HasFastProperties(String.prototype);
    const keepStringPrototypeFast = ${keepStringPrototypeFast.toString()};
    const out = {};
    ${body}
    process.stdout.write(JSON.stringify(out));`;
  const printed = execFileSync(
    process.execPath,
    ['--allow-natives-syntax', '--input-type=module', '-e', script],
    { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
  );
  return JSON.parse(printed);
}

// Each case starts a Node.js process: past the unit tests' 5 s on a loaded machine.
describe('keepStringPrototypeFast', { timeout: 60_000 }, () => {
  it('makes String.prototype fast again after ioredis made it slow, and it stays fast', () => {
    expect(
      inChild(`
        out.atStart = fast();
        require('ioredis');
        out.afterIoredis = fast();
        keepStringPrototypeFast();
        out.afterKeep = fast();
        class Verbatim extends String {}
        new Verbatim('x');
        Object.create(String.prototype);
        out.afterAnotherSubclass = fast();
        keepStringPrototypeFast();
        out.afterSecondCall = fast();`),
    ).toEqual({
      atStart: true,
      // Why the entry points call it: ioredis's `class VerbatimString extends String` slows every string in the process.
      afterIoredis: false,
      afterKeep: true,
      afterAnotherSubclass: true,
      afterSecondCall: true,
    });
  });

  it('makes it fast whatever made it slow, and strings behave as before', () => {
    expect(
      inChild(`
        Object.create(String.prototype);
        out.afterCreate = fast();
        keepStringPrototypeFast();
        out.afterKeep = fast();
        out.methods = ['abc'.slice(1), 'abc'.charCodeAt(2), new String('x') instanceof String];`),
    ).toEqual({ afterCreate: false, afterKeep: true, methods: ['bc', 99, true] });
  });
});
