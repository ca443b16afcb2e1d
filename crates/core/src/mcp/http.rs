//! Streamable HTTP through rmcp's reqwest client, noting an answer refused for its size.
//!
//! rmcp refuses an answer over 16 MB (a JSON body or one event of a stream) inside its transport worker, which
//! then ends the connection: the call only learned "the connection ended". This client passes every request to
//! reqwest's and announces such a refusal, so the call can say why it failed.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use rmcp_reqwest::header::{HeaderName, HeaderValue};
use sse_stream::Sse;
use tokio::sync::watch;

/// An answer over the limit whose size is unknown (the transport stops reading at the limit).
pub(crate) const SIZE_UNKNOWN: u64 = 0;

#[derive(Clone)]
pub(crate) struct SizeNotingClient {
    inner: rmcp_reqwest::Client,
    oversized: Arc<watch::Sender<Option<u64>>>,
}

impl SizeNotingClient {
    /// The client, and where an answer refused for its size is announced ([`SIZE_UNKNOWN`]).
    pub(crate) fn new() -> (SizeNotingClient, watch::Receiver<Option<u64>>) {
        let (oversized, receiver) = watch::channel(None);
        (SizeNotingClient { inner: rmcp_reqwest::Client::default(), oversized: Arc::new(oversized) }, receiver)
    }

    /// Announces an answer refused for its size: a JSON body at once; an event stream when an event over the
    /// limit ends it, with an error whose type rmcp keeps to itself (so it is known by its message).
    fn noted(
        &self,
        result: Result<StreamableHttpPostResponse, StreamableHttpError<rmcp_reqwest::Error>>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<rmcp_reqwest::Error>> {
        if let Err(StreamableHttpError::ResponseBodyTooLarge { .. }) = &result {
            self.oversized.send_replace(Some(SIZE_UNKNOWN));
        }
        let Ok(StreamableHttpPostResponse::Sse(stream, session)) = result else { return result };
        let oversized = self.oversized.clone();
        let stream = stream.inspect(move |item| {
            if let Err(error) = item
                && error.to_string().contains("exceeded the maximum size")
            {
                oversized.send_replace(Some(SIZE_UNKNOWN));
            }
        });
        Ok(StreamableHttpPostResponse::Sse(stream.boxed(), session))
    }
}

impl StreamableHttpClient for SizeNotingClient {
    type Error = rmcp_reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits).await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let result = self
            .inner
            .post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits)
            .await;
        self.noted(result)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner.delete_session(uri, session_id, auth_header, custom_headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<futures::stream::BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.inner.get_stream(uri, session_id, last_event_id, auth_header, custom_headers).await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<futures::stream::BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}
