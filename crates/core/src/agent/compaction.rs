//! Keeping long sessions inside the context window: the guidelines and memory block of every request, and
//! compaction (automatic near the limit, or `/compact`), which replaces the older conversation by a summary that
//! keeps the task, the files, the decisions and the next step, plus the recent exchanges verbatim and the
//! current contents of the files being worked on.

use tokio_util::sync::CancellationToken;

use super::lock;
use super::sampling::{self, SampleError};
use super::turn::Session;
use crate::context::compact::{self, MAX_RESTORED_FILES};
use crate::context::guidelines;
use crate::context::tokens::TokenCounter;
use crate::memory::MemoryStore;
use crate::protocol::{Event, ItemOutcome};
use crate::provider::{ModelRequest, SystemBlock};
use crate::session::CompactTrigger;

/// How many times the summary request is retried with the oldest exchanges dropped.
const SUMMARY_ATTEMPTS: usize = 4;

/// Below this many tokens of conversation to summarize (everything but the kept tail), a summary — with the
/// user's prompts and the restored files beside it — is about as long as what it replaces: compacting would
/// pay for a request and make the next one no smaller.
const MIN_SUMMARIZED_TOKENS: u64 = 2_000;

/// What came of a compaction; the sentences are what the user was told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Compaction {
    Done,
    /// Compacting would not have made the conversation smaller, so it was kept as it was.
    NotWorthIt(String),
    Failed(String),
    Interrupted,
}

impl Session {
    /// The guideline files in effect now (re-read every time: an edit counts from the next request).
    pub(super) fn guidelines(&self) -> guidelines::Guidelines {
        let home = crate::fs_util::user_home();
        let dirs = guidelines::UserDirs {
            config_dir: &self.config.config_dir,
            claude_dir: self.config.claude_dir.as_deref(),
            home: home.as_deref(),
            sources: self.config.guideline_sources,
        };
        let policy = lock(&self.shared.policy);
        let hidden = policy.walk_hidden();
        let read = crate::tools::read::ReadTool;
        let importable = |path: &std::path::Path| {
            policy.decide(&read, &serde_json::json!({ "file_path": path })) == crate::permissions::Decision::Allow
        };
        guidelines::load_from(
            &dirs,
            &self.config.cwd,
            &guidelines::ProjectReads { hidden: &*hidden, importable: &importable },
        )
    }

    /// Project guidelines and the memory index, as one block (empty when there is neither).
    pub(super) fn context_block(&self) -> String {
        let guidelines = self.guidelines();
        let root = crate::permissions::settings::project_root(&self.config.cwd);
        let memory = MemoryStore::new(&self.config.config_dir, &root).index_text();
        match (guidelines.text.is_empty(), memory.is_empty()) {
            (true, true) => String::new(),
            (false, true) => guidelines.text,
            (true, false) => memory,
            (false, false) => format!("{}\n\n{memory}", guidelines.text),
        }
    }

    /// The tokens `request` will take: the last reported usage plus an estimate of what was added since.
    pub(super) fn request_tokens(&self, request: &ModelRequest) -> u64 {
        let added = &self.messages[self.reported_len.min(self.messages.len())..];
        self.counter.next_request_tokens(TokenCounter::request_chars(request), added)
    }

    /// Whether a request of `tokens` would cross the compaction threshold.
    pub(super) fn needs_compaction(&self, tokens: u64) -> bool {
        self.messages.len() >= 2
            && tokens > self.compaction_floor
            && self.config.compaction.should_compact(tokens, self.config.model.context_window)
    }

    /// The tokens of latest exchanges a compaction keeps verbatim: a tenth of the window, at most 20,000 (see
    /// `CompactionPolicy::keep_tail_tokens`), and at most a quarter of the conversation, so that compacting a
    /// conversation well under the limit (`/compact` early on) still summarizes most of it.
    fn kept_tail_tokens(&self) -> u64 {
        let conversation = self.counter.estimate_messages(&self.messages);
        self.config.compaction.keep_tail_tokens(self.config.model.context_window).min(conversation / 4)
    }

    /// `/compact [instructions]` between turns.
    pub(super) async fn compact_now(&mut self, instructions: Option<String>) -> Compaction {
        if self.messages.is_empty() {
            let message = "Nothing to compact yet.".to_owned();
            self.emit_event(Event::Info { message: message.clone() });
            return Compaction::NotWorthIt(message);
        }
        let cancel = CancellationToken::new();
        *super::lock(&self.shared.cancel) = cancel.clone();
        let compaction = self.compact(CompactTrigger::Manual, instructions, &cancel).await;
        let used = self.request_tokens(&self.request());
        self.emit_event(Event::Context { used, window: self.config.model.context_window });
        compaction
    }

