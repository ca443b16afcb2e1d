//! What the model sees besides the conversation: project guidelines, token accounting, compaction.

pub mod bound;
pub mod compact;
pub mod guidelines;
pub mod imports;
pub mod tokens;
