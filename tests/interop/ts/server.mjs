// A server built with the official TypeScript MCP SDK (McpServer), with a surface like
// Talaria's everything-server, for Talaria's client to talk to.
//
// usage: node server.mjs --transport stdio|http [--port N] [--json-response]
//
// `http` serves Streamable HTTP at /mcp and the legacy HTTP+SSE transport at /sse (+ /messages)
// on 127.0.0.1 (port 0: a free one), and prints `server.mjs: listening on URL` on stderr.

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

import { requireFromPrefix, sdk } from './peers.mjs';

const { McpServer, ResourceTemplate } = sdk('server/mcp.js');
const { completable } = sdk('server/completable.js');
const { StdioServerTransport } = sdk('server/stdio.js');
const { StreamableHTTPServerTransport } = sdk('server/streamableHttp.js');
const { SSEServerTransport } = sdk('server/sse.js');
const types = sdk('types.js');
const { z } = requireFromPrefix('zod');

const NAMES = ['Ada', 'Alan', 'Barbara', 'Grace', 'Linus', 'Margaret'];
const slowStats = { started: 0, completed: 0, cancelled: 0 };
// The tool `sample` offers the model with `tools: true`.
const WEATHER = {
  name: 'weather',
  description: "Today's weather in a city",
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
// The elicitation ids `elicit` hands out to URL-mode requests.
let urlElicitations = 0;
const text = (t) => ({ content: [{ type: 'text', text: t }] });
const sleep = (ms, signal) =>
  new Promise((done, fail) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      fail(new Error('cancelled'));
    }, { once: true });
  });

function makeServer() {
  const server = new McpServer(
    { name: 'typescript-sdk-server', version: '1.0.0' },
    { capabilities: { logging: {} }, instructions: "A server built with the official TypeScript SDK for Talaria's interop tests." },
  );

  server.registerTool('echo', { description: 'Echoes the text back', inputSchema: { text: z.string() } }, async ({ text: t }) => text(t));
  server.registerTool(
    'add',
    { description: 'Adds two integers', inputSchema: { a: z.number().int(), b: z.number().int() }, outputSchema: { sum: z.number().int() } },
    async ({ a, b }) => ({ ...text(JSON.stringify({ sum: a + b })), structuredContent: { sum: a + b } }),
  );
  server.registerTool('fail', { description: 'Always fails' }, async () => ({ ...text('this tool always fails'), isError: true }));
  server.registerTool('log', { description: 'Logs at debug, info, warning and error' }, async (extra) => {
    for (const level of ['debug', 'info', 'warning', 'error']) {
      if (!server.server.isMessageIgnored(level, extra.sessionId)) {
        await extra.sendNotification({ method: 'notifications/message', params: { level, logger: 'log', data: { level } } });
      }
    }
    return text('logged');
  });
  server.registerTool(
    'slow',
    {
      description: 'Counts steps with progress; honours cancellation',
      inputSchema: { steps: z.number().int().min(1).default(5), step_ms: z.number().int().min(0).default(100) },
    },
    async ({ steps, step_ms: stepMs }, extra) => {
      slowStats.started += 1;
      const token = extra._meta?.progressToken;
      try {
        for (let step = 1; step <= steps; step++) {
          await sleep(stepMs, extra.signal);
          if (token !== undefined) {
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress: step, total: steps, message: `step ${step}` },
            });
          }
        }
      } catch (error) {
        if (extra.signal.aborted) slowStats.cancelled += 1;
        throw error;
      }
      slowStats.completed += 1;
      return text(`done after ${steps} steps`);
    },
  );
  server.registerTool('slow-stats', { description: 'What happened to slow calls' }, async () => ({
    ...text(JSON.stringify(slowStats)),
  }));
  // With `tools`, the model is offered a weather tool (sampling with tools, 2025-11-25): when it
  // asks for it (tool_use), the tool's result goes back to it (tool_result) in a second request.
  server.registerTool(
    'sample',
    { description: "Asks the client's model, with a weather tool offered if `tools` is true", inputSchema: { question: z.string().default(''), tools: z.boolean().default(false) } },
    async ({ question, tools }, extra) => {
      const messages = [{ role: 'user', content: { type: 'text', text: question } }];
      if (!tools) {
        const result = await extra.sendRequest(
          { method: 'sampling/createMessage', params: { messages, maxTokens: 100 } },
          types.CreateMessageResultSchema,
        );
        return text(`the model said: ${JSON.stringify(result.content)}`);
      }
      const offered = { tools: [WEATHER], toolChoice: { mode: 'auto' } };
      const options = { relatedRequestId: extra.requestId };
      let result = await server.server.createMessage({ messages, maxTokens: 100, ...offered }, options);
      const content = Array.isArray(result.content) ? result.content : [result.content];
      const call = content.find((c) => c.type === 'tool_use');
      if (call && result.stopReason === 'toolUse') {
        const answer = { type: 'text', text: `sunny, 18 degrees in ${call.input?.city ?? 'nowhere'}` };
        const followUp = [
          ...messages,
          { role: 'assistant', content: [call] },
          { role: 'user', content: [{ type: 'tool_result', toolUseId: call.id, content: [answer] }] },
        ];
        result = await server.server.createMessage({ messages: followUp, maxTokens: 100, ...offered }, options);
      }
      return text(`the model said: ${JSON.stringify(Array.isArray(result.content) ? result.content : [result.content])}`);
    },
  );
  // With a `url`, the user is sent to that page (URL-mode elicitation, 2025-11-25) under a fresh
  // elicitationId; once they accept, the server says the page's flow is complete.
  server.registerTool(
    'elicit',
    { description: 'Asks the user a question, or sends them to `url` (URL mode)', inputSchema: { question: z.string().default(''), url: z.string().optional() } },
    async ({ question, url }, extra) => {
      if (url) {
        const elicitationId = `url-${++urlElicitations}`;
        const options = { relatedRequestId: extra.requestId };
        const result = await server.server.elicitInput({ mode: 'url', message: question, url, elicitationId }, options);
        const completionSent = result.action === 'accept';
        if (completionSent) await server.server.createElicitationCompletionNotifier(elicitationId, options)();
        return text(JSON.stringify({ action: result.action, elicitationId, completionSent }));
      }
      const result = await extra.sendRequest(
        {
          method: 'elicitation/create',
          params: {
            message: question,
            requestedSchema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
          },
        },
        types.ElicitResultSchema,
      );
      return text(JSON.stringify(result));
    },
  );
  server.registerTool('roots', { description: "Lists the client's roots" }, async (extra) => {
    const result = await extra.sendRequest({ method: 'roots/list' }, types.ListRootsResultSchema);
    return text(result.roots.map((r) => r.uri).join('\n'));
  });

  const byPrefix = (value) => NAMES.filter((n) => n.toLowerCase().startsWith(String(value ?? '').toLowerCase()));
  server.registerPrompt(
    'greet',
    { description: 'Greets someone', argsSchema: { name: completable(z.string(), byPrefix), tone: z.string().optional() } },
    ({ name, tone }) => ({
      messages: [
        { role: 'user', content: { type: 'text', text: `Greet ${name} in a ${tone ?? 'warm'} tone.` } },
        { role: 'assistant', content: { type: 'text', text: `Hello, ${name}!` } },
      ],
    }),
  );
  server.registerResource('readme', 'file:///readme.md', { mimeType: 'text/markdown' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/markdown', text: '# TypeScript SDK server\nA peer for interop tests.' }],
  }));
  server.registerResource(
    'notes',
    new ResourceTemplate('notes://{id}', { list: undefined, complete: { id: byPrefix } }),
    {},
    async (uri, { id }) => ({ contents: [{ uri: uri.href, text: `note ${id}` }] }),
  );
  return server;
}

