//! The model a session talks to and how: switching it (`/model`, the fallback model), what a local server says
//! its limits are, and the thinking and effort its requests carry.

use super::turn::Session;
use crate::protocol::Event;

impl Session {
    /// Switches the model for the next requests; a local (free) model stays free.
    pub(super) fn set_model(&mut self, model: &str) {
        let mut info = crate::models::lookup(model);
        if self.config.model.prices == Some(crate::models::Prices::LOCAL) {
            info.prices = Some(crate::models::Prices::LOCAL);
        }
        self.config.model = info;
        self.log(&crate::session::SessionLine::Model { model: model.to_owned() });
        self.emit(Event::ModelChanged { model: model.to_owned(), context_window: self.config.model.context_window });
        self.report_reasoning();
    }

    /// Whether a failed request means "use the fallback model": it is overloaded or not available, and there is
    /// a fallback that is another model.
    pub(super) fn should_fall_back(&self, error: &crate::provider::ProviderError) -> bool {
        let unavailable = matches!(error.http_status(), Some(404 | 529))
            || error.error_type().is_some_and(|kind| kind == "overloaded_error" || kind == "not_found_error");
        unavailable && self.config.fallback_model.as_ref().is_some_and(|model| *model != self.config.model.id)
    }

    /// A model the table doesn't know, on a server on this machine: its context window is what the server says
    /// (a llama.cpp started with `-c 4096` is not the table's default 128k), so compaction and `max_tokens` fit.
    pub(super) async fn learn_server_limits(&mut self) {
        let endpoint = self.config.provider.endpoint().clone();
        if self.config.model.known
            || endpoint.kind != crate::provider::ProviderKind::Openai
            || !crate::provider::limits::is_local(&endpoint.base_url)
        {
            return;
        }
        let Some(limits) = crate::provider::limits::discover(&endpoint, &self.config.model.id).await else { return };
        let model = &mut self.config.model;
        model.context_window = limits.context_window;
        model.max_output_tokens = model.max_output_tokens.min((limits.context_window / 2).max(1));
        let message = format!(
            "{} reports a context window of {} tokens for {}: tandem keeps within it (replies up to {} tokens).",
            limits.source, limits.context_window, model.id, model.max_output_tokens
        );
        let changed = Event::ModelChanged { model: model.id.clone(), context_window: model.context_window };
        self.emit(Event::Info { message });
        self.emit(changed);
    }

    /// `/effort`: the effort of the requests from now on (`None` leaves it to the model).
    pub(super) fn set_effort(&mut self, effort: Option<crate::reasoning::Effort>) {
        self.config.reasoning.effort = effort;
        let said = effort.map_or("the model's default".to_owned(), |effort| effort.as_str().to_owned());
        self.emit(Event::Info { message: format!("Effort: {said}") });
        self.report_reasoning();
    }

    /// What requests to the current model carry for thinking and effort, and what it can't take.
    pub(super) fn request_reasoning(&self, has_tools: bool) -> (crate::reasoning::RequestReasoning, Vec<String>) {
        self.config.reasoning.for_model(&self.config.model, self.config.provider.endpoint().kind, has_tools)
    }

    /// Says what of the asked-for thinking and effort the current model does not take (at the start, and
    /// when the model or the effort changes).
    pub(super) fn report_reasoning(&self) {
        for note in self.request_reasoning(!self.config.tools.names().is_empty()).1 {
            self.emit(Event::Info { message: format!("Thinking: {note}") });
        }
    }
}
