//! Which modal is on top: one order for the keys (`keys.rs`) and the frame (`ui/frame.rs`), so that what is drawn
//! on top is what has the keys. Before, each kept its own order, and a permission request arriving while `/help`
//! was open was drawn over the help while the keys went to the hidden help.

use super::App;

/// The modals, from the top: the welcome screen and the session picker fill the screen; a permission dialog comes
/// before anything the user opened (the model waits on it); then the MCP approval, the help and the views.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Modal {
    Onboarding,
    SessionPicker,
    Dialog,
    McpApproval,
    Help,
    ModelPicker,
    Rules,
    Mcp,
    Rewind,
    Inspector,
}

impl App {
    /// The modal on top, if any is open.
    pub fn modal(&self) -> Option<Modal> {
        let open = [
            (Modal::Onboarding, self.onboarding.is_some()),
            (Modal::SessionPicker, self.session_picker.is_some()),
            (Modal::Dialog, !self.dialogs.is_empty()),
            (Modal::McpApproval, self.approval_server().is_some()),
            (Modal::Help, self.show_help),
            (Modal::ModelPicker, self.model_picker.is_some()),
            (Modal::Rules, self.rules_view.is_some()),
            (Modal::Mcp, self.mcp.view.is_some()),
            (Modal::Rewind, self.rewind.is_some()),
            (Modal::Inspector, self.inspector.is_some()),
        ];
        open.into_iter().find_map(|(modal, is_open)| is_open.then_some(modal))
    }
}
