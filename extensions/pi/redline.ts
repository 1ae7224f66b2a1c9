// redline for Pi: sends each `edit` and `write` call to `redline hook pi` before it runs.
// Installed by `redline setup pi` (project: .pi/extensions/redline.ts; --user:
// ~/.pi/agent/extensions/redline.ts). The answer is one JSON object on stdout:
//   {}                          no objection: the tool runs as the model sent it
//   {"input": {...}}            the tool runs on this input instead (the file's exact text)
//   "note": "..."               (with an allow after review) appended to the tool's result,
//                               so the model reads the reviewer's notes
//   {"block": true, "reason"}   the call is refused; the reason reaches the model
//   {"ask": true, "reason"}     redline leaves it to a human: confirmed through Pi's UI when
//                               there is one, refused otherwise
// A hook that fails (redline missing, unreadable answer) never blocks: Pi runs the tool and the
// problem is shown as a warning.
import { spawn } from "node:child_process";

// `redline setup pi --review` writes ["hook", "pi", "--review"] here.
const REDLINE_ARGS: string[] = ["hook", "pi"];
const REDLINE = process.env.REDLINE_BIN || "redline";

function runHook(payload: string, cwd: string): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(REDLINE, REDLINE_ARGS, { cwd, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", (e) => resolve({ code: -1, out: "", err: String(e) }));
    child.on("close", (code) => resolve({ code: code ?? -1, out, err }));
    child.stdin.end(payload);
  });
}

export default function (pi: any) {
  const notes = new Map<string, string>();
  pi.on("tool_result", async (event: any) => {
    const note = notes.get(event.toolCallId);
    if (note === undefined) return undefined;
    notes.delete(event.toolCallId);
    return { content: [...(event.content || []), { type: "text", text: note }] };
  });
  pi.on("tool_call", async (event: any, ctx: any) => {
    if (event.toolName !== "edit" && event.toolName !== "write" && !/redline.*_edits$/.test(event.toolName)) {
      return undefined;
    }
    const cwd = ctx?.cwd || process.cwd();
    const payload = JSON.stringify({ toolName: event.toolName, toolCallId: event.toolCallId, input: event.input, cwd });
    const { code, out, err } = await runHook(payload, cwd);
    if (err.trim() !== "") {
      ctx?.ui?.notify?.(err.trim(), code === 0 ? "info" : "warning");
    }
    let answer: any;
    try {
      answer = JSON.parse(out || "{}");
    } catch {
      return undefined;
    }
    if (answer.block) {
      return { block: true, reason: answer.reason };
    }
    if (answer.ask) {
      if (ctx?.hasUI && ctx.ui?.confirm) {
        const ok = await ctx.ui.confirm("redline", answer.reason);
        return ok ? undefined : { block: true, reason: "The user refused this edit." };
      }
      return { block: true, reason: answer.reason };
    }
    if (typeof answer.note === "string" && answer.note !== "") {
      notes.set(event.toolCallId, answer.note);
    }
    if (answer.input && typeof answer.input === "object") {
      for (const k of Object.keys(event.input)) delete event.input[k];
      Object.assign(event.input, answer.input);
    }
    return undefined;
  });
}