    /// Summarizes the conversation and rebuilds it. On failure the conversation is kept as it was (and the
    /// user is told): never losing the current task matters more than saving tokens.
    pub(super) async fn compact(
        &mut self,
        trigger: CompactTrigger,
        extra: Option<String>,
        cancel: &CancellationToken,
    ) -> Compaction {
        let keep = self.kept_tail_tokens();
        let summarized = compact::summarized_tokens(&self.messages, keep, &self.counter);
        if summarized < MIN_SUMMARIZED_TOKENS {
            let message = format!(
                "Not compacted: all but ~{summarized} tokens of the conversation are its latest exchanges, which \
                 compaction keeps as they are, so a summary would not make it smaller."
            );
            self.emit_event(Event::Info { message: message.clone() });
            // Not again at every request: only once the context has grown by the reserve.
            self.compaction_floor = self.request_tokens(&self.request()) + self.config.compaction.reserve_tokens;
            return Compaction::NotWorthIt(message);
        }
        self.emit_event(Event::CompactionStarted { trigger });
        let compaction = self.summarize_and_rebuild(trigger, extra, cancel).await;
        let outcome = match compaction {
            Compaction::Done => ItemOutcome::Completed,
            Compaction::Interrupted => ItemOutcome::Interrupted,
            Compaction::NotWorthIt(_) | Compaction::Failed(_) => ItemOutcome::Failed,
        };
        self.emit_event(Event::CompactionFinished { trigger, outcome });
        if compaction == Compaction::Done {
            self.session_start("compact").await;
        }
        compaction
    }

