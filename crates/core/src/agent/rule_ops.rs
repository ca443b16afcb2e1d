//! `/permissions` in the session: the active rules listed, and one removed from the session and its file.

use super::lock;
use super::turn::Session;
use crate::protocol::{Event, RuleListing};

impl Session {
    /// Reports the active permission rules (`/permissions`).
    pub(super) fn list_rules(&self) {
        let listing = lock(&self.shared.policy)
            .rules
            .iter()
            .map(|rule| RuleListing {
                text: rule.text.clone(),
                kind: rule.kind,
                scope: rule.scope,
                file: rule.file.clone(),
            })
            .collect();
        self.emit(Event::PermissionRules(listing));
    }

    /// Removes a rule from the session and from its settings file.
    pub(super) fn remove_rule(&self, listing: &RuleListing) {
        {
            let mut policy = lock(&self.shared.policy);
            policy
                .rules
                .retain(|rule| !(rule.text == listing.text && rule.kind == listing.kind && rule.file == listing.file));
        }
        if let Some(file) = &listing.file
            && let Err(problem) = crate::permissions::settings::remove_rule(file, listing.kind, &listing.text)
        {
            self.emit(Event::Error {
                message: format!("Could not remove {} from {}: {problem}", listing.text, file.display()),
            });
        }
        self.list_rules();
    }
}
