// node:fs plus a `globSync` stub. The suite only calls globSync in `tier-check`, which the
// interop scripts never run.
import fs from 'node:fs';

export * from 'node:fs';
export default fs;

export function globSync() {
  throw new Error('globSync needs Node 22 or later');
}
