//! The `tandem` front ends: the full-screen app and headless mode, over tandem-core's `Op`/`Event` channel.
//!
//! `app` is the interactive app's state and its `update`; `ui` draws it (pure functions of state, no I/O);
//! `tui` owns the terminal and the event loop. `headless` is `tandem -p`.

pub mod app;
pub mod cli;
pub mod demo;
pub mod headless;
pub mod inspect_cli;
pub mod mcp_cli;
pub mod pipe;
pub mod sdk;
pub mod stream_json;
pub mod tui;
pub mod ui;
