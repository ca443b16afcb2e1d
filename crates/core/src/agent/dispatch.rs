//! What the turn runner does with each submission the router passed on, in the order they came.

use super::turn::Session;
use crate::protocol::Op;

impl Session {
    /// Runs `op`; `true` when it was a turn (the idle notification counts from its end). The ops the router
    /// answers itself (permission answers, interrupts, the mode, MCP, replays, shutdown) never come here.
    pub(super) async fn run_op(&mut self, op: Op) -> bool {
        match op {
            Op::UserTurn { text } => {
                self.run_input(text).await;
                return true;
            }
            Op::UserTurnWithImages { text, images } => {
                self.attachments =
                    images.into_iter().map(|source| crate::conversation::ContentBlock::Image { source }).collect();
                self.run_turn(text).await;
                return true;
            }
            Op::SetModel { model } => self.set_model(&model),
            Op::SetEffort(effort) => self.set_effort(effort),
            Op::ClearConversation => self.clear_with_hooks().await,
            Op::Compact { instructions } => {
                self.compact_now(instructions).await;
            }
            Op::ListPermissionRules => self.list_rules(),
            Op::RemovePermissionRule { rule } => self.remove_rule(&rule),
            Op::ListHooks => self.list_hooks(),
            Op::TrustProjectHooks => self.trust_project_hooks(),
            Op::TrustHeldSettings => self.trust_held_settings(),
            Op::KillBackground { id } => self.kill_background(&id),
            Op::ListRewindPoints => self.list_rewind_points(),
            Op::PreviewRewind { seq } => self.preview_rewind(seq),
            Op::NamePrompt { id } => self.next_prompt_id = Some(id),
            Op::Rewind { to, conversation, files, hunks, dry_run } => {
                self.rewind(super::rewind_ops::RewindRequest { to, conversation, files, hunks, dry_run });
            }
            Op::PermissionAnswer { .. }
            | Op::Interrupt
            | Op::SetPermissionMode(_)
            | Op::Mcp(_)
            | Op::Replay { .. }
            | Op::Shutdown => {}
        }
        false
    }
}
