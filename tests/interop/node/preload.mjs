// Loaded with `node --import` before the conformance suite on Node < 22: registers hooks.mjs,
// which gives the suite an `fs` that has `globSync` (new in Node 22).
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
