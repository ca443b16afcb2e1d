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

    /// Applies the allow rules tracked personal settings files held back, and remembers the trust so that later
    /// sessions apply everything in them (their `defaultMode` and `additionalDirectories` too) while they stay
    /// as they are.
    pub(super) fn trust_held_settings(&self) {
        let held = std::mem::take(&mut lock(&self.shared.policy).held);
        if held.is_empty() {
            self.emit(Event::Info { message: "No settings file is waiting for your trust.".to_owned() });
            return;
        }
        for file in held {
            lock(&self.shared.policy).rules.extend(file.allow.iter().cloned());
            let later = if file.default_mode.is_some() || !file.additional_directories.is_empty() {
                " Its defaultMode and additionalDirectories apply from the next session."
            } else {
                ""
            };
            match file.trust(&self.config.config_dir) {
                Ok(_) => self.emit(Event::Info {
                    message: format!("Trusted {}: {}.{later}", file.file.display(), file.describe()),
                }),
                Err(err) => self.emit(Event::Error {
                    message: format!(
                        "{}: its rules apply in this session, but the trust could not be saved: {err}",
                        file.file.display()
                    ),
                }),
            }
        }
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
