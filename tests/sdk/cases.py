"""Programs written against the real Claude Agent SDK (Python), run with cli_path = tandem.

`python cases.py CASE` runs one case against the fake model server the Rust test started (its URL is in the
environment tandem reads) and prints one JSON report as its last line; a failed `assert` fails the case. The Rust
side (tests/tests/sdk.rs) checks the report and the requests the server received.
"""

import asyncio
import json
import os
import sys

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)

WORK = os.environ["SDK_WORK"]
TANDEM = os.environ["TANDEM_BIN"]
PROVIDER = os.environ.get("SDK_PROVIDER", "anthropic")


def options(**extra):
    """Options as an SDK program passes them, pointed at tandem (and, for OpenAI, its provider flags)."""
    base = dict(cli_path=TANDEM, cwd=WORK)
    if PROVIDER == "openai":
        base["model"] = "gpt-4o"
        base["extra_args"] = {"provider": "openai"}
    base.update(extra)
    return ClaudeAgentOptions(**base)


def summary(messages):
    """What a case saw, in a form the Rust side can check."""
    out = []
    for message in messages:
        if isinstance(message, SystemMessage):
            out.append({"kind": "system", "subtype": message.subtype, "data": message.data})
        elif isinstance(message, AssistantMessage):
            blocks = []
            for block in message.content:
                if isinstance(block, TextBlock):
                    blocks.append({"text": block.text})
                elif isinstance(block, ToolUseBlock):
                    blocks.append({"tool_use": block.name, "input": block.input})
            out.append({"kind": "assistant", "model": message.model, "blocks": blocks, "error": message.error})
        elif isinstance(message, UserMessage):
            results = []
            if isinstance(message.content, list):
                for block in message.content:
                    if isinstance(block, ToolResultBlock):
                        results.append({"content": block.content, "is_error": block.is_error})
            out.append({"kind": "user", "results": results, "tool_use_result": message.tool_use_result})
        elif isinstance(message, ResultMessage):
            out.append(
                {
                    "kind": "result",
                    "subtype": message.subtype,
                    "is_error": message.is_error,
                    "num_turns": message.num_turns,
                    "session_id": message.session_id,
                    "result": message.result,
                    "total_cost_usd": message.total_cost_usd,
                    "permission_denials": message.permission_denials,
                    "errors": message.errors,
                    "model_usage": message.model_usage,
                    "terminal_reason": message.terminal_reason,
                }
            )
        elif isinstance(message, StreamEvent):
            out.append({"kind": "stream_event", "type": message.event.get("type")})
    return out


def results_of(messages):
    return [m for m in messages if isinstance(m, ResultMessage)]


async def collect(prompt, opts):
    return [message async for message in query(prompt=prompt, options=opts)]


async def stream_of(text):
    """A streaming prompt (needed for can_use_tool and hooks)."""
    yield {"type": "user", "message": {"role": "user", "content": text}}


async def case_one_shot():
    messages = await collect("Say hello", options())
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert init.data["claude_code_version"] >= "2.0.0", init.data
    assert init.data["cwd"] == WORK, init.data
    [result] = results_of(messages)
    assert result.subtype == "success" and not result.is_error, result
    assert result.result == "Hello from the fake model.", result
    return summary(messages)


def permission_log():
    asked = []

    async def allow(tool, tool_input, context):
        asked.append({"tool": tool, "input": tool_input, "suggestions": [s.to_dict() for s in context.suggestions]})
        return PermissionResultAllow(updated_input=tool_input)

    return asked, allow


async def case_can_use_tool_allow():
    asked, allow = permission_log()
    messages = await collect(stream_of("Make the file"), options(can_use_tool=allow, allowed_tools=["Read"]))
    assert [entry["tool"] for entry in asked] == ["Bash"], asked
    assert os.path.exists(os.path.join(WORK, "made-by-tool.txt"))
    [result] = results_of(messages)
    assert result.subtype == "success", result
    return {"asked": asked, "messages": summary(messages)}


async def case_can_use_tool_deny():
    async def deny(tool, tool_input, context):
        return PermissionResultDeny(message="not allowed here")

    messages = await collect(stream_of("Make the file"), options(can_use_tool=deny))
    assert not os.path.exists(os.path.join(WORK, "made-by-tool.txt"))
    [result] = results_of(messages)
    assert result.permission_denials and result.permission_denials[0]["tool_name"] == "Bash", result
    return summary(messages)


async def case_can_use_tool_updated_input():
    async def rewrite(tool, tool_input, context):
        return PermissionResultAllow(updated_input={**tool_input, "command": "echo rewritten > rewritten.txt"})

    messages = await collect(stream_of("Make the file"), options(can_use_tool=rewrite))
    assert not os.path.exists(os.path.join(WORK, "made-by-tool.txt"))
    with open(os.path.join(WORK, "rewritten.txt")) as f:
        assert f.read() == "rewritten\n"
    return summary(messages)


async def case_partial_messages():
    messages = await collect("Say hello", options(include_partial_messages=True))
    kinds = [m.event.get("type") for m in messages if isinstance(m, StreamEvent)]
    assert "message_start" in kinds and "content_block_delta" in kinds and "message_stop" in kinds, kinds
    return summary(messages)


async def case_max_turns():
    asked, allow = permission_log()
    error = None
    messages = []
    try:
        async for message in query(prompt=stream_of("Make the file"), options=options(can_use_tool=allow, max_turns=1)):
            messages.append(message)
    except Exception as exc:  # the SDK raises after an error result and exit code 1
        error = f"{type(exc).__name__}: {exc}"
    [result] = results_of(messages)
    assert result.subtype == "error_max_turns" and result.is_error, result
    assert result.num_turns == 2, result
    assert error is not None and "maximum number of turns" in error, error
    return {"error": error, "messages": summary(messages)}


