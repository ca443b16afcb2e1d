//! tandem as a Model Context Protocol client (through the official Rust SDK, `rmcp`): the servers a Claude
//! Code project configures are started with the session, and their tools are offered to the model as
//! `mcp__<server>__<tool>`.

pub mod approvals;
pub mod client;
pub mod config;
pub mod edit;
mod http;

/// Makes ring the process's TLS crypto provider (rmcp's HTTP client is built without one, so that tandem has a
/// single provider); harmless when one is installed already.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
pub mod manager;
mod offers;
pub mod relay;
pub mod search;
mod status;
pub mod stdio;
pub mod tool;
pub mod views;

pub use manager::{ManagerOptions, McpManager, ServerStatus, Status};
