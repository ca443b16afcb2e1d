//! The interactive app's state and its update function.

pub mod cells;
pub mod editor;
pub mod history;
pub mod onboarding;
