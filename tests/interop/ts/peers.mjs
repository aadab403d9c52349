// Loads the pinned official TypeScript SDK from the npm prefix that install.sh fills
// (.cache/interop/npm, or $INTEROP_NPM), and small helpers shared by the peer programs.

import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const npmPrefix = process.env.INTEROP_NPM ?? resolve(here, '../../../.cache/interop/npm');
export const requireFromPrefix = createRequire(join(npmPrefix, 'package.json'));

export const sdk = (path) => requireFromPrefix(`@modelcontextprotocol/sdk/${path}`);

export class CheckFailed extends Error {}

export function expect(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

export function short(value, limit = 160) {
  let text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  text = text.split(/\s+/).join(' ');
  return text.length <= limit ? text : `${text.slice(0, limit - 3)}...`;
}

export const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

export async function waitFor(predicate, ms = 2000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (predicate()) return true;
    await sleep(20);
  }
  return predicate();
}

export function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new CheckFailed(`${what} timed out after ${ms / 1000}s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// Runs named check groups, printing one PASS/FAIL line each; returns the number that failed.
export async function runGroups(prefix, groups, timeoutMs = 20000) {
  let failed = 0;
  for (const [name, check] of groups) {
    try {
      await withTimeout(Promise.resolve().then(check), timeoutMs, name);
      console.log(`PASS ${prefix}/${name}`);
    } catch (error) {
      failed += 1;
      const reason = error instanceof CheckFailed ? error.message : `${error?.name ?? 'Error'}: ${error?.message ?? error}`;
      console.error(error?.stack ?? error);
      console.log(`FAIL ${prefix}/${name}: ${short(reason, 300)}`);
    }
  }
  return failed;
}
