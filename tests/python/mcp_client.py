"""Drives `redline mcp` with the official MCP Python SDK (pinned in requirements.txt), as an
agent harness would: list the tools, read a file with Claude Code's `file_path`, preview and
apply edits (one batch that fails, one that succeeds). The SDK validates each successful
result's structuredContent against the tool's outputSchema. Prints one JSON object of what it
saw; tests/integ_clients.rs checks it.

Usage: python mcp_client.py REDLINE ROOT
"""

import asyncio
import json
import sys

from mcp import Client, StdioServerParameters


def plain(result):
    return {
        "isError": result.is_error,
        "structured": result.structured_content,
        "text": [c.text for c in result.content if getattr(c, "type", "") == "text"],
    }


async def main(binary, root):
    server = StdioServerParameters(command=binary, args=["mcp", "--root", root])
    seen = {}
    async with Client(server) as client:
        tools = await client.list_tools()
        seen["tools"] = [
            {"name": t.name, "outputSchema": t.output_schema is not None} for t in tools.tools
        ]
        seen["read"] = plain(await client.call_tool("read_file", {"file_path": "a.txt"}))
        files = [{"path": "a.txt", "edits": [{"oldText": "two", "newText": "2"}]}]
        seen["preview"] = plain(await client.call_tool("preview_edits", {"files": files}))
        bad = [{"path": "a.txt", "edits": [{"oldText": "zwei", "newText": "2"}]}]
        seen["failed"] = plain(await client.call_tool("apply_edits", {"files": bad}))
        seen["apply"] = plain(await client.call_tool("apply_edits", {"files": files}))
    print(json.dumps(seen))


asyncio.run(main(sys.argv[1], sys.argv[2]))
