// Programs written against the real Claude Agent SDK for TypeScript, run with pathToClaudeCodeExecutable = tandem.
//
// `node cases.mjs CASE` runs one case against the fake model server the Rust test started (its URL is in the
// environment tandem reads) and prints one JSON report as its last line; a failed check throws and fails the
// case. The Rust side (tests/tests/sdk_ts.rs) checks the report and the requests the server received.

import { createSdkMcpServer, query, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";

const WORK = process.env.SDK_WORK;
const TANDEM = process.env.TANDEM_BIN;
const FAKE_MCP = process.env.FAKE_MCP_BIN;

function check(condition, what) {
  if (!condition) throw new Error(`check failed: ${what}`);
}

/** Options as an SDK program passes them, pointed at tandem; tandem's stderr is kept for the report. */
const stderr = [];
function options(extra = {}) {
  return { pathToClaudeCodeExecutable: TANDEM, cwd: WORK, stderr: (text) => stderr.push(text), ...extra };
}

/** What a case saw, in a form the Rust side can check. */
function summary(messages) {
  return messages.map((message) => {
    switch (message.type) {
      case "system":
        return { kind: "system", subtype: message.subtype, tools: message.tools, mcp_servers: message.mcp_servers };
      case "assistant":
        return {
          kind: "assistant",
          blocks: message.message.content.map((block) =>
            block.type === "text" ? { text: block.text } : { type: block.type, name: block.name, input: block.input },
          ),
        };
      case "user":
        return {
          kind: "user",
          results: Array.isArray(message.message.content)
            ? message.message.content
                .filter((block) => block.type === "tool_result")
                .map((block) => ({ content: block.content, is_error: block.is_error ?? false }))
            : [],
        };
      case "result":
        return {
          kind: "result",
          subtype: message.subtype,
          is_error: message.is_error,
          result: message.result,
          num_turns: message.num_turns,
          permission_denials: message.permission_denials,
          structured_output: message.structured_output,
        };
      default:
        return { kind: message.type, subtype: message.subtype };
    }
  });
}

async function collect(prompt, opts) {
  const messages = [];
  for await (const message of query({ prompt, options: opts })) {
    messages.push(message);
  }
  return messages;
}

const calculator = () =>
  createSdkMcpServer({
    name: "calc",
    version: "1.0.0",
    tools: [
      tool("add", "Add two numbers", { a: z.number(), b: z.number() }, async ({ a, b }) => ({
        content: [{ type: "text", text: `sum=${a + b}` }],
      })),
    ],
  });

const cases = {
  async one_shot() {
    const messages = await collect("Say hello", options());
    return { messages: summary(messages) };
  },

  async system_prompt() {
    const messages = await collect("Say hello", options({ systemPrompt: "You are the TypeScript test's assistant." }));
    return { messages: summary(messages) };
  },

  async append_system_prompt() {
    const systemPrompt = { type: "preset", preset: "claude_code", append: "Always answer in haiku." };
    const messages = await collect("Say hello", options({ systemPrompt }));
    return { messages: summary(messages) };
  },

  async sdk_mcp_tool() {
    const messages = await collect(
      "Add 2 and 3",
      options({ mcpServers: { calc: calculator() }, allowedTools: ["mcp__calc__add"] }),
    );
    return { messages: summary(messages) };
  },

  async sdk_mcp_tool_asks_the_program() {
    const asked = [];
    const canUseTool = async (name, input) => {
      asked.push({ name, input });
      return { behavior: "allow", updatedInput: input };
    };
    const messages = await collect("Add 2 and 3", options({ mcpServers: { calc: calculator() }, canUseTool }));
    return { messages: summary(messages), asked };
  },

  async stdio_mcp_server_from_initialize() {
    const mcpServers = { fake: { type: "stdio", command: FAKE_MCP, args: ["--name", "fake"] } };
    const messages = await collect("Echo", options({ mcpServers, allowedTools: ["mcp__fake__echo"] }));
    return { messages: summary(messages) };
  },

  async can_use_tool_deny() {
    const canUseTool = async () => ({ behavior: "deny", message: "The TS host says no." });
    const messages = await collect("Make a file", options({ canUseTool }));
    return { messages: summary(messages) };
  },

  async pre_tool_use_hook_denies() {
    const seen = [];
    const hook = async (input) => {
      seen.push(input.tool_name);
      return {
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "hook said no",
        },
      };
    };
    const hooks = { PreToolUse: [{ matcher: "Bash", hooks: [hook] }] };
    const messages = await collect("Make a file", options({ hooks, permissionMode: "acceptEdits" }));
    return { messages: summary(messages), seen };
  },

  async two_prompts_in_one_session() {
    async function* prompts() {
      yield { type: "user", message: { role: "user", content: "first" }, parent_tool_use_id: null, session_id: "" };
      yield { type: "user", message: { role: "user", content: "second" }, parent_tool_use_id: null, session_id: "" };
    }
    const messages = await collect(prompts(), options());
    return { messages: summary(messages) };
  },

  async structured_output() {
    const schema = { type: "object", properties: { answer: { type: "number" } }, required: ["answer"] };
    const messages = await collect("What is 6 times 7?", options({ outputFormat: { type: "json_schema", schema } }));
    return { messages: summary(messages) };
  },

  async main_agent() {
    const agents = { auditor: { description: "Audits", prompt: "AUDITOR-PROMPT: only read.", tools: ["Read"] } };
    const messages = await collect("Audit", options({ agents, agent: "auditor" }));
    return { messages: summary(messages) };
  },

  async introspection() {
    // The prompts end (and the SDK closes tandem's stdin) only once the questions are answered.
    let asked;
    const answered = new Promise((resolve) => (asked = resolve));
    async function* prompts() {
      yield { type: "user", message: { role: "user", content: "hi" }, parent_tool_use_id: null, session_id: "" };
      await answered;
    }
    const q = query({ prompt: prompts(), options: options() });
    const report = {};
    for await (const message of q) {
      if (message.type === "system" && message.subtype === "init") {
        report.account = await q.accountInfo();
        report.usage = await q.getContextUsage();
        await q.setModel("claude-haiku-4-5");
        await q.setModel(undefined);
        asked();
      }
    }
    return report;
  },

  async unsupported_initialize_option_is_an_error() {
    try {
      await collect("Say hello", options({ managedSettings: { permissions: {} }, managedSettingsDelivery: "initialize" }));
    } catch (error) {
      return { error: String(error.message) };
    }
    return { error: null };
  },
};

const name = process.argv[2];
check(cases[name], `a case named ${name}`);
const report = await cases[name]();
report.stderr = stderr.join("");
console.log(JSON.stringify(report));
process.exit(0);
