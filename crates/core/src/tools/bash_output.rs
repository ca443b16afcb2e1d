//! `BashOutput` and `KillShell` (Claude Code's): read and stop the commands Bash started with
//! `run_in_background` (see [`super::bash::background`]).

use std::borrow::Cow;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::typed::TypedTool;
use super::{Risk, ToolContext, ToolOutput};

const OUTPUT_DESCRIPTION: &str = "Returns what a background command (started by Bash with run_in_background) wrote \
since the last read, with its status (running, or how it ended). With filter, only the new lines matching that \
regular expression are returned (the others are consumed too).";

const KILL_DESCRIPTION: &str = "Stops a background command (started by Bash with run_in_background), with every \
process it started.";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputInput {
    /// The ID of the background shell to retrieve output from
    bash_id: String,
    /// Optional regular expression to filter the output lines. Only lines matching this regex will be included in the result. Any lines that do not match will no longer be available to read.
    filter: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillInput {
    /// The ID of the background shell to kill
    shell_id: String,
}

pub struct BashOutputTool;

impl TypedTool for BashOutputTool {
    type Input = OutputInput;
    const NAME: &'static str = "BashOutput";

    fn description(&self) -> Cow<'static, str> {
        OUTPUT_DESCRIPTION.into()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn is_lookup(&self) -> bool {
        false
    }

    fn kind(&self) -> super::ToolKind {
        super::ToolKind::Exec
    }

    fn risk(&self) -> Risk {
        Risk::Low
    }

    fn call<'a>(&'a self, input: OutputInput, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let filter = match input.filter.as_deref().filter(|filter| !filter.is_empty()).map(regex::Regex::new) {
                None => None,
                Some(Ok(filter)) => Some(filter),
                Some(Err(err)) => return ToolOutput::error(format!("filter is not a valid regular expression: {err}")),
            };
            match ctx.background.read(input.bash_id.trim(), filter.as_ref()) {
                Ok(text) => ToolOutput::ok(text),
                Err(why) => ToolOutput::error(why),
            }
        })
    }
}

pub struct KillShellTool;

impl TypedTool for KillShellTool {
    type Input = KillInput;
    const NAME: &'static str = "KillShell";

    fn description(&self) -> Cow<'static, str> {
        KILL_DESCRIPTION.into()
    }

    /// It only stops what the model itself started in the background.
    fn is_read_only(&self) -> bool {
        true
    }

    fn is_lookup(&self) -> bool {
        false
    }

    fn kind(&self) -> super::ToolKind {
        super::ToolKind::Exec
    }

    fn risk(&self) -> Risk {
        Risk::Low
    }

    fn call<'a>(&'a self, input: KillInput, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            match ctx.background.kill(input.shell_id.trim()) {
                Ok(text) => ToolOutput::ok(text),
                Err(why) => ToolOutput::error(why),
            }
        })
    }
}
