//! A scripted fake LLM server for tandem's tests.
//!
//! It speaks the Anthropic Messages API (`POST /v1/messages`) and OpenAI Chat Completions
//! (`POST /v1/chat/completions`), streaming and not, byte for byte in the shapes of `shared/protocols.md` §1–2,
//! so the real agent and providers run end to end with no key and no network. Each model request consumes the
//! next [`Reply`] of a [`Scenario`]; replies can also fail on purpose ([`Fault`]): HTTP errors, dropped
//! connections, malformed events, mid-stream error events and stalls. Every request is recorded
//! ([`RecordedRequest`]) for assertions.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use serde_json::json;
//! use tandem_testkit::{FakeServer, Reply, Scenario};
//!
//! let server = FakeServer::start(Scenario::new(vec![
//!     Reply::tool_use("Read", json!({"file_path": "hello.txt"})),
//!     Reply::text("Done."),
//! ]))
//! .await?;
//! // point the provider at server.url() ... then:
//! assert_eq!(server.served(), 2);
//! # Ok(()) }
//! ```
//!
//! The `tandem-fake-llm` binary serves a JSON scenario file for tests that drive a subprocess or a shell.

mod anthropic;
mod openai;
mod record;
mod scenario;
mod server;
mod sse;
mod turn;
pub mod web;

pub use record::RecordedRequest;
pub use scenario::{Block, Fault, Reply, Scenario, ScenarioError, Usage};
pub use server::{FakeServer, ServerOptions};
pub use web::{WebPage, WebSite};
