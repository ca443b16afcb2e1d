//! tandem's core: everything that is not a terminal.
//!
//! Front ends (the TUI, headless mode) talk to the agent only through [`protocol::Op`] and
//! [`protocol::Event`]. Nothing in this crate draws on a terminal.

pub mod agent;
pub mod agents;
pub mod commands;
pub mod config;
pub mod context;
pub use tandem_protocol::conversation;
pub mod diff;
pub mod events;
pub mod front_matter;
pub mod fs_util;
pub mod heap;
pub mod hooks;
pub mod inspect;
pub mod mcp;
pub mod memory;
pub mod models;
pub mod permissions;
pub mod prompt;
pub use tandem_protocol as protocol;
pub mod provider;
pub mod reasoning;
pub mod rewind;
mod safe_git;
pub mod sandbox;
pub mod session;
pub mod setup;
pub mod shell;
pub mod shell_env;
pub mod shutdown;
pub mod skills;
pub mod spend;
pub mod tools;
pub mod trust;
pub mod web;
