// Drive toolhost's MCP server with the official TypeScript client, v2
// (`@modelcontextprotocol/client`, pinned in tests/mcp/package.json).
//
//     node client_modern.mjs stdio TOOLHOST_BIN HOST_DIR MODE
//     node client_modern.mjs http  URL HOST_DIR MODE
//
// MODE is `auto` (the client probes `server/discover` and speaks
// 2026-07-28) or `legacy` (the `initialize` handshake: 2025-11-25). Prints
// `ok <scenario>` for each scenario and `all ok` at the end; any failure
// throws. HOST_DIR is laid out as for tests/mcp/client_modern.py.

import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const EXPECTED = { auto: '2026-07-28', legacy: '2025-11-25' };

function check(condition, message) {
  if (!condition) throw new Error(typeof message === 'string' ? message : JSON.stringify(message));
}

function text(result) {
  check(!result.isError, result);
  return result.content[0].text;
}

const [transportKind, ...args] = process.argv.slice(2);
const [target, hostDir, mode] = transportKind === 'stdio' ? [args[0], args[1], args[2]] : args;
const transport =
  transportKind === 'stdio'
    ? new StdioClientTransport({ command: target, args: ['mcp', '--dir', hostDir] })
    : new StreamableHTTPClientTransport(new URL(target));

const client = new Client(
  { name: 'toolhost-test', version: '0' },
  {
    capabilities: { elicitation: {}, sampling: {}, roots: {} },
    versionNegotiation: { mode },
  },
);
const asked = [];
client.setRequestHandler('elicitation/create', async (request) => {
  asked.push(['elicit', request.params.message]);
  if ('name' in (request.params.requestedSchema?.properties ?? {})) {
    return { action: 'accept', content: { name: 'ada' } };
  }
  return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
});
client.setRequestHandler('roots/list', async () => {
  asked.push(['roots']);
  return { roots: [{ uri: 'file:///work/project', name: 'project' }] };
});
client.setRequestHandler('sampling/createMessage', async (request) => {
  asked.push(['sample', request.params.messages[0].content.text]);
  return { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'test-model' };
});

await client.connect(transport);
check(client.getNegotiatedProtocolVersion() === EXPECTED[mode], `negotiated ${client.getNegotiatedProtocolVersion()}`);
check(client.getServerVersion()?.name === 'toolhost', client.getServerVersion());
console.log(`ok negotiated ${client.getNegotiatedProtocolVersion()}`);

const names = new Set((await client.listTools()).tools.map((tool) => tool.name));
for (const name of ['echo', 'chatty', 'test_elicitation', 'test_sampling']) check(names.has(name), [...names]);
check(text(await client.callTool({ name: 'echo', arguments: { text: 'hi' } })) === 'hi', 'echo');
console.log('ok list and call');

// The tool asks mid-call: a request of the server's own on 2025-11-25, an
// input-required round the client fulfils and retries on 2026-07-28.
const said = text(await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } }));
check(said.includes('ada@example.com'), said);
const sampled = text(await client.callTool({ name: 'test_sampling', arguments: { prompt: 'Capital of France?' } }));
check(sampled === 'LLM response: Paris', sampled);
check(JSON.stringify(asked) === JSON.stringify([['elicit', 'Who are you?'], ['sample', 'Capital of France?']]), asked);
console.log('ok questions');

// Two questions at once (`ask-all`): one after another in a session, one
// round of two input requests on 2026-07-28.
const together = text(
  await client.callTool({
    name: 'ask_all',
    arguments: { questions: [{ key: 'user_name', kind: 'user' }, { key: 'client_roots', kind: 'roots' }] },
  }),
);
check(together === 'user: {"name":"ada"}\nroots: file:///work/project', together);
// A round's input requests are fulfilled in no particular order.
const askedTogether = asked.slice(2).map((entry) => JSON.stringify(entry)).sort();
check(JSON.stringify(askedTogether) === JSON.stringify(['["elicit","Your name?"]', '["roots"]']), asked);
console.log('ok questions together');

if (mode === 'auto') {
  // A listen stream hears of a tool that arrives.
  let heard;
  const changed = new Promise((resolve) => {
    heard = resolve;
  });
  client.setNotificationHandler('notifications/tools/list_changed', () => heard());
  const subscription = await client.listen({ toolsListChanged: true });
  check(subscription.honoredFilter.toolsListChanged === true, subscription.honoredFilter);
  copyFileSync(join(hostDir, 'spare', 'word_count.wasm'), join(hostDir, 'tools', 'word_count.wasm'));
  await Promise.race([
    changed,
    new Promise((_, reject) => setTimeout(() => reject(new Error('no tools/list_changed in 20 s')), 20000)),
  ]);
  await subscription.close();
  const after = new Set((await client.listTools({}, { cacheMode: 'refresh' })).tools.map((tool) => tool.name));
  check(after.has('word_count'), [...after]);
  console.log('ok listen');
}

await client.close();
console.log('all ok');
