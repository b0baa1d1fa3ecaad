"""A real MCP client for toolshelf's tests: the Python `mcp` SDK's ClientSession on protocol
2025-11-25, running server-everything's `simulate-research-query` (a tool that requires tasks)
through toolshelf's use_tool with the SDK's own task types: create, get, list, result, cancel,
an ambiguous query whose clarification the child asks for while the agent waits in
tasks/result, the child's notifications/tasks/status under toolshelf's handles, and (over HTTP)
another session's tasks/get of the first one's task.

Usage: mcp_tasks.py TOOLBOX SERVER -- COMMAND [ARGS...]   (toolshelf on stdio)
       mcp_tasks.py TOOLBOX SERVER --url URL                (`toolshelf serve --http`)
Prints one JSON object with what the client saw; exits non-zero on any unexpected failure.
"""

import asyncio
import contextlib
import json
import sys

from mcp import ClientSession, MCPError, StdioServerParameters, types
from mcp.client.extension import NotificationBinding
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

TOOL = "simulate-research-query"


@contextlib.asynccontextmanager
async def connect(target: list[str]):
    """The client's streams to toolshelf: a process on stdio, or a URL over streamable HTTP."""
    if target[0] == "--url":
        async with streamable_http_client(target[1]) as streams:
            yield streams[0], streams[1]
    else:
        assert target[0] == "--", __doc__
        parameters = StdioServerParameters(command=target[1], args=target[2:])
        async with stdio_client(parameters) as (read, write):
            yield read, write


async def main(toolbox: str, server: str, target: list[str]) -> dict:
    seen: dict = {"elicitation": [], "status_notices": []}

    async def notice(params: types.TaskStatusNotificationParams) -> None:
        seen["status_notices"].append([params.task_id, params.status])

    # The SDK leaves notifications/tasks/status out of its tables (it is optional for clients):
    # a binding receives it.
    status = NotificationBinding(
        method="notifications/tasks/status", params_type=types.TaskStatusNotificationParams, handler=notice
    )

    async def elicitation(context, params: types.ElicitRequestParams):
        seen["elicitation"].append(params.message)
        meta = params.model_dump(by_alias=True, mode="json").get("_meta") or {}
        seen["elicitation_task"] = (meta.get("io.modelcontextprotocol/related-task") or {}).get("taskId")
        return types.ElicitResult(action="accept", content={"interpretation": "programming"})

    async with connect(target) as (read, write):
        async with ClientSession(
            read, write, elicitation_callback=elicitation, notification_bindings=[status]
        ) as session:
            initialized = await session.initialize()
            seen["protocol"] = initialized.protocol_version
            tasks = initialized.capabilities.tasks
            seen["tasks_capability"] = tasks.model_dump(by_alias=True, exclude_none=True) if tasks else None
            listed = await session.list_tools()
            use_tool = next(tool for tool in listed.tools if tool.name == "use_tool")
            seen["use_tool_execution"] = (
                use_tool.execution.model_dump(by_alias=True, exclude_none=True) if use_tool.execution else None
            )

            opened = await session.call_tool("open_toolbox", {"toolbox": toolbox})
            for listed_server in opened.structured_content["servers"]:
                for tool in listed_server.get("tools", []):
                    if tool["name"] == TOOL:
                        seen["execution"] = tool.get("execution")

            def use_tool_params(arguments: dict, task: types.TaskMetadata | None):
                return types.CallToolRequestParams(
                    name="use_tool",
                    arguments={"tool": {"toolbox": toolbox, "server": server, "name": TOOL}, "arguments": arguments},
                    task=task,
                )

            # Without a task: the child's own answer.
            plain = await session.call_tool(
                "use_tool",
                {"tool": {"toolbox": toolbox, "server": server, "name": TOOL}, "arguments": {"topic": "x"}},
            )
            seen["without_task"] = {
                "is_error": plain.is_error,
                "text": "\n".join(block.text for block in plain.content if block.type == "text"),
            }

            async def start(arguments: dict, progress_token: str | None = None) -> str:
                # The SDK's send_request checks a tools/call answer against CallToolResult only,
                # so a task-augmented call goes through its dispatcher and the answer is checked
                # against the SDK's CreateTaskResult here.
                params = use_tool_params(arguments, types.TaskMetadata(ttl=60000))
                raw_params = params.model_dump(by_alias=True, mode="json", exclude_none=True)
                if progress_token is not None:
                    raw_params["_meta"] = {"progressToken": progress_token}
                raw = await session._dispatcher.send_raw_request("tools/call", raw_params, {})
                return types.CreateTaskResult.model_validate(raw, by_name=False).task.task_id

            async def get(task_id: str) -> types.GetTaskResult:
                return await session.send_request(
                    types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id)), types.GetTaskResult
                )

            async def result(task_id: str) -> types.CallToolResult:
                return await session.send_request(
                    types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id)),
                    types.CallToolResult,
                )

            task_id = await start({"topic": "tides"})
            seen["task_id"] = task_id
            status = await get(task_id)
            seen["first_status"] = status.status
            seen["status_task_id"] = status.task_id
            listing = await session.send_request(types.ListTasksRequest(), types.ListTasksResult)
            seen["listed"] = [task.task_id for task in listing.tasks]
            done = await result(task_id)
            seen["report"] = "\n".join(block.text for block in done.content if block.type == "text")
            related = (done.meta or {}).get("io.modelcontextprotocol/related-task") or {}
            seen["related_task"] = related.get("taskId")
            seen["final_status"] = (await get(task_id)).status
            # The child's notice that the task completed reaches the agent under the handle.
            for _ in range(100):
                if [task_id, "completed"] in seen["status_notices"]:
                    break
                await asyncio.sleep(0.05)

            # The child asks for a clarification while the agent waits for the result.
            ambiguous = await start({"topic": "python", "ambiguous": True})
            seen["ambiguous_task_id"] = ambiguous
            clarified = await result(ambiguous)
            seen["clarified_report"] = "\n".join(block.text for block in clarified.content if block.type == "text")

            # A task-augmented call that also asks for progress is a task all the same.
            with_progress = await start({"topic": "progress"}, progress_token="p-1")
            seen["progress_task_id"] = with_progress
            seen["progress_task_status"] = (await get(with_progress)).status

            cancelled = await start({"topic": "to be cancelled"})
            await session.send_request(
                types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=cancelled)),
                types.CancelTaskResult,
            )
            seen["cancelled_status"] = (await get(cancelled)).status

            try:
                await get("ts-999")
                seen["unknown"] = None
            except MCPError as error:
                seen["unknown"] = {"code": error.error.code, "message": error.error.message}

            if target[0] == "--url":
                # Another session of the same server cannot reach this session's task.
                async with connect(target) as (other_read, other_write):
                    async with ClientSession(other_read, other_write) as other:
                        await other.initialize()
                        try:
                            await other.send_request(
                                types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id)),
                                types.GetTaskResult,
                            )
                            seen["from_another_session"] = None
                        except MCPError as error:
                            seen["from_another_session"] = {"code": error.error.code, "message": error.error.message}
    return seen


if __name__ == "__main__":
    toolbox, server, *target = sys.argv[1:]
    print(json.dumps(asyncio.run(main(toolbox, server, target))))