function parseArgs(argv) {
  const out = { transport: 'stdio', port: 0, json: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--transport') out.transport = argv[++i];
    else if (argv[i] === '--port') out.port = Number(argv[++i]);
    else if (argv[i] === '--json-response') out.json = true;
    else {
      console.error(`unknown argument ${argv[i]}`);
      process.exit(2);
    }
  }
  return out;
}

async function serveHttp({ port, json }) {
  const streamable = new Map();
  const legacy = new Map();
  const http = createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://127.0.0.1');
      if (url.pathname === '/mcp') {
        const id = req.headers['mcp-session-id'];
        let transport = id ? streamable.get(id) : undefined;
        if (id && !transport) {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
          return;
        }
        if (!transport) {
          transport = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            enableJsonResponse: json,
            onsessioninitialized: (sid) => streamable.set(sid, transport),
          });
          transport.onclose = () => transport.sessionId && streamable.delete(transport.sessionId);
          await makeServer().connect(transport);
        }
        await transport.handleRequest(req, res);
      } else if (url.pathname === '/sse' && req.method === 'GET') {
        const transport = new SSEServerTransport('/messages', res);
        legacy.set(transport.sessionId, transport);
        res.on('close', () => legacy.delete(transport.sessionId));
        await makeServer().connect(transport);
      } else if (url.pathname === '/messages' && req.method === 'POST') {
        const transport = legacy.get(url.searchParams.get('sessionId'));
        if (!transport) {
          res.writeHead(404).end('unknown session');
          return;
        }
        await transport.handlePostMessage(req, res);
      } else {
        res.writeHead(404).end('not found');
      }
    } catch (error) {
      console.error(error);
      if (!res.headersSent) res.writeHead(500).end(String(error));
    }
  });
  http.listen(port, '127.0.0.1', () => {
    const { address, port: bound } = http.address();
    console.error(`server.mjs: listening on http://${address}:${bound}/mcp`);
  });
}

const args = parseArgs(process.argv.slice(2));
if (args.transport === 'stdio') {
  await makeServer().connect(new StdioServerTransport());
} else if (args.transport === 'http') {
  await serveHttp(args);
} else {
  console.error(`unknown transport ${args.transport}`);
  process.exit(2);
}
