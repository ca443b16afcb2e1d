//! The session's sandbox, from the `sandbox` settings, `--sandbox` and `config.toml`, and what the kernel can
//! enforce: on by default where Landlock is there, said at start where it isn't (and an error with
//! `sandbox.failIfUnavailable`).

use std::sync::Arc;

use crate::config;
use crate::permissions::confine::ConfinementShape;
use crate::permissions::settings::Settings;
use crate::permissions::{PermissionPolicy, SandboxDecisions};
use crate::sandbox::{self, Confinement, SandboxMode, Support};

use super::SetupError;

/// Builds the session's [`Confinement`] and tells `permissions` what the sandbox settings change in decisions.
/// `None`: no sandbox (switched off, or unavailable and allowed to be).
pub(super) fn confinement(
    options: &super::SessionOptions,
    file: &config::ConfigFile,
    settings: &Settings,
    permissions: &mut PermissionPolicy,
    notices: &mut Vec<String>,
) -> Result<Option<Arc<Confinement>>, SetupError> {
    let flag = options.sandbox.clone().or_else(|| file.sandbox.clone());
    let approved = match &flag {
        Some(text) => SandboxMode::parse(text).ok_or_else(|| {
            SetupError(format!("invalid sandbox mode {text:?}: use off, read-only or workspace-write"))
        })?,
        None => SandboxMode::Off,
    };
    let switched_off = flag.as_deref() == Some("off") || settings.sandbox.enabled == Some(false);
    let enabled = !switched_off;
    if !enabled && approved == SandboxMode::Off {
        notices.push(
            "Sandbox: off (sandbox.enabled is false or --sandbox off): commands tandem allows without asking run \
             with your full rights."
                .to_owned(),
        );
        return Ok(None);
    }
    match sandbox::support() {
        Support::Full { .. } => {}
        Support::Partial { abi, missing } => notices.push(format!(
            "Sandbox: this kernel's Landlock (ABI {abi}) lacks what follows; the rest is enforced: {missing}."
        )),
        Support::Unavailable(why) => return unavailable(&why, approved, file, settings, notices),
    }
    let shape = ConfinementShape { enabled, approved, approved_network: file.sandbox_network.unwrap_or(true) };
    let confinement = crate::permissions::confine::confinement(permissions, &settings.sandbox, shape)
        .map_err(|err| SetupError(format!("cannot create the sandbox's private temp dir: {err}")))?;
    permissions.sandboxed = true;
    permissions.sandbox = SandboxDecisions {
        excluded_commands: settings.sandbox.excluded_commands.clone(),
        allow_unsandboxed_commands: settings.sandbox.allow_unsandboxed_commands,
        auto_allow_bash_if_sandboxed: settings.sandbox.auto_allow_bash_if_sandboxed,
    };
    Ok(Some(Arc::new(confinement)))
}

/// No Landlock: an error when the user asked for the sandbox to be required (`--sandbox`, or
/// `sandbox.failIfUnavailable`), else a notice, and commands run as they did before the sandbox.
fn unavailable(
    why: &str,
    approved: SandboxMode,
    file: &config::ConfigFile,
    settings: &Settings,
    notices: &mut Vec<String>,
) -> Result<Option<Arc<Confinement>>, SetupError> {
    if settings.sandbox.fail_if_unavailable {
        return Err(SetupError(format!(
            "the sandbox is unavailable here ({why}), and sandbox.failIfUnavailable is true"
        )));
    }
    if approved != SandboxMode::Off && file.allow_unsandboxed != Some(true) {
        return Err(SetupError(format!(
            "the {approved} sandbox is unavailable here ({why}); run without --sandbox, or set allow_unsandboxed = true in config.toml to run unsandboxed"
        )));
    }
    notices.push(format!(
        "Sandbox: unavailable ({why}). Commands tandem allows without asking run WITHOUT a sandbox, held only by \
         its analysis; set sandbox.failIfUnavailable to refuse to start instead."
    ));
    Ok(None)
}
