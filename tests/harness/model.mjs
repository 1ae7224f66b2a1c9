// A scripted stand-in for a model API, on loopback. It answers the n-th request with the n-th
// turn of a script (a tool call or a text), in the wire format the harness speaks, and records
// every request body so that a test can check what reached the model (a denial's reason, a
// reviewer's note). Protocols: openai-chat (Pi), anthropic (Claude Code), gemini (Gemini CLI),
// openai-responses (Codex).
import http from "node:http";
import fs from "node:fs";
import path from "node:path";

export function startModel({ protocol, turns, logDir }) {
  let n = 0;
  let other = 0;
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const isModelCall = req.method === "POST";
      if (!isModelCall) {
        // Model lists and other probes: an empty but valid answer.
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ object: "list", data: [], models: [] }));
        return;
      }
      const parsed = safeJson(body);
      // Only the agent loop's requests (they offer tools) take the script's turns; side requests
      // (titles, summaries, token counts) get a plain text and are logged apart.
      if (!hasTools(parsed)) {
        const k = other++;
        fs.writeFileSync(path.join(logDir, `other-${k}.json`), JSON.stringify({ url: req.url, body: parsed }, null, 1));
        answer(protocol, { text: "ok" }, 1000 + k, parsed, req, res);
        return;
      }
      const i = n++;
      fs.writeFileSync(path.join(logDir, `request-${i}.json`), JSON.stringify({ url: req.url, body: parsed }, null, 1));
      const turn = turns[i] || { text: "done" };
      answer(protocol, turn, i, parsed, req, res);
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, port: server.address().port })));
}

function hasTools(body) {
  return !!body && Array.isArray(body.tools) && body.tools.length > 0;
}

function safeJson(s) {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

function sse(res, events) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const e of events) res.write(e);
  res.end();
}

function answer(protocol, turn, i, body, req, res) {
  const id = `call_${i}`;
  if (protocol === "openai-chat") {
    const base = { id: `chatcmpl-${i}`, object: "chat.completion.chunk", created: 0, model: "stand-in" };
    const delta = turn.tool
      ? { role: "assistant", content: null, tool_calls: [{ index: 0, id, type: "function", function: { name: turn.tool.name, arguments: JSON.stringify(turn.tool.arguments) } }] }
      : { role: "assistant", content: turn.text };
    const finish = turn.tool ? "tool_calls" : "stop";
    const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
    if (body && body.stream === false) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ...base, object: "chat.completion", choices: [{ index: 0, message: delta, finish_reason: finish }], usage }));
      return;
    }
    sse(res, [
      `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`,
      `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage })}\n\n`,
      "data: [DONE]\n\n",
    ]);
    return;
  }
  if (protocol === "anthropic") {
    const content = turn.tool
      ? { type: "tool_use", id: `toolu_${i}`, name: turn.tool.name, input: {} }
      : { type: "text", text: "" };
    const deltas = turn.tool
      ? [{ type: "input_json_delta", partial_json: JSON.stringify(turn.tool.arguments) }]
      : [{ type: "text_delta", text: turn.text }];
    const ev = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const message = { id: `msg_${i}`, type: "message", role: "assistant", model: body?.model || "stand-in", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } };
    if (body && body.stream !== true) {
      const full = turn.tool ? { ...content, input: turn.tool.arguments } : { type: "text", text: turn.text };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ...message, content: [full], stop_reason: turn.tool ? "tool_use" : "end_turn" }));
      return;
    }
    sse(res, [
      ev("message_start", { message }),
      ev("content_block_start", { index: 0, content_block: content }),
      ...deltas.map((delta) => ev("content_block_delta", { index: 0, delta })),
      ev("content_block_stop", { index: 0 }),
      ev("message_delta", { delta: { stop_reason: turn.tool ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: 1 } }),
      ev("message_stop", {}),
    ]);
    return;
  }
  if (protocol === "gemini") {
    const part = turn.tool ? { functionCall: { name: turn.tool.name, args: turn.tool.arguments } } : { text: turn.text };
    const chunk = { candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 }, modelVersion: "stand-in" };
    if (req.url.includes("streamGenerateContent")) {
      sse(res, [`data: ${JSON.stringify(chunk)}\r\n\r\n`]);
    } else {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(chunk));
    }
    return;
  }
  if (protocol === "openai-responses") {
    const respId = `resp_${i}`;
    const item = turn.tool
      ? (turn.tool.custom
          ? { type: "custom_tool_call", id: `ctc_${i}`, call_id: id, name: turn.tool.name, input: turn.tool.input, status: "completed" }
          : { type: "function_call", id: `fc_${i}`, call_id: id, name: turn.tool.name, arguments: JSON.stringify(turn.tool.arguments), status: "completed" })
      : { type: "message", id: `msg_${i}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: turn.text, annotations: [] }] };
    const ev = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const response = { id: respId, object: "response", status: "completed", model: "stand-in", output: [item], usage: { input_tokens: 1, input_tokens_details: { cached_tokens: 0 }, output_tokens: 1, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 2 } };
    sse(res, [
      ev("response.created", { response: { ...response, status: "in_progress", output: [] } }),
      ev("response.output_item.done", { output_index: 0, item }),
      ev("response.completed", { response }),
    ]);
    return;
  }
  res.writeHead(500);
  res.end("unknown protocol");
}
