// The TypeScript SDK v1's client (@modelcontextprotocol/sdk, installed beside the everything
// server in .interop/npm) against a stdio server, for the client probe's interop test:
//
//     node ts_client.mjs -- COMMAND [ARG ...]
//
// MCP_TS_SDK names the SDK's folder. The client declares roots and sampling, connects,
// lists the tools and closes; it prints the number of tools on stdout.
import { pathToFileURL } from "node:url";
import path from "node:path";

const sdk = process.env.MCP_TS_SDK;
if (!sdk) {
  console.error("MCP_TS_SDK is not set");
  process.exit(2);
}
const load = (rel) => import(pathToFileURL(path.join(sdk, "dist", "esm", rel)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");
const types = await load("types.js");

const dash = process.argv.indexOf("--");
const [command, ...args] = process.argv.slice(dash + 1);
const client = new Client(
  { name: "ts-sdk-client", version: "1.0.0" },
  { capabilities: { roots: { listChanged: true }, sampling: {} } },
);
client.setRequestHandler(types.ListRootsRequestSchema, async () => ({ roots: [] }));
client.setRequestHandler(types.CreateMessageRequestSchema, async () => ({
  role: "assistant",
  content: { type: "text", text: "sampled" },
  model: "ts-client",
}));
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
try {
  await client.connect(transport);
  const tools = await client.listTools(undefined, { timeout: 60000 });
  console.log(tools.tools.length);
} finally {
  await client.close();
}
