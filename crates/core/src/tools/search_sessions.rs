//! `SearchSessions`: the third memory layer. Past sessions' transcripts are searched, never loaded whole:
//! a phrase in, ranked excerpts out (session id, time, the surrounding lines).

use std::path::PathBuf;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::typed::TypedTool;
use super::{Risk, ToolContext, ToolOutput};
use crate::session;

const DESCRIPTION: &str = "Searches the transcripts of earlier tandem sessions for a phrase (case-insensitive) and \
returns the best matching excerpts with the session id, its title and the time. Use it to recall what was decided \
or done before (\"what did we decide about the cache key?\", an error message seen last week). By default only \
sessions started in this directory are searched; set all_projects to search every session.";

/// Results returned by default, and at most.
const DEFAULT_LIMIT: usize = 10;
const MAX_LIMIT: usize = 50;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The phrase to look for
    query: String,
    /// Most results to return (default 10)
    #[schemars(range(min = 1, max = 50))]
    limit: Option<usize>,
    /// Search sessions of every directory, not only this one
    all_projects: Option<bool>,
}

/// The tool's name (a deny rule naming it keeps it out of the offer).
pub const SEARCH_SESSIONS: &str = "SearchSessions";

/// Searches the sessions kept in `data_dir`, except the current one (its conversation is already in context).
pub struct SearchSessionsTool {
    pub data_dir: PathBuf,
    pub current_session: Option<String>,
}

impl TypedTool for SearchSessionsTool {
    type Input = Input;
    const NAME: &'static str = SEARCH_SESSIONS;

    fn description(&self) -> std::borrow::Cow<'static, str> {
        DESCRIPTION.into()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn permission_subject(&self, input: &serde_json::Value, _cwd: &std::path::Path) -> super::Subject {
        let every_project = input.get("all_projects").and_then(serde_json::Value::as_bool) == Some(true);
        super::Subject::File(super::FileAccess { every_project, ..super::FileAccess::read(".") })
    }

    fn kind(&self) -> super::ToolKind {
        super::ToolKind::Search
    }

    fn risk(&self) -> Risk {
        Risk::Low
    }

    fn call<'a>(&'a self, input: Input, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            if input.query.trim().is_empty() {
                return ToolOutput::error("query is empty: give the phrase to look for.");
            }
            let limit = input.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
            let all_projects = input.all_projects == Some(true);
            let cwd = (!all_projects).then_some(ctx.cwd.as_path());
            let hits: Vec<_> = session::search_in(&self.data_dir, input.query.trim(), cwd, limit + 1)
                .into_iter()
                .filter(|hit| self.current_session.as_deref() != Some(hit.session_id.as_str()))
                .take(limit)
                .collect();
            if hits.is_empty() {
                let scope = if all_projects { "any session" } else { "this directory's sessions" };
                return ToolOutput::ok(format!("No match for {:?} in {scope}.", input.query.trim()));
            }
            let mut out = format!(
                "{} match{} for {:?}:\n",
                hits.len(),
                if hits.len() == 1 { "" } else { "es" },
                input.query.trim()
            );
            for hit in hits {
                let title = hit.title.as_deref().unwrap_or("(untitled)");
                let role = match hit.role {
                    crate::conversation::Role::User => "user",
                    crate::conversation::Role::Assistant => "assistant",
                };
                out.push_str(&format!(
                    "\n--- session {} \"{title}\" · {} · {role}\n{}\n",
                    &hit.session_id[..hit.session_id.len().min(8)],
                    session::format_utc(hit.at),
                    hit.excerpt.trim_end()
                ));
            }
            ToolOutput::ok(out)
        })
    }
}
