// Summarises conformance results: one line per scenario on stdout,
//   PASS conformance/<kind>/<version>/<scenario>
//   FAIL conformance/<kind>/<version>/<scenario>: <check ids>
// and, on stderr, each failing check's message. A scenario passes only if its checks.json
// exists and holds no FAILURE and no WARNING check (and, for a client scenario, the suite
// exited 0: a client that crashed or timed out fails too).
//
// usage: node summarize.mjs <server|client> <version> <results-dir> <suite-exit-code|-> <scenario>...
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const [kind, version, dir, exitCode, ...expected] = process.argv.slice(2);

/** Every checks.json under `root`, by scenario name (the directory name without its prefix and timestamp). */
function results(root) {
  const found = new Map();
  const walk = (path, rel) => {
    for (const entry of readdirSync(path)) {
      const full = join(path, entry);
      if (statSync(full).isDirectory()) {
        walk(full, rel ? `${rel}/${entry}` : entry);
      } else if (entry === 'checks.json' && rel) {
        const scenario = rel.replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '').replace(/^server-/, '');
        found.set(scenario, full);
      }
    }
  };
  if (existsSync(root)) walk(root, '');
  return found;
}

const found = results(dir);
for (const scenario of expected) {
  const name = `conformance/${kind}/${version}/${scenario}`;
  const file = found.get(scenario);
  if (!file) {
    console.log(`FAIL ${name}: no results (the suite did not run it or crashed)`);
    continue;
  }
  let checks;
  try {
    checks = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    console.log(`FAIL ${name}: unreadable ${file}: ${e.message}`);
    continue;
  }
  const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
  const ids = [...new Set(bad.map((c) => (c.status === 'WARNING' ? `${c.id} (warning)` : c.id)))];
  if (exitCode !== '-' && exitCode !== '0' && ids.length === 0) {
    ids.push(`suite exited ${exitCode} (client error or timeout; see ${join(file, '..')}/stderr.txt)`);
  }
  if (ids.length === 0 && checks.some((c) => c.status === 'SUCCESS')) {
    console.log(`PASS ${name}`);
  } else if (ids.length === 0) {
    console.log(`FAIL ${name}: no successful check`);
  } else {
    console.log(`FAIL ${name}: ${ids.join(', ')}`);
    for (const c of bad) {
      console.error(`    ${name} ${c.status} ${c.id}: ${c.errorMessage ?? c.description}`);
    }
  }
}
