/**
 * Keeps `String.prototype` a fast object in V8, which makes character loops (`text.charCodeAt(i)`) and string methods
 * 4 to 8 times faster in the whole process than without it.
 *
 * V8 turns a prototype into a slow "dictionary" object the first time an ordinary object is created with it as its
 * prototype. ioredis does that to `String.prototype` as it loads (`class VerbatimString extends String`, in its RESP
 * decoder), and the service loads ioredis with the platform. From then on, optimized code finds `charCodeAt` or
 * `slice` of every string through a hash-table lookup: a loop over 2 MB of text that takes 3 to 5 ms takes 18 to 25,
 * and the PII detectors ran at half their speed (docs/benchmarks.md, "PII detectors (bench:pii)").
 *
 * V8 makes such a prototype fast again, and marks it to stay fast, once an inline cache has looked a property up
 * through it: an object created later with it as its prototype no longer makes it slow. This does that lookup, on a
 * `String` wrapper, in a function called often enough to have its inline caches. Entry points call it once, after
 * their imports and before any work; calling it again costs about 10 µs. Asserted by its spec in a child process with
 * V8's `%HasFastProperties`, the only way to read the state.
 */
export function keepStringPrototypeFast(): void {
  // Self-contained (its spec runs its source in a child process with V8's natives syntax).
  const lookUp = (wrapper: object): number =>
    typeof (wrapper as { charAt?: unknown }).charAt === 'function' ? 1 : 0;
  const lookups = 256;
  const wrapper = new String('');
  let found = 0;
  // V8 gives a function its inline caches after a few calls; past them, each lookup through the prototype is seen.
  for (let i = 0; i < lookups; i++) found += lookUp(wrapper);
  if (found !== lookups) throw new Error('String.prototype.charAt is not a function');
}
