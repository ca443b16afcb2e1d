use serde_json::json;

use super::*;
use crate::mcp::client::RemoteTool;
use crate::mcp::config::McpScope;
use crate::mcp::search::ToolSearchMode;

fn manager() -> Arc<McpManager> {
    let server = ServerConfig {
        name: "srv".into(),
        transport: Err("not started in this test".into()),
        scope: McpScope::User,
        origin: "test".into(),
        raw: json!({}),
    };
    let options = ManagerOptions {
        startup_timeout: Duration::from_secs(1),
        call_timeout: Duration::from_secs(1),
        max_output_tokens: 1000,
        shell_env: Arc::default(),
        tool_search: ToolSearchMode::Never,
        relay: None,
    };
    McpManager::new(McpConfig { servers: vec![server], ..McpConfig::default() }, options)
}

fn remote(name: &str, read_only: bool) -> RemoteTool {
    RemoteTool { name: name.into(), description: String::new(), input_schema: json!({}), read_only, title: None }
}

fn offer(tools: Vec<RemoteTool>) -> Offer {
    Offer { tools, ..Offer::default() }
}

fn read_only(manager: &McpManager, name: &str) -> bool {
    manager.all_tools().iter().find(|tool| tool.name == name).map(|tool| tool.is_read_only()).unwrap()
}

#[test]
fn a_tool_that_asked_once_keeps_asking_whatever_the_server_says_later() {
    let manager = manager();
    let server = manager.servers[0].clone();
    manager.install(&server, offer(vec![remote("send", false), remote("get", true)]));
    assert!(!read_only(&manager, "mcp__srv__send"));
    // tools/list_changed: now "send" claims to be read-only.
    manager.install(&server, offer(vec![remote("send", true), remote("get", true)]));
    assert!(!read_only(&manager, "mcp__srv__send"), "no escalation through a new listing");
    assert!(read_only(&manager, "mcp__srv__get"));
    let notes = &manager.statuses()[0].notes;
    assert!(notes.iter().any(|note| note.contains("send now says it is read-only")), "{notes:?}");
}

#[test]
fn tools_whose_names_come_out_the_same_keep_the_first_and_say_so() {
    let manager = manager();
    let server = manager.servers[0].clone();
    manager.install(&server, offer(vec![remote("a.b", false), remote("a_b", true), remote("c", true)]));
    let names: Vec<String> = manager.all_tools().iter().map(|tool| tool.name.clone()).collect();
    assert_eq!(names, ["mcp__srv__a_b", "mcp__srv__c"]);
    assert_eq!(manager.all_tools()[0].remote_name(), "a.b");
    let view = &manager.views()[0];
    assert!(view.reason.as_deref().is_some_and(|reason| reason.contains("a_b is left out")), "{view:?}");
}

#[test]
fn a_refused_server_is_not_started_again_by_a_reconnect() {
    let manager = manager();
    manager.refuse("srv");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let answer = runtime.block_on(manager.reconnect("srv"));
    assert!(answer.unwrap_err().contains("declined"));
    assert!(runtime.block_on(manager.set_enabled("srv", true)).is_err());
}
