//! MCP servers that live inside the program that started tandem (the Agent SDK's `createSdkMcpServer` and
//! `create_sdk_mcp_server`, type `"sdk"`): tandem's MCP client speaks to them as to any server, and each JSON-RPC
//! message it writes is carried to the program and back by a [`McpRelay`] — for the SDK's protocol, an
//! `mcp_message` control request. The client sees an ordinary line-delimited stream (an in-memory pipe), so the
//! handshake, listing, calls, progress and cancellation are rmcp's, as for a child process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::mpsc;

/// Carries one JSON-RPC message to server `server` of the program that started tandem; the answer is the
/// server's JSON-RPC reply (for a notification, whatever acknowledgement the program sends).
pub trait McpRelay: Send + Sync {
    fn send(&self, server: &str, message: Value) -> BoxFuture<'static, Result<Value, String>>;
}

/// The relay of a session whose host serves SDK MCP servers, and the way back for what those servers say
/// unasked (a changed tool list).
#[derive(Clone)]
pub struct SdkRelay {
    relay: Arc<dyn McpRelay>,
    /// Each open server's pipe to the client, for messages the host sends unasked.
    unasked: Arc<Mutex<HashMap<String, mpsc::UnboundedSender<Value>>>>,
}

impl SdkRelay {
    pub fn new(relay: Arc<dyn McpRelay>) -> SdkRelay {
        SdkRelay { relay, unasked: Arc::default() }
    }

    /// Hands a message server `server` sent unasked (a notification) to its client; false when it has none.
    pub fn deliver(&self, server: &str, message: Value) -> bool {
        let unasked = self.unasked.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        unasked.get(server).is_some_and(|pipe| pipe.send(message).is_ok())
    }
}

impl std::fmt::Debug for SdkRelay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SdkRelay")
    }
}

/// Largest message buffered between the client and the relay (a tool result may be large).
const PIPE_BYTES: usize = 1 << 20;

/// The two ends an MCP client reads and writes for server `server`, each message carried through `relay`.
pub(super) fn open(server: &str, relay: &SdkRelay) -> (ReadHalf<DuplexStream>, WriteHalf<DuplexStream>) {
    let (client, ours) = tokio::io::duplex(PIPE_BYTES);
    let (unasked_tx, unasked) = mpsc::unbounded_channel();
    relay.unasked.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(server.to_owned(), unasked_tx);
    tokio::spawn(carry(server.to_owned(), relay.relay.clone(), ours, unasked));
    tokio::io::split(client)
}

/// Reads the client's messages, one per line, and sends each through the relay (each request in its own task,
/// so a long tool call doesn't hold a ping back); answers to requests are written back as lines.
async fn carry(
    server: String,
    relay: Arc<dyn McpRelay>,
    pipe: DuplexStream,
    mut unasked: mpsc::UnboundedReceiver<Value>,
) {
    let (read, mut write) = tokio::io::split(pipe);
    let (answers_tx, mut answers) = mpsc::unbounded_channel::<Value>();
    let writer = tokio::spawn(async move {
        loop {
            let answer = tokio::select! {
                answer = answers.recv() => answer,
                Some(message) = unasked.recv() => Some(message),
            };
            let Some(answer) = answer else { return };
            let mut line = answer.to_string();
            line.push('\n');
            if write.write_all(line.as_bytes()).await.is_err() {
                return;
            }
        }
    });
    let mut lines = tokio::io::BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            tracing::warn!(%server, "an MCP message to an SDK server is not JSON; dropped");
            continue;
        };
        let id = message.get("id").filter(|id| !id.is_null()).cloned();
        let is_request = message.get("method").is_some() && id.is_some();
        let sent = relay.send(&server, message);
        let answers = answers_tx.clone();
        let server = server.clone();
        tokio::spawn(async move {
            let reply = sent.await;
            match (is_request, reply) {
                // The client waits for the answer with the request's id: one with another id (or none) would
                // leave the call hanging until its timeout, so it is an error now.
                (true, Ok(answer)) if answer.is_object() && answer.get("id") == id.as_ref() => {
                    let _ = answers.send(answer);
                }
                (true, Ok(answer)) => {
                    let shown: String = answer.to_string().chars().take(200).collect();
                    let why = format!("the SDK server's answer is not the answer to this request: {shown}");
                    let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": why}});
                    let _ = answers.send(error);
                }
                (true, Err(why)) => {
                    let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": why}});
                    let _ = answers.send(error);
                }
                (false, Err(why)) => tracing::warn!(%server, %why, "an SDK server did not take a notification"),
                (false, Ok(_)) => {}
            }
        });
    }
    drop(answers_tx);
    let _ = writer.await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host whose server answers every request with `answer`.
    struct Answers(Value);

    impl McpRelay for Answers {
        fn send(&self, _server: &str, _message: Value) -> BoxFuture<'static, Result<Value, String>> {
            let answer = self.0.clone();
            Box::pin(async move { Ok(answer) })
        }
    }

    async fn answer_to_a_call(host_answer: Value) -> Value {
        let relay = SdkRelay::new(Arc::new(Answers(host_answer)));
        let (read, mut write) = open("calc", &relay);
        write.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{}}\n").await.unwrap();
        let mut lines = tokio::io::BufReader::new(read).lines();
        serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap()
    }

    /// Found by the fifty-third red-team round: a host answer with another id (or not an object) was handed to the
    /// client, which kept waiting for its own until MCP_TOOL_TIMEOUT (600 s).
    #[tokio::test]
    async fn an_answer_to_another_request_is_an_error_for_this_one() {
        let right = answer_to_a_call(json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}})).await;
        assert_eq!(right["result"], json!({"content": []}));
        for wrong in [json!({"jsonrpc": "2.0", "id": 777, "result": {}}), json!("oops")] {
            let answer = answer_to_a_call(wrong).await;
            assert_eq!(answer["id"], 1, "{answer}");
            assert!(answer["error"]["message"].as_str().unwrap().contains("not the answer to this request"));
        }
    }
}
