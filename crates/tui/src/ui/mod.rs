//! Drawing: every function here is a pure function of state (no I/O), so each can be snapshot-tested.

pub mod cell;
pub mod diff;
pub mod frame;
pub mod highlight;
pub mod input;
pub mod inspector;
pub mod list_modal;
pub mod markdown;
pub mod mcp;
pub mod onboarding;
pub mod packed;
pub mod permission;
pub mod picker;
pub mod popup;
pub mod rewind;
pub mod rules;
pub mod status;
pub mod streaming;
pub mod theme;
pub mod todos;
pub mod tool_card;
pub mod transcript;
pub mod wrap;