    #[expect(
        clippy::too_many_lines,
        reason = "the summary request and the rebuilt conversation; the rebuild is where to cut it"
    )]
    async fn summarize_and_rebuild(
        &mut self,
        trigger: CompactTrigger,
        extra: Option<String>,
        cancel: &CancellationToken,
    ) -> Compaction {
        self.pre_compact_hooks(trigger, extra.as_deref()).await;
        let pre_tokens = {
            let added = &self.messages[self.reported_len.min(self.messages.len())..];
            self.counter.context_used(added)
        };
        let guidelines = self.guidelines();
        let instructions = match (guidelines.summary_instructions, extra) {
            (Some(from_file), Some(from_user)) => Some(format!("{from_file}\n\n{from_user}")),
            (from_file, from_user) => from_user.or(from_file),
        };

        let mut history = self.messages.clone();
        let mut summary = None;
        let reserve = (self.config.compaction.reserve_tokens as u32).min(self.config.model.request_max_tokens());
        for attempt in 0..SUMMARY_ATTEMPTS {
            let request = if attempt == 0 {
                // First as the conversation's own next turn: the same system prompt, tools and settings, the
                // history as sent, so the model reads it from the prompt cache instead of paying for it again.
                let mut request = self.request();
                request.messages = compact::cached_summary_request(&history, instructions.as_deref());
                request.max_tokens = reserve.max(request.reasoning.min_max_tokens.unwrap_or(0));
                request
            } else {
                // A request that failed (too long, or no summary came back) is shrunk: a summary-only prompt,
                // tool output cut, the oldest exchanges dropped.
                ModelRequest {
                    model: self.config.model.id.clone(),
                    system: vec![SystemBlock { text: compact::SUMMARY_SYSTEM.into(), cache: false }],
                    messages: compact::summary_request(&history, instructions.as_deref()),
                    tools: self.config.tools.specs(),
                    max_tokens: reserve,
                    reasoning: Default::default(),
                    betas: self.config.betas.clone(),
                }
            };
            // The summary's own text is not part of the conversation: front ends only hear about retries.
            let (events, mut heard) = crate::events::EventSink::channel();
            let reply = sampling::sample(
                self.config.provider.as_ref(),
                &request,
                &self.config.retry,
                cancel,
                &events,
                false,
                self.recorder.as_deref().map(|recorder| (recorder, "compaction")),
            )
            .await;
            while let Ok(crate::protocol::EventMsg { event, .. }) = heard.try_recv() {
                if matches!(event, Event::Retrying { .. }) {
                    self.emit_event(event);
                }
            }
            match reply {
                Ok(assembled) => {
                    // The summary is paid for like any response: in the log, `/cost` and the status line.
                    self.pay_for(assembled.message.usage);
                    let text = compact::extract_summary(&assembled.message.to_message().text());
                    if !text.trim().is_empty() {
                        summary = Some(text);
                        break;
                    }
                }
                Err(SampleError::Interrupted { usage, .. }) => {
                    if usage != crate::conversation::Usage::default() {
                        self.pay_for(usage);
                    }
                    break;
                }
                Err(SampleError::Failed(error)) => {
                    tracing::warn!("the summary request failed: {error}");
                }
            }
            if attempt == 0 {
                // The shrunk request comes next, with the whole history first.
                continue;
            }
            // Too long, or failed: drop the oldest exchanges (never the task itself) and try again.
            let shorter = compact::drop_oldest(&history, 0.3);
            if shorter.len() >= history.len() {
                break;
            }
            history = shorter;
        }
        let Some(summary) = summary else {
            if cancel.is_cancelled() {
                return Compaction::Interrupted;
            }
            // Not again at every request: only once the context has grown by the reserve.
            self.compaction_floor = pre_tokens + self.config.compaction.reserve_tokens;
            let message = "Could not summarize the conversation; it was kept as it was.".to_owned();
            self.emit_event(Event::Error { message: message.clone() });
            return Compaction::Failed(message);
        };

        let hidden = lock(&self.shared.policy).walk_hidden();
        let files: Vec<(std::path::PathBuf, String)> = compact::recent_file_paths(&self.messages, MAX_RESTORED_FILES)
            .into_iter()
            .filter_map(|path| {
                let path = if path.is_absolute() { path } else { self.config.cwd.join(path) };
                // Only what a Read would be allowed to read now: a path named by a denied call, or only in the
                // model's text, is not brought back into the conversation; nor a denied file under this name.
                let input = serde_json::json!({ "file_path": path.to_string_lossy() });
                let allowed = lock(&self.shared.policy).decide(&crate::tools::read::ReadTool, &input)
                    == crate::permissions::Decision::Allow;
                if !allowed {
                    return None;
                }
                let mut content = String::new();
                let mut file = crate::tools::open_unasked(&path, &*hidden).ok()?;
                std::io::Read::read_to_string(&mut file, &mut content).ok()?;
                Some((path, content))
            })
            .collect();
        let keep = self.kept_tail_tokens();
        let todos = self.todos().to_vec();
        let mut rebuilt = compact::rebuild(&summary, &self.messages, &files, keep, &self.counter);
        // The checklist outlives the summary: the model goes on with the same steps.
        if !todos.is_empty()
            && let Some(first) = rebuilt.iter_mut().find(|message| message.role == crate::conversation::Role::User)
        {
            first.content.push(crate::conversation::ContentBlock::text(format!(
                "<system-reminder>\nYour todo list (TodoWrite) before the conversation was compacted:\n{}\nKeep it up to date with TodoWrite.\n</system-reminder>",
                crate::tools::todo_write::TodoItem::describe(&todos)
            )));
        }
        let (before, after) =
            (self.counter.estimate_messages(&self.messages), self.counter.estimate_messages(&rebuilt));
        if after >= before {
            self.compaction_floor = pre_tokens + self.config.compaction.reserve_tokens;
            let message = format!(
                "Not compacted: the summary and what it keeps (~{after} tokens) would not be smaller than the \
                 conversation (~{before}); it was kept as it was."
            );
            self.emit_event(Event::Info { message: message.clone() });
            return Compaction::NotWorthIt(message);
        }
        self.replace_conversation(rebuilt);
        // The prompts were summarized: only files can go back to them now.
        self.live_prompts.clear();
        self.untracked_prompts = false;
        // The summary replaced the Read results: the next Read of a file must return its content again.
        self.files.forget_reads();
        if let Some(log) = &mut self.config.session_log
            && let Err(err) = log.append_compaction(trigger, pre_tokens, &self.messages)
        {
            tracing::warn!("could not log the compaction: {err}");
        }
        // A compaction that could not bring the context under the threshold (a huge kept tail, big guidelines)
        // must not run again at every request: the next one waits until the context has grown by the reserve.
        let after = self.request_tokens(&self.request());
        self.emit_event(Event::CompactBoundary { trigger, pre_tokens, post_tokens: after, summary });
        self.compaction_floor = if self.config.compaction.should_compact(after, self.config.model.context_window) {
            self.emit_event(Event::Info {
                message: format!(
                    "The compacted conversation still fills {after} of {} tokens; it is compacted again only once it grows.",
                    self.config.model.context_window
                ),
            });
            after + self.config.compaction.reserve_tokens
        } else {
            0
        };
        Compaction::Done
    }

    fn emit_event(&self, event: Event) {
        let _ = self.events.send(event);
    }
}
