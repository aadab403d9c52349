// Drives Talaria's everything-server with the official TypeScript MCP SDK client.
//
// Prints one line per feature group, `PASS <prefix>/<group>` or `FAIL <prefix>/<group>: <reason>`,
// on stdout; diagnostics go to stderr. Exit status: 0 all passed, 1 some failed.
//
// usage: node client.mjs --prefix NAME [--server-name NAME] (--stdio CMD [ARGS...] | --http URL | --sse URL | --ws URL)

import { CheckFailed, expect, runGroups, sdk, short, sleep, waitFor } from './peers.mjs';

const { Client } = sdk('client/index.js');
const { StdioClientTransport } = sdk('client/stdio.js');
const { StreamableHTTPClientTransport } = sdk('client/streamableHttp.js');
const { SSEClientTransport } = sdk('client/sse.js');
const { WebSocketClientTransport } = sdk('client/websocket.js');
const types = sdk('types.js');

const SLOW_STATS_TOOL = 'slow-stats';
const EXPECTED_TOOLS = ['echo', 'add', 'fail', 'calls', 'log', 'slow', 'sample', 'elicit', 'roots'];
const ROOT_URI = 'file:///tmp/talaria-interop-root';
// When the server offers the client's model tools, the model asks for the weather tool under
// this id, then answers with the tool's result.
const WEATHER_CALL_ID = 'call-ts-1';
// The page the url-elicitation group has the server send the user to.
const LINK_URL = 'https://example.com/interop/link?from=typescript';

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--stdio') {
      out.stdio = argv.slice(i + 1);
      break;
    }
    out[flag.replace(/^--/, '')] = argv[++i];
  }
  if (!out.prefix || !(out.stdio || out.http || out.sse || out.ws)) {
    console.error('usage: client.mjs --prefix NAME (--stdio CMD [ARGS...] | --http URL | --sse URL | --ws URL)');
    process.exit(2);
  }
  return out;
}

