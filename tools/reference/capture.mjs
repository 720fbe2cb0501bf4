#!/usr/bin/env node
// Records the reference material from the pinned reference binaries (run by
// scripts/fetch-reference.sh; node's standard library only):
//   OUT/codex-mcp-tools.json                   the `tools/list` answer of `codex mcp-server` (0.153.4)
//   OUT/transcripts/codex-0.171.0-stdio.jsonl  handshake rules, error answers, malformed input
//   OUT/transcripts/codex-0.171.0-turn.jsonl   two turns against a local mock model, then reads
//   OUT/transcripts/codex-0.153.4-mcp-turn.jsonl  `codex` and `codex-reply` over MCP stdio
// Transcripts are in agentwire's transcript format (docs/contract.md): one
// {"session","dir","line","ts"} object a line, in the order the messages passed.
//
// The mock model is a loopback HTTP server speaking the Responses API's streaming format: each
// `POST …/responses` is answered with one assistant message, "Hello from mock (N).", streamed in
// two deltas, and a usage of 10 input / 5 output tokens. Each reference process gets its own
// empty CODEX_HOME whose config.toml points at the mock.
//
// Usage: node capture.mjs --app-server CODEX_0_171 --mcp-server CODEX_0_153 --out DIR

import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const STEP_TIMEOUT_MS = 60_000;

function args() {
  const out = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i];
    const value = argv[i + 1];
    if (!key?.startsWith('--') || value === undefined) fail(`bad arguments: ${argv.join(' ')}`);
    out[key.slice(2)] = resolve(value);
  }
  for (const need of ['app-server', 'mcp-server', 'out']) {
    if (!out[need]) fail(`--${need} is required`);
  }
  return out;
}

function fail(message) {
  process.stderr.write(`capture: error: ${message}\n`);
  process.exit(1);
}

// ---------------------------------------------------------------- the mock model

function sse(type, body) {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...body })}\n\n`;
}

async function startMockModel() {
  let calls = 0;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url.endsWith('/responses')) {
        calls += 1;
        const n = calls;
        const id = `msg_${n}`;
        const text = ['Hello ', `from mock (${n}).`];
        res.writeHead(200, { 'content-type': 'text/event-stream', connection: 'close' });
        res.write(sse('response.created', { response: { id: `resp_${n}` } }));
        res.write(
          sse('response.output_item.added', {
            output_index: 0,
            item: { type: 'message', id, role: 'assistant', content: [] },
          }),
        );
        for (const delta of text) {
          res.write(
            sse('response.output_text.delta', { item_id: id, output_index: 0, content_index: 0, delta }),
          );
        }
        res.write(
          sse('response.output_item.done', {
            output_index: 0,
            item: {
              type: 'message',
              id,
              role: 'assistant',
              content: [{ type: 'output_text', text: text.join(''), annotations: [] }],
            },
          }),
        );
        res.end(
          sse('response.completed', {
            response: {
              id: `resp_${n}`,
              usage: {
                input_tokens: 10,
                input_tokens_details: { cached_tokens: 0 },
                output_tokens: 5,
                output_tokens_details: { reasoning_tokens: 0 },
                total_tokens: 15,
              },
            },
          }),
        );
      } else if (req.method === 'GET' && req.url.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [] }));
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end(`mock model: no route for ${req.method} ${req.url}`);
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/v1`, close: () => server.close() };
}

// ---------------------------------------------------------------- one recorded session

function codexHome(mockUrl) {
  const home = mkdtempSync(join(tmpdir(), 'agentwire-reference-'));
  const config = mockUrl
    ? [
        'model = "mock-model"',
        'model_provider = "mock"',
        'approval_policy = "never"',
        'sandbox_mode = "read-only"',
        '',
        '[model_providers.mock]',
        'name = "mock"',
        `base_url = "${mockUrl}"`,
        'wire_api = "responses"',
        'request_max_retries = 0',
        'stream_max_retries = 0',
        '',
      ].join('\n')
    : '';
  writeFileSync(join(home, 'config.toml'), config);
  mkdirSync(join(home, 'work'));
  return home;
}