async def case_client_two_queries():
    async with ClaudeSDKClient(options=options()) as client:
        await client.query("First question")
        first = [m async for m in client.receive_response()]
        await client.query("Second question")
        second = [m async for m in client.receive_response()]
    [r1] = results_of(first)
    [r2] = results_of(second)
    assert r1.session_id == r2.session_id, (r1, r2)
    assert r1.result == "First answer." and r2.result == "Second answer.", (r1, r2)
    return {"first": summary(first), "second": summary(second)}


async def case_interrupt():
    async with ClaudeSDKClient(options=options(include_partial_messages=True)) as client:
        await client.query("Tell me a long story")
        messages = []
        interrupted = False
        async for message in client.receive_response():
            messages.append(message)
            if isinstance(message, StreamEvent) and message.event.get("type") == "content_block_delta" and not interrupted:
                await client.interrupt()
                interrupted = True
        assert interrupted
        [result] = results_of(messages)
        assert result.is_error, result
        # The session goes on after an interrupt.
        await client.query("Are you there?")
        after = [m async for m in client.receive_response()]
        [again] = results_of(after)
        assert again.result == "Still here.", again
    return {"messages": summary(messages), "after": summary(after)}


async def case_hook_denies():
    seen = []

    async def no_bash(hook_input, tool_use_id, context):
        seen.append({"event": hook_input["hook_event_name"], "tool": hook_input.get("tool_name"), "id": tool_use_id})
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "bash is off in this test",
            }
        }

    async def allow(tool, tool_input, context):
        return PermissionResultAllow(updated_input=tool_input)

    hooks = {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[no_bash])]}
    messages = await collect(stream_of("Make the file"), options(hooks=hooks, can_use_tool=allow))
    assert seen and seen[0]["event"] == "PreToolUse" and seen[0]["tool"] == "Bash", seen
    assert not os.path.exists(os.path.join(WORK, "made-by-tool.txt"))
    return {"seen": seen, "messages": summary(messages)}


async def case_resume():
    first = await collect("Remember the word apple", options())
    [r1] = results_of(first)
    second = await collect("What was the word?", options(resume=r1.session_id))
    [r2] = results_of(second)
    assert r2.session_id == r1.session_id, (r1.session_id, r2.session_id)
    return {"first": summary(first), "second": summary(second)}


async def case_set_permission_mode():
    asked = []

    async def refuse(tool, tool_input, context):
        asked.append(tool)
        return PermissionResultDeny(message="asked, and refused")

    async with ClaudeSDKClient(options=options(can_use_tool=refuse)) as client:
        await client.set_permission_mode("acceptEdits")
        await client.query("Write the file")
        messages = [m async for m in client.receive_response()]
    assert asked == [], asked
    with open(os.path.join(WORK, "notes.txt")) as f:
        assert f.read() == "written in acceptEdits\n"
    return summary(messages)


async def case_set_model():
    async with ClaudeSDKClient(options=options()) as client:
        await client.query("First question")
        first = [m async for m in client.receive_response()]
        await client.set_model(os.environ["SDK_SECOND_MODEL"])
        await client.query("Second question")
        second = [m async for m in client.receive_response()]
        usage = await client.get_context_usage()
    return {"first": summary(first), "second": summary(second), "context": usage}


async def case_system_prompt():
    messages = await collect("Say hello", options(system_prompt="You are the SDK test's assistant."))
    return summary(messages)


async def case_append_system_prompt():
    preset = {"type": "preset", "preset": "claude_code", "append": "Always end with APPENDED-MARK."}
    messages = await collect("Say hello", options(system_prompt=preset))
    return summary(messages)


async def case_structured_output():
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
    messages = await collect("What is 6 times 7?", options(output_format={"type": "json_schema", "schema": schema}))
    [result] = results_of(messages)
    assert result.structured_output == {"answer": 42}, result
    return summary(messages)


async def case_rewind_files():
    """The file-checkpointing example of the SDK's docs: two prompts change files; rewinding to the second
    prompt's user message puts back what it changed (the Write and the Bash command), not what the first did."""
    opts = options(
        enable_file_checkpointing=True,
        permission_mode="acceptEdits",
        extra_args={"replay-user-messages": None},
        allowed_tools=["Bash"],
    )
    notes = os.path.join(WORK, "notes.txt")
    log = os.path.join(WORK, "log.txt")
    checkpoints = []
    async with ClaudeSDKClient(options=opts) as client:
        for prompt in ["Write the notes", "Change them and the log"]:
            await client.query(prompt)
            uuid = None
            async for message in client.receive_response():
                if isinstance(message, UserMessage) and message.uuid and uuid is None:
                    uuid = message.uuid
            checkpoints.append(uuid)
        with open(notes) as f:
            changed = f.read()
        await client.rewind_files(checkpoints[1])
        with open(notes) as f:
            after = f.read()
        with open(log) as f:
            log_after = f.read()
    return {"checkpoints": checkpoints, "changed": changed, "after": after, "log_after": log_after}


async def case_sdk_mcp_tool():
    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args):
        return {"content": [{"type": "text", "text": f"sum={args['a'] + args['b']:g}"}]}

    calc = create_sdk_mcp_server("calc", tools=[add])
    messages = await collect(
        stream_of("Add 2 and 3"), options(mcp_servers={"calc": calc}, allowed_tools=["mcp__calc__add"])
    )
    [result] = results_of(messages)
    assert result.subtype == "success" and not result.is_error, result
    return summary(messages)


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    report = asyncio.run(CASES[sys.argv[1]]())
    print(json.dumps(report, default=str))