const texts = (result) => (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

async function listAll(fetch, key) {
  const items = [];
  let cursor;
  for (let page = 0; page < 100; page++) {
    const result = await fetch(cursor === undefined ? {} : { cursor });
    items.push(...result[key]);
    cursor = result.nextCursor;
    if (!cursor) return items;
  }
  throw new CheckFailed(`${key}: more than 100 pages`);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const serverName = args['server-name'] ?? 'everything-server';
  // Our everything-server has a few extras the SDK-built peer servers lack.
  const ours = serverName === 'everything-server';
  let transport;
  if (args.stdio) {
    transport = new StdioClientTransport({ command: args.stdio[0], args: args.stdio.slice(1), stderr: 'inherit' });
  } else if (args.http) {
    transport = new StreamableHTTPClientTransport(new URL(args.http));
  } else if (args.sse) {
    transport = new SSEClientTransport(new URL(args.sse));
  } else {
    // Needs a global WebSocket: Node 22, or Node 20 with --experimental-websocket.
    transport = new WebSocketClientTransport(new URL(args.ws));
  }

  // Every frame the server sends, to see the negotiated version and stray notifications.
  const frames = [];
  const start = transport.start.bind(transport);
  transport.start = async () => {
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      frames.push(message);
      deliver?.(message, extra);
    };
    return start();
  };

  const client = new Client(
    { name: 'talaria-interop-ts', version: '1.0.0' },
    { capabilities: { sampling: { tools: {} }, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } },
  );
  const seen = { logs: [], sampling: [], elicitation: [], completions: [], roots: 0, errors: [] };
  client.onerror = (error) => seen.errors.push(error);
  client.setNotificationHandler(types.LoggingMessageNotificationSchema, (n) => {
    seen.logs.push(n.params);
  });
  client.setNotificationHandler(types.ElicitationCompleteNotificationSchema, (n) => {
    seen.completions.push(n.params.elicitationId);
  });
  client.setRequestHandler(types.CreateMessageRequestSchema, async (request) => {
    const params = request.params;
    seen.sampling.push(params);
    if (params.tools) {
      const last = params.messages.at(-1)?.content;
      const result = (Array.isArray(last) ? last : [last]).find((c) => c?.type === 'tool_result');
      if (!result) {
        return {
          role: 'assistant',
          content: [{ type: 'tool_use', id: WEATHER_CALL_ID, name: 'weather', input: { city: 'Paris' } }],
          model: 'interop-model',
          stopReason: 'toolUse',
        };
      }
      const said = (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join(' ');
      return { role: 'assistant', content: [{ type: 'text', text: `typescript heard: ${said}` }], model: 'interop-model', stopReason: 'endTurn' };
    }
    return { role: 'assistant', content: { type: 'text', text: 'pong from typescript' }, model: 'interop-model', stopReason: 'endTurn' };
  });
  client.setRequestHandler(types.ElicitRequestSchema, async (request) => {
    seen.elicitation.push(request.params);
    if (request.params.mode === 'url') return { action: 'accept' };
    return { action: 'accept', content: { answer: 'forty-two' } };
  });
  client.setRequestHandler(types.ListRootsRequestSchema, async () => {
    seen.roots += 1;
    return { roots: [{ uri: ROOT_URI, name: 'interop' }] };
  });

  try {
    await client.connect(transport);
  } catch (error) {
    console.error(error);
    console.log(`FAIL ${args.prefix}/connect: ${short(String(error?.message ?? error), 300)}`);
    return 1;
  }

  const slowStats = async () => {
    const r = await client.callTool({ name: SLOW_STATS_TOOL, arguments: {} });
    expect(!r.isError, `${SLOW_STATS_TOOL} isError: ${short(texts(r))}`);
    try {
      return JSON.parse(texts(r)); // the counters as a JSON text
    } catch {
      return r.structuredContent ?? {};
    }
  };

  const groups = [
    ['lifecycle', async () => {
      const init = frames.find((f) => f.result?.protocolVersion);
      expect(init?.result.protocolVersion === '2025-11-25', `negotiated ${init?.result?.protocolVersion}, wanted 2025-11-25`);
      expect(client.getServerVersion()?.name === serverName, `serverInfo ${short(client.getServerVersion())}`);
      const caps = client.getServerCapabilities() ?? {};
      for (const name of ['tools', 'prompts', 'resources', 'completions', 'logging']) {
        expect(caps[name], `capability ${name} missing: ${short(caps)}`);
      }
      expect(client.getInstructions(), 'no instructions');
      await client.ping();
    }],
    ['list', async () => {
      const tools = await listAll((p) => client.listTools(p), 'tools');
      const names = new Set(tools.map((t) => t.name));
      const missing = EXPECTED_TOOLS.filter((n) => !names.has(n) && (ours || n !== 'calls'));
      expect(missing.length === 0, `tools missing: ${missing}`);
      expect(tools.find((t) => t.name === 'add').outputSchema, 'add has no outputSchema');
      const prompts = await listAll((p) => client.listPrompts(p), 'prompts');
      const greet = prompts.find((p) => p.name === 'greet');
      expect(greet, `prompt greet missing: ${prompts.map((p) => p.name)}`);
      const required = Object.fromEntries((greet.arguments ?? []).map((a) => [a.name, a.required]));
      expect(required.name === true && 'tone' in required, `greet arguments ${short(greet.arguments)}`);
      const resources = await listAll((p) => client.listResources(p), 'resources');
      const uris = resources.map((r) => r.uri);
      expect(uris.includes('file:///readme.md') && (!ours || uris.includes('file:///pixel.png')), `resources ${uris}`);
      const templates = await listAll((p) => client.listResourceTemplates(p), 'resourceTemplates');
      expect(templates.some((t) => t.uriTemplate === 'notes://{id}'), `templates ${short(templates)}`);
    }],
    ['tools', async () => {
      let r = await client.callTool({ name: 'echo', arguments: { text: 'hello interop' } });
      expect(!r.isError && texts(r) === 'hello interop', `echo gave ${short(r)}`);
      r = await client.callTool({ name: 'fail', arguments: {} });
      expect(r.isError === true, `fail: isError not set: ${short(r)}`);
      expect(texts(r).includes('always fails'), `fail text ${short(texts(r))}`);
      // listTools caches the output validators the SDK applies to structuredContent.
      await client.listTools();
      r = await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
      expect(!r.isError, `add isError: ${short(r)}`);
      expect(JSON.stringify(r.structuredContent) === '{"sum":42}', `add structuredContent ${short(r.structuredContent)}`);
      if (ours) {
        await client.callTool({ name: 'echo', arguments: { text: 'again' } });
        r = await client.callTool({ name: 'calls', arguments: {} });
        expect(texts(r) === '2', `calls (per-connection state) says ${short(texts(r))}, wanted 2`);
      }
    }],
    ['prompts', async () => {
      const r = await client.getPrompt({ name: 'greet', arguments: { name: 'Ada', tone: 'formal' } });
      const got = r.messages.map((m) => [m.role, m.content?.text]);
      const want = [['user', 'Greet Ada in a formal tone.'], ['assistant', 'Hello, Ada!']];
      expect(JSON.stringify(got) === JSON.stringify(want), `greet gave ${short(got)}`);
    }],
    ['resources', async () => {
      let r = await client.readResource({ uri: 'file:///readme.md' });
      expect(r.contents.length === 1, `readme: ${r.contents.length} contents`);
      let item = r.contents[0];
      expect(item.text?.startsWith('# '), `readme ${short(item)}`);
      expect(item.mimeType === 'text/markdown', `readme mimeType ${item.mimeType}`);
      if (ours) {
        r = await client.readResource({ uri: 'file:///pixel.png' });
        item = r.contents[0];
        expect(item.blob === 'iVBORw0KGgo=' && item.mimeType === 'image/png', `pixel ${short(item)}`);
      }
      r = await client.readResource({ uri: 'notes://42' });
      item = r.contents[0];
      expect(item.text === 'note 42' && item.uri === 'notes://42', `notes://42 gave ${short(item)}`);
      if (client.getServerCapabilities()?.resources?.subscribe) {
        await client.subscribeResource({ uri: 'file:///readme.md' });
        await client.unsubscribeResource({ uri: 'file:///readme.md' });
      }
    }],
    ['errors', async () => {
      const codeOf = (promise) => promise.then(() => null, (e) => e.code ?? `${e.name}: ${e.message}`);
      let got = await codeOf(client.callTool({ name: 'no-such-tool', arguments: {} }));
      expect(got === -32602, `unknown tool: error code ${got}, wanted -32602`);
      const r = await client.callTool({ name: 'add', arguments: { a: 'two', b: 40 } });
      expect(r.isError === true, `add with a string argument: isError not set: ${short(r)}`);
      got = await codeOf(client.getPrompt({ name: 'no-such-prompt', arguments: {} }));
      expect(got === -32602, `unknown prompt: error code ${got}, wanted -32602`);
      got = await codeOf(client.readResource({ uri: 'file:///no-such-resource' }));
      expect(got === -32002, `unknown resource: error code ${got}, wanted -32002`);
    }],
    ['completion', async () => {
      let r = await client.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'name', value: 'a' } });
      expect(JSON.stringify(r.completion.values) === '["Ada","Alan"]', `complete 'a' gave ${short(r.completion.values)}`);
      r = await client.complete({ ref: { type: 'ref/resource', uri: 'notes://{id}' }, argument: { name: 'id', value: 'g' } });
      expect(JSON.stringify(r.completion.values) === '["Grace"]', `complete 'g' gave ${short(r.completion.values)}`);
    }],
    ['logging', async () => {
      const levelsAfter = async () => {
        seen.logs.length = 0;
        const r = await client.callTool({ name: 'log', arguments: {} });
        expect(texts(r) === 'logged', `log tool gave ${short(r)}`);
        await sleep(200);
        return seen.logs.map((p) => p.level);
      };
      await client.setLoggingLevel('warning');
      let got = await levelsAfter();
      expect(JSON.stringify(got) === '["warning","error"]', `at level warning got ${got}`);
      await client.setLoggingLevel('debug');
      got = await levelsAfter();
      expect(JSON.stringify(got) === '["debug","info","warning","error"]', `at level debug got ${got}`);
      expect(seen.logs.every((p) => p.data?.level), `log data ${short(seen.logs)}`);
    }],
    ['progress', async () => {
      const progress = [];
      const firstFrame = frames.length;
      const r = await client.callTool({ name: 'slow', arguments: { steps: 3, step_ms: 50 } }, undefined, {
        onprogress: (p) => progress.push(p),
      });
      expect(texts(r) === 'done after 3 steps', `slow gave ${short(r)}`);
      // The wire order: every progress notification precedes the response. (The SDK runs
      // notification handlers a microtask late, so when the last notification and the
      // response arrive in one read it drops that notification as "unknown token":
      // typescript-sdk issue #2580. Judge the server by the frames, the SDK by the rest.)
      const wire = [];
      for (const f of frames.slice(firstFrame)) {
        if (f.method === 'notifications/progress') wire.push(f.params.progress);
        else if (f.result?.content && texts(f.result) === 'done after 3 steps') { wire.push('response'); break; }
      }
      expect(JSON.stringify(wire) === '[1,2,3,"response"]', `wire order ${short(wire)}`);
      const token = new Set(frames.slice(firstFrame).filter((f) => f.method === 'notifications/progress').map((f) => f.params.progressToken));
      expect(token.size === 1, `progress tokens ${short([...token])}`);
      expect(progress.length >= 2, `onprogress saw ${short(progress)}`);
      expect(JSON.stringify(progress.map((p) => p.progress)) === JSON.stringify([1, 2, 3].slice(0, progress.length)), `progress ${short(progress)}`);
      expect(progress.every((p) => p.total === 3), `progress totals ${short(progress)}`);
    }],
    ['cancel', async () => {
      const tools = await listAll((p) => client.listTools(p), 'tools');
      expect(tools.some((t) => t.name === SLOW_STATS_TOOL),
        `everything-server has no ${SLOW_STATS_TOOL} tool, so whether the cancelled work stopped is unobservable`);
      const before = await slowStats();
      const controller = new AbortController();
      const t0 = Date.now();
      const call = client.callTool({ name: 'slow', arguments: { steps: 50, step_ms: 100 } }, undefined, {
        signal: controller.signal,
        onprogress: () => controller.abort('interop test cancels'),
      });
      const outcome = await call.then(() => 'finished', (e) => `rejected: ${e.message}`);
      expect(outcome.startsWith('rejected'), 'the slow call finished instead of being cancelled');
      let after = {};
      const deadline = Date.now() + 3000;
      while (Date.now() < deadline) {
        after = await slowStats();
        if ((after.cancelled ?? 0) > (before.cancelled ?? 0)) break;
        await sleep(100);
      }
      const elapsed = ((Date.now() - t0) / 1000).toFixed(1);
      expect(after.cancelled === (before.cancelled ?? 0) + 1,
        `server did not record the cancelled slow call within ${elapsed}s: before ${short(before)}, after ${short(after)}`);
      expect(after.completed === before.completed, `a slow call completed: ${short(before)} -> ${short(after)}`);
      const r = await client.callTool({ name: 'echo', arguments: { text: 'still alive' } });
      expect(texts(r) === 'still alive', 'server unresponsive after the cancellation');
    }],
    ['sampling', async () => {
      const r = await client.callTool({ name: 'sample', arguments: { question: 'ping?' } });
      expect(!r.isError, `sample isError: ${short(texts(r))}`);
      expect(seen.sampling.length === 1, `sampling handler ran ${seen.sampling.length} times`);
      const params = seen.sampling[0];
      expect(params.maxTokens === 100, `maxTokens ${params.maxTokens}`);
      expect(params.messages[0]?.role === 'user' && params.messages[0]?.content?.text === 'ping?', `messages ${short(params.messages)}`);
      expect(texts(r).includes('pong from typescript'), `sample gave ${short(texts(r))}`);
    }],
    ['elicitation', async () => {
      const r = await client.callTool({ name: 'elicit', arguments: { question: 'the answer?' } });
      expect(!r.isError, `elicit isError: ${short(texts(r))}`);
      expect(seen.elicitation.length === 1, `elicitation handler ran ${seen.elicitation.length} times`);
      expect(seen.elicitation[0].message === 'the answer?', `elicitation message ${short(seen.elicitation[0].message)}`);
      const answer = JSON.parse(texts(r));
      expect(answer.action === 'accept' && answer.content?.answer === 'forty-two', `elicit gave ${short(answer)}`);
    }],
    ['roots', async () => {
      const r = await client.callTool({ name: 'roots', arguments: {} });
      expect(!r.isError, `roots isError: ${short(texts(r))}`);
      expect(seen.roots === 1, `roots handler ran ${seen.roots} times`);
      expect(texts(r) === ROOT_URI, `roots gave ${short(texts(r))}`);
    }],
    // 2025-11-25 sampling with tools: the server offers the model a tool, the model asks for it
    // (tool_use), the server sends the result back (tool_result), the model answers.
    ['sampling-tools', async () => {
      const before = seen.sampling.length;
      const r = await client.callTool({ name: 'sample', arguments: { question: 'weather in Paris?', tools: true } });
      expect(!r.isError, `sample with tools isError: ${short(texts(r))}`);
      const asked = seen.sampling.slice(before);
      expect(asked.length === 2, `sampling handler ran ${asked.length} times, wanted 2 (tool_use, then tool_result)`);
      const [first, second] = asked;
      expect(JSON.stringify((first.tools ?? []).map((t) => t.name)) === '["weather"]', `tools offered ${short(first.tools)}`);
      const schema = first.tools[0].inputSchema;
      expect(JSON.stringify(schema.required) === '["city"]' && schema.properties?.city, `weather inputSchema ${short(schema)}`);
      expect(first.toolChoice?.mode === 'auto', `toolChoice ${short(first.toolChoice)}`);
      expect(second.tools && second.toolChoice, 'the follow-up dropped tools/toolChoice');
      const roles = second.messages.map((m) => m.role);
      expect(JSON.stringify(roles) === '["user","assistant","user"]', `follow-up roles ${short(roles)}`);
      const asList = (c) => (Array.isArray(c) ? c : [c]);
      const use = asList(second.messages[1].content);
      expect(use.length === 1 && use[0].type === 'tool_use' && use[0].id === WEATHER_CALL_ID && use[0].input?.city === 'Paris',
        `follow-up assistant message ${short(use)}`);
      const result = asList(second.messages[2].content);
      expect(result.length === 1 && result[0].type === 'tool_result' && result[0].toolUseId === WEATHER_CALL_ID,
        `follow-up tool_result ${short(result)}`);
      const said = (result[0].content ?? []).map((c) => c.text);
      expect(JSON.stringify(said) === '["sunny, 18 degrees in Paris"]', `tool_result content ${short(said)}`);
      const prefix = 'the model said: ';
      expect(texts(r).startsWith(prefix), `sample with tools gave ${short(texts(r))}`);
      const final = JSON.parse(texts(r).slice(prefix.length));
      expect(final.length === 1 && final[0].type === 'text' && final[0].text === 'typescript heard: sunny, 18 degrees in Paris',
        `the model's final answer reached the server as ${short(final)}`);
    }],
    // URL-mode elicitation (2025-11-25): an elicitationId, and once accepted
    // notifications/elicitation/complete with that id.
    ['url-elicitation', async () => {
      const before = seen.elicitation.length;
      const r = await client.callTool({ name: 'elicit', arguments: { question: 'sign in, please', url: LINK_URL } });
      expect(!r.isError, `elicit with a url isError: ${short(texts(r))}`);
      const asked = seen.elicitation.slice(before);
      expect(asked.length === 1, `elicitation handler ran ${asked.length} times`);
      const params = asked[0];
      expect(params.mode === 'url', `mode ${short(params.mode)}`);
      expect(params.url === LINK_URL && params.message === 'sign in, please', `url ${short(params.url)} message ${short(params.message)}`);
      const answer = JSON.parse(texts(r));
      expect(answer.action === 'accept', `elicit with a url gave ${short(answer)}`);
      const id = params.elicitationId;
      expect(id && id === answer.elicitationId, `elicitationId ${short(id)}, the server says ${short(answer)}`);
      expect(answer.completionSent === true, `the server did not send the completion: ${short(answer)}`);
      await waitFor(() => seen.completions.includes(id), 2000);
      expect(JSON.stringify(seen.completions) === JSON.stringify([id]), `completions heard ${short(seen.completions)}, wanted [${id}]`);
    }],
  ];

  const failed = await runGroups(args.prefix, groups);
  const unexpected = seen.errors.filter((e) => !String(e?.message).includes('unknown token'));
  for (const error of unexpected) console.error('client error:', error);
  await client.close().catch(() => {});
  return failed ? 1 : 0;
}

main().then((code) => process.exit(code), (error) => {
  console.error(error);
  process.exit(3);
});
