// Runs one real harness against the stand-in model (model.mjs), both in this process's network
// namespace (the test starts it under `unshare -rn`, loopback only). Usage:
//   node drive.mjs CASE.json
// CASE: {harness, turns, project, home, logDir, prompt, redlineDir, binDir, timeoutMs}
// Writes logDir/harness.out, harness.err, and request-N.json (from the model); exits with the
// harness's status.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { startModel } from "./model.mjs";

const c = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const protocol = { pi: "openai-chat", claude: "anthropic", gemini: "gemini", codex: "openai-responses" }[c.harness];
const { server, port } = await startModel({ protocol, turns: c.turns, logDir: c.logDir });
const base = `http://127.0.0.1:${port}`;

const env = {
  PATH: `${c.redlineDir}:${path.dirname(process.execPath)}:/usr/bin:/bin`,
  HOME: c.home,
  LANG: "C.UTF-8",
  TERM: "dumb",
  NO_COLOR: "1",
  CI: "true",
};
let cmd;
let args;
const write = (p, v) => {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, typeof v === "string" ? v : JSON.stringify(v, null, 2));
};
if (c.harness === "pi") {
  const agentDir = path.join(c.home, ".pi", "agent");
  write(path.join(agentDir, "models.json"), {
    providers: {
      stand: {
        baseUrl: `${base}/v1`,
        api: "openai-completions",
        apiKey: "stand-in-key",
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false, supportsStore: false },
        models: [{ id: "m", name: "stand-in", reasoning: false, contextWindow: 100000, maxTokens: 4096 }],
      },
    },
  });
  write(path.join(agentDir, "settings.json"), { enableInstallTelemetry: false });
  Object.assign(env, { PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0" });
  cmd = process.execPath;
  args = [path.join(c.binDir, "pi"), "-p", "--offline", "--no-session", "--model", "stand/m", c.prompt];
} else if (c.harness === "gemini") {
  // Merged into the settings `redline setup gemini` wrote (user or project level).
  const userSettings = path.join(c.home, ".gemini", "settings.json");
  const prev = fs.existsSync(userSettings) ? JSON.parse(fs.readFileSync(userSettings, "utf8")) : {};
  write(userSettings, {
    ...prev,
    security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
    telemetry: { enabled: false },
    privacy: { usageStatisticsEnabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
  });
  Object.assign(env, { GEMINI_API_KEY: "stand-in-key", GOOGLE_GEMINI_BASE_URL: base, GEMINI_CLI_NO_RELAUNCH: "true" });
  cmd = process.execPath;
  args = [path.join(c.binDir, "gemini"), "-p", c.prompt, "--approval-mode", "yolo", "-m", "gemini-2.5-flash"];
} else if (c.harness === "claude") {
  Object.assign(env, {
    ANTHROPIC_BASE_URL: base,
    ANTHROPIC_API_KEY: "stand-in-key",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  });
  write(path.join(c.home, ".claude.json"), { hasCompletedOnboarding: true, projects: { [c.project]: { hasTrustDialogAccepted: true } } });
  cmd = path.join(c.binDir, "claude");
  args = ["-p", c.prompt, "--permission-mode", c.permissionMode || "acceptEdits", "--model", "claude-sonnet-4-5", "--output-format", "json"];
} else if (c.harness === "codex") {
  const codexHome = path.join(c.home, ".codex");
  // Appended to what `redline setup codex` wrote there (hooks.json is its own file).
  write(path.join(codexHome, "config.toml"), [
    'model = "gpt-5-codex"',
    'model_provider = "stand"',
    'approval_policy = "never"',
    'sandbox_mode = "workspace-write"',
    'check_for_update_on_startup = false',
    '[features]',
    'apply_patch_freeform = true',
    '[analytics]',
    'enabled = false',
    '[model_providers.stand]',
    'name = "stand-in"',
    `base_url = "${base}/v1"`,
    'wire_api = "responses"',
    'env_key = "STAND_API_KEY"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    "",
  ].join("\n"));
  Object.assign(env, { CODEX_HOME: codexHome, STAND_API_KEY: "stand-in-key", RUST_LOG: "error" });
  cmd = process.execPath;
  args = [path.join(c.binDir, "codex"), "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", c.prompt];
} else {
  console.error(`harness ${c.harness} is not driven yet`);
  process.exit(90);
}

const child = spawn(cmd, args, { cwd: c.project, env, stdio: ["ignore", "pipe", "pipe"] });
let out = "";
let err = "";
child.stdout.on("data", (d) => (out += d));
child.stderr.on("data", (d) => (err += d));
const timer = setTimeout(() => child.kill("SIGKILL"), c.timeoutMs || 120000);
child.on("close", (code, signal) => {
  clearTimeout(timer);
  fs.writeFileSync(path.join(c.logDir, "harness.out"), out);
  fs.writeFileSync(path.join(c.logDir, "harness.err"), err + (signal ? `\nkilled by ${signal}\n` : ""));
  server.close();
  process.exit(code ?? 99);
});
