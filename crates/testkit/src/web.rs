//! A scripted web site on 127.0.0.1, for WebFetch and WebSearch tests: each path serves a fixed [`WebPage`]
//! (a page, a redirect, a slow or huge answer), and every request's path and query is recorded.

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;

/// What one path answers.
#[derive(Clone, Debug)]
pub struct WebPage {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Waits this long before answering.
    pub delay: Option<Duration>,
}

impl WebPage {
    /// A `text/html` page.
    pub fn html(body: impl Into<String>) -> Self {
        WebPage::typed("text/html; charset=utf-8", body.into().into_bytes())
    }

    /// A body of any content type.
    pub fn typed(content_type: &str, body: Vec<u8>) -> Self {
        WebPage { status: 200, headers: vec![("content-type".into(), content_type.into())], body, delay: None }
    }

    /// An `application/json` answer.
    pub fn json(value: &serde_json::Value) -> Self {
        WebPage::typed("application/json", value.to_string().into_bytes())
    }

    /// A redirect to `location` (absolute or relative).
    pub fn redirect(status: u16, location: &str) -> Self {
        WebPage { status, headers: vec![("location".into(), location.into())], body: Vec::new(), delay: None }
    }

    pub fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    pub fn delayed(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }
}

/// The running site; it stops when dropped.
pub struct WebSite {
    addr: SocketAddr,
    hits: Arc<Mutex<Vec<String>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl WebSite {
    /// Serves `pages` (path → page; anything else is a 404) on its own thread.
    pub fn spawn(pages: Vec<(&str, WebPage)>) -> io::Result<WebSite> {
        let pages: Arc<Vec<(String, WebPage)>> =
            Arc::new(pages.into_iter().map(|(path, page)| (path.to_owned(), page)).collect());
        let hits = Arc::new(Mutex::new(Vec::new()));
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let listener = {
            let _guard = runtime.enter();
            tokio::net::TcpListener::from_std(std_listener)?
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let seen = hits.clone();
        let app = axum::Router::new().fallback(move |request: Request| {
            let (pages, seen) = (pages.clone(), seen.clone());
            async move { answer(&pages, &seen, request).await }
        });
        let thread = std::thread::Builder::new().name(format!("tandem-web-{}", addr.port())).spawn(move || {
            runtime.block_on(async move {
                let server = axum::serve(listener, app).with_graceful_shutdown(async {
                    let _ = stopped.await;
                });
                let _ = server.await;
            });
        })?;
        Ok(WebSite { addr, hits, stop: Some(stop), thread: Some(thread) })
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The path and query of every request so far, in order.
    pub fn hits(&self) -> Vec<String> {
        self.hits.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }
}

impl Drop for WebSite {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        // Not joined: a request still being answered (a delayed page) finishes on its own thread.
        self.thread.take();
    }
}

async fn answer(pages: &[(String, WebPage)], seen: &Mutex<Vec<String>>, request: Request) -> Response {
    let uri = request.uri();
    let path_and_query = uri.path_and_query().map(|pq| pq.as_str().to_owned()).unwrap_or_default();
    seen.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(path_and_query);
    let Some((_, page)) = pages.iter().find(|(path, _)| path == uri.path()) else {
        let mut response = Response::new(Body::from("<html><body><h1>Not found</h1></body></html>"));
        *response.status_mut() = StatusCode::NOT_FOUND;
        return response;
    };
    if let Some(delay) = page.delay {
        tokio::time::sleep(delay).await;
    }
    let mut response = Response::new(Body::from(page.body.clone()));
    *response.status_mut() = StatusCode::from_u16(page.status).unwrap_or(StatusCode::OK);
    for (name, value) in &page.headers {
        if let (Ok(name), Ok(value)) = (HeaderName::try_from(name.as_str()), HeaderValue::from_str(value)) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}
