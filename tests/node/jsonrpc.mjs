// Drives `redline serve` with vscode-jsonrpc (the library VS Code extensions use), as an
// extension would: Content-Length framing, params as the library sends them, then LSP's
// shutdown + exit. Prints one JSON object of what it saw; tests/integ_clients.rs checks it.
// Usage: node jsonrpc.mjs REDLINE ROOT
import { spawn } from "node:child_process";
import * as rpc from "vscode-jsonrpc/node";

const [bin, root] = process.argv.slice(2);
const child = spawn(bin, ["--root", root, "serve"], { stdio: ["pipe", "pipe", "pipe"] });
let stderr = "";
child.stderr.on("data", (d) => (stderr += d));
const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
const problems = [];
child.stdin.on("error", (e) => problems.push(`stdin: ${e.message}`));

const conn = rpc.createMessageConnection(
  new rpc.StreamMessageReader(child.stdout),
  new rpc.StreamMessageWriter(child.stdin),
);
conn.onError(([e]) => problems.push(`connection: ${e.message}`));
conn.listen();

const files = [{ path: "a.txt", edits: [{ oldText: "one", newText: "two" }] }];
const patch = "*** Begin Patch\n*** Update File: b.txt\n@@\n-alpha\n+beta\n*** End Patch\n";
const seen = {};
try {
  // An array argument: the library sends params [[…]].
  seen.arrayOfFiles = await conn.sendRequest("resolve", files);
  // An object argument: sent as the params object itself.
  seen.object = await conn.sendRequest("resolve", { files });
  // A string argument: sent as ["…"].
  seen.patchText = await conn.sendRequest("apply", patch);
  seen.read = await conn.sendRequest("read", { path: "b.txt" });
  seen.shutdown = await conn.sendRequest("shutdown");
  try {
    await conn.sendRequest("schema");
    seen.afterShutdown = "answered";
  } catch (e) {
    seen.afterShutdown = { code: e.code };
  }
  await conn.sendNotification("exit");
} catch (e) {
  problems.push(`request: ${e.message}`);
}
seen.exitCode = await exited;
conn.dispose();
seen.problems = problems;
seen.stderr = stderr;
process.stdout.write(JSON.stringify(seen) + "\n");