class Session {
  constructor(name, record, bin, argv, home) {
    this.name = name;
    this.record = record;
    this.home = home;
    this.waiters = [];
    this.buffer = '';
    this.stderr = '';
    this.child = spawn(bin, argv, {
      cwd: join(home, 'work'),
      env: { ...process.env, CODEX_HOME: home, HOME: home, RUST_LOG: 'error', NO_COLOR: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.exited = new Promise((done) => this.child.on('exit', done));
    this.child.on('error', (e) => fail(`${name}: cannot run ${bin}: ${e.message}`));
    this.child.stderr.on('data', (d) => {
      this.stderr = (this.stderr + d.toString()).slice(-4000);
    });
    this.child.stdout.on('data', (d) => {
      this.buffer += d.toString();
      let nl;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        if (line.trim() === '') continue;
        this.record.push({ session: name, dir: 'server->client', line, ts: Date.now() });
        let message = null;
        try {
          message = JSON.parse(line);
        } catch {
          // recorded as is
        }
        this.waiters = this.waiters.filter((w) => !(message && w.test(message) && (w.resolve(message), true)));
      }
    });
  }

  /** Sends one raw line. */
  send(line) {
    this.record.push({ session: this.name, dir: 'client->server', line, ts: Date.now() });
    this.child.stdin.write(`${line}\n`);
  }

  /** Resolves with the first server message `test` accepts from now on. */
  waitFor(what, test) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.name}: timed out waiting for ${what}; stderr: ${this.stderr}`)),
        STEP_TIMEOUT_MS,
      );
      this.waiters.push({
        test,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      });
    });
  }

  /** Sends a request (a JSON value) and waits for its answer. */
  async call(message) {
    const answer = this.waitFor(`the answer to ${JSON.stringify(message)}`, (m) => m.id === message.id && !('method' in m));
    this.send(JSON.stringify(message));
    return answer;
  }

  /** Lets late notifications arrive, then closes stdin and waits for the exit. */
  async close() {
    await new Promise((r) => setTimeout(r, 300));
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(timer);
    rmSync(this.home, { recursive: true, force: true });
  }
}

const CLIENT = (name) => ({ name, title: name.replace(/_/g, ' '), version: '0.0.1' });

// ---------------------------------------------------------------- the scripts

async function stdioProbe(bin, mockUrl) {
  const record = [];
  const appServer = (name) => {
    const home = codexHome(mockUrl);
    return new Session(name, record, bin, ['app-server'], home);
  };
  const init = (id, extra = {}) => ({ id, method: 'initialize', params: { clientInfo: CLIENT('peer_probe'), ...extra } });

  const a = appServer('A-main');
  await a.call(init(1));
  a.send(JSON.stringify({ method: 'initialized' }));
  await a.call({ id: 2, method: 'thread/list', params: {} });
  await a.call({ id: 3, method: 'model/list', params: {} });
  await a.call({ id: 4, method: 'config/read', params: {} });
  await a.call({ id: 5, method: 'account/read', params: {} });
  const started = await a.call({ id: 6, method: 'thread/start', params: { cwd: join(a.home, 'work') } });
  const threadId = started.result?.thread?.id;
  if (!threadId) throw new Error(`A-main: thread/start answered ${JSON.stringify(started)}`);
  await a.call({ id: 7, method: 'thread/read', params: { threadId } });
  await a.call({ id: 8, method: 'thread/loaded/list', params: {} });
  await a.call(init(9));
  await a.call({ id: 10, method: 'does/notExist', params: {} });
  a.send('{"id": 11, "method": "thread/list", "params": ');
  a.send('this is not json');
  await a.call({ jsonrpc: '2.0', id: 12, method: 'thread/list', params: {} });
  await a.call({ id: 'str-id-13', method: 'config/read', params: {} });
  await a.call({ id: 14, method: 'thread/start', params: { cwd: 42 } });
  await a.call({ id: 15, method: 'thread/list' });
  a.send(JSON.stringify({ method: 'no/suchNotification', params: {} }));
  await a.call({ id: 16, method: 'config/read', params: {} });
  await a.close();

  const b = appServer('B-preinit');
  await b.call({ id: 1, method: 'thread/list', params: {} });
  await b.call({ id: 2, method: 'config/read', params: {} });
  await b.call(init(3));
  await b.call({ id: 4, method: 'thread/list', params: {} });
  b.send(JSON.stringify({ method: 'initialized' }));
  await b.call({ id: 5, method: 'thread/list', params: {} });
  await b.close();

  const c = appServer('C-badinit');
  await c.call({ id: 1, method: 'initialize', params: {} });
  await c.call({ id: 2, method: 'initialize', params: { clientInfo: { name: 'x' } } });
  await c.call(init(3, { capabilities: { experimentalApi: true } }));
  await c.close();

  const d = appServer('D-garbage-first');
  d.send('{not json');
  await d.call(init(1));
  await d.close();
  return record;
}

async function turnProbe(bin, mockUrl) {
  const record = [];
  const home = codexHome(mockUrl);
  const t = new Session('T-turn', record, bin, ['app-server'], home);
  await t.call({ id: 1, method: 'initialize', params: { clientInfo: CLIENT('turn_probe') } });
  t.send(JSON.stringify({ method: 'initialized' }));
  const started = await t.call({ id: 2, method: 'thread/start', params: { cwd: join(home, 'work') } });
  const threadId = started.result?.thread?.id;
  if (!threadId) throw new Error(`T-turn: thread/start answered ${JSON.stringify(started)}`);
  for (const [id, text] of [
    [3, 'Say hello.'],
    [4, 'Again.'],
  ]) {
    const completed = t.waitFor('turn/completed', (m) => m.method === 'turn/completed');
    await t.call({ id, method: 'turn/start', params: { threadId, input: [{ type: 'text', text }] } });
    const done = await completed;
    if (done.params?.turn?.status !== 'completed') {
      throw new Error(`T-turn: the turn ended ${JSON.stringify(done.params?.turn)}; stderr: ${t.stderr}`);
    }
  }
  await t.call({ id: 5, method: 'thread/read', params: { threadId, includeTurns: true } });
  await t.call({ id: 6, method: 'thread/list', params: {} });
  await t.call({ id: 7, method: 'thread/turns/list', params: { threadId } });
  await t.close();
  return record;
}

async function mcpProbe(bin, mockUrl) {
  const record = [];
  const home = codexHome(mockUrl);
  const m = new Session('M-mcp', record, bin, ['mcp-server'], home);
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'mcp_turn_probe', version: '0.0.1' } },
  };
  await m.call(initialize);
  m.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  const first = await m.call({
    jsonrpc: '2.0',
    id: 2,
    method: 'tools/call',
    params: {
      name: 'codex',
      arguments: { prompt: 'Say hello.', cwd: join(home, 'work'), sandbox: 'read-only', 'approval-policy': 'never' },
    },
  });
  const threadId = first.result?.structuredContent?.threadId;
  if (!threadId) throw new Error(`M-mcp: the codex tool answered ${JSON.stringify(first)}; stderr: ${m.stderr}`);
  await m.call({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'codex-reply', arguments: { threadId, prompt: 'Again.' } } });
  await m.close();

  // The tools list, on a session of its own (not part of the transcript).
  const listing = [];
  const l = new Session('tools', listing, bin, ['mcp-server'], codexHome(null));
  await l.call(initialize);
  l.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  const tools = await l.call({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
  await l.close();
  if (!Array.isArray(tools.result?.tools)) throw new Error(`tools/list answered ${JSON.stringify(tools)}`);
  return { record, tools };
}

function writeTranscript(path, record) {
  writeFileSync(path, record.map((r) => JSON.stringify(r)).join('\n') + '\n');
}

async function main() {
  const opts = args();
  const mock = await startMockModel();
  try {
    const transcripts = join(opts.out, 'transcripts');
    mkdirSync(transcripts, { recursive: true });
    writeTranscript(join(transcripts, 'codex-0.171.0-stdio.jsonl'), await stdioProbe(opts['app-server'], mock.url));
    writeTranscript(join(transcripts, 'codex-0.171.0-turn.jsonl'), await turnProbe(opts['app-server'], mock.url));
    const { record, tools } = await mcpProbe(opts['mcp-server'], mock.url);
    writeTranscript(join(transcripts, 'codex-0.153.4-mcp-turn.jsonl'), record);
    writeFileSync(join(opts.out, 'codex-mcp-tools.json'), JSON.stringify(tools, null, 2));
  } finally {
    mock.close();
  }
}

main().catch((e) => fail(e.stack ?? String(e)));
